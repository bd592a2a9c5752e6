/*
 * Gather, scatter and alltoall: the data of every rank goes to one place (or
 * from one place), so there is nothing to combine on the way and a tree would
 * only add copies. The root reads (or writes) each rank's block directly:
 * through the ranks' slots, chunk by chunk, or, when every pair can read the
 * other's memory and the blocks are large, once, straight from the buffers.
 */
#include <string.h>

#include "coll.h"

static size_t chunk_count(osmp__team_t t, size_t bytes)
{
    return (bytes + t->chunk - 1) / t->chunk;
}

static int use_single_copy(osmp__team_t t, size_t bytes)
{
    return t->single_copy && bytes >= t->single_copy_min;
}

/*
 * Gather protocol (slots), per chunk c:
 *   1. every rank but the root puts chunk c of its block in its up slot, publishes;
 *   2. the root copies each rank's chunk into place, then publishes (slots free).
 * Single copy:
 *   1. every rank exposes its buffer and publishes;
 *   2. the root copies each block from where it is, then publishes;
 *   3. the other ranks return once the root has published (it has read them).
 */
int osmp__gather(osmp__team_t t, const void *in, void *out, size_t bytes, int root)
{
    int me = t->rank, rc = OSMP_OK;
    if (me == root && in != (char *)out + (size_t)root * bytes) memcpy((char *)out + (size_t)root * bytes, in, bytes);
    if (use_single_copy(t, bytes)) {
        uint64_t s = ++t->step;
        if (me != root) {
            osmp__region(t, me)->chan[OSMP__UP].addr = (uint64_t)(uintptr_t)in;
            osmp__publish_own(t, OSMP__UP, s); /* 1 */
            return osmp__wait_peer(t, root, OSMP__UP, s); /* 3 */
        }
        for (int r = 0; r < t->size; r++) { /* 2 */
            if (r == root) continue;
            if (osmp__wait_peer(t, r, OSMP__UP, s)) return t->failed;
            const void *src = (const void *)(uintptr_t)osmp__region(t, r)->chan[OSMP__UP].addr;
            if (osmp__copy_from(t->pids[r], t->local[r], (char *)out + (size_t)r * bytes, src, bytes)) rc = OSMP_ERR_SHM;
        }
        osmp__publish_own(t, OSMP__UP, s);
        return rc;
    }
    size_t nchunks = chunk_count(t, bytes);
    uint64_t base = t->step;
    t->step += nchunks;
    for (size_t c = 0; c < nchunks; c++) {
        uint64_t s = base + 1 + c;
        size_t off = c * t->chunk, n = bytes - off < t->chunk ? bytes - off : t->chunk;
        if (me != root) { /* 1 */
            char *slot = osmp__claim(t, OSMP__UP, s, 0, &root, 1, OSMP__UP, s);
            if (!slot) return t->failed;
            memcpy(slot, (const char *)in + off, n);
            osmp__publish_own(t, OSMP__UP, s);
            continue;
        }
        for (int r = 0; r < t->size; r++) { /* 2 */
            if (r == root) continue;
            if (osmp__wait_peer(t, r, OSMP__UP, s)) return t->failed;
            memcpy((char *)out + (size_t)r * bytes + off, osmp__ring(t, r, OSMP__UP, s), n);
        }
        osmp__publish_own(t, OSMP__UP, s);
    }
    return OSMP_OK;
}

/*
 * Scatter protocol (slots), per chunk c and rank r (one step each):
 *   1. the root puts chunk c of block r in its down slot and publishes;
 *   2. rank r copies it out and publishes (the slot is free again).
 * Single copy:
 *   1. the root exposes its buffer and publishes;
 *   2. each rank copies its block from there and publishes;
 *   3. the root returns once every rank has published.
 */
int osmp__scatter(osmp__team_t t, const void *in, void *out, size_t bytes, int root)
{
    int me = t->rank, rc = OSMP_OK;
    if (me == root && out != (const char *)in + (size_t)root * bytes)
        memcpy(out, (const char *)in + (size_t)root * bytes, bytes);
    if (use_single_copy(t, bytes)) {
        uint64_t s = ++t->step;
        if (me == root) {
            osmp__region(t, me)->chan[OSMP__DOWN].addr = (uint64_t)(uintptr_t)in;
            osmp__publish_own(t, OSMP__DOWN, s); /* 1 */
            for (int r = 0; r < t->size; r++) /* 3 */
                if (r != root && osmp__wait_peer(t, r, OSMP__DOWN, s)) return t->failed;
            return OSMP_OK;
        }
        if (osmp__wait_peer(t, root, OSMP__DOWN, s)) return t->failed; /* 2 */
        const char *src = (const char *)(uintptr_t)osmp__region(t, root)->chan[OSMP__DOWN].addr;
        if (osmp__copy_from(t->pids[root], t->local[root], out, src + (size_t)me * bytes, bytes)) rc = OSMP_ERR_SHM;
        osmp__publish_own(t, OSMP__DOWN, s);
        return rc;
    }
    size_t nchunks = chunk_count(t, bytes);
    uint64_t base = t->step;
    t->step += nchunks * (uint64_t)t->size;
    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * t->chunk, n = bytes - off < t->chunk ? bytes - off : t->chunk;
        for (int r = 0; r < t->size; r++) {
            if (r == root) continue;
            uint64_t s = base + 1 + c * (uint64_t)t->size + (uint64_t)r;
            if (me == root) { /* 1 */
                char *slot = osmp__claim(t, OSMP__DOWN, s, 0, &r, 1, OSMP__DOWN, s);
                if (!slot) return t->failed;
                memcpy(slot, (const char *)in + (size_t)r * bytes + off, n);
                osmp__publish_own(t, OSMP__DOWN, s);
            } else if (me == r) { /* 2 */
                if (osmp__wait_peer(t, root, OSMP__DOWN, s)) return t->failed;
                memcpy((char *)out + off, osmp__ring(t, root, OSMP__DOWN, s), n);
                osmp__publish_own(t, OSMP__DOWN, s);
            }
        }
    }
    return OSMP_OK;
}

/*
 * Alltoall protocol (single copy, pairwise):
 *   1. every rank exposes its send buffer and publishes up;
 *   2. every rank copies block `me` of each peer's buffer into place, publishes down;
 *   3. every rank returns once all peers have published down (nobody reads it any more).
 * Without single copy: rank r's blocks are a scatter rooted at r, for every r.
 */
int osmp__alltoall(osmp__team_t t, const void *in, void *out, size_t bytes)
{
    int me = t->rank, n = t->size, rc = OSMP_OK;
    if (use_single_copy(t, bytes)) {
        uint64_t s = ++t->step;
        osmp__region(t, me)->chan[OSMP__UP].addr = (uint64_t)(uintptr_t)in;
        osmp__publish_own(t, OSMP__UP, s); /* 1 */
        for (int k = 0; k < n; k++) { /* 2: start with the next rank so readers spread out */
            int r = (me + k) % n;
            if (osmp__wait_peer(t, r, OSMP__UP, s)) return t->failed;
            const char *src = (const char *)(uintptr_t)osmp__region(t, r)->chan[OSMP__UP].addr;
            if (osmp__copy_from(t->pids[r], t->local[r], (char *)out + (size_t)r * bytes, src + (size_t)me * bytes,
                                bytes))
                rc = OSMP_ERR_SHM;
        }
        osmp__publish_own(t, OSMP__DOWN, s);
        for (int r = 0; r < n; r++) /* 3 */
            if (osmp__wait_peer(t, r, OSMP__DOWN, s)) return t->failed;
        return rc;
    }
    for (int r = 0; r < n && !t->failed; r++) { /* one scatter per rank: no buffer beyond the caller's */
        int rr = osmp__scatter(t, in, (char *)out + (size_t)r * bytes, bytes, r);
        if (rr) rc = rr;
    }
    return rc;
}
