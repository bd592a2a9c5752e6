/* Allgatherv: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__allgatherv_gatherv_bcast(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_ring(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__allgatherv_algs[] = {
    {"gatherv_bcast", "gatherv every block at rank 0, then broadcast them all (each as selected)",
     osmp__allgatherv_gatherv_bcast, 0, 0, 0},
    {"ring", "allgather's ring with each block's own count (allgather/allgather_ring.c); forced only: ranks see "
             "different counts, so the table cannot choose it by size",
     osmp__allgather_ring, 0, 0, 0},
    {0},
};
