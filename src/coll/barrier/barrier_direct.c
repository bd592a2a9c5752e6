/* Direct barrier: no leader; cheap while the team is small (n^2 line reads). */
#include "coll/coll.h"

int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a);

/*
 * Direct barrier protocol (one of the direct calls: line d alternates with
 * them, allreduce_direct.c; no data, so no claim):
 *   1. publish s on line d (it implies the "done reading" the last direct call
 *      owes, on this line);
 *   2. wait for every other rank's line d at s;
 *   3. fetch line 1-d for the next call (osmp__next_line_prefetch).
 * On a pair far apart, the next barrier's store then finds its line
 * exclusive, where a barrier on one line took it back from the readers of the
 * last one first (a crossing before the peers could see it).
 */
int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a)
{
    (void)a;
    struct osmp__mbox *m = &t->mb;
    uint64_t s = osmp__phase_only(t) + 1;
    int d = (int)(t->direct_calls++ & 1);
    osmp__mb_publish(m, d, s); /* 1 */
    osmp__settle_owed(t, 1u << d);
    for (int r = 0; r < t->size; r++) /* 2 */
        if (r != t->rank && osmp__mb_wait(m, r, d, s)) return m->failed;
    osmp__next_line_prefetch(t, 1 - d); /* 3 */
    return OSMP_OK;
}
