/* Alltoallv: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__alltoallv_algs[] = {
    {"scatters", "one scatterv rooted at each rank in turn (alltoall/alltoall_scatters.c)", osmp__alltoall_scatters,
     0, 0, 0},
    {0},
};
