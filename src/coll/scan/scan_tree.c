/* Prefix reductions over a Fenwick tree in rank order: up, then down; about 2n messages, 2 log2 n deep. */
#include <string.h>

#include "coll/co.h"

/*
 * Scan / exscan protocol. With i = rank + 1 and b = i & -i (its lowest bit):
 * my children are i-1, i-2, i-4, ..., i-b/2, my parent i+b (if <= n); my
 * subtree covers ranks (i-b, i]: F, its reduction; C, its children's part
 * (F without my input). Per chunk c (ring slots from the call's first, two a
 * chunk: U = first+2c, D = first+2c+1, steps UP = base+1+2c, DN = base+2+2c;
 * or, for a message of one mini line, the call's two mini lines and steps
 * base+1, base+2):
 *   1. up: if I have a parent, claim U for it (it says it is done by
 *      publishing UP on its down counter; mini lines: the call's last step,
 *      once). F is built in U, or without a parent in D if I send down (the
 *      claim of 4 made here: there is no U to wait for), or (scan) my output;
 *   2. for each child j = i-1, i-2, ..., i-b/2 (the nearest first: i-1 is a
 *      leaf, done first; i-b/2's subtree is the deepest): wait for its UP, its
 *      F in its U, and combine it on the LEFT of my partial F (lower ranks on
 *      the left: F = F(i-b/2) op ... op F(i-1) op input, whatever the
 *      grouping). Exscan folds it into its output too, on the left (the first
 *      copied): C, the part of my result from my subtree. The partial F is
 *      made first from my input, which may be my output (in place);
 *   3. no child: a U gets my input copied;
 *   4. publish UP (ring: if I sent or received; mini lines: my line U). Down:
 *      if I have a parent and ranks i+1 .. i+b/2 (those <= n) to send to,
 *      claim D for them all (several consumers, one slot);
 *   5. if i-b > 0: wait for its DN, P(i-b) (ranks 1 .. i-b) in its D, and
 *      combine it on the left of F: P(i) = P(i-b) op F, into D if I send it,
 *      else (scan) my output. Exscan's result is P(i-b) op C (or P(i-b) alone
 *      without children): folded on the left of my output (copied there);
 *   6. i a power of two (i-b = 0): P(i) = F, copied into D if I send it and it
 *      was not made there; exscan's result is C as it is (rank 0's: untouched);
 *   7. publish DN (ring: if I sent or received; mini lines: my line D, and
 *      every rank but rank 0, which reads nothing, publishes the call's last
 *      step once: a reader's one publication frees every line it read for a
 *      call 128 calls later).
 * Scan's output gets P(i) copied unless it was made there. Every wait is for
 * a lower rank's step of this chunk, or for a claim's readers of an earlier
 * chunk or, at depth 1 where U and D are one slot, for my parent's UP of
 * this one (which waits for lower ranks only): no cycle at any depth.
 * Across waits (resumable form): the phase (co->s), the chunk (co->c), the
 * child (co->i), where my F is (co->first), U claimed (co->dst), D claimed
 * (co->sub.dst[0]; no sub-machine runs here), the call's first ring slot
 * (co->slots) and mini line (co->minis).
 */
static inline __attribute__((always_inline)) int tree(osmp__coll_t t, const struct osmp__args *a,
                                                      int exclusive, struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size, i = me + 1, b = i & -i, kids = __builtin_ctz((unsigned)i);
    int parent = i + b <= n, below = i - b; /* (1-indexed; 0: none) */
    int ndown = n - i < b / 2 ? n - i : b / 2;
    size_t e = a->esize, bytes = a->count * e;
    int mini = bytes <= OSMP__MINI_DATA;
    size_t per = mini ? bytes : m->chunk / e * e, nchunks = bytes ? (bytes + per - 1) / per : 0;
#define UP(c) (co->s + 1 + 2 * (uint64_t)(c))
#define DN(c) (co->s + 2 + 2 * (uint64_t)(c))
#define END (mini ? DN(0) : 0)
#define SLOT_OF(c, d)                                                                                        \
    (mini ? osmp__mini_slot(co->minis + (uint64_t)(d))                                                       \
          : osmp__mb_ring(m, co->slots + 2 * (uint64_t)(c) + (uint64_t)(d)))
#define LEN (bytes - co->c * per < per ? bytes - co->c * per : per)
#define DSTD (co->sub.dst[0])
    OSMP__CO_BEGIN(R, co);
    /* (every rank takes the same: the counts agree) */
    co->slots = mini ? 0 : osmp__slots_take(t, nchunks * 2);
    co->minis = mini ? osmp__minis_take(t, 2) : 0;
    co->s = osmp__phase(t);
    for (co->c = 0; co->c < nchunks; co->c++) {
        co->first = (const char *)a->in + co->c * per;
        co->dst = NULL;
        DSTD = NULL;
        if (parent) { /* 1 */
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, SLOT_OF(co->c, 0));
            int to = me + b;
            co->dst =
                osmp__mb_claim(m, OSMP__DOWN, SLOT_OF(co->c, 0), &to, 1, OSMP__DOWN, mini ? END : UP(co->c));
            if (!co->dst) return m->failed;
        } else if (ndown) {
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, SLOT_OF(co->c, 1));
            DSTD = osmp__mb_claim(m, OSMP__DOWN, SLOT_OF(co->c, 1), t->peers + me, ndown, OSMP__DOWN,
                                  mini ? END : DN(co->c));
            if (!DSTD) return m->failed;
        }
        for (co->i = 0; co->i < kids; co->i++) { /* 2 */
            OSMP__AWAIT_SLOT(R, co, m, me - (1 << co->i), OSMP__DOWN, SLOT_OF(co->c, 0), UP(co->c));
            {
                int from = me - (1 << co->i);
                size_t len = LEN;
                const char *left = osmp__mb_slot(m, from, OSMP__DOWN, SLOT_OF(co->c, 0));
                char *out = (char *)a->out + co->c * per;
                char *w = co->dst ? co->dst : DSTD ? DSTD : exclusive ? NULL : out;
                if (w) {
                    a->fn3(w, left, co->first, len / e);
                    osmp__trace_copy(t, from, me, len);
                    osmp__trace_reduce(t, 2 * len);
                    co->first = w;
                }
                if (exclusive && co->i == 0) {
                    memcpy(out, left, len);
                    osmp__trace_copy(t, from, me, len);
                } else if (exclusive) {
                    a->fn3(out, left, out, len / e);
                    osmp__trace_copy(t, from, me, len);
                    osmp__trace_reduce(t, 2 * len);
                }
            }
        }
        if (co->dst && co->first != co->dst) { /* 3 */
            memcpy(co->dst, co->first, LEN);
            osmp__trace_copy(t, me, me, LEN);
            co->first = co->dst;
        }
        if (mini) { /* 4 */
            if (co->dst) osmp__mb_publish_minis(m, OSMP__DOWN, co->minis, 1, UP(0));
        } else if (co->dst || kids) {
            osmp__mb_publish(m, OSMP__DOWN, UP(co->c));
        }
        if (parent && ndown) {
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, SLOT_OF(co->c, 1));
            DSTD = osmp__mb_claim(m, OSMP__DOWN, SLOT_OF(co->c, 1), t->peers + me, ndown, OSMP__DOWN,
                                  mini ? END : DN(co->c));
            if (!DSTD) return m->failed;
        }
        if (below) { /* 5 */
            OSMP__AWAIT_SLOT(R, co, m, below - 1, OSMP__DOWN, SLOT_OF(co->c, 1), DN(co->c));
            {
                size_t len = LEN;
                const char *left = osmp__mb_slot(m, below - 1, OSMP__DOWN, SLOT_OF(co->c, 1));
                char *out = (char *)a->out + co->c * per;
                char *w = DSTD ? DSTD : exclusive ? NULL : out;
                if (w) {
                    a->fn3(w, left, co->first, len / e);
                    osmp__trace_copy(t, below - 1, me, len);
                    osmp__trace_reduce(t, 2 * len);
                    co->first = w;
                }
                if (exclusive && !kids) {
                    memcpy(out, left, len);
                    osmp__trace_copy(t, below - 1, me, len);
                } else if (exclusive) {
                    a->fn3(out, left, out, len / e);
                    osmp__trace_copy(t, below - 1, me, len);
                    osmp__trace_reduce(t, 2 * len);
                }
            }
        } else if (DSTD && co->first != DSTD) { /* 6 */
            memcpy(DSTD, co->first, LEN);
            osmp__trace_copy(t, me, me, LEN);
            co->first = DSTD;
        }
        if (mini) { /* 7 */
            if (DSTD) osmp__mb_publish_minis(m, OSMP__DOWN, co->minis + 1, 1, DN(0));
            if (me > 0) osmp__mb_publish(m, OSMP__DOWN, END);
        } else if (DSTD || below) {
            osmp__mb_publish(m, OSMP__DOWN, DN(co->c));
        }
        if (!exclusive && co->first != (char *)a->out + co->c * per) {
            memcpy((char *)a->out + co->c * per, co->first, LEN);
            osmp__trace_copy(t, me, me, LEN);
        }
    }
#undef UP
#undef DN
#undef END
#undef SLOT_OF
#undef LEN
#undef DSTD
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

static inline __attribute__((always_inline)) int scan_tree(osmp__coll_t t, const struct osmp__args *a,
                                                           struct osmp__co *co, const int R)
{
    return tree(t, a, 0, co, R);
}
OSMP__COMPILE_TWICE(osmp__scan_tree, scan_tree)

static inline __attribute__((always_inline)) int exscan_tree(osmp__coll_t t, const struct osmp__args *a,
                                                             struct osmp__co *co, const int R)
{
    return tree(t, a, 1, co, R);
}
OSMP__COMPILE_TWICE(osmp__exscan_tree, exscan_tree)
