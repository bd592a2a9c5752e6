/* Direct barrier: no leader; cheap while the team is small (n^2 line reads). */
#include "coll/coll.h"

int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a);

/*
 * Direct barrier protocol:
 *   1. publish s on my line (UP; on a pair far apart, line d, which
 *      alternates with the direct calls as in allreduce_direct.c), then the
 *      "done reading" the last direct call owes, unless s on its line implied it;
 *   2. wait for every other rank's same line at s;
 *   3. (far pair) fetch line 1-d for the next call (osmp__next_line_prefetch).
 * On a pair far apart the next barrier's store then finds its line exclusive,
 * where a barrier on one line took it back from the reader of the last one
 * first, a crossing before the peer could see it (2 processes per call: 0.58
 * of the time, bench/ab). On a near pair one line, as before: there the
 * alternation put the allreduce of 64 B that follows each barrier in OSU's
 * loop at 1.13-1.24 of the time (1.03-1.05 with one line), and the crossing
 * costs little.
 */
int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a)
{
    (void)a;
    struct osmp__mbox *m = &t->mb;
    uint64_t s = osmp__phase_only(t) + 1;
    int d = t->far_pair ? (int)(t->direct_calls++ & 1) : OSMP__UP;
    osmp__mb_publish(m, d, s); /* 1 */
    osmp__settle_owed(t, 1u << d); /* before any wait */
    for (int r = 0; r < t->size; r++) /* 2 */
        if (r != t->rank && osmp__mb_wait(m, r, d, s)) return m->failed;
    if (t->far_pair) osmp__next_line_prefetch(t, 1 - d); /* 3 */
    return OSMP_OK;
}
