/* Tree barrier. */
#include "coll/co.h"

/* Barrier protocol: 1. up: wait for every child, publish; 2. down: wait for the
 * parent, publish. One step, no data. */
static inline __attribute__((always_inline)) int barrier_tree(osmp__coll_t t, const struct osmp__args *a,
                                                              struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    OSMP__CO_BEGIN(R, co);
    if (!(co->tree = osmp__tree_get(t, a->radix, 0))) return OSMP_ERR_NO_MEMORY;
    co->s = osmp__phase(t) + 1;
    for (co->i = 0; co->i < co->tree->nchildren; co->i++) /* 1 */
        OSMP__AWAIT(R, co, m, co->tree->children[co->i], OSMP__UP, co->s);
    osmp__mb_publish(m, OSMP__UP, co->s);
    if (co->tree->parent >= 0) OSMP__AWAIT(R, co, m, co->tree->parent, OSMP__DOWN, co->s); /* 2 */
    osmp__mb_publish(m, OSMP__DOWN, co->s);
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__barrier_tree, barrier_tree)
