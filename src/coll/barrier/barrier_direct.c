/* Direct barrier: no leader; cheap while the team is small (n^2 line reads). */
#include "coll/coll.h"

int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a);

/*
 * Direct barrier protocol:
 *   1. publish s on my UP line, then the "done reading" the last direct call
 *      owes, unless s on its line implied it;
 *   2. wait for every other rank's UP line at s.
 */
int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a)
{
    (void)a;
    struct osmp__mbox *m = &t->mb;
    uint64_t s = osmp__phase_only(t) + 1;
    osmp__mb_publish(m, OSMP__UP, s);     /* 1 */
    osmp__settle_owed(t, 1u << OSMP__UP); /* before any wait */
    for (int r = 0; r < t->size; r++) /* 2 */
        if (r != t->rank && osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
    return OSMP_OK;
}
