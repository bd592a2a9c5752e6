/* Alltoall(v) as n scatter(v)s: no buffer beyond the caller's. */
#include "coll/co.h"

/* Rank r's scatter: r sends by its send counts and displacements, every rank
 * receives its receive count from r at its receive displacement for r. */
static struct osmp__args scatter_of(const struct osmp__args *a, int r)
{
    struct osmp__args s = *a;
    s.root = r;
    s.count = osmp__count2_of(a, r);
    s.out = (char *)a->out + osmp__displ2_of(a, r) * a->esize;
    s.counts2 = s.displs2 = NULL;
    return s;
}

/* Protocol: 1. for r = 0 .. n-1, scatter rank r's blocks (scatter_direct.c,
 * each a part: coll/co.h); a part that fails to copy (single copy) does not
 * stop the others, which every rank takes part in.
 * Across parts (resumable form): rank r (co->i), the first failure (co->rc). */
static inline __attribute__((always_inline)) int alltoall_scatters(osmp__coll_t t, const struct osmp__args *a,
                                                                   struct osmp__co *co, const int R)
{
    int rc;
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    for (co->i = 0; co->i < t->size && !t->mb.failed; co->i++) {
        OSMP__AWAIT_CALL(R, co, rc, t, osmp__scatter_direct, scatter_of(a, co->i)); /* 1 */
        if (rc) co->rc = rc;
    }
    OSMP__CO_END(R, co);
    return co->rc;
}
OSMP__COMPILE_TWICE(osmp__alltoall_scatters, alltoall_scatters)
