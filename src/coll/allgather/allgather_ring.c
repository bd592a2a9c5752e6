/*
 * Ring allgather and allgatherv over the distance-aware ring (plan/graph.c):
 * every block travels once around the ring, so each byte of each block crosses
 * each ring edge once, and the clustered ring enters and leaves each domain
 * (package, NUMA node, L3) once (teams above OSMP__GRAPH_RANKS_MAX: rank
 * order). Every rank knows every block's count and displacement (allgather:
 * count at r * count), so all agree on the steps.
 */
#include <string.h>

#include "coll/co.h"

/*
 * Protocol. Ring position p, predecessor ring[p-1], successor ring[p+1]; at
 * step k (0 <= k < n-1) a rank passes on block ring[p-k] (its own at step 0,
 * else the one it took at step k-1) and takes block ring[p-1-k]. Item (k, c),
 * chunk c of step k, is step base+1+idx with idx = k * nch + c, where nch is
 * the most chunks of any block that goes through the slots (1 if none does).
 * A block goes by single copy when osmp__copy_once says so for its size (both
 * ends decide alike); then its step is the single item c = 0. Items past the
 * end of a block are skipped by both ends, but item c = 0 always runs (an
 * empty block is a step with nothing to copy).
 *   1. expose my output and my input;
 *   per item, in order:
 *   2. pass on: slots: claim my down slot (first + idx) % depth, first moving on
 *      by the items of every call (osmp__slots_take; its previous content
 *      consumed: the successor's up counter), copy the chunk into it (at step
 *      0 from my input); single copy: nothing to copy, the block is in my
 *      input (step 0) or my output; then publish down base+1+idx;
 *   3. take: wait for the predecessor's down base+1+idx, copy the chunk from its
 *      slot (or the whole block from its input at step 0, else from its
 *      output) into place in mine, publish up base+1+idx (its slot is free
 *      again);
 *   4. copy my own block from my input into my output;
 *   5. publish up base+1+(n-1)*nch, done reading; where some block went by
 *      single copy, wait for the successor's (it no longer reads my buffers).
 * Passing on before taking keeps the ring from waiting on itself: item idx of
 * a rank depends on its successor's items before idx only. A block is read
 * from its owner's input, not from the copy the owner made into its output:
 * that copy is still in the owner's cache, modified, and a reader on another
 * core pays for every line of it; and nobody waits for the owner's own copy,
 * which comes last.
 * Across waits (resumable form): my ring position (co->j), the neighbours
 * (co->pred, succ), the chunks per step (co->k), whether some block goes by
 * single copy (co->bits), the phase and first slot (co->base, slots), step k
 * (co->i) and chunk c (co->c).
 */
/* My own block from my input into place in my output (a zero count may come
 * with NULL; in place it is there already). */
static int own_block(osmp__coll_t t, const struct osmp__args *a)
{
    size_t mine = osmp__count_of(a, t->rank) * a->esize;
    char *at = (char *)a->out + osmp__displ_of(a, t->rank) * a->esize;
    if (mine && a->in != at) {
        osmp__copy_own(t, at, a->in, mine);
        osmp__trace_copy(t, t->rank, t->rank, mine);
    }
    return OSMP_OK;
}

/* Does chunk `off` of rank r's block go through the slots? */
static inline int in_slot(const struct osmp__args *a, int r, size_t off)
{
    size_t bytes = osmp__count_of(a, r) * a->esize;
    return !osmp__copy_once(a, bytes) && off < bytes;
}

static inline __attribute__((always_inline)) int allgather_ring(osmp__coll_t t, const struct osmp__args *a,
                                                                struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int n = t->size, me = t->rank;
    size_t e = a->esize, chunk = m->chunk;
    char *out = a->out;
    const int *ring = osmp__ring_get(t); /* (a resumption finds the one built at the start) */
    /* step k's blocks: the one I pass on, the one I take; item (k, c)'s step and slot */
#define GIVE ring[(co->j + n - co->i) % n]
#define TAKE ring[(co->j + 2 * n - 1 - co->i) % n]
#define ITEM ((uint64_t)co->i * co->k + co->c)
    OSMP__CO_BEGIN(R, co);
    if (!ring) return OSMP_ERR_NO_MEMORY;
    co->j = 0;
    while (ring[co->j] != me) co->j++;
    co->pred = ring[(co->j + n - 1) % n];
    co->succ = ring[(co->j + 1) % n];

    co->k = 1; /* nch */
    co->bits = 0; /* any_once */
    for (int r = 0; r < n; r++) {
        size_t bytes = osmp__count_of(a, r) * e;
        if (osmp__copy_once(a, bytes)) co->bits = 1;
        else if ((bytes + chunk - 1) / chunk > co->k) co->k = (bytes + chunk - 1) / chunk;
    }
    /* allgatherv: the step count comes from the largest block, which the size
     * check of osmp__run did not see (every rank refuses alike) */
    if (co->k > (OSMP__PHASE_STEPS - 2) / (uint64_t)n) return OSMP_ERR_RANGE;
    co->base = osmp__phase(t);
    co->slots = osmp__slots_take(t, (uint64_t)(n - 1) * co->k);

    if (n == 1) return own_block(t, a);
    osmp__mb_chan(m, me, OSMP__DOWN)->addr = osmp__expose(out);
    osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(a->in);

    for (co->i = 0; co->i < n - 1; co->i++) {
        for (co->c = 0; co->c < co->k; co->c++) {
            if (co->c == 0 || in_slot(a, GIVE, co->c * chunk)) { /* 2 */
                if (in_slot(a, GIVE, co->c * chunk)) {
                    OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, osmp__mb_ring(m, co->slots + ITEM));
                    int give = GIVE;
                    size_t gbytes = osmp__count_of(a, give) * e, off = co->c * chunk;
                    size_t len = gbytes - off < chunk ? gbytes - off : chunk;
                    char *dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, co->slots + ITEM), &co->succ,
                                               1, OSMP__UP, co->base + 1 + ITEM);
                    if (!dst) return m->failed;
                    osmp__stage(t, dst,
                                (co->i == 0 ? (const char *)a->in : out + osmp__displ_of(a, give) * e) + off,
                                len);
                    osmp__trace_copy(t, me, me, len);
                }
                osmp__mb_publish(m, OSMP__DOWN, co->base + 1 + ITEM);
            }
            if (co->c == 0 || in_slot(a, TAKE, co->c * chunk)) { /* 3 */
                OSMP__AWAIT(R, co, m, co->pred, OSMP__DOWN, co->base + 1 + ITEM);
                int take = TAKE, pred = co->pred;
                size_t tbytes = osmp__count_of(a, take) * e, off = co->c * chunk;
                char *dst = out + osmp__displ_of(a, take) * e + off;
                if (osmp__copy_once(a, tbytes)) {
                    const char *src =
                        co->i == 0 ? (const char *)(uintptr_t)osmp__mb_chan(m, pred, OSMP__UP)->addr
                                   : (const char *)(uintptr_t)osmp__mb_chan(m, pred, OSMP__DOWN)->addr +
                                         osmp__displ_of(a, take) * e;
                    if (tbytes && osmp__copy_from(m->pids[pred], m->local[pred], dst, src, tbytes))
                        return osmp__mb_fail(m, osmp__mb_copy_failed(m, pred)); /* my successor would read it from me */
                    osmp__trace_copy(t, pred, me, tbytes);
                } else if (off < tbytes) {
                    size_t len = tbytes - off < chunk ? tbytes - off : chunk;
                    memcpy(dst, osmp__mb_slot(m, pred, OSMP__DOWN, osmp__mb_ring(m, co->slots + ITEM)), len);
                    osmp__trace_copy(t, pred, me, len);
                }
                osmp__mb_publish(m, OSMP__UP, co->base + 1 + ITEM);
            }
        }
    }
    own_block(t, a); /* 4 */
    osmp__mb_publish(m, OSMP__UP, co->base + 1 + (uint64_t)(n - 1) * co->k); /* 5 */
    if (co->bits) OSMP__AWAIT(R, co, m, co->succ, OSMP__UP, co->base + 1 + (uint64_t)(n - 1) * co->k);
#undef GIVE
#undef TAKE
#undef ITEM
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__allgather_ring, allgather_ring)
