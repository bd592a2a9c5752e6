/*
 * Direct reduce_scatter_block: one hop, as allreduce direct. Every rank puts
 * its whole send vector in its line or slot and folds its own block from
 * everyone's, where one reduce per block takes n rooted calls in a row.
 *
 * Protocol: allreduce_direct.c's, over the n blocks of every rank's vector,
 * rank r folding block r. Vectors that do not fit (osmp__direct_fits) are
 * never given to it: selection takes the next row (reduces).
 */
#include "coll/co.h"

/* The largest block whose vector (n blocks) osmp__direct_fits takes on this
 * team (selection gives larger ones to the next row). */
size_t osmp__reduce_scatter_block_direct_max(osmp__coll_t t)
{
    return osmp__direct_max(t, (size_t)t->size, 1);
}

int osmp__reduce_scatter_block_direct(osmp__coll_t t, const struct osmp__args *a)
{
    size_t block = a->count * a->esize;
    return osmp__direct_fold(t, a, block * (size_t)t->size, (size_t)t->rank * a->count);
}

int osmp__reduce_scatter_block_direct_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co)
{
    size_t block = a->count * a->esize;
    return osmp__direct_fold_co(t, a, block * (size_t)t->size, (size_t)t->rank * a->count, co);
}
