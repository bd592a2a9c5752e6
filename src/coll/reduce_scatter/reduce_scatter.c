/* Reduce_scatter: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_scatter_block_ring(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__reduce_scatter_algs[] = {
    {"reduces", "one reduce per block, rooted at its owner (reduce_scatter_block/reduce_scatter_block_reduces.c)",
     osmp__reduce_scatter_block_reduces, 0, 0, 0},
    {"ring", "reduce_scatter_block's ring with each block's own count (reduce_scatter_block/"
             "reduce_scatter_block_ring.c)",
     osmp__reduce_scatter_block_ring, 0, 0, 0},
    {0},
};
