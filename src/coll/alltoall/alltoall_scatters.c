/* Alltoall as n scatters: no buffer beyond the caller's. */
#include "coll/coll.h"

int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a);

/* Protocol: 1. for r = 0 .. n-1, scatter rank r's blocks (scatter_direct.c),
 * landing in block r of every rank's output. */
int osmp__alltoall_scatters(osmp__coll_t t, const struct osmp__args *a)
{
    size_t bytes = a->count * a->esize;
    int rc = OSMP_OK;
    for (int r = 0; r < t->size && !t->mb.failed; r++) {
        struct osmp__args s = *a;
        s.root = r;
        s.out = (char *)a->out + (size_t)r * bytes;
        int rr = osmp__scatter_direct(t, &s);
        if (rr) rc = rr;
    }
    return rc;
}
