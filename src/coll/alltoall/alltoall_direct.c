/*
 * Direct alltoall: every rank writes its blocks for the others into its line
 * (or one slot) and reads its own block out of every other rank's. For small
 * vectors on small flat teams it takes one hop per block, where the slots
 * take a slot and its counter line per writer and call.
 */
#include <string.h>

#include "coll/co.h"

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
 * Across waits (resumable form): the line (co->x) and rank r (co->i).
 */
size_t osmp__alltoall_direct_max(osmp__coll_t t)
{
    return t->size > 1 ? t->mb.chunk / (size_t)(t->size - 1) : SIZE_MAX;
}

static inline __attribute__((always_inline)) int alltoall_direct(osmp__coll_t t, const struct osmp__args *a,
                                                                 struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t B = a->count * a->esize, V = B * (size_t)(n - 1);
    const char *in = a->in;
    char *out = a->out;
    OSMP__CO_BEGIN(R, co);
    osmp__direct_take(t, V, &co->x); /* 1 */
    OSMP__AWAIT_CLAIM(R, co, m, co->x.d, co->x.slot);
    {
        char *line = osmp__direct_claim_taken(t, &co->x);
        if (!line) return m->failed;
        memcpy(line, in, (size_t)me * B); /* 2 */
        memcpy(line + (size_t)me * B, in + (size_t)(me + 1) * B, (size_t)(n - 1 - me) * B);
    }
    osmp__trace_copy(t, me, me, V);
    osmp__direct_publish(t, &co->x);
    memcpy(out + (size_t)me * B, in + (size_t)me * B, B); /* (in place, the input is a copy: api.c) */
    osmp__trace_copy(t, me, me, B);
    for (co->i = 0; co->i < n; co->i++) { /* 3 */
        if (co->i == me) continue;
        OSMP__AWAIT(R, co, m, co->i, co->x.d, co->x.s);
        memcpy(out + (size_t)co->i * B,
               osmp__mb_slot(m, co->i, co->x.d, co->x.slot) + (size_t)(me - (me > co->i)) * B, B);
        osmp__trace_copy(t, co->i, me, B);
    }
    osmp__direct_done(t, &co->x); /* 4 */
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__alltoall_direct, alltoall_direct)
