/* Pairwise alltoall by single copy: every block is copied once, by its reader. */
#include "coll/co.h"

/*
 * Alltoall protocol (single copy, pairwise):
 *   1. every rank exposes its send buffer and publishes up;
 *   2. every rank copies block `me` of each peer's buffer into place, publishes down;
 *   3. every rank returns once all peers have published down (nobody reads it any more).
 * Across waits (resumable form): the step (co->s), the peer (co->i) and a
 * failed copy (co->rc).
 */
static inline __attribute__((always_inline)) int alltoall_pairwise(osmp__coll_t t, const struct osmp__args *a,
                                                                   struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t bytes = a->count * a->esize;
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    co->s = osmp__phase(t) + 1;
    osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(a->in);
    osmp__mb_publish(m, OSMP__UP, co->s); /* 1 */
    for (co->i = 0; co->i < n; co->i++) { /* 2: start with the next rank so readers spread out */
        OSMP__AWAIT(R, co, m, (me + 1 + co->i) % n, OSMP__UP, co->s);
        int r = (me + 1 + co->i) % n;
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, r, OSMP__UP)->addr;
        if (r == me)
            osmp__copy_own(t, (char *)a->out + (size_t)me * bytes, (const char *)a->in + (size_t)me * bytes, bytes);
        else if (osmp__copy_from(m->pids[r], m->local[r], (char *)a->out + (size_t)r * bytes,
                                 src + (size_t)me * bytes, bytes))
            co->rc = osmp__mb_copy_failed(m, r);
        osmp__trace_copy(t, r, me, bytes);
    }
    osmp__mb_publish(m, OSMP__DOWN, co->s);
    for (co->i = 0; co->i < n; co->i++) /* 3 */
        OSMP__AWAIT(R, co, m, co->i, OSMP__DOWN, co->s);
    OSMP__CO_END(R, co);
    return co->rc;
}
OSMP__COMPILE_TWICE(osmp__alltoall_pairwise, alltoall_pairwise)
