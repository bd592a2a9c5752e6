/* Alltoall through the slots: every rank writes and reads at once. */
#include <string.h>

#include "coll/coll.h"

int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a);

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
 */
int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a)
{
    uint64_t first = osmp__slots_take(t, (uint64_t)t->size);
    return osmp__alltoall_rows(t, a, osmp__phase(t), first, 0, NULL);
}

int osmp__alltoall_rows(osmp__coll_t t, const struct osmp__args *a, uint64_t base, uint64_t first, int direct,
                        unsigned *published)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t e = a->esize, chunk = m->chunk, rows = 0, part = direct ? osmp__pair_part(t) : 0,
           spart = direct ? osmp__pair_spart(t) : 0;
    const char *in = a->in;
    char *out = a->out;
    /* Alltoallv: both ends of a pair know its block's size, so they agree on
     * its chunks; a rank runs the rows its own blocks need (the others skip
     * the pairs it has no chunk in, and step numbers only grow). */
    for (int q = 0; q < n; q++) {
        size_t sb = slot_bytes(a, part, spart, osmp__count_of(a, q) * e, q, me);
        size_t gb = slot_bytes(a, part, spart, osmp__count2_of(a, q) * e, q, me);
        size_t most = sb > gb ? sb : gb;
        if ((most + chunk - 1) / chunk > rows) rows = (most + chunk - 1) / chunk;
    }
    if (rows > (OSMP__PHASE_STEPS - 4) / (uint64_t)n) return OSMP_ERR_RANGE;
    const char *own_in = in + osmp__displ_of(a, me) * e;
    char *own_out = out + osmp__displ2_of(a, me) * e;
    size_t own_bytes = osmp__count_of(a, me) * e;
    int own = !direct && own_bytes && own_out != own_in, row = n <= m->depth;
    for (size_t c = 0; c < rows; c++) {
        size_t off = c * chunk;
        for (int q = 0; q < n; q++) {
            uint64_t k = c * (uint64_t)n + (uint64_t)q, s = base + 1 + k;
            size_t sb = slot_bytes(a, part, spart, osmp__count_of(a, q) * e, q, me);
            if (q != me && off < sb) { /* 1 */
                size_t len = sb - off < chunk ? sb - off : chunk;
                char *dst = osmp__mb_claim(m, OSMP__DOWN, osmp__mb_ring(m, first + k), &q, 1, OSMP__UP, s);
                if (!dst) return m->failed;
                osmp__stage(t, dst, in + osmp__displ_of(a, q) * e + off, len);
                osmp__trace_copy(t, me, me, len);
                osmp__mb_publish(m, OSMP__DOWN, s);
                if (published) *published |= 1u << OSMP__DOWN;
            }
            if (q != (row ? n - 1 : me)) continue;
            if (own) { /* 2 */
                osmp__copy_own(t, own_out, own_in, own_bytes);
                osmp__trace_copy(t, me, me, own_bytes);
                own = 0;
            }
            uint64_t mine = c * (uint64_t)n + (uint64_t)me;
            for (int w = 0; w < n; w++) { /* 3 */
                size_t gb = slot_bytes(a, part, spart, osmp__count2_of(a, w) * e, w, me);
                if (w == me || off >= gb) continue;
                size_t len = gb - off < chunk ? gb - off : chunk;
                if (osmp__mb_wait(m, w, OSMP__DOWN, base + 1 + mine)) return m->failed;
                const char *src = osmp__mb_slot(m, w, OSMP__DOWN, osmp__mb_ring(m, first + mine));
                memcpy(out + osmp__displ2_of(a, w) * e + off, src, len);
                osmp__trace_copy(t, w, me, len);
            }
            osmp__mb_publish(m, OSMP__UP, base + 1 + mine);
            if (published) *published |= 1u << OSMP__UP;
        }
    }
    return OSMP_OK;
}
