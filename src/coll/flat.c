/*
 * Algorithms for a team whose plan is a single group (2 participants on one
 * L3, a small team in one domain): no leader, every rank reads the others'
 * mailboxes directly. They trade the tree's second hop for more readers per
 * line, which pays while the group is small (latency) or the data large (the
 * reduction work is spread over every rank instead of the leader).
 */
#include <string.h>

#include "coll.h"

/* Largest flat team that uses the all-read algorithms for small messages:
 * every rank polls every other rank's line, n^2 line transfers per call. */
#define DIRECT_MAX_RANKS 16

int osmp__flat_team(osmp__team_t t)
{
    return t->plan->nlevels <= 1;
}

/*
 * Direct allreduce protocol (message fits the mailbox line):
 *   1. write my vector into my up line, publish up s;
 *   2. for r = 0 .. n-1 in this order, wait for r's up s and fold its vector in
 *      (the same order on every rank: bitwise identical results);
 *   3. publish down s: I have read every line of step s, they may be rewritten.
 */
int osmp__direct_allreduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize,
                           osmp__reduce_fn fn)
{
    size_t bytes = count * esize;
    uint64_t s = ++t->step;
    char *line = osmp__claim(t, OSMP__UP, s, 1, t->peers, t->size - 1, OSMP__DOWN, s);
    if (!line) return t->failed;
    memcpy(line, in, bytes); /* 1 */
    osmp__publish_own(t, OSMP__UP, s);
    char acc[OSMP_INLINE_MAX];
    for (int r = 0; r < t->size; r++) { /* 2 */
        const char *v = osmp__region(t, r)->chan[OSMP__UP].inline_data;
        if (r != t->rank && osmp__wait_peer(t, r, OSMP__UP, s)) return t->failed;
        if (r == 0)
            memcpy(acc, v, bytes);
        else
            fn(acc, v, count);
    }
    memcpy(out, acc, bytes);
    osmp__publish_own(t, OSMP__DOWN, s); /* 3 */
    return OSMP_OK;
}

/*
 * Sliced allreduce protocol (large messages), per chunk c, steps s1 = base+2c+1
 * and s2 = s1+1:
 *   1. copy chunk c of my input, but for my own part, into my up slot, publish up s1;
 *   2. rank i owns part i of the chunk: fold part i of every rank's up slot, in
 *      rank order, into part i of my down slot, publish down s1 (I have also
 *      finished reading the up slots of s1);
 *   3. copy every part from its owner's down slot into my output, publish up s2
 *      (I have finished reading the down slots of s1).
 * Each rank reduces 1/n of the data, so the work and the memory traffic are
 * spread evenly, and each part is computed once: identical results everywhere.
 */
int osmp__sliced_allreduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize,
                           osmp__reduce_fn fn)
{
    int n = t->size, me = t->rank;
    size_t per_chunk = t->chunk / esize, nchunks = (count + per_chunk - 1) / per_chunk;
    uint64_t base = t->step;
    t->step += 2 * nchunks;
    for (size_t c = 0; c < nchunks; c++) {
        uint64_t s1 = base + 2 * c + 1, s2 = s1 + 1;
        size_t off = c * per_chunk, k = count - off < per_chunk ? count - off : per_chunk;
        size_t lo = k * (size_t)me / (size_t)n, hi = k * (size_t)(me + 1) / (size_t)n;
        const char *mine = (const char *)in + off * esize;
        char *up = osmp__claim(t, OSMP__UP, s1, 0, t->peers, n - 1, OSMP__DOWN, s1);
        if (!up) return t->failed;
        memcpy(up, mine, lo * esize); /* 1: the others' parts only; I read mine in place */
        memcpy(up + hi * esize, mine + hi * esize, (k - hi) * esize);
        osmp__publish_own(t, OSMP__UP, s1);
        char *down = osmp__claim(t, OSMP__DOWN, s1, 0, t->peers, n - 1, OSMP__UP, s2); /* 2 */
        if (!down) return t->failed;
        for (int r = 0; r < n; r++) {
            if (r != me && osmp__wait_peer(t, r, OSMP__UP, s1)) return t->failed;
            const char *v = (r == me ? mine : osmp__ring(t, r, OSMP__UP, s1)) + lo * esize;
            if (r == 0)
                memcpy(down + lo * esize, v, (hi - lo) * esize);
            else
                fn(down + lo * esize, v, hi - lo);
        }
        osmp__publish_own(t, OSMP__DOWN, s1);
        for (int r = 0; r < n; r++) { /* 3 */
            size_t rlo = k * (size_t)r / (size_t)n, rhi = k * (size_t)(r + 1) / (size_t)n;
            if (r != me && osmp__wait_peer(t, r, OSMP__DOWN, s1)) return t->failed;
            memcpy((char *)out + (off + rlo) * esize, osmp__ring(t, r, OSMP__DOWN, s1) + rlo * esize,
                   (rhi - rlo) * esize);
        }
        osmp__publish_own(t, OSMP__UP, s2);
    }
    return OSMP_OK;
}

/* Direct barrier protocol: 1. publish up s; 2. wait for every other rank's up s. */
int osmp__direct_barrier(osmp__team_t t)
{
    uint64_t s = ++t->step;
    osmp__publish_own(t, OSMP__UP, s);
    for (int r = 0; r < t->size; r++)
        if (r != t->rank && osmp__wait_peer(t, r, OSMP__UP, s)) return t->failed;
    return OSMP_OK;
}
