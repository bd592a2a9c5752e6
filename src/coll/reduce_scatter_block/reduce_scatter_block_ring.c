/*
 * Ring reduce_scatter_block and reduce_scatter over the distance-aware ring
 * (plan/graph.c; teams above OSMP__GRAPH_RANKS_MAX: rank order): the partial
 * sum of each block travels once around the ring, from the owner's successor
 * to the owner, and every rank on the way adds its own contribution. Each byte
 * of each block crosses n-1 of the n ring edges once, and the clustered ring
 * enters and leaves each domain once, so the bytes crossing packages are at
 * most (#packages) x (n-1) x block, against one reduce per block that leaves
 * all but the tree's members idle. Every rank knows every block's count
 * (reduce_scatter: recvcounts), so all agree on the steps.
 */
#include <string.h>

#include "coll/co.h"

/*
 * Protocol. Ring position p, predecessor ring[p-1], successor ring[p+1]. The
 * block of the rank at position q starts at q+1 and reaches q after n-1 hops:
 * at step k (0 <= k < n-1) position p passes on block ring[p-1-k], and in the
 * last step (k = n-1) it receives its own. Chunks of `chunk` bytes (whole
 * elements) are the unit; chunk c of step k is item j = c*(n-1) + k, published
 * as step base+1+j. Items run chunk by chunk (all steps of chunk c, then
 * chunk c+1), so a rank reads the item its predecessor wrote just before: the
 * partial sums rest in the slots only, and alternating the two directions' slot
 * rings (item j: direction j % 2, slot (j / 2) % depth) keeps two slots between
 * a writer and its reader even at depth 1, where one would deadlock the ring
 * (everyone holding a full slot, waiting for its successor to empty one).
 * Chunks past the end of a block are skipped by both ends (they know its count).
 *   per chunk c, for k = 0 .. n-1 (block b = ring[p-1-k]; b = me at k = n-1):
 *   1. k > 0: wait for the predecessor's item j-1 (chunk c of block b, combined
 *      over the ranks from b's successor up to my predecessor);
 *   2. the destination: k < n-1 my slot for item j, claimed once the successor
 *      has published up for its previous content; k = n-1 my output;
 *   3. k > 0: combine chunk c of my input block b and the predecessor's
 *      partial sum there, dst = mine op partial, in one pass (an operation
 *      without a three-array kernel: copy mine, then fold); k = 0: copy mine
 *      there (nothing to copy where it is already: the in-place block 0 of
 *      rank 0);
 *   4. k < n-1: publish down base+1+j; k > 0: publish up base+j (the
 *      predecessor's slot is free again).
 * Order of combination: block q is folded in ring order starting after its
 * owner, each rank putting its own contribution on the left:
 *   x[q] op (x[q-1] op (... op (x[q+2] op x[q+1])))   (positions on the ring)
 * which for the commutative operations is bitwise the left fold x[q+1] op
 * x[q+2] op ... op x[q]. It depends on the team and its placement only, so a
 * floating-point result is the same on every run (and differs from rank order
 * only in rounding). In place, my result overwrites the start of my buffer,
 * input block 0, whose chunk c is read at a step k < n-1 of chunk c, before my
 * own chunk c lands there (rank 0: its own block, combined where it lies; the
 * entry point copies the input when counts differ).
 * Single copy would save only the first hop of each block (the partial sums
 * exist in the slots only), so the ring always goes through the slots.
 * Across waits (resumable form): my ring position (co->j), the neighbours
 * (co->pred, succ), the chunks (co->k), the phase (co->base), chunk c (co->c)
 * and step k (co->i).
 */
static inline __attribute__((always_inline)) int reduce_scatter_block_ring(osmp__coll_t t,
                                                                           const struct osmp__args *a,
                                                                           struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int n = t->size, me = t->rank;
    size_t e = a->esize, per = m->chunk / e;
    const char *in = a->in;
    char *out = a->out;
    const int *ring = osmp__ring_get(t); /* (a resumption finds the one built at the start) */
    /* reduce_scatter gives counts only: its blocks lie back to back, and the
     * ring visits them out of order, once per chunk (t->displs, filled at the
     * start) */
    const size_t *displs = a->displs ? a->displs : a->counts ? t->displs : NULL;
    /* step k's block, item j of chunk c, step k */
#define BLOCK ring[(co->j + 2 * n - 1 - co->i) % n]
#define J ((uint64_t)co->c * (uint64_t)(n - 1) + (uint64_t)co->i)
    OSMP__CO_BEGIN(R, co);
    if (!ring) return OSMP_ERR_NO_MEMORY;
    if (a->counts && !a->displs) {
        size_t *d = osmp__displs_get(t);
        if (!d) return OSMP_ERR_NO_MEMORY;
        for (int r = 0; r < n; r++) d[r] = r ? d[r - 1] + a->counts[r - 1] : 0;
        displs = d;
    }
    co->k = 0; /* nch */
    for (int r = 0; r < n; r++) {
        size_t chunks = (osmp__count_of(a, r) + per - 1) / per;
        if (chunks > co->k) co->k = chunks;
    }
    /* reduce_scatter: the step count comes from the largest block, which the
     * size check of osmp__run did not see (every rank refuses alike) */
    if (n > 1 && co->k > (OSMP__PHASE_STEPS - 2) / (uint64_t)(n - 1)) return OSMP_ERR_RANGE;
    co->base = osmp__phase(t);

    co->j = 0;
    while (ring[co->j] != me) co->j++;
    co->pred = ring[(co->j + n - 1) % n];
    co->succ = ring[(co->j + 1) % n];
    for (co->c = 0; co->c < co->k; co->c++) {
        for (co->i = 0; co->i < n; co->i++) {
            if (co->c * per >= osmp__count_of(a, BLOCK)) continue;
            if (co->i > 0) OSMP__AWAIT(R, co, m, co->pred, OSMP__DOWN, co->base + J); /* 1 */
            if (co->i < n - 1)
                OSMP__AWAIT_CLAIM(R, co, m, J % 2 ? OSMP__UP : OSMP__DOWN, osmp__mb_ring(m, J / 2));
            int k = co->i, b = BLOCK;
            size_t off = co->c * per, count = osmp__count_of(a, b);
            size_t len = count - off < per ? count - off : per;
            uint64_t j = J;
            const char *partial = NULL;
            if (k > 0)
                partial = osmp__mb_slot(m, co->pred, (j - 1) % 2 ? OSMP__UP : OSMP__DOWN,
                                        osmp__mb_ring(m, (j - 1) / 2));
            char *dst = k < n - 1 ? osmp__mb_claim(m, j % 2 ? OSMP__UP : OSMP__DOWN, osmp__mb_ring(m, j / 2),
                                                   &co->succ, 1, OSMP__UP, co->base + 1 + j)
                                  : out + off * e; /* 2 (reached with elements of mine only: out may be NULL) */
            if (!dst) return m->failed;
            const char *x = in + ((displs ? displs[b] : (size_t)b * a->count) + off) * e;
            if (partial && a->fn3) { /* 3: mine and the partial sum in one pass (in place too: element-wise) */
                a->fn3(dst, x, partial, len);
            } else if (dst != x) {
                if (k < n - 1)
                    osmp__stage(t, dst, x, len * e); /* into my slot: streamed on a far pair */
                else
                    memcpy(dst, x, len * e);
                osmp__trace_copy(t, me, me, len * e);
            }
            if (partial) {
                if (!a->fn3) a->fn(dst, partial, len);
                osmp__trace_copy(t, co->pred, me, len * e); /* read into my partial sum */
                osmp__trace_reduce(t, 2 * len * e);
            }
            if (k < n - 1) osmp__mb_publish(m, OSMP__DOWN, co->base + 1 + j); /* 4 */
            if (k > 0) osmp__mb_publish(m, OSMP__UP, co->base + j);
        }
    }
#undef BLOCK
#undef J
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__reduce_scatter_block_ring, reduce_scatter_block_ring)
