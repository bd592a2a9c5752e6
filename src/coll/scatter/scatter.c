/* Scatter: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

const struct osmp__alg osmp__scatter_algs[] = {
    {"direct", "the root writes every rank's block to it: through its slots, or each rank copies its block "
               "once from the root's buffer (single copy)",
     osmp__scatter_direct, 0, 0, 0},
    {0},
};
