/*
 * The collectives' entry points: check the handle and the arguments (before
 * touching any buffer or any peer), optionally compare a checksum of the
 * arguments across the team (OSMP_CHECK_ARGS), resolve OSMP_IN_PLACE, and hand
 * over to the algorithms in coll/. Argument errors are local: a participant
 * that rejects its arguments returns without joining, so the caller must not
 * go on with the others (as in MPI).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "team/team.h"

/* Element size, or 0 when dtype is unknown or count * size * nblocks overflows. */
static size_t esize_of(osmp_dtype_t dtype, size_t count, size_t nblocks)
{
    size_t e = osmp_dtype_size(dtype);
    if (!e || (count && (SIZE_MAX / e / count) < nblocks)) return 0;
    return e;
}

/* Resolves the handle h into the team t, or returns why it cannot be used. */
#define CHECK_TEAM(h, t)                                                                                     \
    osmp__team_t t;                                                                                          \
    do {                                                                                                     \
        int team_rc_ = osmp__team_of(h, &t);                                                                 \
        if (team_rc_) return team_rc_;                                                                       \
    } while (0)

enum coll_id { C_BARRIER = 1, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_ALLGATHER, C_SCATTER, C_RSB, C_ALLTOALL };

/* OSMP_CHECK_ARGS: every participant contributes a hash of what must agree and
 * its complement to one MAX allreduce; both come back unchanged only if every
 * participant passed the same. All participants then return the same status
 * and the team stays usable. Off: nothing. */
static int check_args_now(osmp__team_t t, enum coll_id c, size_t count, int dtype, int op, int root)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the fields */
    const uint64_t field[5] = {(uint64_t)c, (uint64_t)count, (uint64_t)dtype, (uint64_t)op, (uint64_t)root};
    for (int i = 0; i < 5; i++) h = (h ^ field[i]) * 1099511628211ULL;
    uint64_t mine[2] = {h, ~h}, all[2];
    osmp__reduce_fn max;
    osmp__reduce_fn_get(OSMP_UINT64, OSMP_MAX, &max);
    int rc = osmp__allreduce(t, mine, all, 2, sizeof(uint64_t), max);
    if (rc) return rc;
    return all[0] == mine[0] && all[1] == mine[1] ? OSMP_OK : OSMP_ERR_MISMATCH;
}

/* Off (the default), this costs one load and a branch on every call. */
static inline int check_args(osmp__team_t t, enum coll_id c, size_t count, int dtype, int op, int root)
{
    return t->check_args ? check_args_now(t, c, count, dtype, op, root) : OSMP_OK;
}

int osmp_barrier(osmp_team_t h)
{
    CHECK_TEAM(h, t);
    int rc = check_args(t, C_BARRIER, 0, 0, 0, 0);
    return rc ? rc : osmp__barrier(t);
}

int osmp_bcast(osmp_team_t h, void *buf, size_t count, osmp_dtype_t dtype, int root)
{
    CHECK_TEAM(h, t);
    size_t e = esize_of(dtype, count, 1);
    int rc;
    if (!e || root < 0 || root >= t->size || (count && !buf) || buf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_BCAST, count, dtype, 0, root))) return rc;
    if (!count) return OSMP_OK;
    return osmp__tree_bcast(t, buf, count, e, root);
}

int osmp_reduce(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
                int root)
{
    CHECK_TEAM(h, t);
    osmp__reduce_fn fn;
    int rc = osmp__reduce_fn_get(dtype, op, &fn);
    if (rc) return rc;
    size_t e = esize_of(dtype, count, 1);
    if (!e || root < 0 || root >= t->size) return OSMP_ERR_INVALID_ARG;
    int in_place = sendbuf == OSMP_IN_PLACE;
    if (recvbuf == OSMP_IN_PLACE ||
        (count && ((t->rank == root && !recvbuf) || !sendbuf || (in_place && t->rank != root))))
        return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_REDUCE, count, dtype, op, root))) return rc;
    if (!count) return OSMP_OK;
    rc = osmp__tree_reduce(t, in_place ? recvbuf : sendbuf, recvbuf, count, e, fn, root, 0);
    if (!rc && t->size == 1) osmp__reduce_alone(recvbuf, count, e, op, fn);
    return rc;
}

int osmp_allreduce(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                   osmp_op_t op)
{
    CHECK_TEAM(h, t);
    osmp__reduce_fn fn;
    int rc = osmp__reduce_fn_get(dtype, op, &fn);
    if (rc) return rc;
    size_t e = esize_of(dtype, count, 1);
    if (!e || (count && (!sendbuf || !recvbuf)) || recvbuf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_ALLREDUCE, count, dtype, op, 0))) return rc;
    if (!count) return OSMP_OK;
    rc = osmp__allreduce(t, sendbuf == OSMP_IN_PLACE ? recvbuf : sendbuf, recvbuf, count, e, fn);
    if (!rc && t->size == 1) osmp__reduce_alone(recvbuf, count, e, op, fn);
    return rc;
}

int osmp_gather(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root)
{
    CHECK_TEAM(h, t);
    int rc;
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || root < 0 || root >= t->size) return OSMP_ERR_INVALID_ARG;
    int in_place = sendbuf == OSMP_IN_PLACE;
    if (recvbuf == OSMP_IN_PLACE ||
        (count && ((t->rank == root && !recvbuf) || !sendbuf || (in_place && t->rank != root))))
        return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_GATHER, count, dtype, 0, root))) return rc;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    const void *in = in_place ? (const char *)recvbuf + (size_t)root * bytes : sendbuf;
    return osmp__gather(t, in, recvbuf, bytes, root);
}

int osmp_allgather(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype)
{
    CHECK_TEAM(h, t);
    int rc;
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || (count && (!sendbuf || !recvbuf)) || recvbuf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_ALLGATHER, count, dtype, 0, 0))) return rc;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    const void *in = sendbuf == OSMP_IN_PLACE ? (const char *)recvbuf + (size_t)t->rank * bytes : sendbuf;
    /* 1. gather to rank 0; 2. broadcast the whole vector from it. */
    rc = osmp__gather(t, in, recvbuf, bytes, 0);
    return rc ? rc : osmp__tree_bcast(t, recvbuf, bytes * (size_t)t->size, 1, 0);
}

int osmp_scatter(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root)
{
    CHECK_TEAM(h, t);
    int rc;
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || root < 0 || root >= t->size) return OSMP_ERR_INVALID_ARG;
    int in_place = recvbuf == OSMP_IN_PLACE;
    if (sendbuf == OSMP_IN_PLACE ||
        (count && ((t->rank == root && !sendbuf) || !recvbuf || (in_place && t->rank != root))))
        return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_SCATTER, count, dtype, 0, root))) return rc;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    void *out = in_place ? (char *)(uintptr_t)sendbuf + (size_t)root * bytes : recvbuf;
    return osmp__scatter(t, sendbuf, out, bytes, root);
}

/* One reduction per block, rooted at the block's owner: rank r ends with the
 * reduced block r, and no buffer beyond the caller's is needed. In place, the
 * result goes to the start of recvbuf, whose input block was consumed first. */
int osmp_reduce_scatter_block(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                              osmp_op_t op)
{
    CHECK_TEAM(h, t);
    osmp__reduce_fn fn;
    int rc = osmp__reduce_fn_get(dtype, op, &fn);
    if (rc) return rc;
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || (count && (!sendbuf || !recvbuf)) || recvbuf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_RSB, count, dtype, op, 0))) return rc;
    if (!count) return OSMP_OK;
    size_t bytes = count * e;
    const char *in = sendbuf == OSMP_IN_PLACE ? recvbuf : sendbuf;
    for (int r = 0; r < t->size && !rc; r++) rc = osmp__tree_reduce(t, in + (size_t)r * bytes, recvbuf, count, e, fn, r, 0);
    if (!rc && t->size == 1) osmp__reduce_alone(recvbuf, count, e, op, fn);
    return rc;
}

int osmp_alltoall(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype)
{
    CHECK_TEAM(h, t);
    int rc;
    size_t e = esize_of(dtype, count, (size_t)t->size);
    if (!e || (count && (!sendbuf || !recvbuf)) || recvbuf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    if ((rc = check_args(t, C_ALLTOALL, count, dtype, 0, 0))) return rc;
    if (!count) return OSMP_OK;
    size_t bytes = count * e, all = bytes * (size_t)t->size;
    void *copy = NULL;
    if (sendbuf == OSMP_IN_PLACE) {
        copy = malloc(all);
        if (!copy) return OSMP_ERR_NO_MEMORY;
        memcpy(copy, recvbuf, all);
    }
    rc = osmp__alltoall(t, copy ? copy : sendbuf, recvbuf, bytes);
    free(copy);
    return rc;
}
