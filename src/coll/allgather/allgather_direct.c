/*
 * Direct allgather: no root, every rank reads every other rank's line. For
 * blocks that fit a mailbox line or a slot it takes one hop where gather +
 * broadcast take two (2 ranks, 8 B per call: gather_bcast 0.29 us, MPI 0.25 us
 * here, direct 0.22 us).
 */
#include <string.h>

#include "coll/coll.h"

int osmp__allgather_direct(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_gather_bcast(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_ring(osmp__coll_t t, const struct osmp__args *a);

/*
 * Direct allgather protocol (the block fits the mailbox line, or one slot;
 * larger ones run gather_bcast, and blocks that single copy takes the ring,
 * which reads each block once from its owner's input: a pair far apart, or a
 * low OSMP_SINGLE_COPY_MIN). The direct exchange of allreduce_direct.c, whose
 * alternating lines spare a call the wait for its line's last readers and the
 * publication "done reading" at its end (2 ranks, per call, in a slow spell of
 * the host: README "Running ahead"):
 *   1. claim line d (slot) of this call (osmp__direct_claim);
 *   2. write my block there, publish step s on line d;
 *   3. for every other rank r, wait for its line d at s and copy its block from
 *      there to its place in my output; my own block goes there from my input;
 *   4. fetch line 1-d, owe "done reading s" on it (osmp__direct_done).
 * Allgatherv: every rank knows every count, and the largest block decides the
 * path and the line or slot for all (each block copies its own count); beyond
 * a slot the ring, which takes each block's count (2 processes, 256 B-1 MiB
 * blocks back to back: 0.45-0.69 of gatherv_bcast's time, README "Vector
 * variants").
 */
int osmp__allgather_direct(osmp__coll_t t, const struct osmp__args *a)
{
    size_t e = a->esize, B = a->count * e;
    for (int r = 0; a->counts && r < t->size; r++)
        if (a->counts[r] * e > B) B = a->counts[r] * e;
    int once = a->counts ? osmp__copy_once(a, B) : a->single_copy; /* (allgatherv: not my block's, as every rank) */
    if (once || (B > t->mb.chunk && a->counts)) return osmp__trace_handover(t, "ring"), osmp__allgather_ring(t, a);
    if (B > t->mb.chunk) return osmp__trace_handover(t, "gather_bcast"), osmp__allgather_gather_bcast(t, a);
    struct osmp__direct x;
    char *line = osmp__direct_claim(t, B, &x); /* 1 */
    if (!line) return t->mb.failed;
    char *out = a->out, *mine = out + osmp__displ_of(a, t->rank) * e;
    size_t my = osmp__count_of(a, t->rank) * e;
    if (my) { /* 2 */
        memcpy(line, a->in, my);
        osmp__trace_copy(t, t->rank, t->rank, my);
    }
    osmp__direct_publish(t, &x);
    if (my && mine != a->in) {
        memcpy(mine, a->in, my);
        osmp__trace_copy(t, t->rank, t->rank, my);
    }
    for (int r = 0; r < t->size; r++) { /* 3 */
        if (r == t->rank) continue;
        const char *v = osmp__direct_read(t, &x, r);
        if (!v) return t->mb.failed;
        size_t b = osmp__count_of(a, r) * e;
        if (b) {
            memcpy(out + osmp__displ_of(a, r) * e, v, b);
            osmp__trace_copy(t, r, t->rank, b);
        }
    }
    osmp__direct_done(t, &x); /* 4 */
    return OSMP_OK;
}
