/*
 * Hierarchical scatter along the plan: gather_hier.c run backwards. The root
 * hands each group it leads one run of blocks (the group's subtree), every
 * leader keeps its block and passes the rest on level by level, so the root
 * writes for the members of its own groups only and the other ranks read from
 * a leader close to them instead of all from the root.
 */
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/co.h"

/* The children whose streams overlap bytes [lo, hi) of my down stream (my
 * children's streams one after the other): a run of them, first *i. */
static int overlapping(const struct osmp__tree *tr, size_t B, size_t lo, size_t hi, int *i)
{
    size_t at = 0;
    int n = 0;
    *i = -1;
    for (int c = 0; c < tr->nchildren && at < hi; c++) {
        size_t end = at + (size_t)tr->child_nsub[c] * B;
        if (end > lo) {
            if (*i < 0) *i = c;
            n++;
        }
        at = end;
    }
    return n;
}

/*
 * Protocol through the slots. A rank's stream is as in gather_hier.c; its down
 * stream is its stream without its own block (its children's streams), chunk k
 * at k * chunk, in its down slot k % depth. Chunk k's consumers are the
 * children whose streams overlap it; every rank computes them from the plan and
 * the count alone.
 *   1. the root fills chunk k of its down stream from its input (each block
 *      from its rank's place), claiming the slot against step base+1+k on the
 *      consumers' up counters, and publishes down base+1+k;
 *   2. a rank reads its part of its parent's chunks j in order (waiting for
 *      down base+1+j on its parent): its own block into its output, the rest
 *      into its own down chunks, publishing down base+1+k when chunk k is full;
 *   3. once it has copied the last byte it takes from its parent's chunk j, it
 *      publishes up base+1+j (the parent may reuse the slot). Consuming never
 *      waits on a later chunk of the parent, so depth 1 suffices.
 */
static inline __attribute__((always_inline)) int scatter_slots(osmp__coll_t t, const struct osmp__args *a,
                                                               struct osmp__co *co, size_t B, const int R)
{
    struct osmp__mbox *m = &t->mb;
    const struct osmp__tree *tr = co->tree;
    int me = t->rank, i;
    size_t C = m->chunk, L = (size_t)tr->nsub * B, D = L - B;
    const char *in = a->in;
    char *out = a->out;
    size_t s0 = 0; /* my stream's place in my parent's down stream */
    for (int b = 0; b < tr->nbefore; b++) s0 += (size_t)tr->before_nsub[b] * B;
    /* Across waits: the root's chunk k, a rank's parent's chunk j (co->c), where
     * I am in it (co->off: `from`), my down chunk claimed (co->k: 1 + it, 0
     * none) and its slot (co->dst). The parent's chunk j: its slot, and where
     * my part of it ends. */
#define SRC osmp__mb_slot(m, tr->parent, OSMP__DOWN, osmp__mb_ring(m, co->c))
#define TO (s0 + L < (co->c + 1) * C ? s0 + L : (co->c + 1) * C)
#define KD ((co->off - s0 - B) / C)
    OSMP__CO_BEGIN(R, co);
    if (tr->parent < 0) {
        if (out != in + (size_t)me * B) {
            memcpy(out, in + (size_t)me * B, B);
            osmp__trace_copy(t, me, me, B);
        }
        for (co->c = 0; co->c * C < D; co->c++) { /* 1 */
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, osmp__mb_ring(m, co->c));
            size_t lo = co->c * C, hi = D - lo < C ? D : lo + C;
            int n = overlapping(tr, B, lo, hi, &i);
            char *dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, co->c), tr->children + i, n, OSMP__UP,
                                       co->base + 1 + co->c);
            if (!dst) return m->failed;
            for (size_t q = B + lo; q < B + hi;) {
                size_t p = q / B, at = q % B, len = B - at < B + hi - q ? B - at : B + hi - q;
                memcpy(dst + (q - B - lo), in + (size_t)tr->sub[p] * B + at, len);
                osmp__trace_copy(t, me, me, len);
                q += len;
            }
            osmp__mb_publish(m, OSMP__DOWN, co->base + 1 + co->c);
        }
        goto done;
    }
    co->dst = NULL;
    co->k = 0; /* 1 + the down chunk dst is */
    for (co->c = s0 / C; co->c * C < s0 + L; co->c++) { /* 2 */
        OSMP__AWAIT(R, co, m, tr->parent, OSMP__DOWN, co->base + 1 + co->c);
        co->off = s0 > co->c * C ? s0 : co->c * C;
        while (co->off < TO) {
            if (co->off - s0 < B) {
                size_t q = co->off - s0, n = B - q < TO - co->off ? B - q : TO - co->off;
                memcpy(out + q, SRC + (co->off - co->c * C), n);
                osmp__trace_copy(t, tr->parent, me, n);
                co->off += n;
                continue;
            }
            if (co->k != KD + 1) {
                OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, osmp__mb_ring(m, KD));
                size_t k = KD, end = D - k * C < C ? D : (k + 1) * C;
                int cn = overlapping(tr, B, k * C, end, &i);
                co->dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, k), tr->children + i, cn, OSMP__UP,
                                         co->base + 1 + k);
                if (!co->dst) return m->failed;
                co->k = k + 1;
            }
            size_t d = co->off - s0 - B, k = d / C, end = D - k * C < C ? D : (k + 1) * C;
            size_t n = end - d < TO - co->off ? end - d : TO - co->off;
            memcpy(co->dst + (d - k * C), SRC + (co->off - co->c * C), n);
            if (d + n == end) osmp__mb_publish(m, OSMP__DOWN, co->base + 1 + k);
            osmp__trace_copy(t, tr->parent, me, n);
            co->off += n;
        }
        osmp__mb_publish(m, OSMP__UP, co->base + 1 + co->c); /* 3 */
    }
#undef SRC
#undef TO
#undef KD
done:
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

/*
 * Protocol by single copy. A leader stages its stream in a private buffer,
 * allocated before it waits on anyone; a failure travels down as a null
 * address:
 *   1. the root exposes its input and publishes down base+1;
 *   2. a rank copies its stream from its parent's exposed buffer (from the
 *      root's: block by block from each rank's place) into its staging buffer,
 *      a leaf straight into its output, and publishes up base+1;
 *   3. a leader keeps its block, exposes its buffer and publishes down base+1;
 *   4. a leader returns (frees) once all its children have published up base+1.
 */
static inline __attribute__((always_inline)) int scatter_once(osmp__coll_t t, const struct osmp__args *a,
                                                              struct osmp__co *co, size_t B, const int R)
{
    struct osmp__mbox *m = &t->mb;
    const struct osmp__tree *tr = co->tree;
    int me = t->rank, root = tr->parent < 0;
    const char *in = a->in;
    char *out = a->out;
    /* Across waits: a leader's staging buffer (co->p.scratch: a request frees
     * it when it fails; a leaf stages in its output), my failure (co->rc),
     * child i (co->i). */
#define STAGE (tr->nchildren ? co->p.scratch : out)
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    if (root) {
        if (out != in + (size_t)me * B) {
            memcpy(out, in + (size_t)me * B, B);
            osmp__trace_copy(t, me, me, B);
        }
        osmp__mb_chan(m, me, OSMP__DOWN)->addr = osmp__expose(in);
    } else {
        if (tr->nchildren) co->p.scratch = osmp__malloc((size_t)tr->nsub * B);
        if (!STAGE) co->rc = OSMP_ERR_NO_MEMORY;
        /* 2 (a failure: the buffer is freed by the caller, or by the request) */
        OSMP__AWAIT(R, co, m, tr->parent, OSMP__DOWN, co->base + 1);
        char *stage = STAGE;
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, tr->parent, OSMP__DOWN)->addr;
        if (!src && !co->rc) co->rc = OSMP_ERR_NO_MEMORY;
        if (!co->rc && tr->parent == a->root) {
            for (int p = 0; p < tr->nsub;) {
                int run = 1; /* ranks that follow each other in the stream and in the input */
                while (p + run < tr->nsub && tr->sub[p + run] == tr->sub[p] + run) run++;
                if (osmp__copy_from(m->pids[tr->parent], m->local[tr->parent], stage + (size_t)p * B,
                                    src + (size_t)tr->sub[p] * B, (size_t)run * B))
                    co->rc = osmp__mb_copy_failed(m, tr->parent);
                osmp__trace_copy(t, tr->parent, me, (size_t)run * B);
                p += run;
            }
        } else if (!co->rc) {
            size_t s0 = B; /* my stream's place in my parent's (after its own block) */
            for (int b = 0; b < tr->nbefore; b++) s0 += (size_t)tr->before_nsub[b] * B;
            if (osmp__copy_from(m->pids[tr->parent], m->local[tr->parent], stage, src + s0, (size_t)tr->nsub * B))
                co->rc = osmp__mb_copy_failed(m, tr->parent);
            osmp__trace_copy(t, tr->parent, me, (size_t)tr->nsub * B);
        }
        osmp__mb_publish(m, OSMP__UP, co->base + 1);
        if (!tr->nchildren) goto done;
        if (!co->rc) {
            memcpy(out, stage, B); /* 3 */
            osmp__trace_copy(t, me, me, B);
        }
        osmp__mb_chan(m, me, OSMP__DOWN)->addr = osmp__expose(co->rc ? NULL : stage);
    }
    osmp__mb_publish(m, OSMP__DOWN, co->base + 1); /* 1, 3 */
    /* 4 (a failure: the buffer is freed by the caller, or by the request) */
    for (co->i = 0; co->i < tr->nchildren; co->i++)
        OSMP__AWAIT(R, co, m, tr->children[co->i], OSMP__UP, co->base + 1);
    free(co->p.scratch);
    co->p.scratch = NULL;
#undef STAGE
done:
    OSMP__CO_END(R, co);
    return co->rc;
}

/* Its start (osmp__hier_start), then the protocol that the block's size says. */
static inline __attribute__((always_inline)) int scatter_hier(osmp__coll_t t, const struct osmp__args *a,
                                                             struct osmp__co *co, const int R)
{
    int rc = osmp__hier_start(t, a, co, R);
    if (rc != 1) return rc;
    size_t B = a->count * a->esize;
    return osmp__copy_once(a, B) ? scatter_once(t, a, co, B, R) : scatter_slots(t, a, co, B, R);
}

/* A failed blocking call frees its staging buffer here, a request when it ends (team/request.c). */
static inline __attribute__((always_inline)) int scatter_hier_run(osmp__coll_t t, const struct osmp__args *a,
                                                                  struct osmp__co *co, const int R)
{
    int rc = scatter_hier(t, a, co, R);
    if (rc && !R) free(co->p.scratch);
    return rc;
}
OSMP__COMPILE_TWICE(osmp__scatter_hier, scatter_hier_run)
