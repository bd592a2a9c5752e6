/* Scatter: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__scatter_hier(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__scatter_algs[] = {
    {"direct", "the root writes every rank's block to it: through its slots, or each rank copies its block "
               "once from the root's buffer (single copy)",
     osmp__scatter_direct, 0, 0, 0},
    {"hier", "along the plan: the root hands each of its groups its subtree's blocks as one run, each leader "
             "keeps its own and passes the rest on, through the slots or once from its staging buffer (single copy)",
     osmp__scatter_hier, 0, 0, 0},
    {0},
};
