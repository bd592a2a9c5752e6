/* Alltoall through the slots: every rank writes and reads at once. */
#include <string.h>

#include "coll/co.h"

/* Bytes of my block for (from) rank q that go through the rows: all of them
 * here; in alltoallv direct (part > 0) those osmp__pair_path sends this way,
 * never my own block (its caller copies it). */
static size_t slot_bytes(const struct osmp__args *a, size_t part, size_t spart, size_t bytes, int q, int me)
{
    if (!part) return bytes;
    return q != me && osmp__pair_path(a, part, spart, bytes) == OSMP__PAIR_ROWS ? bytes : 0;
}

/*
 * Alltoall(v) protocol (through the slots; a block's two ends know its size,
 * so they agree on its chunks; alltoall's blocks are all B bytes). Step
 * s = base + 1 + c * n + q names chunk c of the blocks destined to rank q; its
 * slot at each writer is (first + c * n + q) % depth, where the call takes n
 * ring slots (osmp__slots_take) from first: calls start at different slots,
 * so a writer back to back seldom waits for the reader of its last call's
 * block (as it would if every call started at the same slot). A pair with no
 * chunk c skips it at both ends.
 *   for each chunk c:
 *   1. for q != me (s increasing): claim my down slot of s (its last reader has
 *      said it is done), put chunk c of my block for q in it, publish down s;
 *   2. (first chunk only) my own block straight from my input to my output,
 *      while the others copy;
 *   3. from every other rank w, wait for its down s(c, me) and copy chunk c of
 *      its block for me out of its slot; then publish up s(c, me) (I have read
 *      them).
 * With n <= depth every rank writes a whole chunk row before it reads: all
 * ranks copy at once, none waits for another's read in between. A claim in
 * row c then waits only for reads of earlier rows, which need only their
 * writes: no deadlock. With n > depth a claim in row c could wait for a read
 * of the same row, whose reader is still writing: there each rank reads at
 * its own step between its writes (q == me), as a claim at step s waits only
 * for reads of steps s - depth or earlier, which need only writes of those
 * steps.
 * Across waits (resumable form): the rows (sub->k), chunk c (sub->c), q
 * (sub->i) and w (sub->j); my own block is copied once, in the first row.
 */
static inline __attribute__((always_inline)) int rows(osmp__coll_t t, const struct osmp__args *a,
                                                      uint64_t base, uint64_t first, int direct,
                                                      unsigned *published, struct osmp__co_sub *sub,
                                                      const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t e = a->esize, chunk = m->chunk, part = direct ? osmp__pair_part(t) : 0,
           spart = direct ? osmp__pair_spart(t) : 0;
    const char *in = a->in;
    char *out = a->out;
    const char *own_in = in + osmp__displ_of(a, me) * e;
    char *own_out = out + osmp__displ2_of(a, me) * e;
    size_t own_bytes = osmp__count_of(a, me) * e;
    int own = !direct && own_bytes && own_out != own_in, row = n <= m->depth;
    /* Alltoallv runs on the whole ring (no rank knows every count: select.c
     * run_choice); a block that fits the short ring's slots takes them all the
     * same, as both its ends know its size. Not in row order, where every slot
     * of a row must differ (interleaved, any slot a claim waits for was
     * written at an earlier step: the argument above holds). */
    int short_blocks = !row && a->vector && !a->vector_bound && m->depth > OSMP__SHORT_RING_SLOTS;
#define SB(q) slot_bytes(a, part, spart, osmp__count_of(a, q) * e, q, me)
#define GB(w) slot_bytes(a, part, spart, osmp__count2_of(a, w) * e, w, me)
#define RING(k, b) \
    (short_blocks && (b) <= OSMP__SHORT_RING_MAX ? (int)((k) % OSMP__SHORT_RING_SLOTS) : osmp__mb_ring(m, k))
#define OFF (sub->c * chunk)
#define MINE (sub->c * (uint64_t)n + (uint64_t)me)
    OSMP__CO_BEGIN(R, sub);
    /* Alltoallv: both ends of a pair know its block's size, so they agree on
     * its chunks; a rank runs the rows its own blocks need (the others skip
     * the pairs it has no chunk in, and step numbers only grow). */
    sub->k = 0;
    for (int q = 0; q < n; q++) {
        size_t sb = SB(q), gb = GB(q);
        size_t most = sb > gb ? sb : gb;
        if ((most + chunk - 1) / chunk > sub->k) sub->k = (most + chunk - 1) / chunk;
    }
    if (sub->k > (OSMP__PHASE_STEPS - 4) / (uint64_t)n) return OSMP_ERR_RANGE;
    for (sub->c = 0; sub->c < sub->k; sub->c++) {
        for (sub->i = 0; sub->i < n; sub->i++) {
            if (sub->i != me && OFF < SB(sub->i)) { /* 1 */
                OSMP__AWAIT_CLAIM(R, sub, m, OSMP__DOWN,
                                  RING(first + sub->c * (uint64_t)n + (uint64_t)sub->i, SB(sub->i)));
                uint64_t k = sub->c * (uint64_t)n + (uint64_t)sub->i, s = base + 1 + k;
                size_t sb = SB(sub->i), off = OFF, len = sb - off < chunk ? sb - off : chunk;
                char *dst =
                    osmp__mb_claim(m, OSMP__DOWN, RING(first + k, sb), &sub->i, 1, OSMP__UP, s);
                if (!dst) return m->failed;
                osmp__stage(t, dst, in + osmp__displ_of(a, sub->i) * e + off, len);
                osmp__trace_copy(t, me, me, len);
                osmp__mb_publish(m, OSMP__DOWN, s);
                if (published) *published |= 1u << OSMP__DOWN;
            }
            if (sub->i != (row ? n - 1 : me)) continue;
            if (own && sub->c == 0) { /* 2 (reached once, in the first row) */
                osmp__copy_own(t, own_out, own_in, own_bytes);
                osmp__trace_copy(t, me, me, own_bytes);
            }
            for (sub->j = 0; sub->j < n; sub->j++) { /* 3 */
                if (sub->j == me || OFF >= GB(sub->j)) continue;
                OSMP__AWAIT(R, sub, m, sub->j, OSMP__DOWN, base + 1 + MINE);
                size_t gb = GB(sub->j), off = OFF, len = gb - off < chunk ? gb - off : chunk;
                const char *src = osmp__mb_slot(m, sub->j, OSMP__DOWN, RING(first + MINE, gb));
                memcpy(out + osmp__displ2_of(a, sub->j) * e + off, src, len);
                osmp__trace_copy(t, sub->j, me, len);
            }
            osmp__mb_publish(m, OSMP__UP, base + 1 + MINE);
            if (published) *published |= 1u << OSMP__UP;
        }
    }
#undef SB
#undef GB
#undef OFF
#undef MINE
#undef RING
    OSMP__CO_END(R, sub);
    return OSMP_OK;
}

int osmp__alltoall_rows(osmp__coll_t t, const struct osmp__args *a, uint64_t base, uint64_t first, int direct,
                        unsigned *published)
{
    struct osmp__co_sub sub;
    return rows(t, a, base, first, direct, published, &sub, 0);
}

int osmp__alltoall_rows_co(osmp__coll_t t, const struct osmp__args *a, uint64_t base, uint64_t first,
                           int direct, unsigned *published, struct osmp__co_sub *sub)
{
    return rows(t, a, base, first, direct, published, sub, 1);
}

/* The call's n ring slots and phase, then the rows (a sub-machine in co->sub). */
static inline __attribute__((always_inline)) int alltoall_slots(osmp__coll_t t, const struct osmp__args *a,
                                                                struct osmp__co *co, const int R)
{
    int rc;
    OSMP__CO_BEGIN(R, co);
    co->slots = osmp__slots_take(t, (uint64_t)t->size);
    co->base = osmp__phase(t);
    OSMP__AWAIT_SUB(R, co, rc,
                    (R) ? osmp__alltoall_rows_co(t, a, co->base, co->slots, 0, NULL, &co->sub)
                        : osmp__alltoall_rows(t, a, co->base, co->slots, 0, NULL));
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__alltoall_slots, alltoall_slots)
