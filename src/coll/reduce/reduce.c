/* Reduce: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__reduce_algs[] = {
    {"flat", "up the plan's tree, each leader combining its whole group", osmp__reduce_tree, 0, 0, 0},
    {"kary", "up the plan's tree, a K-ary tree inside each group (more members share the work)",
     osmp__reduce_tree, 0, 1, 0},
    {0},
};
