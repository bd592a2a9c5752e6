/* Gatherv: its algorithms (selection: coll/select.c). */
#include "coll/coll.h"

int osmp__gather_direct(osmp__coll_t t, const struct osmp__args *a);

const struct osmp__alg osmp__gatherv_algs[] = {
    {"direct", "the root reads every rank's block (gather/gather_direct.c: slots, or single copy per pair)",
     osmp__gather_direct, 0, 0, 0},
    {0},
};
