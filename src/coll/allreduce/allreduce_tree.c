/* Tree allreduce: up the plan's tree and the result back down, pipelined. */
#include "coll/co.h"

/*
 * Allreduce protocol (rooted at rank 0), per chunk c (pipelined):
 *   1. up step c: leaves publish their chunk, inner ranks combine their
 *      children's chunks into theirs and publish, the root combines into the output;
 *   2. down step c - lag: the root's result travels back down as in a broadcast,
 *      `lag` chunks behind the up steps so both directions stay busy.
 * Every rank receives the root's bytes: results are identical.
 */
static inline __attribute__((always_inline)) int allreduce_tree(osmp__coll_t t, const struct osmp__args *a,
                                                                struct osmp__co *co, const int R)
{
    int rc;
    OSMP__CO_BEGIN(R, co);
    if ((rc = osmp__pass_init(&co->p, t, a))) return rc;
    co->k = (size_t)(t->mb.depth > 1 ? t->mb.depth / 2 : 1); /* the lag */
    if (co->k > co->p.nchunks) co->k = co->p.nchunks;
    for (co->c = 0; co->c < co->p.nchunks + co->k; co->c++) {
        if (co->c < co->p.nchunks) OSMP__AWAIT_UP(R, co, rc, co->c, a->in, a->out, a->fn); /* 1 */
        if (co->c >= co->k) OSMP__AWAIT_DOWN(R, co, rc, co->c - co->k, a->out);            /* 2 */
    }
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__allreduce_tree, allreduce_tree)
