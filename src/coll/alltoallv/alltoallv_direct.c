/*
 * Direct alltoallv: every pair of ranks takes the path its block's size says
 * (both ends know that size, never the sender's other blocks): a small block
 * rides in the sender's mailbox line, one hop, as in alltoall's direct
 * exchange; a medium one in the sender's slot of the call, at the receiver's
 * part, as there beyond the line; a large one is copied once, by its reader,
 * from the sender's buffer, as in alltoall's pairwise exchange; the rest goes
 * through the slots' rows. The rows alone took a slot and its counter line per
 * small block, and copied large blocks twice.
 */
#include <string.h>

#include "coll/co.h"

/*
 * Direct alltoallv protocol. My mailbox line has part = OSMP_INLINE_MAX / (n -
 * 1) bytes for each other rank q, at (q - (q > me)) * part, and ring slot d
 * (d below; the call's rows take theirs with osmp__slots_take) spart = chunk /
 * (n - 1) bytes, at (q - (q > me)) * spart; osmp__pair_path (coll.h) names each
 * block's path from its size, and a block copied once has its address in the
 * line's part, or in the slot's where the part is too small (teams of 8 and
 * more: osmp__once_in_line). Steps: the rows from base + 1, then s = base +
 * OSMP__PHASE_STEPS - 2 and s + 1, the phase's last two, so every publication
 * below comes after the rows' on the same counter. Line d alternates with the
 * team's direct calls (allreduce_direct.c), and every rank says "done reading"
 * it and the slot (s + 1 on line 1-d) in every call, whether it read or not,
 * as their claims name every other rank.
 *   1. the blocks for the rows, through the slots (osmp__alltoall_rows);
 *   2. if I send a block by line, part or single copy: claim line d (and the
 *      slot if I send one by part, or an address there), write each such
 *      block (or the exposed address of its first byte) at its place,
 *      publish s on d; my own block
 *      from my input to my output, unless I copy a block once (step 4);
 *   3. from every rank w whose block for me goes so: wait for its line d at
 *      s, copy the block from its line or slot, or from w's buffer at the
 *      address in its line or slot;
 *   4. "done reading" s + 1 on line 1-d: now if I copied from a sender's
 *      buffer (it waits for that), else owed to the next call (osmp__owe);
 *      if I copied a block once, now my own block (osmp__copy_own), which
 *      nobody waits for, where in step 2 it would hold up the senders waiting
 *      for this "done" (small blocks copied in step 2 overlap the wait of
 *      step 3);
 *      then, if I exposed my buffer, wait for s + 1 from every rank that
 *      copies from it.
 * The "done reading" the previous direct call owed (claims of its line and of
 * its slot wait for it): before step 1 if I run it (a slot claimed there may
 * be that slot), else implied by step 2's publication or made right after it,
 * before any wait but step 2's claims (which wait for readers of this line two
 * direct calls ago, or of an older slot, whose own owed publications came
 * before their waits of the next call).
 * No deadlock: step 3 waits only for step 2 of others, which follows their
 * rows (deadlock free among themselves: alltoall_slots.c), and step 4 only for
 * step 3 of others. * Across waits (resumable form): line d, its step s and the slot (co->x),
 * the phase and the rows' first slot (co->base, slots), the directions I
 * published on (co->bits), whether I copied a block once (co->j), a failed
 * copy (co->rc), rank w or q (co->i); the rows in co->sub.
 */
/* My own block from my input to my output (in place, the input is a copy: api.c). */
static void own_block(osmp__coll_t t, const struct osmp__args *a)
{
    size_t own = osmp__count_of(a, t->rank) * a->esize;
    char *own_out = (char *)a->out + osmp__displ2_of(a, t->rank) * a->esize;
    const char *own_in = (const char *)a->in + osmp__displ_of(a, t->rank) * a->esize;
    if (own && own_out != own_in) {
        osmp__copy_own(t, own_out, own_in, own);
        osmp__trace_copy(t, t->rank, t->rank, own);
    }
}

/* Every other rank needs a part of at least a byte of my line: teams of 2 to
 * OSMP_INLINE_MAX + 1 (selection takes the next row elsewhere). */
size_t osmp__alltoallv_direct_max(osmp__coll_t t)
{
    return osmp__pair_part(t) ? SIZE_MAX : 0;
}

static inline __attribute__((always_inline)) int alltoallv_direct(osmp__coll_t t, const struct osmp__args *a,
                                                                  struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size, rc;
    size_t part = osmp__pair_part(t), spart = osmp__pair_spart(t), e = a->esize;
    const char *in = a->in;
    char *out = a->out;
    /* Bit p of sends (receives): some block of mine goes (comes) by path p. */
    unsigned sends = 0, receives = 0;
    for (int q = 0; q < n; q++)
        if (q != me) {
            sends |= 1u << osmp__pair_path(a, part, spart, osmp__count_of(a, q) * e);
            receives |= 1u << osmp__pair_path(a, part, spart, osmp__count2_of(a, q) * e);
        }
    const unsigned direct = 1u << OSMP__PAIR_LINE | 1u << OSMP__PAIR_ONCE | 1u << OSMP__PAIR_PART;
    const int in_line = osmp__once_in_line(part);
    int rows = (sends | receives) >> OSMP__PAIR_ROWS & 1;
    int in_slot = (sends >> OSMP__PAIR_PART & 1) || (!in_line && sends >> OSMP__PAIR_ONCE & 1);
    /* rank w's block for me, and its path */
#define RB(w) (osmp__count2_of(a, w) * e)
#define RPATH(w) ((w) == me ? OSMP__PAIR_NONE : osmp__pair_path(a, part, spart, RB(w)))
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    co->j = 0; /* copied */
    co->x.d = (int)(t->direct_calls++ & 1);
    co->base = osmp__phase_only(t);
    co->x.s = co->base + OSMP__PHASE_STEPS - 2;
    co->slots = osmp__slots_take(t, (uint64_t)n);
    /* The parts' slot alternates as line d does (the short ring's two slots,
     * mailbox.h): a new slot per call would touch every slot's pages in time,
     * as the parts spread over the slot. */
    co->x.slot = m->ring_depth > 1 ? co->x.d : 0;
    co->bits = 0; /* published */
    if (rows) osmp__settle_owed(t, 0);
    if (rows) /* 1 */
        OSMP__AWAIT_SUB(R, co, rc,
                        (R) ? osmp__alltoall_rows_co(t, a, co->base, co->slots, 1, &co->bits, &co->sub)
                            : osmp__alltoall_rows(t, a, co->base, co->slots, 1, &co->bits));
    if (sends & direct) { /* 2 */
        OSMP__AWAIT_CLAIM(R, co, m, co->x.d, OSMP__SLOT_INLINE);
        if (!osmp__mb_claim(m, co->x.d, OSMP__SLOT_INLINE, t->peers, n - 1, 1 - co->x.d, co->x.s + 1))
            return m->failed;
        if (in_slot) {
            OSMP__AWAIT_CLAIM(R, co, m, co->x.d, co->x.slot);
            if (!osmp__mb_claim(m, co->x.d, co->x.slot, t->peers, n - 1, 1 - co->x.d, co->x.s + 1))
                return m->failed;
        }
        char *line = osmp__mb_slot(m, me, co->x.d, OSMP__SLOT_INLINE),
             *mine = in_slot ? osmp__mb_slot(m, me, co->x.d, co->x.slot) : NULL;
        uint64_t from = sends >> OSMP__PAIR_ONCE & 1 ? osmp__expose(in) : 0;
        for (int q = 0; q < n; q++) {
            size_t b = osmp__count_of(a, q) * e, i = (size_t)(q - (q > me));
            int p = q == me ? OSMP__PAIR_NONE : osmp__pair_path(a, part, spart, b);
            const char *src = in + osmp__displ_of(a, q) * e;
            if (p == OSMP__PAIR_LINE || p == OSMP__PAIR_PART) {
                memcpy(p == OSMP__PAIR_LINE ? line + i * part : mine + i * spart, src, b);
                osmp__trace_copy(t, me, me, b);
            } else if (p == OSMP__PAIR_ONCE) {
                uint64_t addr = from + osmp__displ_of(a, q) * e;
                memcpy(in_line ? line + i * part : mine + i * spart, &addr, sizeof addr);
            }
        }
        osmp__mb_publish(m, co->x.d, co->x.s);
        co->bits |= 1u << co->x.d;
    }
    osmp__settle_owed(t, co->bits);
    if (!(receives >> OSMP__PAIR_ONCE & 1)) own_block(t, a);
    for (co->i = 0; (receives & direct) && co->i < n; co->i++) { /* 3 */
        if (!((1u << RPATH(co->i)) & direct)) continue;
        OSMP__AWAIT(R, co, m, co->i, co->x.d, co->x.s);
        int w = co->i, d = co->x.d, slot = co->x.slot, p = RPATH(w);
        size_t b = RB(w), i = (size_t)(me - (me > w));
        char *dst = out + osmp__displ2_of(a, w) * e;
        if (p == OSMP__PAIR_LINE) {
            memcpy(dst, osmp__mb_slot(m, w, d, OSMP__SLOT_INLINE) + i * part, b);
        } else if (p == OSMP__PAIR_PART) {
            memcpy(dst, osmp__mb_slot(m, w, d, slot) + i * spart, b);
        } else {
            uint64_t addr;
            memcpy(&addr, in_line ? osmp__mb_slot(m, w, d, OSMP__SLOT_INLINE) + i * part
                                  : osmp__mb_slot(m, w, d, slot) + i * spart,
                   sizeof addr);
            if (osmp__copy_from(m->pids[w], m->local[w], dst, (const void *)(uintptr_t)addr, b))
                co->rc = osmp__mb_copy_failed(m, w);
            co->j = 1;
        }
        osmp__trace_copy(t, w, me, b);
    }
    if (co->j) /* 4 */
        osmp__mb_publish(m, 1 - co->x.d, co->x.s + 1);
    else
        osmp__owe(t, 1 - co->x.d, co->x.s + 1);
    if (receives >> OSMP__PAIR_ONCE & 1) own_block(t, a);
    for (co->i = 0; (sends >> OSMP__PAIR_ONCE & 1) && co->i < n; co->i++)
        if (co->i != me && osmp__pair_path(a, part, spart, osmp__count_of(a, co->i) * e) == OSMP__PAIR_ONCE)
            OSMP__AWAIT(R, co, m, co->i, 1 - co->x.d, co->x.s + 1);
#undef RB
#undef RPATH
    OSMP__CO_END(R, co);
    return co->rc;
}
OSMP__COMPILE_TWICE(osmp__alltoallv_direct, alltoallv_direct)
