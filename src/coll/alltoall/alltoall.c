/* Alltoall: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__alltoall_pairwise(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_distance(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_slots(osmp__coll_t t, const struct osmp__args *a);
int osmp__alltoall_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__alltoall_algs[] = {
    {"pairwise", "every rank copies its block of every peer's buffer once",
     osmp__alltoall_pairwise, 0, 0, 1},
    {"distance", "every rank copies its block of every peer's buffer once, in rounds that spread the reads "
                 "over the top domains (packages): each round a Latin square of readers to sources",
     osmp__alltoall_distance, 0, 0, 1},
    {"slots", "every rank writes its blocks into its slots and reads its own from the others' at once",
     osmp__alltoall_slots, 0, 0, 0},
    {"direct", "every rank writes its blocks for the others into its line (slot) and reads its own out of "
               "every other rank's; vectors beyond a slot run slots",
     osmp__alltoall_direct, 0, 0, 0},
    {"scatters", "one scatter rooted at each rank in turn, through the slots", osmp__alltoall_scatters, 0, 0, 0},
    {0},
};
