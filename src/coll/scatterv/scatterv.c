/* Scatterv: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

const struct osmp__alg osmp__scatterv_algs[] = {
    {"direct", "the root writes every rank's block to it through its slots (scatter/scatter_direct.c)",
     osmp__scatter_direct, 0, 0, 0},
    {0},
};
