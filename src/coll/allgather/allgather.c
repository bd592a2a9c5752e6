/* Allgather: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__allgather_gather_bcast(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__allgather_algs[] = {
    {"gather_bcast", "gather every block at rank 0, then broadcast the whole vector (each as selected)",
     osmp__allgather_gather_bcast, 0, 0, 0},
    {0},
};
