/* Alltoall through the slots: every rank writes and reads at once. */
#include <string.h>

#include "coll/coll.h"

int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a);

/*
 * Alltoall protocol (through the slots; every block is B bytes, so every rank
 * knows every chunk). Step s = base + 1 + c * n + q names chunk c of the blocks
 * destined to rank q; its slot at each writer is (c * n + q) % depth.
 *   0. my own block goes straight from my input to my output;
 *   for each chunk c, for q = 0 .. n-1 (s increasing on every rank):
 *   1. q != me: claim my down slot of s (its last reader has said it is done),
 *      put chunk c of my block for q in it, publish down s;
 *   2. q == me: from every other rank w, wait for its down s and copy chunk c of
 *      its block for me out of its slot; then publish up s (I have read them).
 * Each rank writes in step order and reads at its own steps between its
 * writes, so all ranks write and read at once (n scatters one after the other
 * would leave n - 1 ranks idle each time). No deadlock: a claim at step s
 * waits for the reads of step s - depth or earlier, which need only writes of
 * those steps, done by every rank before it went past them.
 */
int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t B = a->count * a->esize, chunk = m->chunk;
    const char *in = a->in;
    char *out = a->out;
    if (out + (size_t)me * B != in + (size_t)me * B) { /* 0 */
        memcpy(out + (size_t)me * B, in + (size_t)me * B, B);
        osmp__trace_copy(t, me, me, B);
    }
    uint64_t base = osmp__phase(t);
    for (size_t c = 0; c * chunk < B; c++) {
        size_t off = c * chunk, len = B - off < chunk ? B - off : chunk;
        for (int q = 0; q < n; q++) {
            uint64_t k = c * (uint64_t)n + (uint64_t)q, s = base + 1 + k;
            int slot = osmp__mb_ring(m, k);
            if (q != me) { /* 1 */
                char *dst = osmp__mb_claim(m, OSMP__DOWN, slot, &q, 1, OSMP__UP, s);
                if (!dst) return m->failed;
                memcpy(dst, in + (size_t)q * B + off, len);
                osmp__trace_copy(t, me, me, len);
                osmp__mb_publish(m, OSMP__DOWN, s);
                continue;
            }
            for (int w = 0; w < n; w++) { /* 2 */
                if (w == me) continue;
                if (osmp__mb_wait(m, w, OSMP__DOWN, s)) return m->failed;
                memcpy(out + (size_t)w * B + off, osmp__mb_slot(m, w, OSMP__DOWN, slot), len);
                osmp__trace_copy(t, w, me, len);
            }
            osmp__mb_publish(m, OSMP__UP, s);
        }
    }
    return OSMP_OK;
}
