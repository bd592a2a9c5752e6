/* Reduce: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_sliced(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_hsliced(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__reduce_algs[] = {
    {"flat", "up the plan's tree, each leader combining its whole group", osmp__reduce_tree, 0, 0, 0},
    {"kary", "up the plan's tree, a K-ary tree inside each group (more members share the work)",
     osmp__reduce_tree, 0, 1, 0},
    {"sliced", "rank i reduces part i of every chunk, the root copies every part (allreduce's sliced, one copy)",
     osmp__reduce_sliced, 0, 0, 0},
    {"hsliced", "sliced at every level of the plan, leaf first; the root copies the top level's slices",
     osmp__reduce_hsliced, 0, 0, 0},
    {0},
};
