/* Reduce_scatter(_block) composed of one reduce per block. */
#include "coll/co.h"

/* Protocol: 1. for r = 0 .. n-1, reduce block r of every rank's input (count_r
 * elements after the blocks before it; every rank knows every count) at rank r,
 * into its output. No buffer beyond the caller's is needed. In place (in ==
 * out), the result goes to the start of the buffer, whose input block (block 0)
 * was consumed first; the caller makes a copy when a later block's result
 * would overlap input not yet read. Each reduce is a part (coll/co.h), run
 * with the algorithm selected for its own size.
 * Across parts (resumable form): rank r (co->i), block r's first element
 * (co->off). */
static inline __attribute__((always_inline)) int reduce_scatter_block_reduces(osmp__coll_t t,
                                                                              const struct osmp__args *a,
                                                                              struct osmp__co *co, const int R)
{
    int rc;
    OSMP__CO_BEGIN(R, co);
    for (co->i = 0, co->off = 0; co->i < t->size; co->off += osmp__count_of(a, co->i), co->i++) {
        if (!osmp__count_of(a, co->i)) continue;
        OSMP__AWAIT_PART(R, co, rc, t, reduce,
                         ((struct osmp__args){.in = (const char *)a->in + co->off * a->esize, .out = a->out,
                                              .count = osmp__count_of(a, co->i), .esize = a->esize, .fn = a->fn,
                                              .root = co->i})); /* 1 */
        if (rc) return rc;
    }
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__reduce_scatter_block_reduces, reduce_scatter_block_reduces)
