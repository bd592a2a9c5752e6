/* Reduce_scatter(_block) composed of one reduce per block. */
#include "coll/coll.h"

int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a);

/* Protocol: 1. for r = 0 .. n-1, reduce block r of every rank's input (count_r
 * elements after the blocks before it; every rank knows every count) at rank r,
 * into its output. No buffer beyond the caller's is needed. In place (in ==
 * out), the result goes to the start of the buffer, whose input block (block 0)
 * was consumed first; the caller makes a copy when a later block's result
 * would overlap input not yet read. */
int osmp__reduce_scatter_block_reduces(osmp__coll_t t, const struct osmp__args *a)
{
    int rc = OSMP_OK;
    size_t off = 0;
    for (int r = 0; r < t->size && !rc; r++) {
        size_t n = osmp__count_of(a, r);
        struct osmp__args b = {.in = (const char *)a->in + off * a->esize, .out = a->out, .count = n,
                               .esize = a->esize, .fn = a->fn, .root = r};
        off += n;
        if (n) rc = osmp__run(t, OSMP_COLL_REDUCE, &b); /* 1 */
    }
    return rc;
}
