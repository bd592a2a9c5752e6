/* Direct scatter and scatterv: the root hands each rank its block, nothing on the way. */
#include <string.h>

#include "coll/co.h"

/*
 * Scatter(v) protocol. Rank r's block is count_r elements at displacement
 * displ_r of the root's input (scatter: count and r * count; scatterv: the
 * root's counts and displs; every rank knows its own count).
 * Slots, per chunk c and rank r (step base+1+c*n+r, the root's ring slot
 * (first+c*n+r) % depth: both sides know it without knowing the other counts;
 * first moves on by n every call, so the root may run a call ahead of a slow
 * reader instead of waiting for it to empty the previous call's slot):
 *   1. the root puts chunk c of block r in its down slot and publishes;
 *   2. rank r copies it out and publishes (the slot is free again).
 * Blocks of scatter (not scatterv, where a receiver knows only its own count)
 * beyond the mini lines and below a chunk, whose n - 1 fit one slot together: one
 * slot per call (the ring holds depth calls, where a slot per receiver held
 * depth / n), the root's next, receiver r's block at its index i among the
 * receivers:
 *   1. the root claims the slot (every receiver is done with its last call),
 *      writes every block and publishes base+1;
 *   2. each rank copies its block out and publishes base+1.
 * Blocks of scatter that fit L mini lines (L = 1 or 2, while the call's lines
 * fit the ring: fits_ring): rank r's goes in the root's mini lines
 * mini + i L .. + L - 1, i its index among the receivers (mini moving on by
 * (n - 1) L every call, and to an even line for L = 2: the ring holds about
 * OSMP__MINI_SLOTS / ((n - 1) L) calls, 256 for a pair of one line), so the
 * root may run ahead of slow readers as an MPI library's eager sends let it,
 * and a reader takes one line latency, not the two of a slot (mailbox.h):
 *   1. the root writes each block into its lines and publishes base+1 there;
 *   2. each rank copies its block from its lines and publishes base+1.
 * Scatterv takes one line per receiver every call, mini + i, and a block of at
 * most one line's data (both ends know its size) goes in it as above, the
 * others through the slots; in a team of two, whose one receiver's block both
 * ends know, the block takes its lines as scatter's do. Not two lines per
 * receiver in every team: the common small blocks would take a fresh pair of
 * lines every call (docs/measurements.md, "Gather, scatter and the vector
 * variants", C3).
 * In every path the root copies its own block into its output after its
 * publications and before it waits for readers: first, it held up every
 * receiver.
 * Single copy (scatter only: a scatterv receiver does not know where its block
 * lies in the root's buffer):
 *   1. the root exposes its buffer and publishes;
 *   2. each rank copies its block from there and publishes;
 *   3. the root returns once every rank has published.
 * Exposed (scatter blocks of a chunk or more that single copy does not take,
 * while one line per receiver fits the ring: fits_ring):
 * before the slots, the root says in rank r's mini line (mini + i, as for
 * small blocks) whether r reads its block in place (an osmp_alloc buffer: no
 * CMA) or through the slots; the root decides alone. If in place, r copies its
 * block from there and publishes base+1, and the root returns once every rank
 * has, as in single copy's 2 and 3.
 */
/* Do one call's L lines per receiver (and one to start a pair at an even
 * line) fit the ring of mini lines, at any team size? A call that wrapped it
 * would claim its own lines again and wait for its own receivers mid-call (on
 * the exposed path, for receivers that wait for it: a deadlock). */
static int fits_ring(int n, int lines)
{
    return (size_t)(n - 1) * (size_t)lines + (lines > 1) <= OSMP__MINI_SLOTS;
}

/* Scatterv: lines per receiver and call, the same on every rank: one (a
 * receiver knows only its own count, so blocks do not share lines or slots as
 * scatter's do), or in a team of two the lines of the one block (`bytes`, which
 * both ends know), as scatter's. */
static int vector_lines(int n, size_t bytes)
{
    return n == 2 && osmp__mini_lines(bytes) == OSMP__MINI_LINES_BLOCK ? OSMP__MINI_LINES_BLOCK : 1;
}

/* Does a scatterv block of `bytes` go in its receiver's `lv` lines? */
static int vector_in_line(size_t bytes, int lv)
{
    return bytes && osmp__mini_lines(bytes) <= lv;
}

/* The root's own block from its input to its output (a zero count may come
 * with NULL; in place it is there already). */
static void root_own(osmp__coll_t t, const struct osmp__args *a)
{
    const char *own = (const char *)a->in + osmp__displ_of(a, t->rank) * a->esize;
    if (a->count && a->out != own) {
        osmp__copy(a->out, own, a->count * a->esize);
        osmp__trace_copy(t, t->rank, t->rank, a->count * a->esize);
    }
}

/* Receiver r's mini line of this call: the root has none of its own. */
static int mini_of(uint64_t mini, int r, int root)
{
    return osmp__mini_slot(mini + (uint64_t)(r - (r > root)));
}

/* Across waits (resumable form): the phase, ring slots and mini lines the call
 * took (co->base, slots, minis), the exposed address (co->at), rank r (co->i),
 * chunk c (co->c), the largest block through the slots (co->most), a failed
 * single copy (co->rc). */
static inline __attribute__((always_inline)) int scatter_direct(osmp__coll_t t, const struct osmp__args *a,
                                                                struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = a->root, n = t->size, rc;
    size_t e = a->esize, chunk = m->chunk;
    const char *in = a->in;
    size_t B = a->count * e;
    int lines = osmp__mini_lines(B);
    int in_lines = !a->vector && lines <= OSMP__MINI_LINES_BLOCK && B < chunk && fits_ring(n, lines);
    int lv = a->vector ? vector_lines(n, (me == root ? osmp__count_of(a, n - 1 - root) : a->count) * e) : 0;
#define BYTES_OF(r) ((me == root ? osmp__count_of(a, r) : a->count) * e)
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    co->base = osmp__phase(t);
    if (!a->vector && osmp__copy_once(a, B)) {
        if (me == root) {
            osmp__mb_chan(m, me, OSMP__DOWN)->addr = osmp__expose(in);
            osmp__mb_publish(m, OSMP__DOWN, co->base + 1); /* 1 */
            root_own(t, a);
            for (co->i = 0; co->i < n; co->i++) /* 3 */
                if (co->i != root) OSMP__AWAIT(R, co, m, co->i, OSMP__DOWN, co->base + 1);
            goto done;
        }
        OSMP__AWAIT(R, co, m, root, OSMP__DOWN, co->base + 1); /* 2 */
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, root, OSMP__DOWN)->addr;
        if (osmp__copy_from(m->pids[root], m->local[root], a->out, src + (size_t)me * B, B))
            co->rc = osmp__mb_copy_failed(m, root);
        osmp__trace_copy(t, root, me, B);
        osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
        goto done;
    }
    if (!a->vector && !in_lines && B < chunk && B * (size_t)(n - 1) <= chunk) { /* packed */
        co->slots = osmp__slots_take(t, 1);
        if (me == root) {
            OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, osmp__mb_ring(m, co->slots));
            char *dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, co->slots), t->peers, n - 1,
                                       OSMP__DOWN, co->base + 1); /* 1 */
            if (!dst) return m->failed;
            osmp__stage(t, dst, in, (size_t)root * B);
            osmp__stage(t, dst + (size_t)root * B, in + (size_t)(root + 1) * B, (size_t)(n - 1 - root) * B);
            osmp__trace_copy(t, me, me, (size_t)(n - 1) * B);
            osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
            root_own(t, a);
            goto done;
        }
        OSMP__AWAIT(R, co, m, root, OSMP__DOWN, co->base + 1); /* 2 */
        memcpy(a->out,
               osmp__mb_slot(m, root, OSMP__DOWN, osmp__mb_ring(m, co->slots)) +
                   (size_t)(me - (me > root)) * B,
               B);
        osmp__trace_copy(t, root, me, B);
        osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
        goto done;
    }
    co->slots = osmp__slots_take(t, (uint64_t)n);
    /* (at most one mini line per receiver in a call: a receiver that stages
     * frees its line only after its chunks, which the root writes after it
     * has written every line) */
    if (!a->vector && B >= chunk && fits_ring(n, 1)) { /* exposed */
        co->minis = osmp__minis_take(t, (uint64_t)n - 1);
        if (me == root) {
            co->at = osmp__expose_mapped(in);
            for (co->i = 0; co->i < n; co->i++) {
                if (co->i == root) continue;
                OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, mini_of(co->minis, co->i, root));
                int slot = mini_of(co->minis, co->i, root);
                char *line = osmp__mb_claim(m, OSMP__DOWN, slot, &co->i, 1, OSMP__DOWN, co->base + 1);
                if (!line) return m->failed;
                memcpy(line, &co->at, sizeof(co->at));
                osmp__mb_publish_slot(m, OSMP__DOWN, slot, co->base + 1);
            }
            if (co->at) {
                root_own(t, a);
                for (co->i = 0; co->i < n; co->i++)
                    if (co->i != root) OSMP__AWAIT(R, co, m, co->i, OSMP__DOWN, co->base + 1);
                goto done;
            }
        } else {
            OSMP__AWAIT_SLOT(R, co, m, root, OSMP__DOWN, mini_of(co->minis, me, root), co->base + 1);
            memcpy(&co->at, osmp__mb_slot(m, root, OSMP__DOWN, mini_of(co->minis, me, root)), sizeof(co->at));
            if (co->at) {
                const char *src = (const char *)(uintptr_t)co->at + (size_t)me * B;
                if (osmp__copy_from(m->pids[root], m->local[root], a->out, src, B)) co->rc = osmp__mb_copy_failed(m, root);
                osmp__trace_copy(t, root, me, B);
                osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
                goto done;
            }
        }
    }
    if (in_lines) {
        /* two-line blocks start at an even line (mailbox.h): one more taken, skipped if need be */
        co->minis = osmp__minis_take(t, (uint64_t)(n - 1) * (uint64_t)lines + (lines > 1));
        co->minis += lines > 1 && co->minis % 2;
        if (me == root) {
            for (co->i = 0; co->i < n; co->i++) { /* 1 */
                if (co->i == root) continue;
                OSMP__AWAIT_SEND_MINIS(R, co, rc, m, OSMP__DOWN,
                                       co->minis + (uint64_t)(co->i - (co->i > root)) * (uint64_t)lines,
                                       co->i, OSMP__DOWN, co->base + 1, in + (size_t)co->i * B, B);
                osmp__trace_copy(t, me, me, B);
            }
            root_own(t, a);
            goto done;
        }
        OSMP__AWAIT_RECV_MINIS(R, co, rc, m, root, OSMP__DOWN,
                               co->minis + (uint64_t)(me - (me > root)) * (uint64_t)lines, co->base + 1,
                               a->out, B); /* 2 */
        osmp__trace_copy(t, root, me, B);
        osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
        goto done;
    }
    /* the largest block through the slots: a receiver knows only its own, the
     * root of scatterv finds it among the blocks that do not go in lines */
    co->most = me == root && a->vector ? 0 : B;
    if (a->vector) { /* blocks of up to lv mini lines: in them (the root and the block's receiver both know its size) */
        co->minis = osmp__minis_take(t, (uint64_t)(n - 1) * (uint64_t)lv + (lv > 1));
        co->minis += lv > 1 && co->minis % 2;
        for (co->i = 0; me == root && co->i < n; co->i++) { /* 1 */
            if (co->i == root) continue;
            if (!vector_in_line(BYTES_OF(co->i), lv)) {
                co->most = BYTES_OF(co->i) > co->most ? BYTES_OF(co->i) : co->most;
                continue;
            }
            OSMP__AWAIT_SEND_MINIS(
                R, co, rc, m, OSMP__DOWN, co->minis + (uint64_t)(co->i - (co->i > root)) * (uint64_t)lv,
                co->i, OSMP__DOWN, co->base + 1, in + osmp__displ_of(a, co->i) * e, BYTES_OF(co->i));
            osmp__trace_copy(t, me, me, BYTES_OF(co->i));
        }
        if (me != root && vector_in_line(B, lv)) {
            OSMP__AWAIT_RECV_MINIS(R, co, rc, m, root, OSMP__DOWN,
                                   co->minis + (uint64_t)(me - (me > root)) * (uint64_t)lv, co->base + 1,
                                   a->out, B); /* 2 */
            osmp__trace_copy(t, root, me, B);
            osmp__mb_publish(m, OSMP__DOWN, co->base + 1);
            goto done;
        }
    }
    for (co->c = 0; co->c * chunk < co->most; co->c++) {
        for (co->i = 0; co->i < n; co->i++) {
            if (co->i == root || (me != root && me != co->i) || co->c * chunk >= BYTES_OF(co->i) ||
                (a->vector && vector_in_line(BYTES_OF(co->i), lv)))
                continue;
            if (me == root) { /* 1 */
                OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN,
                                  osmp__mb_ring(m, co->slots + co->c * (uint64_t)n + (uint64_t)co->i));
            } else { /* 2 */
                OSMP__AWAIT(R, co, m, root, OSMP__DOWN, co->base + 1 + co->c * (uint64_t)n + (uint64_t)co->i);
            }
            size_t bytes = BYTES_OF(co->i), off = co->c * chunk,
                   len = bytes - off < chunk ? bytes - off : chunk;
            uint64_t s = co->base + 1 + co->c * (uint64_t)n + (uint64_t)co->i;
            int slot = osmp__mb_ring(m, co->slots + co->c * (uint64_t)n + (uint64_t)co->i);
            if (me == root) {
                char *dst = osmp__mb_claim(m, OSMP__DOWN, slot, &co->i, 1, OSMP__DOWN, s);
                if (!dst) return m->failed;
                osmp__stage(t, dst, in + osmp__displ_of(a, co->i) * e + off, len);
                osmp__trace_copy(t, me, me, len);
            } else {
                memcpy((char *)a->out + off, osmp__mb_slot(m, root, OSMP__DOWN, slot), len);
                osmp__trace_copy(t, root, me, len);
            }
            osmp__mb_publish(m, OSMP__DOWN, s);
        }
    }
    if (me == root) root_own(t, a);
done:
#undef BYTES_OF
    OSMP__CO_END(R, co);
    return co->rc;
}
OSMP__COMPILE_TWICE(osmp__scatter_direct, scatter_direct)
