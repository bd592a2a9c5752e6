/*
 * Direct allgather: no root, every rank reads every other rank's line. For
 * blocks that fit a mailbox line or a slot it takes one hop where gather +
 * broadcast take two.
 */
#include <string.h>

#include "coll/co.h"

int osmp__allgather_ring(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_ring_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);

/*
 * Direct allgather protocol (the block fits the mailbox line, or one slot:
 * selection gives larger blocks to gather_bcast, and blocks copied once to the
 * ring, which reads each block once from its owner's input). The direct
 * exchange of allreduce_direct.c, whose alternating lines spare a call the
 * wait for its line's last readers and the publication "done reading" at its
 * end:
 *   1. claim line d (slot) of this call (osmp__direct_claim);
 *   2. write my block there, publish step s on line d;
 *   3. for every other rank r, wait for its line d at s and copy its block from
 *      there to its place in my output; my own block goes there from my input;
 *   4. fetch line 1-d, owe "done reading s" on it (osmp__direct_done).
 * Allgatherv: every rank knows every count, and the largest block decides the
 * path and the line or slot for all (each block copies its own count); beyond
 * a slot, or copied once, it runs the ring, which takes each block's count.
 * This is the one choice made inside: selection sees one count, the largest
 * block only the counts show.
 * Across waits (resumable form): the line (co->x) and rank r (co->i); a
 * handover gives the ring the whole co.
 */
size_t osmp__allgather_direct_max(osmp__coll_t t)
{
    return t->mb.chunk;
}

static inline __attribute__((always_inline)) int allgather_direct(osmp__coll_t t, const struct osmp__args *a,
                                                                  struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    size_t e = a->esize, B = a->count * e;
    if (a->counts) { /* (a resumption decides alike) */
        for (int r = 0; r < t->size; r++)
            if (a->counts[r] * e > B) B = a->counts[r] * e;
        if (osmp__copy_once(a, B) || B > t->mb.chunk) { /* (not my block's: every rank decides alike) */
            if (!R) return osmp__trace_handover(t, "ring"), osmp__allgather_ring(t, a);
            if (!co->pc) osmp__trace_handover(t, "ring");
            return osmp__allgather_ring_co(t, a, co);
        }
    }
    char *out = a->out;
    OSMP__CO_BEGIN(R, co);
    osmp__direct_take(t, B, &co->x); /* 1 */
    OSMP__AWAIT_CLAIM(R, co, m, co->x.d, co->x.slot);
    {
        char *line = osmp__direct_claim_taken(t, &co->x), *mine = out + osmp__displ_of(a, t->rank) * e;
        if (!line) return m->failed;
        size_t my = osmp__count_of(a, t->rank) * e;
        if (my) { /* 2 */
            memcpy(line, a->in, my);
            osmp__trace_copy(t, t->rank, t->rank, my);
        }
        osmp__direct_publish(t, &co->x);
        if (my && mine != a->in) {
            memcpy(mine, a->in, my);
            osmp__trace_copy(t, t->rank, t->rank, my);
        }
    }
    for (co->i = 0; co->i < t->size; co->i++) { /* 3 */
        if (co->i == t->rank) continue;
        OSMP__AWAIT(R, co, m, co->i, co->x.d, co->x.s);
        size_t b = osmp__count_of(a, co->i) * e;
        if (b) {
            memcpy(out + osmp__displ_of(a, co->i) * e, osmp__mb_slot(m, co->i, co->x.d, co->x.slot), b);
            osmp__trace_copy(t, co->i, t->rank, b);
        }
    }
    osmp__direct_done(t, &co->x); /* 4 */
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__allgather_direct, allgather_direct)
