/*
 * Sliced allreduce: every rank reduces one part of each chunk, so the
 * reduction work and the memory traffic are spread over the whole team instead
 * of one leader (selection: flat teams, large messages).
 */
#include <string.h>

#include "coll/coll.h"

/*
 * Sliced allreduce protocol, per chunk c (ring slot c % depth), steps
 * s1 = base+2c+1 and s2 = s1+1:
 *   1. copy chunk c of my input, but for my own part, into my up slot, publish up s1;
 *   2. rank i owns part i of the chunk: fold part i of every rank's up slot, in
 *      rank order, into part i of my down slot, publish down s1 (I have also
 *      finished reading the up slots of s1);
 *   3. copy every part from its owner's down slot into my output, publish up s2
 *      (I have finished reading the down slots of s1).
 * Each part is computed once: identical results everywhere.
 */
int osmp__allreduce_sliced(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int n = t->size, me = t->rank;
    size_t esize = a->esize, count = a->count;
    size_t per_chunk = m->chunk / esize, nchunks = (count + per_chunk - 1) / per_chunk;
    uint64_t base = osmp__phase(t);
    for (size_t c = 0; c < nchunks; c++) {
        uint64_t s1 = base + 2 * c + 1, s2 = s1 + 1;
        int slot = osmp__mb_ring(m, c);
        size_t off = c * per_chunk, k = count - off < per_chunk ? count - off : per_chunk;
        size_t lo = k * (size_t)me / (size_t)n, hi = k * (size_t)(me + 1) / (size_t)n;
        const char *mine = (const char *)a->in + off * esize;
        char *up = osmp__mb_claim(m, OSMP__UP, slot, t->peers, n - 1, OSMP__DOWN, s1);
        if (!up) return m->failed;
        memcpy(up, mine, lo * esize); /* 1: the others' parts only; I read mine in place */
        memcpy(up + hi * esize, mine + hi * esize, (k - hi) * esize);
        osmp__trace_copy(t, me, me, (k - (hi - lo)) * esize);
        osmp__mb_publish(m, OSMP__UP, s1);
        char *down = osmp__mb_claim(m, OSMP__DOWN, slot, t->peers, n - 1, OSMP__UP, s2); /* 2 */
        if (!down) return m->failed;
        for (int r = 0; r < n; r++) {
            if (r != me && osmp__mb_wait(m, r, OSMP__UP, s1)) return m->failed;
            const char *v = (r == me ? mine : osmp__mb_slot(m, r, OSMP__UP, slot)) + lo * esize;
            if (r == 0)
                memcpy(down + lo * esize, v, (hi - lo) * esize);
            else
                a->fn(down + lo * esize, v, hi - lo);
            osmp__trace_copy(t, r, me, (hi - lo) * esize);
        }
        osmp__trace_reduce(t, (size_t)n * (hi - lo) * esize);
        osmp__mb_publish(m, OSMP__DOWN, s1);
        for (int r = 0; r < n; r++) { /* 3 */
            size_t rlo = k * (size_t)r / (size_t)n, rhi = k * (size_t)(r + 1) / (size_t)n;
            if (r != me && osmp__mb_wait(m, r, OSMP__DOWN, s1)) return m->failed;
            memcpy((char *)a->out + (off + rlo) * esize, osmp__mb_slot(m, r, OSMP__DOWN, slot) + rlo * esize,
                   (rhi - rlo) * esize);
            osmp__trace_copy(t, r, me, (rhi - rlo) * esize);
        }
        osmp__mb_publish(m, OSMP__UP, s2);
    }
    return OSMP_OK;
}
