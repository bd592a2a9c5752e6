/* Barrier: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__barrier_tree(osmp__coll_t t, const struct osmp__args *a);
int osmp__barrier_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__barrier_algs[] = {
    {"flat", "up and down the plan's tree, each leader waiting for its whole group", osmp__barrier_tree, 0, 0, 0},
    {"kary", "up and down the plan's tree, a K-ary tree inside each group", osmp__barrier_tree, 0, 1, 0},
    {"direct", "every rank reads every other rank's line (no leader, one hop)", osmp__barrier_direct, 0, 0, 0},
    {0},
};
