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
#include "coll/co.h"

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
static inline __attribute__((always_inline)) int gather_slots(osmp__coll_t t, const struct osmp__args *a,
                                                              struct osmp__co *co, size_t B, const int R)
{
    struct osmp__mbox *m = &t->mb;
    const struct osmp__tree *tr = co->tree;
    int me = t->rank, root = tr->parent < 0;
    size_t C = m->chunk, L = (size_t)tr->nsub * B;
    char *out = a->out;
    uint64_t first = 0; /* my chunks' numbers at my parent */
    for (int i = 0; i < tr->nbefore; i++) first += ((size_t)tr->before_nsub[i] * B + C - 1) / C;
    size_t nk = root ? 1 : (L + C - 1) / C;
    /* Across waits: chunk k (co->c), my child ci (co->i), its chunk j (co->k)
     * at coff in my stream (co->off), whether I waited for it (co->bits), the
     * next child chunk's number here g (co->s), my slot (co->dst). */
#define LO (root ? 0 : co->c * C)
#define HI (root || L - LO < C ? L : LO + C)
    OSMP__CO_BEGIN(R, co);
    co->i = 0;
    co->bits = 0;
    co->k = 0;
    co->off = B;
    co->s = 0;
    for (co->c = 0; co->c < nk; co->c++) {
        co->dst = NULL;
        if (!root) {
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__UP, osmp__mb_ring(m, co->c));
            co->dst = osmp__mb_claim(m, OSMP__UP, osmp__mb_ring(m, co->c), &tr->parent, 1, OSMP__DOWN,
                                     co->base + 1 + first + co->c);
            if (!co->dst) return m->failed;
        }
        if (LO < B) { /* 1 */
            size_t lo = LO, n = (HI < B ? HI : B) - lo;
            char *to = root ? out + (size_t)me * B : co->dst;
            if (to != (const char *)a->in + lo) {
                memcpy(to, (const char *)a->in + lo, n);
                osmp__trace_copy(t, me, me, n);
            }
        }
        while (co->i < tr->nchildren) {
            if (co->off + co->k * C >= HI) break;
            if (!co->bits) OSMP__AWAIT(R, co, m, tr->children[co->i], OSMP__UP, co->base + 1 + co->k);
            co->bits = 1;
            int c = tr->children[co->i];
            size_t lo = LO, hi = HI, cl = (size_t)tr->child_nsub[co->i] * B, s0 = co->off + co->k * C,
                   len = cl - co->k * C < C ? cl - co->k * C : C;
            const char *src = osmp__mb_slot(m, c, OSMP__UP, osmp__mb_ring(m, co->k));
            size_t from = s0 > lo ? s0 : lo, to = s0 + len < hi ? s0 + len : hi;
            if (root) {
                root_put(t, tr, out, B, from, src + (from - s0), to - from, c); /* 3 */
            } else {
                memcpy(co->dst + (from - lo), src + (from - s0), to - from);
                osmp__trace_copy(t, c, me, to - from);
            }
            if (to < s0 + len) break; /* its rest goes into my next chunk */
            osmp__mb_publish(m, OSMP__DOWN, co->base + 1 + co->s++); /* 2 */
            co->bits = 0;
            if (++co->k * C >= cl) {
                co->off += cl;
                co->k = 0;
                co->i++;
            }
        }
        if (!root) osmp__mb_publish(m, OSMP__UP, co->base + 1 + co->c); /* 1 */
    }
#undef LO
#undef HI
    OSMP__CO_END(R, co);
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
static inline __attribute__((always_inline)) int gather_once(osmp__coll_t t, const struct osmp__args *a,
                                                             struct osmp__co *co, size_t B, const int R)
{
    struct osmp__mbox *m = &t->mb;
    const struct osmp__tree *tr = co->tree;
    int me = t->rank, root = tr->parent < 0;
    char *out = a->out;
    /* Across waits: my staging buffer (co->p.scratch: a request frees it
     * when it fails), my failure (co->rc), child i (co->i) at off in my
     * stream (co->off). */
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    co->off = B;
    if (!root && tr->nchildren) {
        co->p.scratch = osmp__malloc((size_t)tr->nsub * B);
        if (!co->p.scratch) co->rc = OSMP_ERR_NO_MEMORY;
    }
    if (root && a->in != out + (size_t)me * B) {
        memcpy(out + (size_t)me * B, a->in, B);
        osmp__trace_copy(t, me, me, B);
    } else if (co->p.scratch) {
        memcpy(co->p.scratch, a->in, B);
        osmp__trace_copy(t, me, me, B);
    }
    for (co->i = 0; co->i < tr->nchildren; co->i++) { /* 2 */
        OSMP__AWAIT(R, co, m, tr->children[co->i], OSMP__UP, co->base + 1);
        int c = tr->children[co->i];
        size_t cl = (size_t)tr->child_nsub[co->i] * B, off = co->off;
        char *stage = co->p.scratch;
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, c, OSMP__UP)->addr;
        if (!src) {
            if (!co->rc) co->rc = OSMP_ERR_NO_MEMORY;
        } else if (root) {
            for (size_t p = off / B, e = p + tr->child_nsub[co->i]; p < e;) {
                size_t run = 1; /* ranks that follow each other in the stream and in the output */
                while (p + run < e && tr->sub[p + run] == tr->sub[p] + (int)run) run++;
                if (osmp__copy_from(m->pids[c], m->local[c], out + (size_t)tr->sub[p] * B,
                                    src + (p - off / B) * B, run * B))
                    co->rc = osmp__mb_copy_failed(m, c);
                osmp__trace_copy(t, c, me, run * B);
                p += run;
            }
        } else if (stage && !co->rc) {
            if (osmp__copy_from(m->pids[c], m->local[c], stage + off, src, cl)) co->rc = osmp__mb_copy_failed(m, c);
            osmp__trace_copy(t, c, me, cl);
        }
        co->off += cl;
    }
    if (tr->nchildren) osmp__mb_publish(m, OSMP__DOWN, co->base + 1); /* 3 */
    if (root) goto done;
    osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(!tr->nchildren ? a->in
                                                        : co->rc       ? NULL
                                                                       : co->p.scratch);
    osmp__mb_publish(m, OSMP__UP, co->base + 1); /* 1, 4 */
    /* (a failure: the buffer is freed by the caller, or by the request) */
    OSMP__AWAIT(R, co, m, tr->parent, OSMP__DOWN, co->base + 1);
    free(co->p.scratch);
    co->p.scratch = NULL;
done:
    OSMP__CO_END(R, co);
    return co->rc;
}

/* Its start (osmp__hier_start), then the protocol that the block's size says. */
static inline __attribute__((always_inline)) int gather_hier(osmp__coll_t t, const struct osmp__args *a,
                                                             struct osmp__co *co, const int R)
{
    int rc = osmp__hier_start(t, a, co, R);
    if (rc != 1) return rc;
    size_t B = a->count * a->esize;
    return osmp__copy_once(a, B) ? gather_once(t, a, co, B, R) : gather_slots(t, a, co, B, R);
}

/* A failed blocking call frees its staging buffer here, a request when it ends (team/request.c). */
static inline __attribute__((always_inline)) int gather_hier_run(osmp__coll_t t, const struct osmp__args *a,
                                                                 struct osmp__co *co, const int R)
{
    int rc = gather_hier(t, a, co, R);
    if (rc && !R) free(co->p.scratch);
    return rc;
}
OSMP__COMPILE_TWICE(osmp__gather_hier, gather_hier_run)
