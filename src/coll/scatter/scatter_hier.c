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
#include "coll/tree.h"

int osmp__scatter_hier(osmp__coll_t t, const struct osmp__args *a);

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
static int scatter_slots(osmp__coll_t t, const struct osmp__args *a, const struct osmp__tree *tr, uint64_t base,
                         size_t B)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, i;
    size_t C = m->chunk, L = (size_t)tr->nsub * B, D = L - B;
    const char *in = a->in;
    char *out = a->out;
    if (tr->parent < 0) {
        if (out != in + (size_t)me * B) {
            memcpy(out, in + (size_t)me * B, B);
            osmp__trace_copy(t, me, me, B);
        }
        for (size_t k = 0; k * C < D; k++) { /* 1 */
            size_t lo = k * C, hi = D - lo < C ? D : lo + C;
            int n = overlapping(tr, B, lo, hi, &i);
            char *dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, k), tr->children + i, n, OSMP__UP,
                                       base + 1 + k);
            if (!dst) return m->failed;
            for (size_t q = B + lo; q < B + hi;) {
                size_t p = q / B, at = q % B, len = B - at < B + hi - q ? B - at : B + hi - q;
                memcpy(dst + (q - B - lo), in + (size_t)tr->sub[p] * B + at, len);
                osmp__trace_copy(t, me, me, len);
                q += len;
            }
            osmp__mb_publish(m, OSMP__DOWN, base + 1 + k);
        }
        return OSMP_OK;
    }
    size_t s0 = 0; /* my stream's place in my parent's down stream */
    for (int b = 0; b < tr->nbefore; b++) s0 += (size_t)tr->before_nsub[b] * B;
    char *dst = NULL;
    size_t claimed = 0; /* 1 + the down chunk dst is */
    for (size_t j = s0 / C; j * C < s0 + L; j++) { /* 2 */
        if (osmp__mb_wait(m, tr->parent, OSMP__DOWN, base + 1 + j)) return m->failed;
        const char *src = osmp__mb_slot(m, tr->parent, OSMP__DOWN, osmp__mb_ring(m, j));
        size_t from = s0 > j * C ? s0 : j * C, to = s0 + L < (j + 1) * C ? s0 + L : (j + 1) * C;
        while (from < to) {
            size_t q = from - s0, n;
            if (q < B) {
                n = B - q < to - from ? B - q : to - from;
                memcpy(out + q, src + (from - j * C), n);
            } else {
                size_t d = q - B, k = d / C, end = D - k * C < C ? D : (k + 1) * C;
                if (claimed != k + 1) {
                    int cn = overlapping(tr, B, k * C, end, &i);
                    dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, k), tr->children + i, cn, OSMP__UP,
                                         base + 1 + k);
                    if (!dst) return m->failed;
                    claimed = k + 1;
                }
                n = end - d < to - from ? end - d : to - from;
                memcpy(dst + (d - k * C), src + (from - j * C), n);
                if (d + n == end) osmp__mb_publish(m, OSMP__DOWN, base + 1 + k);
            }
            osmp__trace_copy(t, tr->parent, me, n);
            from += n;
        }
        osmp__mb_publish(m, OSMP__UP, base + 1 + j); /* 3 */
    }
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
static int scatter_once(osmp__coll_t t, const struct osmp__args *a, const struct osmp__tree *tr, uint64_t base,
                        size_t B)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = tr->parent < 0, rc = OSMP_OK;
    const char *in = a->in;
    char *out = a->out, *stage = NULL;
    if (root) {
        if (out != in + (size_t)me * B) {
            memcpy(out, in + (size_t)me * B, B);
            osmp__trace_copy(t, me, me, B);
        }
        osmp__mb_chan(m, me, OSMP__DOWN)->addr = osmp__expose(in);
    } else {
        stage = tr->nchildren ? osmp__malloc((size_t)tr->nsub * B) : out;
        if (!stage) rc = OSMP_ERR_NO_MEMORY;
        if (osmp__mb_wait(m, tr->parent, OSMP__DOWN, base + 1)) { /* 2 */
            if (tr->nchildren) free(stage);
            return m->failed;
        }
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, tr->parent, OSMP__DOWN)->addr;
        if (!src && !rc) rc = OSMP_ERR_NO_MEMORY;
        if (!rc && tr->parent == a->root) {
            for (int p = 0; p < tr->nsub;) {
                int run = 1; /* ranks that follow each other in the stream and in the input */
                while (p + run < tr->nsub && tr->sub[p + run] == tr->sub[p] + run) run++;
                if (osmp__copy_from(m->pids[tr->parent], m->local[tr->parent], stage + (size_t)p * B,
                                    src + (size_t)tr->sub[p] * B, (size_t)run * B))
                    rc = OSMP_ERR_COPY;
                osmp__trace_copy(t, tr->parent, me, (size_t)run * B);
                p += run;
            }
        } else if (!rc) {
            size_t s0 = B; /* my stream's place in my parent's (after its own block) */
            for (int b = 0; b < tr->nbefore; b++) s0 += (size_t)tr->before_nsub[b] * B;
            if (osmp__copy_from(m->pids[tr->parent], m->local[tr->parent], stage, src + s0, (size_t)tr->nsub * B))
                rc = OSMP_ERR_COPY;
            osmp__trace_copy(t, tr->parent, me, (size_t)tr->nsub * B);
        }
        osmp__mb_publish(m, OSMP__UP, base + 1);
        if (!tr->nchildren) return rc;
        if (!rc) {
            memcpy(out, stage, B); /* 3 */
            osmp__trace_copy(t, me, me, B);
        }
        osmp__mb_chan(m, me, OSMP__DOWN)->addr = osmp__expose(rc ? NULL : stage);
    }
    osmp__mb_publish(m, OSMP__DOWN, base + 1); /* 1, 3 */
    for (int i = 0; i < tr->nchildren; i++) /* 4 */
        if (osmp__mb_wait(m, tr->children[i], OSMP__UP, base + 1)) {
            rc = m->failed;
            break;
        }
    free(stage);
    return rc;
}

int osmp__scatter_hier(osmp__coll_t t, const struct osmp__args *a)
{
    return osmp__hier_run(t, a, scatter_slots, scatter_once);
}
