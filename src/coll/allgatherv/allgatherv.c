/* Allgatherv: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__allgatherv_gatherv_bcast(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_ring(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__allgatherv_algs[] = {
    {"gatherv_bcast", "gatherv every block at rank 0, then broadcast them all (each as selected)",
     osmp__allgatherv_gatherv_bcast, 0, 0, 0},
    {"ring", "allgather's ring with each block's own count (allgather/allgather_ring.c)", osmp__allgather_ring, 0, 0,
     0},
    {"direct", "allgather's direct exchange (allgather/allgather_direct.c), every block in a line or slot sized for "
               "the largest; beyond a slot, or copied once, the ring",
     osmp__allgather_direct, 0, 0, 0},
    {0},
};
