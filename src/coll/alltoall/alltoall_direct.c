/*
 * Direct alltoall: every rank writes its blocks for the others into its line
 * (or one slot) and reads its own block out of every other rank's. For small
 * vectors on small flat teams it takes one hop per block, where the slots
 * take a slot and its counter line per writer and call.
 */
#include <string.h>

#include "coll/coll.h"

int osmp__alltoall_direct(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a);

/*
 * Direct alltoall protocol (the n - 1 blocks of my send vector for the others
 * fit the mailbox line, or one slot; larger vectors run slots). Block q of a
 * rank w's vector sits at index q - (q > w) of its line: its own is left out.
 *   1. write my blocks for the others into my up line (or my next up slot:
 *      osmp__slots_take), publish up s;
 *   2. my own block from my input to its place in my output, while the others
 *      copy;
 *   3. for every other rank r, wait for its up s and copy my block from its
 *      line (slot) to block r of my output;
 *   4. publish down s: I have read every line of step s, they may be rewritten.
 */
int osmp__alltoall_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t B = a->count * a->esize, V = B * (size_t)(n - 1);
    if (V > m->chunk) return osmp__trace_handover(t, "slots"), osmp__alltoall_slots(t, a);
    int slot = V <= OSMP_INLINE_MAX ? OSMP__SLOT_INLINE : osmp__mb_ring(m, osmp__slots_take(t, 1));
    uint64_t s = osmp__phase(t) + 1;
    char *line = osmp__mb_claim(m, OSMP__UP, slot, t->peers, n - 1, OSMP__DOWN, s);
    if (!line) return m->failed;
    const char *in = a->in;
    char *out = a->out;
    memcpy(line, in, (size_t)me * B); /* 1 */
    memcpy(line + (size_t)me * B, in + (size_t)(me + 1) * B, (size_t)(n - 1 - me) * B);
    osmp__trace_copy(t, me, me, V);
    osmp__mb_publish(m, OSMP__UP, s);
    memcpy(out + (size_t)me * B, in + (size_t)me * B, B); /* 2 (in place, the input is a copy: api.c) */
    osmp__trace_copy(t, me, me, B);
    for (int r = 0; r < n; r++) { /* 3 */
        if (r == me) continue;
        if (osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
        memcpy(out + (size_t)r * B, osmp__mb_slot(m, r, OSMP__UP, slot) + (size_t)(me - (me > r)) * B, B);
        osmp__trace_copy(t, r, me, B);
    }
    osmp__mb_publish(m, OSMP__DOWN, s); /* 4 */
    return OSMP_OK;
}
