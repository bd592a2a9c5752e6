/*
 * Direct allreduce: no leader, every rank reads every other rank's line (or
 * slot). It trades the tree's second hop, and sliced's, for more readers per
 * line and a whole vector folded on every rank, which pays while the team is
 * small and so is the vector (selection: flat teams up to 16 ranks, inline and
 * medium sizes; OSMP__DIRECT_READ_MAX bounds what one rank reads). The same
 * protocol serves reduce_scatter_block's direct algorithm, each rank folding
 * its own block of everyone's vector.
 */
#include <string.h>

#include "coll/co.h"

/*
 * Direct reduction protocol (allreduce: every rank folds the whole vector;
 * reduce_scatter_block: rank i folds block i of everyone's n blocks). The
 * vector fits the mailbox line, or a slot with at most OSMP__DIRECT_READ_MAX
 * bytes to read per rank (osmp__direct_fits); selection gives larger vectors
 * to the next row (osmp__direct_max).
 * Call k of the team writes line d = k % 2 (the UP mailbox, then the DOWN one,
 * alternating), so that no call waits for the readers of its own line; a
 * vector beyond the line goes in the next ring slot of mailbox d instead
 * (osmp__slots_take), guarded by line d's counter all the same:
 *   1. claim line d (slot): its last content has been read once every peer has
 *      published the call after it (in line 1-d) or the "done" it owes (step 5);
 *   2. write my whole vector into line d (slot), publish step s on line d;
 *   3. for r = 0 .. n-1 in this order, wait for r's line d at s and fold the
 *      part I reduce of its vector in (the same order on every rank: bitwise
 *      identical results) into the output (the inputs are all in the lines or
 *      slots, mine too, so an in-place output may be overwritten);
 *   4. fetch line 1-d for writing now, off the next call's critical path: its
 *      readers (call k-1) are done, since every peer published s in step 3;
 *   5. owe "done reading step s" as step s + 1 on line 1-d: the next call, if
 *      it is a direct exchange too (a direct reduction, allgather or alltoall:
 *      osmp__direct_claim in coll.h), says so by publishing its data there; any
 *      other call publishes it first (osmp__phase). Publishing it here would
 *      cost a fence that waits for my line 1-d to leave the peers' caches.
 * (allgather_direct.c and alltoall_direct.c run the same steps with their
 * blocks in place of the fold.)
 */
/* Inlined into the allreduce (lo 0: the hot small call keeps its old length),
 * called by reduce_scatter_block through osmp__direct_fold. */
static inline __attribute__((always_inline)) int direct_fold(osmp__coll_t t, const struct osmp__args *a,
                                                             size_t vector_bytes, size_t lo, struct osmp__co *co,
                                                             const int R)
{
    struct osmp__mbox *m = &t->mb;
    size_t bytes = a->count * a->esize, off = lo * a->esize;
    OSMP__CO_BEGIN(R, co);
    osmp__direct_take(t, vector_bytes, &co->x); /* 1 */
    OSMP__AWAIT_CLAIM(R, co, m, co->x.d, co->x.slot);
    {
        char *line = osmp__direct_claim_taken(t, &co->x);
        if (!line) return m->failed;
        osmp__copy(line, a->in, vector_bytes); /* 2 */
    }
    osmp__trace_copy(t, t->rank, t->rank, vector_bytes);
    osmp__direct_publish(t, &co->x);
    co->first = NULL;
    for (co->i = 0; co->i < t->size; co->i++) { /* 3 */
        if (co->i != t->rank) OSMP__AWAIT(R, co, m, co->i, co->x.d, co->x.s);
        const char *v = osmp__mb_slot(m, co->i, co->x.d, co->x.slot) + off;
        if (co->i == 0) {
            co->first = v;
            if (t->size == 1) osmp__copy(a->out, v, bytes);
        } else if (co->i == 1 && a->fn3) {
            a->fn3(a->out, co->first, v, a->count); /* rank 0's and 1's parts read once, no copy of rank 0's first */
        } else {
            if (co->i == 1) osmp__copy(a->out, co->first, bytes);
            a->fn(a->out, v, a->count);
        }
        osmp__trace_copy(t, co->i, t->rank, bytes);
    }
    osmp__trace_reduce(t, (size_t)t->size * bytes);
    osmp__direct_done(t, &co->x); /* 4, 5 */
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

int osmp__direct_fold(osmp__coll_t t, const struct osmp__args *a, size_t vector_bytes, size_t lo)
{
    struct osmp__co co;
    return direct_fold(t, a, vector_bytes, lo, &co, 0);
}

int osmp__direct_fold_co(osmp__coll_t t, const struct osmp__args *a, size_t vector_bytes, size_t lo,
                         struct osmp__co *co)
{
    return direct_fold(t, a, vector_bytes, lo, co, 1);
}

/* The largest vector osmp__direct_fits takes on this team (selection gives
 * larger ones to the next row). */
size_t osmp__allreduce_direct_max(osmp__coll_t t)
{
    return osmp__direct_max(t, 1, 1);
}

static inline __attribute__((always_inline)) int allreduce_direct(osmp__coll_t t, const struct osmp__args *a,
                                                                  struct osmp__co *co, const int R)
{
    return direct_fold(t, a, a->count * a->esize, 0, co, R);
}
OSMP__COMPILE_TWICE(osmp__allreduce_direct, allreduce_direct)
