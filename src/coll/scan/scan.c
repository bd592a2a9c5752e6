/* Scan: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__scan_chain(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__scan_algs[] = {
    {"chain", "each rank combines the prefix of the rank before it with its input and passes it on, pipelined",
     osmp__scan_chain, 0, 0, 0},
    {0},
};
