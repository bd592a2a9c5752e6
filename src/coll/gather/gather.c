/* Gather: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__gather_direct(osmp__coll_t t, const struct osmp__args *a);
int osmp__gather_hier(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__gather_algs[] = {
    {"direct", "the root reads every rank's block: through the slots, or once from its buffer (single copy)",
     osmp__gather_direct, 0, 0, 0},
    {"hier", "along the plan: each leader collects its subtree's blocks and passes them up as one run, through "
             "the slots or once from its staging buffer (single copy)",
     osmp__gather_hier, 0, 0, 0},
    {0},
};
