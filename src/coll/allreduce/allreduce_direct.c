/*
 * Direct allreduce: no leader, every rank reads every other rank's line. It
 * trades the tree's second hop for more readers per line, which pays while the
 * team is small (selection: flat teams up to 16 ranks).
 */
#include <string.h>

#include "coll/coll.h"

/*
 * Direct allreduce protocol (message fits the mailbox line; larger ones run
 * sliced):
 *   1. write my vector into my up line, publish up s;
 *   2. for r = 0 .. n-1 in this order, wait for r's up s and fold its vector in
 *      (the same order on every rank: bitwise identical results);
 *   3. publish down s: I have read every line of step s, they may be rewritten.
 */
int osmp__allreduce_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    size_t bytes = a->count * a->esize;
    if (bytes > OSMP_INLINE_MAX) return osmp__allreduce_sliced(t, a);
    uint64_t s = osmp__phase(t) + 1;
    char *line = osmp__mb_claim(m, OSMP__UP, OSMP__SLOT_INLINE, t->peers, t->size - 1, OSMP__DOWN, s);
    if (!line) return m->failed;
    memcpy(line, a->in, bytes); /* 1 */
    osmp__trace_copy(t, t->rank, t->rank, bytes);
    osmp__mb_publish(m, OSMP__UP, s);
    char acc[OSMP_INLINE_MAX];
    for (int r = 0; r < t->size; r++) { /* 2 */
        const char *v = osmp__mb_slot(m, r, OSMP__UP, OSMP__SLOT_INLINE);
        if (r != t->rank && osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
        if (r == 0)
            memcpy(acc, v, bytes);
        else
            a->fn(acc, v, a->count);
        osmp__trace_copy(t, r, t->rank, bytes);
    }
    memcpy(a->out, acc, bytes);
    osmp__trace_copy(t, t->rank, t->rank, bytes);
    osmp__trace_reduce(t, (size_t)t->size * bytes);
    osmp__mb_publish(m, OSMP__DOWN, s); /* 3 */
    return OSMP_OK;
}
