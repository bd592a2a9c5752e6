/*
 * Direct gather and gatherv: every rank's data goes to one place, so there is
 * nothing to combine on the way and a tree would only add copies. The root
 * reads each rank's block directly.
 */
#include <string.h>

#include "coll/co.h"

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

/* Across waits (resumable form): the phase, slot and mini line the call took
 * (co->base, slots, minis), my exposed address (co->at), rank r (co->i), chunk
 * k (co->c), the largest block through the slots (co->most), the root's
 * failed copies (co->rc). */
static inline __attribute__((always_inline)) int gather_direct(osmp__coll_t t, const struct osmp__args *a,
                                                               struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = a->root, rc;
    size_t e = a->esize, chunk = m->chunk;
    char *out = a->out;
    /* (gatherv in a team of two: the one block) */
    size_t block = (a->vector && me == root ? osmp__count_of(a, t->size - 1 - root) : a->count) * e;
    int lmax = (!a->vector || t->size == 2) && osmp__mini_lines(block) == 2 ? 2 : 1;
    size_t bytes = a->count * e; /* (a sender's) */
#define BYTES_OF(r) (osmp__count_of(a, r) * e)
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    co->base = osmp__phase(t);
    co->slots = osmp__slots_take(t, 1);
    co->minis = osmp__minis_take(t, (uint64_t)lmax + (lmax > 1));
    co->minis += lmax > 1 && co->minis % 2; /* a pair starts at an even line */
    if (me != root) {
        if (osmp__copy_once(a, bytes)) {
            osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(a->in);
            osmp__mb_publish(m, OSMP__UP, co->base + 1);                   /* 1 */
            OSMP__AWAIT(R, co, m, root, OSMP__DOWN, co->base + 1); /* 3 */
            goto done;
        }
        if (exposable(t, a, bytes)) { /* exposed */
            co->at = osmp__expose_mapped(a->in);
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__UP, osmp__mini_slot(co->minis));
            {
                char *line = osmp__mb_claim(m, OSMP__UP, osmp__mini_slot(co->minis), &root, 1, OSMP__DOWN,
                                            co->base + 1);
                if (!line) return m->failed;
                memcpy(line, &co->at, sizeof(co->at));
            }
            osmp__mb_publish_slot(m, OSMP__UP, osmp__mini_slot(co->minis), co->base + 1);
            if (co->at) {
                OSMP__AWAIT(R, co, m, root, OSMP__DOWN, co->base + 1);
                goto done;
            }
        }
        if (lines_of(t, bytes, lmax)) { /* 1, in my mini lines */
            OSMP__AWAIT_SEND_MINIS(R, co, rc, m, OSMP__UP, co->minis, root, OSMP__UP, co->base + 1, a->in,
                                   bytes);
            osmp__trace_copy(t, me, me, bytes);
            goto done;
        }
        for (co->c = 0; co->c * chunk < bytes; co->c++) { /* 1 */
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__UP, osmp__mb_ring(m, co->slots + co->c));
            uint64_t s = co->base + 1 + co->c;
            size_t off = co->c * chunk, n = bytes - off < chunk ? bytes - off : chunk;
            char *dst =
                osmp__mb_claim(m, OSMP__UP, osmp__mb_ring(m, co->slots + co->c), &root, 1, OSMP__UP, s);
            if (!dst) return m->failed;
            osmp__stage(t, dst, (const char *)a->in + off, n);
            osmp__trace_copy(t, me, me, n);
            osmp__mb_publish(m, OSMP__UP, s);
        }
        goto done;
    }
    {
        char *mine = out + osmp__displ_of(a, root) * e;
        if (a->count && a->in != mine) { /* (a zero count may come with NULL) */
            osmp__copy(mine, a->in, a->count * e);
            osmp__trace_copy(t, me, me, a->count * e);
        }
    }
    if ((!a->vector || t->size == 2) && !osmp__copy_once(a, block) && lines_of(t, block, lmax)) {
        /* Every block in its sender's mini lines (gather: they are all alike; gatherv in a team of two:
         * the one block): step 2 alone and the publications the loops below end with, one loop over the
         * ranks where they make three, on the root, which a small gather back to back waits for. */
        for (co->i = 0; co->i < t->size; co->i++) {
            if (co->i == root) continue;
            OSMP__AWAIT_RECV_MINIS(R, co, rc, m, co->i, OSMP__UP, co->minis, co->base + 1,
                                   out + osmp__displ_of(a, co->i) * e, block);
            osmp__trace_copy(t, co->i, me, block);
        }
        osmp__mb_publish(m, OSMP__UP, co->base + 1);
        osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
        goto done;
    }
    co->most = 0; /* the largest block that comes through the slots */
    for (co->i = 0; co->i < t->size; co->i++) {
        if (co->i == root || osmp__copy_once(a, BYTES_OF(co->i))) continue;
        if (exposable(t, a, BYTES_OF(co->i)))
            OSMP__AWAIT_SLOT(R, co, m, co->i, OSMP__UP, osmp__mini_slot(co->minis), co->base + 1);
        if (!exposed_at(t, a, co->i, BYTES_OF(co->i), co->minis) && BYTES_OF(co->i) > co->most)
            co->most = BYTES_OF(co->i);
    }
    for (co->c = 0; co->c * chunk < co->most; co->c++) { /* 2 */
        for (co->i = 0; co->i < t->size; co->i++) {
            if (co->i == root || osmp__copy_once(a, BYTES_OF(co->i)) || co->c * chunk >= BYTES_OF(co->i))
                continue;
            if (exposed_at(t, a, co->i, BYTES_OF(co->i), co->minis)) continue;
            if (lines_of(t, BYTES_OF(co->i), lmax)) { /* (k is 0) the block in r's mini lines */
                OSMP__AWAIT_RECV_MINIS(R, co, rc, m, co->i, OSMP__UP, co->minis, co->base + 1 + co->c,
                                       out + osmp__displ_of(a, co->i) * e + co->c * chunk, BYTES_OF(co->i));
                osmp__trace_copy(t, co->i, me, BYTES_OF(co->i));
                continue;
            }
            OSMP__AWAIT(R, co, m, co->i, OSMP__UP, co->base + 1 + co->c);
            size_t b = BYTES_OF(co->i), off = co->c * chunk;
            memcpy(out + osmp__displ_of(a, co->i) * e + off,
                   osmp__mb_slot(m, co->i, OSMP__UP, osmp__mb_ring(m, co->slots + co->c)),
                   b - off < chunk ? b - off : chunk);
            osmp__trace_copy(t, co->i, me, b - off < chunk ? b - off : chunk);
        }
        osmp__mb_publish(m, OSMP__UP, co->base + 1 + co->c);
    }
    for (co->i = 0; co->i < t->size; co->i++) { /* single copy 2, and exposed blocks */
        if (co->i == root) continue;
        if (osmp__copy_once(a, BYTES_OF(co->i))) {
            OSMP__AWAIT(R, co, m, co->i, OSMP__UP, co->base + 1);
        } else if (!exposed_at(t, a, co->i, BYTES_OF(co->i), co->minis)) {
            continue;
        }
        int r = co->i;
        size_t b = BYTES_OF(r);
        uint64_t at =
            osmp__copy_once(a, b) ? osmp__mb_chan(m, r, OSMP__UP)->addr : exposed_at(t, a, r, b, co->minis);
        const void *src = (const void *)(uintptr_t)at;
        if (b && osmp__copy_from(m->pids[r], m->local[r], out + osmp__displ_of(a, r) * e, src, b))
            co->rc = osmp__mb_copy_failed(m, r);
        osmp__trace_copy(t, r, me, b);
    }
    osmp__mb_publish(m, OSMP__DOWN, co->base + 1); /* single copy 3 */
done:
#undef BYTES_OF
    OSMP__CO_END(R, co);
    return co->rc;
}
OSMP__COMPILE_TWICE(osmp__gather_direct, gather_direct)
