/* Tree barrier. */
#include "coll/coll.h"

int osmp__barrier_tree(osmp__coll_t t, const struct osmp__args *a);

/* Barrier protocol: 1. up: wait for every child, publish; 2. down: wait for the
 * parent, publish. One step, no data. */
int osmp__barrier_tree(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    const struct osmp__tree *tree = osmp__tree_get(t, a->radix, 0);
    if (!tree) return OSMP_ERR_NO_MEMORY;
    uint64_t s = osmp__phase(t) + 1;
    for (int i = 0; i < tree->nchildren; i++) /* 1 */
        if (osmp__mb_wait(m, tree->children[i], OSMP__UP, s)) return m->failed;
    osmp__mb_publish(m, OSMP__UP, s);
    if (tree->parent >= 0 && osmp__mb_wait(m, tree->parent, OSMP__DOWN, s)) return m->failed; /* 2 */
    osmp__mb_publish(m, OSMP__DOWN, s);
    return OSMP_OK;
}
