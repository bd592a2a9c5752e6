/* Broadcast: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__bcast_tree(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__bcast_algs[] = {
    {"flat", "down the plan's tree, each leader feeding its whole group; large messages copied once",
     osmp__bcast_tree, 0, 0, 0},
    {"kary", "down the plan's tree, a K-ary tree inside each group", osmp__bcast_tree, 0, 1, 0},
    {"mst", "down the distance-aware minimum spanning tree (Ma et al.), nearest children first; large messages "
            "copied once",
     osmp__bcast_tree, OSMP__RADIX_MST, 0, 0},
    {0},
};
