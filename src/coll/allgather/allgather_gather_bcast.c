/* Allgather composed of a gather and a broadcast. */
#include "coll/coll.h"

int osmp__allgather_gather_bcast(osmp__coll_t t, const struct osmp__args *a);

/* Protocol: 1. gather every block at rank 0; 2. broadcast the whole vector from
 * it. Each part runs the algorithm selected for its own size. */
int osmp__allgather_gather_bcast(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__args g = {.in = a->in, .out = a->out, .count = a->count, .esize = a->esize, .root = 0};
    int rc = osmp__run(t, OSMP_COLL_GATHER, &g); /* 1 */
    if (rc) return rc;
    struct osmp__args b = {.out = a->out, .count = a->count * a->esize * (size_t)t->size, .esize = 1, .root = 0};
    return osmp__run(t, OSMP_COLL_BCAST, &b); /* 2 */
}
