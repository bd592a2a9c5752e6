/*
 * Direct reduce_scatter_block: one hop, as allreduce direct. Every rank puts
 * its whole send vector in its line or slot and folds its own block from
 * everyone's, where one reduce per block takes n rooted calls in a row (2 ranks
 * here, blocks of 64-256 B back to back: reduces 0.98-1.07x Open MPI).
 */
#include "coll/coll.h"

int osmp__reduce_scatter_block_direct(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a);

/* Protocol: allreduce_direct.c's, over the n blocks of every rank's vector, rank
 * r folding block r. Vectors that do not fit (osmp__direct_fits) run reduces. */
int osmp__reduce_scatter_block_direct(osmp__coll_t t, const struct osmp__args *a)
{
    size_t block = a->count * a->esize;
    if (!osmp__direct_fits(t, block * (size_t)t->size, block)) /* (count 0 never gets here: api.c) */
        return osmp__trace_handover(t, "reduces"), osmp__reduce_scatter_block_reduces(t, a);
    return osmp__direct_fold(t, a, block * (size_t)t->size, (size_t)t->rank * a->count);
}
