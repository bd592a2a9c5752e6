/* Prefix reductions by recursive doubling: ceil(log2 n) steps, every rank at work in each. */
#include <string.h>

#include "coll/co.h"

/*
 * Scan / exscan protocol, K = ceil(log2 n) steps per chunk. My window is the
 * reduction of ranks max(0, r-2^k+1) .. r, my input at step 0. Per chunk c
 * (ring slots from the call's first, K a chunk, step base+1+c*(K+1)+k; or, for
 * a message of one mini line, mini line k of the call's K at step base+1+k),
 * for k = 0 .. K:
 *   1. if r+2^k < n (k < K): claim my slot k for rank r+2^k, which says it is
 *      done with it by publishing step k+1 on its down counter (mini lines: the
 *      call's last step, once);
 *   2. if r-2^(k-1) >= 0 (k > 0): wait for its step k-1, its window in its slot
 *      k-1, and combine it on the LEFT of mine, received op mine (the ranks it
 *      covers come before mine: non-commutative operations keep rank order);
 *      the new window goes into my slot k if I send it at k, else (scan) into
 *      my output. Exscan also folds it on the left of my output, the reduction
 *      of what I received only (the first one copied: a lone contribution is
 *      the input as it is); it computes my window first, which may still be my
 *      input (in place);
 *   3. a window not made in my slot k (nothing received at step k-1: my window
 *      holds every rank before me already) is copied there;
 *   4. publish step k: my slot k holds my window, and I have read my slot k-1's
 *      sender's. On the ring every rank publishes each step at which it sends
 *      or received, so that a claim's wait for the reader of an earlier slot
 *      never depends on a later message (small rings: OSMP_PIPELINE_DEPTH below
 *      K); mini lines carry their own counters, and a reader's one publication
 *      at the end frees every line it read for a call K/256 of the ring later.
 * Scan's output gets the last window unless it was made there (rank 0's, in
 * place: its input). Mini lines instead of the mailbox line: the line's one
 * slot would make step k+1 wait for step k's reader; and a rank that sends
 * again, its window complete, must still claim its next slot.
 * Across waits (resumable form): the phase (co->s), the chunk (co->c), the step
 * (co->i), where my window is (co->first), the slot claimed (co->dst), the
 * call's first ring slot (co->slots) and mini line (co->minis).
 */
static inline __attribute__((always_inline)) int rdbl(osmp__coll_t t, const struct osmp__args *a,
                                                      int exclusive, struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size, K = 0;
    while (K < 31 && (1 << K) < n)
        K++;
    size_t e = a->esize, bytes = a->count * e;
    int mini = bytes <= OSMP__MINI_DATA;
    size_t per = mini ? bytes : m->chunk / e * e, nchunks = bytes ? (bytes + per - 1) / per : 0;
#define STEP(c, k) (co->s + 1 + (uint64_t)(c) * (uint64_t)(K + 1) + (uint64_t)(k))
#define SLOT_OF(c, k)                                                                                        \
    (mini ? osmp__mini_slot(co->minis + (uint64_t)(k))                                                       \
          : osmp__mb_ring(m, co->slots + (uint64_t)(c) * (uint64_t)K + (uint64_t)(k)))
#define SENDS(k) ((k) < K && me + (1 << (k)) < n)
#define RECEIVES(k) ((k) > 0 && me >= (1 << ((k)-1)))
    OSMP__CO_BEGIN(R, co);
    /* (every rank takes the same: the counts agree) */
    co->slots = mini ? 0 : osmp__slots_take(t, nchunks * (uint64_t)K);
    co->minis = mini ? osmp__minis_take(t, (uint64_t)K) : 0;
    co->s = osmp__phase(t);
    for (co->c = 0; co->c < nchunks; co->c++) {
        co->first = (const char *)a->in + co->c * per;
        for (co->i = 0; co->i <= K; co->i++) {
            co->dst = NULL;
            if (SENDS(co->i)) { /* 1 */
                OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, SLOT_OF(co->c, co->i));
                int to = me + (1 << co->i);
                co->dst = osmp__mb_claim(m, OSMP__DOWN, SLOT_OF(co->c, co->i), &to, 1, OSMP__DOWN,
                                         mini ? STEP(0, K) : STEP(co->c, co->i + 1));
                if (!co->dst) return m->failed;
            }
            if (RECEIVES(co->i)) { /* 2 */
                OSMP__AWAIT_SLOT(R, co, m, me - (1 << (co->i - 1)), OSMP__DOWN, SLOT_OF(co->c, co->i - 1),
                                 STEP(co->c, co->i - 1));
                int from = me - (1 << (co->i - 1));
                size_t off = co->c * per, len = bytes - off < per ? bytes - off : per;
                const char *left = osmp__mb_slot(m, from, OSMP__DOWN, SLOT_OF(co->c, co->i - 1));
                char *out = (char *)a->out + off;
                if (co->dst || !exclusive) {
                    char *w = co->dst ? co->dst : out;
                    a->fn3(w, left, co->first, len / e);
                    osmp__trace_copy(t, from, me, len);
                    osmp__trace_reduce(t, 2 * len);
                    co->first = w;
                }
                if (exclusive && co->i == 1) {
                    memcpy(out, left, len);
                    osmp__trace_copy(t, from, me, len);
                } else if (exclusive) {
                    a->fn3(out, left, out, len / e);
                    osmp__trace_copy(t, from, me, len);
                    osmp__trace_reduce(t, 2 * len);
                }
            }
            if (co->dst && co->first != co->dst) { /* 3 */
                size_t off = co->c * per, len = bytes - off < per ? bytes - off : per;
                memcpy(co->dst, co->first, len);
                osmp__trace_copy(t, me, me, len);
                co->first = co->dst;
            }
            if (mini) { /* 4 */
                if (co->dst)
                    osmp__mb_publish_minis(m, OSMP__DOWN, co->minis + (uint64_t)co->i, 1, STEP(0, co->i));
                if (co->i == K && me > 0) osmp__mb_publish(m, OSMP__DOWN, STEP(0, K));
            } else if (co->dst || RECEIVES(co->i)) {
                osmp__mb_publish(m, OSMP__DOWN, STEP(co->c, co->i));
            }
        }
        if (!exclusive && co->first != (char *)a->out + co->c * per) {
            size_t off = co->c * per, len = bytes - off < per ? bytes - off : per;
            memcpy((char *)a->out + off, co->first, len);
            osmp__trace_copy(t, me, me, len);
        }
    }
#undef STEP
#undef SLOT_OF
#undef SENDS
#undef RECEIVES
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

static inline __attribute__((always_inline)) int scan_rdbl(osmp__coll_t t, const struct osmp__args *a,
                                                           struct osmp__co *co, const int R)
{
    return rdbl(t, a, 0, co, R);
}
OSMP__COMPILE_TWICE(osmp__scan_rdbl, scan_rdbl)

static inline __attribute__((always_inline)) int exscan_rdbl(osmp__coll_t t, const struct osmp__args *a,
                                                             struct osmp__co *co, const int R)
{
    return rdbl(t, a, 1, co, R);
}
OSMP__COMPILE_TWICE(osmp__exscan_rdbl, exscan_rdbl)
