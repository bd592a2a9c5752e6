/* Allreduce: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__allreduce_tree(osmp__coll_t t, const struct osmp__args *a);
int osmp__allreduce_hsliced(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__allreduce_algs[] = {
    {"flat", "up the plan's tree and the result back down, pipelined; each leader serves its whole group",
     osmp__allreduce_tree, 0, 0, 0},
    {"kary", "the same with a K-ary tree inside each group", osmp__allreduce_tree, 0, 1, 0},
    {"direct", "every rank reads every rank's line or slot (up to 16 KiB read per rank); larger ones run "
                "flat (medium) or sliced",
     osmp__allreduce_direct, 0, 0, 0},
    {"sliced", "rank i reduces part i of every chunk (reduce-scatter), then everyone copies every part",
     osmp__allreduce_sliced, 0, 0, 0},
    {"hsliced", "sliced at every level of the plan, leaf first: each member reduces a slice of its group's "
                "vector, then the result back down level by level",
     osmp__allreduce_hsliced, 0, 0, 0},
    {0},
};
