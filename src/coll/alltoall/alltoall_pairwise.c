/* Pairwise alltoall by single copy: every block is copied once, by its reader. */
#include "coll/coll.h"

int osmp__alltoall_pairwise(osmp__coll_t t, const struct osmp__args *a);

/*
 * Alltoall protocol (single copy, pairwise):
 *   1. every rank exposes its send buffer and publishes up;
 *   2. every rank copies block `me` of each peer's buffer into place, publishes down;
 *   3. every rank returns once all peers have published down (nobody reads it any more).
 */
int osmp__alltoall_pairwise(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size, rc = OSMP_OK;
    size_t bytes = a->count * a->esize;
    uint64_t s = osmp__phase(t) + 1;
    osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(a->in);
    osmp__mb_publish(m, OSMP__UP, s); /* 1 */
    for (int k = 0; k < n; k++) {      /* 2: start with the next rank so readers spread out */
        int r = (me + 1 + k) % n;
        if (osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, r, OSMP__UP)->addr;
        if (r == me)
            osmp__copy_own(t, (char *)a->out + (size_t)me * bytes, (const char *)a->in + (size_t)me * bytes, bytes);
        else if (osmp__copy_from(m->pids[r], m->local[r], (char *)a->out + (size_t)r * bytes,
                                 src + (size_t)me * bytes, bytes))
            rc = OSMP_ERR_COPY;
        osmp__trace_copy(t, r, me, bytes);
    }
    osmp__mb_publish(m, OSMP__DOWN, s);
    for (int r = 0; r < n; r++) /* 3 */
        if (osmp__mb_wait(m, r, OSMP__DOWN, s)) return m->failed;
    return rc;
}
