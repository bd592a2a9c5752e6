/* Allgatherv composed of a gatherv and a broadcast. */
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/co.h"

/*
 * Protocol (every rank knows every count and displacement):
 *   1. gatherv every block at rank 0; where the blocks lie end to end from
 *      displacement 0 (packed), straight into the output, else packed into a
 *      buffer of its own, since bytes between blocks must be left alone;
 *   2. broadcast the packed blocks from rank 0;
 *   3. (not packed) every rank copies each block to its displacement.
 * Steps 1 and 2 are parts (coll/co.h), each run with the algorithm selected
 * for it. Across parts (resumable form): the packed buffer, after the blocks'
 * offsets in it (co->p.scratch: a request frees it if the call fails half way).
 */
static inline __attribute__((always_inline)) int allgatherv_gatherv_bcast(osmp__coll_t t,
                                                                          const struct osmp__args *a,
                                                                          struct osmp__co *co, const int R)
{
    int n = t->size, packed = 1, rc;
    size_t total = 0, e = a->esize;
    for (int r = 0; r < n; r++) {
        packed &= a->displs[r] == total;
        total += a->counts[r];
    }
    /* (the packed buffer: the blocks' offsets, then the blocks) */
#define AT ((size_t *)(void *)co->p.scratch)
#define ALL (packed ? (char *)a->out : co->p.scratch + sizeof(size_t) * (size_t)n)
    OSMP__CO_BEGIN(R, co);
    co->p.scratch = NULL;
    if (!packed && !(co->p.scratch = osmp__malloc(sizeof(size_t) * (size_t)n + total * e)))
        return OSMP_ERR_NO_MEMORY;
    for (size_t r = 0, off = 0; !packed && r < (size_t)n; off += a->counts[r], r++) AT[r] = off;
    OSMP__AWAIT_PART(R, co, rc, t, gatherv,
                     ((struct osmp__args){.in = a->in, .out = ALL, .count = a->count, .esize = e,
                                          .counts = a->counts, .vector = 1, .vector_bound = total * e,
                                          .displs = packed ? a->displs : AT, .root = 0})); /* 1 */
    if (rc) return rc;
    if (total) {
        OSMP__AWAIT_PART(R, co, rc, t, bcast,
                         ((struct osmp__args){.out = ALL, .count = total * e, .esize = 1, .root = 0})); /* 2 */
        if (rc) return rc;
    }
    for (int r = 0; !packed && r < n; r++) /* 3 */
        if (a->counts[r]) {
            memcpy((char *)a->out + a->displs[r] * e, ALL + AT[r] * e, a->counts[r] * e);
            osmp__trace_copy(t, t->rank, t->rank, a->counts[r] * e);
        }
    free(co->p.scratch);
    co->p.scratch = NULL;
    OSMP__CO_END(R, co);
#undef AT
#undef ALL
    return OSMP_OK;
}

/* A failed blocking call frees its buffer here, a request when it ends (team/request.c). */
static inline __attribute__((always_inline)) int allgatherv_gatherv_bcast_run(osmp__coll_t t,
                                                                              const struct osmp__args *a,
                                                                              struct osmp__co *co, const int R)
{
    int rc = allgatherv_gatherv_bcast(t, a, co, R);
    if (rc && !R) free(co->p.scratch);
    return rc;
}
OSMP__COMPILE_TWICE(osmp__allgatherv_gatherv_bcast, allgatherv_gatherv_bcast_run)
