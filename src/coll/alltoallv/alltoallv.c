/* Alltoallv: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoallv_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__alltoallv_algs[] = {
    {"scatters", "one scatterv rooted at each rank in turn (alltoall/alltoall_scatters.c)", osmp__alltoall_scatters,
     0, 0, 0},
    {"slots", "every rank writes its blocks into its slots and reads its own from everyone's at once "
              "(alltoall/alltoall_slots.c; a block's two ends know its size)",
     osmp__alltoall_slots, 0, 0, 0},
    {"direct", "every pair by its block's size: in the sender's line (small) or slot (medium), copied once from "
               "the sender's buffer (large, where single copy pays), through the slots (the rest); beyond 49 ranks "
               "slots",
     osmp__alltoallv_direct, 0, 0, 0},
    {0},
};
