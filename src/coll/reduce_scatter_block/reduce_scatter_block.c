/* Reduce_scatter_block: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_scatter_block_ring(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_scatter_block_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__reduce_scatter_block_algs[] = {
    {"reduces", "one reduce per block, rooted at the block's owner (each as selected for reduce)",
     osmp__reduce_scatter_block_reduces, 0, 0, 0},
    {"ring", "around the distance-aware ring (Ma et al.), n-1 steps: each block's partial sum passed on chunk "
             "by chunk through the slots, each rank adding its contribution, to the block's owner",
     osmp__reduce_scatter_block_ring, 0, 0, 0},
    {"direct", "every rank reads its block of every rank's vector from its line or slot (the vector fits one, up "
               "to 16 KiB read per rank); larger ones run reduces",
     osmp__reduce_scatter_block_direct, 0, 0, 0},
    {0},
};
