/* Alltoall(v) as n scatter(v)s: no buffer beyond the caller's. */
#include "coll/coll.h"

int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a);

/* Protocol: 1. for r = 0 .. n-1, scatter rank r's blocks (scatter_direct.c):
 * rank r sends by its send counts and displacements, every rank receives its
 * receive count from r at its receive displacement for r. */
int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a)
{
    int rc = OSMP_OK;
    for (int r = 0; r < t->size && !t->mb.failed; r++) {
        struct osmp__args s = *a;
        s.root = r;
        s.count = osmp__count2_of(a, r);
        s.out = (char *)a->out + osmp__displ2_of(a, r) * a->esize;
        s.counts2 = s.displs2 = NULL;
        int rr = osmp__scatter_direct(t, &s);
        if (rr) rc = rr;
    }
    return rc;
}
