/*
 * Direct allreduce: no leader, every rank reads every other rank's line. It
 * trades the tree's second hop for more readers per line, which pays while the
 * team is small (selection: flat teams up to 16 ranks).
 */
#include <string.h>

#include "coll/coll.h"

/*
 * Direct allreduce protocol (message fits the mailbox line; larger ones run
 * sliced). Call k of the team writes line d = k % 2 (the UP mailbox, then the
 * DOWN one, alternating), so that no call waits for the readers of its own line:
 *   1. claim line d: its last content (call k-2) has been read once every peer
 *      has published call k-1 (in line 1-d) or the "done" it owes (step 5);
 *   2. write my vector into line d, publish step s on it;
 *   3. for r = 0 .. n-1 in this order, wait for r's line d at s and fold its
 *      vector in (the same order on every rank: bitwise identical results);
 *   4. fetch line 1-d for writing now, off the next call's critical path: its
 *      readers (call k-1) are done, since every peer published s in step 3;
 *   5. owe "done reading step s" as step s + 1 on line 1-d: the next call, if
 *      it is this algorithm, says so by publishing its data there; any other
 *      call publishes it first (osmp__phase). Publishing it here would cost a
 *      fence that waits for my line 1-d to leave the peers' caches.
 */
int osmp__allreduce_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    size_t bytes = a->count * a->esize;
    if (bytes > OSMP_INLINE_MAX) return osmp__allreduce_sliced(t, a);
    uint64_t s = osmp__phase_only(t) + 1;
    int d = (int)(t->direct_calls++ & 1);
    char *line = osmp__mb_claim(m, d, OSMP__SLOT_INLINE, t->peers, t->size - 1, 1 - d, s + 1); /* 1 */
    if (!line) return m->failed;
    memcpy(line, a->in, bytes); /* 2 */
    osmp__trace_copy(t, t->rank, t->rank, bytes);
    osmp__mb_publish(m, d, s);
    t->owed = 0; /* what a previous call owed on line d: s is above it */
    char acc[OSMP_INLINE_MAX];
    for (int r = 0; r < t->size; r++) { /* 3 */
        const char *v = osmp__mb_slot(m, r, d, OSMP__SLOT_INLINE);
        if (r != t->rank && osmp__mb_wait(m, r, d, s)) return m->failed;
        if (r == 0)
            memcpy(acc, v, bytes);
        else
            a->fn(acc, v, a->count);
        osmp__trace_copy(t, r, t->rank, bytes);
    }
    memcpy(a->out, acc, bytes);
    osmp__trace_copy(t, t->rank, t->rank, bytes);
    osmp__trace_reduce(t, (size_t)t->size * bytes);
    __builtin_prefetch(osmp__mb_chan(m, t->rank, 1 - d), 1, 3); /* 4 */
    osmp__owe(t, 1 - d, s + 1);                                  /* 5 */
    return OSMP_OK;
}
