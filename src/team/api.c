/*
 * The collectives' entry points: check arguments (before touching any buffer or
 * any peer), resolve OSMP_IN_PLACE, and hand over to the algorithms in coll/.
 * Argument errors are local: a participant that rejects its arguments returns
 * without joining, so the caller must not go on with the others (as in MPI).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

/* Element size, or 0 when dtype is unknown or count * size * nblocks overflows. */
static size_t esize_of(osmp_dtype_t dtype, size_t count, size_t nblocks)
{
    size_t e = osmp_dtype_size(dtype);
    if (!e || (count && (SIZE_MAX / e / count) < nblocks)) return 0;
    return e;
}

#define CHECK_TEAM(t)                                                                                        \
    do {                                                                                                     \
        if (!(t)) return OSMP_ERR_INVALID_ARG;                                                               \
    } while (0)

int osmp_barrier(osmp_team_t t)
{
    CHECK_TEAM(t);
    return osmp__barrier(t);
}

int osmp_bcast(osmp_team_t t, void *buf, size_t count, osmp_dtype_t dtype, int root)
{
    CHECK_TEAM(t);
    size_t e = esize_of(dtype, count, 1);
    if (!e || root < 0 || root >= t->size || (count && !buf)) return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    return osmp__tree_bcast(t, buf, count, e, root);
}

int osmp_reduce(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
                int root)
{
    CHECK_TEAM(t);
    osmp__reduce_fn fn;
    int rc = osmp__reduce_fn_get(dtype, op, &fn);
    if (rc) return rc;
    size_t e = esize_of(dtype, count, 1);
    if (!e || root < 0 || root >= t->size) return OSMP_ERR_INVALID_ARG;
    int in_place = sendbuf == OSMP_IN_PLACE;
    if (count && ((t->rank == root && !recvbuf) || !sendbuf || (in_place && t->rank != root)))
        return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    return osmp__tree_reduce(t, in_place ? recvbuf : sendbuf, recvbuf, count, e, fn, root, 0);
}

int osmp_allreduce(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                   osmp_op_t op)
{
    CHECK_TEAM(t);
    osmp__reduce_fn fn;
    int rc = osmp__reduce_fn_get(dtype, op, &fn);
    if (rc) return rc;
    size_t e = esize_of(dtype, count, 1);
    if (!e || (count && (!sendbuf || !recvbuf))) return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    return osmp__allreduce(t, sendbuf == OSMP_IN_PLACE ? recvbuf : sendbuf, recvbuf, count, e, fn);
}

int osmp_gather(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root)
{
    CHECK_TEAM(t);
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || root < 0 || root >= t->size) return OSMP_ERR_INVALID_ARG;
    int in_place = sendbuf == OSMP_IN_PLACE;
    if (count && ((t->rank == root && !recvbuf) || !sendbuf || (in_place && t->rank != root)))
        return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    const void *in = in_place ? (const char *)recvbuf + (size_t)root * bytes : sendbuf;
    return osmp__gather(t, in, recvbuf, bytes, root);
}

int osmp_allgather(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype)
{
    CHECK_TEAM(t);
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || (count && (!sendbuf || !recvbuf))) return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    const void *in = sendbuf == OSMP_IN_PLACE ? (const char *)recvbuf + (size_t)t->rank * bytes : sendbuf;
    /* 1. gather to rank 0; 2. broadcast the whole vector from it. */
    int rc = osmp__gather(t, in, recvbuf, bytes, 0);
    int rc2 = osmp__tree_bcast(t, recvbuf, bytes * (size_t)t->size, 1, 0);
    return rc ? rc : rc2;
}

int osmp_scatter(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root)
{
    CHECK_TEAM(t);
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || root < 0 || root >= t->size) return OSMP_ERR_INVALID_ARG;
    int in_place = recvbuf == OSMP_IN_PLACE;
    if (count && ((t->rank == root && !sendbuf) || !recvbuf || (in_place && t->rank != root)))
        return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    void *out = in_place ? (char *)(uintptr_t)sendbuf + (size_t)root * bytes : recvbuf;
    return osmp__scatter(t, sendbuf, out, bytes, root);
}

/* One reduction per block, rooted at the block's owner: rank r ends with the
 * reduced block r, and no buffer beyond the caller's is needed. In place, the
 * result goes to the start of recvbuf, whose input block was consumed first. */
int osmp_reduce_scatter_block(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                              osmp_op_t op)
{
    CHECK_TEAM(t);
    osmp__reduce_fn fn;
    int rc = osmp__reduce_fn_get(dtype, op, &fn);
    if (rc) return rc;
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || (count && (!sendbuf || !recvbuf))) return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    const char *in = sendbuf == OSMP_IN_PLACE ? recvbuf : sendbuf;
    for (int r = 0; r < t->size; r++) {
        int rr = osmp__tree_reduce(t, in + (size_t)r * bytes, recvbuf, count, e, fn, r, 0);
        if (rr && !rc) rc = rr;
    }
    return rc;
}

int osmp_alltoall(osmp_team_t t, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype)
{
    CHECK_TEAM(t);
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || (count && (!sendbuf || !recvbuf))) return OSMP_ERR_INVALID_ARG;
    if (!count) return OSMP_OK;
    size_t bytes = count * e, all = bytes * (size_t)t->size;
    void *copy = NULL;
    if (sendbuf == OSMP_IN_PLACE) {
        copy = malloc(all);
        if (!copy) return OSMP_ERR_NO_MEMORY;
        memcpy(copy, recvbuf, all);
    }
    int rc = osmp__alltoall(t, copy ? copy : sendbuf, recvbuf, bytes);
    free(copy);
    return rc;
}
