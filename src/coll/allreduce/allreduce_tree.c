/* Tree allreduce: up the plan's tree and the result back down, pipelined. */
#include "coll/tree.h"

int osmp__allreduce_tree(osmp__coll_t t, const struct osmp__args *a);

/*
 * Allreduce protocol (rooted at rank 0), per chunk c (pipelined):
 *   1. up step c: leaves publish their chunk, inner ranks combine their
 *      children's chunks into theirs and publish, the root combines into the output;
 *   2. down step c - lag: the root's result travels back down as in a broadcast,
 *      `lag` chunks behind the up steps so both directions stay busy.
 * Every rank receives the root's bytes: results are identical.
 */
int osmp__allreduce_tree(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__pass p;
    int rc = osmp__pass_init(&p, t, a);
    if (rc) return rc;
    size_t lag = (size_t)(t->mb.depth > 1 ? t->mb.depth / 2 : 1);
    if (lag > p.nchunks) lag = p.nchunks;
    for (size_t c = 0; c < p.nchunks + lag && !rc; c++) {
        if (c < p.nchunks) rc = osmp__pass_up(&p, c, a->in, a->out, a->fn); /* 1 */
        if (!rc && c >= lag) rc = osmp__pass_down(&p, c - lag, a->out);    /* 2 */
    }
    return rc;
}
