/* Allgather composed of a gather and a broadcast. */
#include "coll/co.h"

/* Protocol: 1. gather every block at rank 0; 2. broadcast the whole vector from
 * it. Each part runs the algorithm selected for its own size (a resumable part
 * in the resumable form: coll/co.h). */
static inline __attribute__((always_inline)) int allgather_gather_bcast(osmp__coll_t t, const struct osmp__args *a,
                                                                        struct osmp__co *co, const int R)
{
    int rc;
    OSMP__CO_BEGIN(R, co);
    OSMP__AWAIT_PART(R, co, rc, t, gather,
                     ((struct osmp__args){.in = a->in, .out = a->out, .count = a->count, .esize = a->esize,
                                          .root = 0})); /* 1 */
    if (rc) return rc;
    OSMP__AWAIT_PART(R, co, rc, t, bcast,
                     ((struct osmp__args){.out = a->out, .count = a->count * a->esize * (size_t)t->size, .esize = 1,
                                          .root = 0})); /* 2 */
    if (rc) return rc;
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__allgather_gather_bcast, allgather_gather_bcast)
