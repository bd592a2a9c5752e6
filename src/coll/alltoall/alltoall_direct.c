/*
 * Direct alltoall: every rank writes its blocks for the others into its line
 * (or one slot) and reads its own block out of every other rank's. For small
 * vectors on small flat teams it takes one hop per block, where the slots
 * take a slot and its counter line per writer and call.
 */
#include <string.h>

#include "coll/coll.h"

/*
 * Direct alltoall protocol (the n - 1 blocks of my send vector for the others
 * fit the mailbox line, or one slot: osmp__alltoall_direct_max; selection gives
 * larger vectors to the next row). Block q of a
 * rank w's vector sits at index q - (q > w) of its line: its own is left out.
 * The direct exchange of allreduce_direct.c (alternating lines, "done reading"
 * owed to the next call):
 *   1. claim line d (slot) of this call (osmp__direct_claim);
 *   2. write my blocks for the others there, publish step s on line d; my own
 *      block from my input to its place in my output, while the others copy;
 *   3. for every other rank r, wait for its line d at s and copy my block from
 *      there to block r of my output;
 *   4. fetch line 1-d, owe "done reading s" on it (osmp__direct_done).
 */
size_t osmp__alltoall_direct_max(osmp__coll_t t)
{
    return t->size > 1 ? t->mb.chunk / (size_t)(t->size - 1) : SIZE_MAX;
}

int osmp__alltoall_direct(osmp__coll_t t, const struct osmp__args *a)
{
    int me = t->rank, n = t->size;
    size_t B = a->count * a->esize, V = B * (size_t)(n - 1);
    struct osmp__direct x;
    char *line = osmp__direct_claim(t, V, &x); /* 1 */
    if (!line) return t->mb.failed;
    const char *in = a->in;
    char *out = a->out;
    memcpy(line, in, (size_t)me * B); /* 2 */
    memcpy(line + (size_t)me * B, in + (size_t)(me + 1) * B, (size_t)(n - 1 - me) * B);
    osmp__trace_copy(t, me, me, V);
    osmp__direct_publish(t, &x);
    memcpy(out + (size_t)me * B, in + (size_t)me * B, B); /* (in place, the input is a copy: api.c) */
    osmp__trace_copy(t, me, me, B);
    for (int r = 0; r < n; r++) { /* 3 */
        if (r == me) continue;
        const char *v = osmp__direct_read(t, &x, r);
        if (!v) return t->mb.failed;
        memcpy(out + (size_t)r * B, v + (size_t)(me - (me > r)) * B, B);
        osmp__trace_copy(t, r, me, B);
    }
    osmp__direct_done(t, &x); /* 4 */
    return OSMP_OK;
}
