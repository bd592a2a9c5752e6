/* Allgather: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__allgather_gather_bcast(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_ring(osmp__coll_t t, const struct osmp__args *a);
int osmp__allgather_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__allgather_algs[] = {
    {"gather_bcast", "gather every block at rank 0, then broadcast the whole vector (each as selected)",
     osmp__allgather_gather_bcast, 0, 0, 0},
    {"ring", "around the distance-aware ring (Ma et al.), n-1 steps, each block passed on chunk by chunk; "
             "large blocks copied once, from the predecessor's output",
     osmp__allgather_ring, 0, 0, 0},
    {"direct", "every rank reads every other rank's line or first slot, one hop (blocks that fit a slot; "
               "larger ones run gather_bcast)",
     osmp__allgather_direct, 0, 0, 0},
    {0},
};
