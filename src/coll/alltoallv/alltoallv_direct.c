/*
 * Direct alltoallv: every pair of ranks takes the path its block's size says
 * (both ends know that size, never the sender's other blocks): a small block
 * rides in the sender's mailbox line, one hop, as alltoall's direct exchange;
 * a large one is copied once, by its reader, from the sender's buffer, as
 * alltoall's pairwise exchange; the rest goes through the slots. The slots
 * alone took a slot and its counter line per small block, and copied large
 * blocks twice.
 */
#include <string.h>

#include "coll/coll.h"
#include "common/fault.h"

int osmp__alltoallv_direct(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a);

/*
 * Direct alltoallv protocol. My mailbox line has part = OSMP_INLINE_MAX / (n -
 * 1) bytes for each other rank q, at (q - (q > me)) * part; osmp__pair_path
 * (coll.h) names each block's path from its size. Steps: the slots' rows from
 * base + 1, then s = base + OSMP__PHASE_STEPS - 2 and s + 1, the phase's last
 * two, so every publication below comes after the rows' on the same counter.
 * Line d alternates with the team's direct calls (allreduce_direct.c); its
 * readers are the ranks I send a block by line or single copy, and only they
 * say "done reading" (s + 1 on line 1-d), so a call without such blocks adds
 * no publication to the slots' own.
 *   1. the blocks for the slots, through the slots (osmp__alltoall_rows);
 *   2. if I have readers: claim line d (its readers of the last claim are
 *      done), write each such block's part (the block, or the exposed address
 *      of its first byte), publish s on d; my own block from my input to my
 *      output;
 *   3. from every rank w whose block for me goes so: wait for its line d at
 *      s, copy the block from its part, or from w's buffer at the address
 *      there;
 *   4. if I read in step 3, "done reading" s + 1 on line 1-d: now if I
 *      copied from a sender's buffer (it waits for that), else owed to the
 *      next call (osmp__owe); then, if I exposed my buffer, wait for s + 1
 *      from every rank that copies from it.
 * The "done reading" the previous direct call owed (osmp__owe: claims of
 * its line and of its slot wait for it): before step 1 if I run it (a slot
 * claimed there may be that one), else implied by step 2's publication or
 * made right after it, before any wait but step 2's claim (which waits for
 * readers of this line two direct calls ago, whose own owed publication came
 * in the call before this one, before their waits).
 * No deadlock: step 3 waits only for step 2 of others, which follows their
 * rows (deadlock free among themselves: alltoall_slots.c), and step 4 only for
 * step 3 of others.
 */
int osmp__alltoallv_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    if (n < 2 || (size_t)(n - 1) > OSMP_INLINE_MAX)
        return osmp__trace_handover(t, "slots"), osmp__alltoall_slots(t, a);
    if (!t->line_readers && !(t->line_readers = osmp__malloc(4 * sizeof(int) * (size_t)n)))
        return OSMP_ERR_NO_MEMORY;
    size_t e = a->esize, part = OSMP_INLINE_MAX / (size_t)(n - 1);
    const char *in = a->in;
    char *out = a->out;
    int d = (int)(t->direct_calls++ & 1);
    /* Bit p of sends (receives): some block of mine goes (comes) by path p. */
    unsigned sends = 0, receives = 0;
    for (int q = 0; q < n; q++)
        if (q != me) {
            sends |= 1u << osmp__pair_path(a, part, osmp__count_of(a, q) * e);
            receives |= 1u << osmp__pair_path(a, part, osmp__count2_of(a, q) * e);
        }
    const unsigned by_line = 1u << OSMP__PAIR_LINE | 1u << OSMP__PAIR_ONCE;
    int *readers = NULL, nreaders = 0, exposed = sends >> OSMP__PAIR_ONCE & 1, copied = 0;
    if (sends & by_line) {
        /* The list the line's last claim keeps (osmp__mb_claim holds the pointer) stays as it is. */
        readers = t->line_readers + 2 * n * d;
        if (m->rec[d][m->depth].consumers == readers) readers += n;
        for (int q = 0; q < n; q++)
            if (q != me && (1u << osmp__pair_path(a, part, osmp__count_of(a, q) * e)) & by_line)
                readers[nreaders++] = q;
    }
    int rows = (sends | receives) >> OSMP__PAIR_SLOTS & 1, rc = OSMP_OK;
    uint64_t base = osmp__phase_only(t), s = base + OSMP__PHASE_STEPS - 2,
             first = osmp__slots_take(t, (uint64_t)n);
    unsigned published = 0;
    if (rows) osmp__settle_owed(t, 0);
    if (rows && (rc = osmp__alltoall_rows(t, a, base, first, part, &published))) /* 1 */
        return rc;
    if (nreaders) { /* 2 */
        char *line = osmp__mb_claim(m, d, OSMP__SLOT_INLINE, readers, nreaders, 1 - d, s + 1);
        if (!line) return m->failed;
        uint64_t from = exposed ? osmp__expose(in) : 0;
        for (int i = 0; i < nreaders; i++) {
            int q = readers[i];
            size_t b = osmp__count_of(a, q) * e, at = (size_t)(q - (q > me)) * part;
            if (osmp__pair_path(a, part, b) == OSMP__PAIR_LINE) {
                memcpy(line + at, in + osmp__displ_of(a, q) * e, b);
                osmp__trace_copy(t, me, me, b);
            } else {
                uint64_t addr = from + osmp__displ_of(a, q) * e;
                memcpy(line + at, &addr, sizeof addr);
            }
        }
        osmp__mb_publish(m, d, s);
        published |= 1u << d;
    }
    osmp__settle_owed(t, published);
    size_t own = osmp__count_of(a, me) * e;
    char *own_out = out + osmp__displ2_of(a, me) * e;
    const char *own_in = in + osmp__displ_of(a, me) * e;
    if (own && own_out != own_in) { /* (in place, the input is a copy: api.c) */
        memcpy(own_out, own_in, own);
        osmp__trace_copy(t, me, me, own);
    }
    for (int w = 0; (receives & by_line) && w < n; w++) { /* 3 */
        size_t b = osmp__count2_of(a, w) * e;
        int p = w == me ? OSMP__PAIR_NONE : osmp__pair_path(a, part, b);
        if (p != OSMP__PAIR_LINE && p != OSMP__PAIR_ONCE) continue;
        if (osmp__mb_wait(m, w, d, s)) return m->failed;
        const char *v = osmp__mb_slot(m, w, d, OSMP__SLOT_INLINE) + (size_t)(me - (me > w)) * part;
        char *dst = out + osmp__displ2_of(a, w) * e;
        if (p == OSMP__PAIR_LINE) {
            memcpy(dst, v, b);
        } else {
            uint64_t addr;
            memcpy(&addr, v, sizeof addr);
            if (osmp__copy_from(m->pids[w], m->local[w], dst, (const void *)(uintptr_t)addr, b))
                rc = OSMP_ERR_COPY;
            copied = 1;
        }
        osmp__trace_copy(t, w, me, b);
    }
    if (copied) /* 4 */
        osmp__mb_publish(m, 1 - d, s + 1);
    else if (receives & by_line)
        osmp__owe(t, 1 - d, s + 1);
    for (int i = 0; exposed && i < nreaders; i++)
        if (osmp__pair_path(a, part, osmp__count_of(a, readers[i]) * e) == OSMP__PAIR_ONCE &&
            osmp__mb_wait(m, readers[i], 1 - d, s + 1))
            return m->failed;
    return rc;
}
