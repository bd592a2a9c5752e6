/* Direct barrier: no leader; cheap while the team is small (n^2 line reads). */
#include "coll/co.h"

/*
 * Direct barrier protocol:
 *   1. publish s on my UP line, then the "done reading" the last direct call
 *      owes, unless s on its line implied it;
 *   2. wait for every other rank's UP line at s.
 */
static inline __attribute__((always_inline)) int barrier_direct(osmp__coll_t t, const struct osmp__args *a,
                                                                struct osmp__co *co, const int R)
{
    (void)a;
    struct osmp__mbox *m = &t->mb;
    OSMP__CO_BEGIN(R, co);
    co->s = osmp__phase_only(t) + 1;
    osmp__mb_publish(m, OSMP__UP, co->s); /* 1 */
    osmp__settle_owed(t, 1u << OSMP__UP); /* before any wait */
    for (co->i = 0; co->i < t->size; co->i++) /* 2 */
        if (co->i != t->rank) OSMP__AWAIT(R, co, m, co->i, OSMP__UP, co->s);
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__barrier_direct, barrier_direct)
