/*
 * Direct gather and gatherv: every rank's data goes to one place, so there is
 * nothing to combine on the way and a tree would only add copies. The root
 * reads each rank's block directly.
 */
#include <string.h>

#include "coll/coll.h"

int osmp__gather_direct(osmp__coll_t t, const struct osmp__args *a);

/*
 * Gather(v) protocol. Rank r's block is count_r elements at displacement
 * displ_r of the root's output (gather: count and r * count; gatherv: the
 * root's counts and displs; every rank knows its own count). A pair copies the
 * block once (single copy) when it is large and single copy works, else
 * through the sender's slots. Slots, per chunk k (step base+1+k, slot
 * (first+k) % depth; first moves on by one every call, so a sender may run a
 * call ahead of the root instead of waiting for it to read the last one; a
 * block below a chunk that fits a mini line goes in the sender's next one
 * instead, and a gather block of two lines' data in the next aligned pair
 * (mailbox.h), the root waiting on the second line: lines_of):
 *   1. every sender puts chunk k of its block in its up slot, publishes up;
 *   2. the root copies chunk k of every block that has one into place, then
 *      publishes up (those slots are free again).
 * Single copy:
 *   1. the sender exposes its buffer and publishes up base+1;
 *   2. the root (after the slot chunks) copies the block from where it is;
 *   3. the root publishes down base+1, and the senders return once it has (it
 *      has read them).
 * Exposed (blocks of a chunk or more that single copy does not take): before
 * step 1, each such sender says in a mini line of its own (step base+1)
 * whether the root reads its block in place (an osmp_alloc buffer: no CMA) or
 * through its slots; it decides alone, and the line is not rewritten before
 * the root's down base+1. An exposing sender then does single copy's 3, and
 * the root reads its block as in single copy's 2.
 */
/* May rank's block of `bytes` be exposed? Both ends know the size. */
static int exposable(osmp__coll_t t, const struct osmp__args *a, size_t bytes)
{
    return !osmp__copy_once(a, bytes) && bytes >= t->mb.chunk;
}

/* Where the root reads rank r's block of `bytes` in place (0: through r's
 * slots, or by single copy). Only after r's mini line has been waited for. */
static uint64_t exposed_at(osmp__coll_t t, const struct osmp__args *a, int r, size_t bytes, uint64_t mini)
{
    uint64_t at = 0;
    if (exposable(t, a, bytes)) memcpy(&at, osmp__mb_slot(&t->mb, r, OSMP__UP, osmp__mini_slot(mini)), sizeof(at));
    return at;
}

/* Mini lines a block of `bytes` rides in (one line latency, and the sender may
 * run ahead of the root), or 0: the slots. Both ends know the block's size; at
 * most `lmax` lines, which every rank takes per call: gather's 2 for blocks of
 * two lines' data, else 1; gatherv's 1 (a sender knows only its own count),
 * but in a team of two, whose one block both ends know, as gather's
 * (docs/measurements.md, "Gather, scatter and the vector variants", C4). Never
 * a block of a chunk or more (OSMP_CHUNK_SIZE may be 64): that one may be
 * exposed, and its exposure's line is the first of these, so if it is not read
 * in place it goes through the slots (a sender that then claimed the same line
 * for its data waited for the root, which waited for the data: a hang). */
static int lines_of(osmp__coll_t t, size_t bytes, int lmax)
{
    int lines = osmp__mini_lines(bytes);
    return lines <= lmax && bytes < t->mb.chunk ? lines : 0;
}

int osmp__gather_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = a->root, rc = OSMP_OK;
    size_t e = a->esize, chunk = m->chunk;
    char *out = a->out;
    /* (gatherv in a team of two: the one block) */
    size_t block = (a->vector && me == root ? osmp__count_of(a, t->size - 1 - root) : a->count) * e;
    int lmax = (!a->vector || t->size == 2) && osmp__mini_lines(block) == 2 ? 2 : 1;
    uint64_t base = osmp__phase(t), first = osmp__slots_take(t, 1),
             mini = osmp__minis_take(t, (uint64_t)lmax + (lmax > 1));
    mini += lmax > 1 && mini % 2; /* a pair starts at an even line */
    if (me != root) {
        size_t bytes = a->count * e;
        int lines = lines_of(t, bytes, lmax);
        if (osmp__copy_once(a, bytes)) {
            osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(a->in);
            osmp__mb_publish(m, OSMP__UP, base + 1);      /* 1 */
            return osmp__mb_wait(m, root, OSMP__DOWN, base + 1); /* 3 */
        }
        if (exposable(t, a, bytes)) { /* exposed */
            uint64_t at = osmp__expose_mapped(a->in);
            char *line = osmp__mb_claim(m, OSMP__UP, osmp__mini_slot(mini), &root, 1, OSMP__DOWN, base + 1);
            if (!line) return m->failed;
            memcpy(line, &at, sizeof(at));
            osmp__mb_publish_slot(m, OSMP__UP, osmp__mini_slot(mini), base + 1);
            if (at) return osmp__mb_wait(m, root, OSMP__DOWN, base + 1);
        }
        if (lines) { /* 1, in my mini lines */
            if ((rc = osmp__mb_send_minis(m, OSMP__UP, mini, root, OSMP__UP, base + 1, a->in, bytes))) return rc;
            osmp__trace_copy(t, me, me, bytes);
            return OSMP_OK;
        }
        for (size_t k = 0; k * chunk < bytes; k++) { /* 1 */
            uint64_t s = base + 1 + k;
            size_t off = k * chunk, n = bytes - off < chunk ? bytes - off : chunk;
            int slot = osmp__mb_ring(m, first + k);
            char *dst = osmp__mb_claim(m, OSMP__UP, slot, &root, 1, OSMP__UP, s);
            if (!dst) return m->failed;
            osmp__stage(t, dst, (const char *)a->in + off, n);
            osmp__trace_copy(t, me, me, n);
            osmp__mb_publish(m, OSMP__UP, s);
        }
        return OSMP_OK;
    }
    char *mine = out + osmp__displ_of(a, root) * e;
    if (a->count && a->in != mine) { /* (a zero count may come with NULL) */
        osmp__copy(mine, a->in, a->count * e);
        osmp__trace_copy(t, me, me, a->count * e);
    }
    if ((!a->vector || t->size == 2) && !osmp__copy_once(a, block) && lines_of(t, block, lmax)) {
        /* Every block in its sender's mini lines (gather: they are all alike; gatherv in a team of two:
         * the one block): step 2 alone and the publications the loops below end with, one loop over the
         * ranks where they make three, on the root, which a small gather back to back waits for. */
        for (int r = 0; r < t->size; r++) {
            if (r == root) continue;
            if ((rc = osmp__mb_recv_minis(m, r, OSMP__UP, mini, base + 1, out + osmp__displ_of(a, r) * e,
                                          block)))
                return rc;
            osmp__trace_copy(t, r, me, block);
        }
        osmp__mb_publish(m, OSMP__UP, base + 1);
        osmp__mb_publish(m, OSMP__DOWN, base + 1);
        return OSMP_OK;
    }
    size_t most = 0; /* the largest block that comes through the slots */
    for (int r = 0; r < t->size; r++) {
        size_t bytes = osmp__count_of(a, r) * e;
        if (r == root || osmp__copy_once(a, bytes)) continue;
        if (exposable(t, a, bytes) && osmp__mb_wait_slot(m, r, OSMP__UP, osmp__mini_slot(mini), base + 1))
            return m->failed;
        if (!exposed_at(t, a, r, bytes, mini) && bytes > most) most = bytes;
    }
    for (size_t k = 0; k * chunk < most; k++) { /* 2 */
        uint64_t s = base + 1 + k;
        for (int r = 0; r < t->size; r++) {
            size_t bytes = osmp__count_of(a, r) * e, off = k * chunk;
            if (r == root || osmp__copy_once(a, bytes) || off >= bytes) continue;
            if (exposed_at(t, a, r, bytes, mini)) continue;
            char *to = out + osmp__displ_of(a, r) * e + off;
            int lines = lines_of(t, bytes, lmax);
            if (lines) { /* (k is 0) the block in r's mini lines */
                if ((rc = osmp__mb_recv_minis(m, r, OSMP__UP, mini, s, to, bytes))) return rc;
                osmp__trace_copy(t, r, me, bytes);
                continue;
            }
            int slot = osmp__mb_ring(m, first + k);
            if (osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
            memcpy(to, osmp__mb_slot(m, r, OSMP__UP, slot), bytes - off < chunk ? bytes - off : chunk);
            osmp__trace_copy(t, r, me, bytes - off < chunk ? bytes - off : chunk);
        }
        osmp__mb_publish(m, OSMP__UP, s);
    }
    for (int r = 0; r < t->size; r++) { /* single copy 2, and exposed blocks */
        size_t bytes = osmp__count_of(a, r) * e;
        if (r == root) continue;
        uint64_t at = exposed_at(t, a, r, bytes, mini);
        if (osmp__copy_once(a, bytes)) {
            if (osmp__mb_wait(m, r, OSMP__UP, base + 1)) return m->failed;
            at = osmp__mb_chan(m, r, OSMP__UP)->addr;
        } else if (!at) {
            continue;
        }
        const void *src = (const void *)(uintptr_t)at;
        if (bytes && osmp__copy_from(m->pids[r], m->local[r], out + osmp__displ_of(a, r) * e, src, bytes))
            rc = OSMP_ERR_COPY;
        osmp__trace_copy(t, r, me, bytes);
    }
    osmp__mb_publish(m, OSMP__DOWN, base + 1); /* single copy 3 */
    return rc;
}
