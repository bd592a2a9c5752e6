/* Allgatherv composed of a gatherv and a broadcast. */
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/coll.h"

int osmp__allgatherv_gatherv_bcast(osmp__coll_t t, const struct osmp__args *a);

/*
 * Protocol (every rank knows every count and displacement):
 *   1. gatherv every block at rank 0; where the blocks lie end to end from
 *      displacement 0 (packed), straight into the output, else packed into a
 *      buffer of its own, since bytes between blocks must be left alone;
 *   2. broadcast the packed blocks from rank 0;
 *   3. (not packed) every rank copies each block to its displacement.
 */
int osmp__allgatherv_gatherv_bcast(osmp__coll_t t, const struct osmp__args *a)
{
    int n = t->size, packed = 1;
    size_t total = 0, e = a->esize;
    for (int r = 0; r < n; r++) {
        packed &= a->displs[r] == total;
        total += a->counts[r];
    }
    size_t *at = packed ? NULL : osmp__malloc(sizeof(size_t) * (size_t)n + total * e);
    if (!packed && !at) return OSMP_ERR_NO_MEMORY;
    char *all = packed ? a->out : (char *)(at + n);
    for (size_t r = 0, off = 0; !packed && r < (size_t)n; off += a->counts[r], r++) at[r] = off;
    struct osmp__args g = {.in = a->in, .out = all, .count = a->count, .esize = e, .counts = a->counts, .vector = 1,
                           .vector_bound = total * e,
                           .displs = packed ? a->displs : at, .root = 0};
    int rc = osmp__run(t, OSMP_COLL_GATHERV, &g); /* 1 */
    struct osmp__args b = {.out = all, .count = total * e, .esize = 1, .root = 0};
    if (!rc && total) rc = osmp__run(t, OSMP_COLL_BCAST, &b); /* 2 */
    for (int r = 0; !rc && !packed && r < n; r++) /* 3 */
        if (a->counts[r]) {
            memcpy((char *)a->out + a->displs[r] * e, all + at[r] * e, a->counts[r] * e);
            osmp__trace_copy(t, t->rank, t->rank, a->counts[r] * e);
        }
    free(at);
    return rc;
}
