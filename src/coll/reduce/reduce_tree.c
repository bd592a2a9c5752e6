/* Tree reduce: up the plan's tree, pipelined. */
#include "coll/tree.h"

int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a);

/*
 * Reduce protocol, per chunk c (pipelined): 1. up step c: leaves publish their
 * chunk, inner ranks combine their children's chunks into theirs and publish,
 * the root combines into the output.
 */
int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__pass p;
    int rc = osmp__pass_init(&p, t, a);
    for (size_t c = 0; c < p.nchunks && !rc; c++) rc = osmp__pass_up(&p, c, a->in, a->out, a->fn); /* 1 */
    return rc;
}
