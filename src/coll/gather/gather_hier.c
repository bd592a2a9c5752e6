/*
 * Hierarchical gather along the plan (OSMP paper, Fig. 4): every group leader
 * collects its group's blocks and hands them on as one run, level by level, so
 * the root hears only from the members of the groups it leads (on 8 packages
 * of 6: its 5 package mates and the 7 other package leaders) instead of from
 * every rank. Each block crosses the slowest link once, as in the direct
 * gather; what it saves is the root polling and copying from n peers one line
 * or chunk at a time, the bottleneck for small and medium blocks.
 */
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/tree.h"

int osmp__gather_hier(osmp__coll_t t, const struct osmp__args *a);

/* Byte q of the root's stream onwards into the output: block q / B is rank
 * sub[q / B]'s. Consecutive ranks take one copy. */
static void root_put(osmp__coll_t t, const struct osmp__tree *tr, char *out, size_t B, size_t q, const char *src,
                     size_t len, int from)
{
    while (len) {
        size_t p = q / B, at = q % B, n = B - at < len ? B - at : len;
        memcpy(out + (size_t)tr->sub[p] * B + at, src, n);
        osmp__trace_copy(t, from, t->rank, n);
        q += n;
        src += n;
        len -= n;
    }
}

/*
 * Protocol through the slots. Every rank's stream is its own block, then each
 * child's stream in children order (tree.c): nsub * B bytes, chunk k at
 * k * chunk. The streams of parent and child do not align on chunks, so a
 * parent says what it has consumed separately from what it has produced:
 * it numbers all its children's chunks in stream order (g = the chunks of
 * earlier siblings + k, which every child computes from the plan and the count
 * alone).
 *   1. a non-root rank fills chunk k of its stream in its up slot k % depth:
 *      its own block's bytes, then its children's chunks as they come (waiting
 *      for step base+1+j on child c's up counter for c's chunk j); it publishes
 *      up base+1+k;
 *   2. whenever a rank has copied the last byte of a child's chunk it publishes
 *      down base+1+g: the child may write that slot again (a child claims its
 *      slot for chunk k against its parent's down base+1+g). A chunk that ends
 *      in my next chunk is released only then; consumption never waits on
 *      production of a later chunk, so one slot per ring (depth 1) suffices;
 *   3. the root does 1 and 2 into its output, one stream of nsub * B bytes,
 *      each block to its rank's place.
 */
static int gather_slots(osmp__coll_t t, const struct osmp__args *a, const struct osmp__tree *tr, uint64_t base,
                        size_t B)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = tr->parent < 0, ci = 0, waited = 0;
    size_t C = m->chunk, L = (size_t)tr->nsub * B, j = 0, coff = B;
    char *out = a->out;
    uint64_t first = 0, g = 0; /* my chunks' numbers at my parent; the next child chunk's number here */
    for (int i = 0; i < tr->nbefore; i++) first += ((size_t)tr->before_nsub[i] * B + C - 1) / C;
    size_t nk = root ? 1 : (L + C - 1) / C;
    for (size_t k = 0; k < nk; k++) {
        size_t lo = root ? 0 : k * C, hi = root || L - lo < C ? L : lo + C;
        char *dst = NULL;
        if (!root) {
            dst = osmp__mb_claim(m, OSMP__UP, osmp__mb_ring(m, k), &tr->parent, 1, OSMP__DOWN, base + 1 + first + k);
            if (!dst) return m->failed;
        }
        if (lo < B) { /* 1 */
            size_t n = (hi < B ? hi : B) - lo;
            char *to = root ? out + (size_t)me * B : dst;
            if (to != (const char *)a->in + lo) {
                memcpy(to, (const char *)a->in + lo, n);
                osmp__trace_copy(t, me, me, n);
            }
        }
        while (ci < tr->nchildren) {
            int c = tr->children[ci];
            size_t cl = (size_t)tr->child_nsub[ci] * B, s0 = coff + j * C, len = cl - j * C < C ? cl - j * C : C;
            if (s0 >= hi) break;
            if (!waited && osmp__mb_wait(m, c, OSMP__UP, base + 1 + j)) return m->failed;
            waited = 1;
            const char *src = osmp__mb_slot(m, c, OSMP__UP, osmp__mb_ring(m, j));
            size_t from = s0 > lo ? s0 : lo, to = s0 + len < hi ? s0 + len : hi;
            if (root) {
                root_put(t, tr, out, B, from, src + (from - s0), to - from, c); /* 3 */
            } else {
                memcpy(dst + (from - lo), src + (from - s0), to - from);
                osmp__trace_copy(t, c, me, to - from);
            }
            if (to < s0 + len) break; /* its rest goes into my next chunk */
            osmp__mb_publish(m, OSMP__DOWN, base + 1 + g++); /* 2 */
            waited = 0;
            if (++j * C >= cl) {
                coff += cl;
                j = 0;
                ci++;
            }
        }
        if (!root) osmp__mb_publish(m, OSMP__UP, base + 1 + k); /* 1 */
    }
    return OSMP_OK;
}

/*
 * Protocol by single copy (the blocks are large and every pair can copy from
 * the other's memory). A leader stages its stream in a private buffer, whose
 * allocation is the first thing it does, so a failure is known before anyone
 * waits on it and travels up as a null address instead of a hang:
 *   1. a leaf exposes its input (its whole stream) and publishes up base+1;
 *   2. a leader copies its block and each child's exposed stream into its
 *      staging buffer (the root: each block to its rank's place), one copy per
 *      child;
 *   3. it publishes down base+1: its children may return (a leader frees its
 *      buffer then);
 *   4. a non-root leader exposes its staging buffer (null when it, or a subtree
 *      below it, failed) and publishes up base+1, then waits for 3 of its parent.
 */
static int gather_once(osmp__coll_t t, const struct osmp__args *a, const struct osmp__tree *tr, uint64_t base,
                       size_t B)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = tr->parent < 0, rc = OSMP_OK;
    size_t off = B;
    char *out = a->out, *stage = NULL;
    if (!root && tr->nchildren) {
        stage = osmp__malloc((size_t)tr->nsub * B);
        if (!stage) rc = OSMP_ERR_NO_MEMORY;
    }
    if (root && a->in != out + (size_t)me * B) {
        memcpy(out + (size_t)me * B, a->in, B);
        osmp__trace_copy(t, me, me, B);
    } else if (stage) {
        memcpy(stage, a->in, B);
        osmp__trace_copy(t, me, me, B);
    }
    for (int i = 0; i < tr->nchildren; i++) { /* 2 */
        int c = tr->children[i];
        size_t cl = (size_t)tr->child_nsub[i] * B;
        if (osmp__mb_wait(m, c, OSMP__UP, base + 1)) {
            free(stage);
            return m->failed;
        }
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, c, OSMP__UP)->addr;
        if (!src) {
            if (!rc) rc = OSMP_ERR_NO_MEMORY;
        } else if (root) {
            for (size_t p = off / B, e = p + tr->child_nsub[i]; p < e;) {
                size_t run = 1; /* ranks that follow each other in the stream and in the output */
                while (p + run < e && tr->sub[p + run] == tr->sub[p] + (int)run) run++;
                if (osmp__copy_from(m->pids[c], m->local[c], out + (size_t)tr->sub[p] * B,
                                    src + (p - off / B) * B, run * B))
                    rc = OSMP_ERR_COPY;
                osmp__trace_copy(t, c, me, run * B);
                p += run;
            }
        } else if (stage && !rc) {
            if (osmp__copy_from(m->pids[c], m->local[c], stage + off, src, cl)) rc = OSMP_ERR_COPY;
            osmp__trace_copy(t, c, me, cl);
        }
        off += cl;
    }
    if (tr->nchildren) osmp__mb_publish(m, OSMP__DOWN, base + 1); /* 3 */
    if (root) return rc;
    osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(!tr->nchildren ? a->in : rc ? NULL : stage);
    osmp__mb_publish(m, OSMP__UP, base + 1); /* 1, 4 */
    if (osmp__mb_wait(m, tr->parent, OSMP__DOWN, base + 1)) rc = m->failed;
    free(stage);
    return rc;
}

int osmp__gather_hier(osmp__coll_t t, const struct osmp__args *a)
{
    return osmp__hier_run(t, a, gather_slots, gather_once);
}
