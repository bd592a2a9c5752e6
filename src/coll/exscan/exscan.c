/* Exscan: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__exscan_chain(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__exscan_algs[] = {
    {"chain", "each rank keeps the prefix of the ranks before it and passes on that prefix with its input",
     osmp__exscan_chain, 0, 0, 0},
    {0},
};
