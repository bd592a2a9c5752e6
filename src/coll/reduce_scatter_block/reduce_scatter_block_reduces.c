/* Reduce_scatter_block composed of one reduce per block. */
#include "coll/coll.h"

int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a);

/* Protocol: 1. for r = 0 .. n-1, reduce block r of every rank's input at rank r,
 * into its output. No buffer beyond the caller's is needed. In place (in ==
 * out), the result goes to the start of the buffer, whose input block (block 0)
 * was consumed first. */
int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a)
{
    size_t bytes = a->count * a->esize;
    int rc = OSMP_OK;
    for (int r = 0; r < t->size && !rc; r++) {
        struct osmp__args b = {.in = (const char *)a->in + (size_t)r * bytes, .out = a->out, .count = a->count,
                               .esize = a->esize, .fn = a->fn, .root = r};
        rc = osmp__run(t, OSMP_COLL_REDUCE, &b); /* 1 */
    }
    return rc;
}
