/*
 * The collectives' entry points: check the handle and the arguments (before
 * touching any buffer or any peer), optionally compare a checksum of the
 * arguments across the team (OSMP_CHECK_ARGS), resolve OSMP_IN_PLACE, and hand
 * over to the algorithm the selection table chooses (coll/select.c). Argument
 * errors are local: a participant that rejects its arguments returns without
 * joining, so the caller must not go on with the others (as in MPI).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/coll.h"
#include "team/request.h"

/* Element size, or 0 when dtype is unknown or count * size * nblocks overflows. */
static size_t esize_of(osmp_dtype_t dtype, size_t count, size_t nblocks)
{
    size_t e = osmp_dtype_size(dtype), total; /* (no division: it costs more than the rest of a small call's checks) */
    if (!e || __builtin_mul_overflow(e, count, &total) || __builtin_mul_overflow(total, nblocks, &total)) return 0;
    return e;
}

/* Resolves the handle h into the team t, or returns why it cannot be used. */
#define CHECK_TEAM(h, t)                                                                                     \
    osmp__team_t t;                                                                                          \
    do {                                                                                                     \
        int team_rc_ = osmp__team_of(h, &t);                                                                 \
        if (team_rc_) return team_rc_;                                                                       \
    } while (0)

/* OSMP_CHECK_ARGS: every participant contributes a hash of what must agree and
 * its complement to one MAX allreduce; both come back unchanged only if every
 * participant passed the same. All participants then return the same status
 * and the team stays usable. Off: nothing. A request runs the same allreduce
 * as its first part (team/request.c). */
void osmp__check_args_part(osmp_coll_t c, size_t count, int dtype, int op, int root, uint64_t buf[4],
                           struct osmp__args *a)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the fields */
    const uint64_t field[5] = {(uint64_t)c + 1, (uint64_t)count, (uint64_t)dtype, (uint64_t)op, (uint64_t)root};
    for (int i = 0; i < 5; i++) h = (h ^ field[i]) * 1099511628211ULL;
    buf[0] = h;
    buf[1] = ~h;
    *a = (struct osmp__args){.in = buf, .out = buf + 2, .count = 2, .esize = sizeof(uint64_t)};
    osmp__reduce_fn_get(OSMP_UINT64, OSMP_MAX, &a->fn);
}

int osmp__check_args_result(const uint64_t buf[4])
{
    return buf[2] == buf[0] && buf[3] == buf[1] ? OSMP_OK : OSMP_ERR_MISMATCH;
}

static __attribute__((noinline)) int check_args_now(osmp__team_t t, osmp_coll_t c, size_t count, int dtype, int op, int root)
{
    uint64_t buf[4];
    struct osmp__args a;
    osmp__check_args_part(c, count, dtype, op, root, buf, &a);
    int rc = osmp__run(&t->coll, OSMP_COLL_ALLREDUCE, &a);
    return rc ? rc : osmp__check_args_result(buf);
}

/* Off (the default), this costs one load and a branch on every call. */
static inline int check_args(osmp__team_t t, osmp_coll_t c, size_t count, int dtype, int op, int root)
{
    return t->check_args ? check_args_now(t, c, count, dtype, op, root) : OSMP_OK;
}

/* The arguments checked on every participant, then the call: zero counts do
 * nothing (and take no step; the vector variants (a->vector) have counts that
 * differ between ranks, so they run, but for allgatherv and reduce_scatter
 * with every block empty, which every rank knows), reductions of a team of one still turn logical
 * operations into 0 or 1 (not scans: rank 0's scan and rank 1's exscan are one
 * rank's input as it is, as in MPI). */
static inline __attribute__((always_inline)) int call(osmp__team_t t, osmp_coll_t c, struct osmp__args *a,
                                                      osmp_op_t op)
{
    int rc = a->count || a->vector ? osmp__run(&t->coll, c, a) : OSMP_OK;
    if (!rc && a->fn && t->coll.size == 1 && c != OSMP_COLL_SCAN && c != OSMP_COLL_EXSCAN)
        osmp__reduce_alone(a->out, osmp__count_of(a, 0), a->esize, op, a->fn);
    return rc;
}

/* Tracing off costs the one branch on t->coll.trace here (and one per copy). */
static inline __attribute__((always_inline)) int run_now(osmp__team_t t, osmp_coll_t c, struct osmp__args *a,
                                                         int dtype, osmp_op_t op)
{
    int rc = check_args(t, c, a->vector ? 0 : a->count, dtype, (int)op, a->root);
    if (rc) return rc;
    struct osmp__trace *tr = t->coll.trace;
    if (__builtin_expect(tr == NULL, 1)) return call(t, c, a, op);
    osmp__trace_begin_(tr, c);
    osmp__trace_copy_(tr, t->coll.rank, t->coll.rank, a->staged);
    rc = call(t, c, a, op);
    osmp__trace_end_(tr);
    return rc;
}

/* The long way (t->detour): outstanding requests come first, on every
 * participant, the team locked (the progress thread may be in its queue).
 * The queue is empty after: the next call takes the short way (the progress
 * thread leaves an empty team alone). Out of line, so that the usual call
 * keeps its short frame. */
static __attribute__((noinline)) int run_detour(osmp__team_t t, osmp_coll_t c, struct osmp__args *a, int dtype,
                                                osmp_op_t op)
{
    osmp__team_lock(t);
    if (t->head) osmp__requests_drain(t);
    t->detour = 0;
    int rc = run_now(t, c, a, dtype, op);
    osmp__team_unlock(t);
    return rc;
}

static inline __attribute__((always_inline)) int run(osmp__team_t t, osmp_coll_t c, struct osmp__args *a, int dtype,
                                                     osmp_op_t op)
{
    if (__builtin_expect(t->detour, 0)) return run_detour(t, c, a, dtype, op);
    return run_now(t, c, a, dtype, op);
}

/* How a call is made: blocking (NULL), or as a request (nonblocking, or
 * persistent). */
struct post {
    osmp_request_t *req;
    int persistent;
};

/* The call as the entry point resolved it: run now, or post. An input in
 * place that others read while I write (stage_src, stage_bytes) is copied
 * first: now, or when the request runs. */
static inline __attribute__((always_inline)) int dispatch(osmp__team_t t, osmp_team_t h, osmp_coll_t c,
                                                          struct osmp__args *a, int dtype, osmp_op_t op,
                                                          const void *stage_src, size_t stage_bytes,
                                                          const struct post *p)
{
    if (p) {
        struct osmp__args b = *a;
        b.staged = 0;
        return osmp__request_post(t, h, c, &b, dtype, op, stage_src, stage_bytes, p->persistent, p->req);
    }
    if (!stage_bytes) return run(t, c, a, dtype, op);
    void *copy = osmp__malloc(stage_bytes);
    if (!copy) return osmp__mb_fail(&t->coll.mb, OSMP_ERR_NO_MEMORY);
    a->in = memcpy(copy, stage_src, stage_bytes);
    a->staged = stage_bytes;
    int rc = run(t, c, a, dtype, op);
    free(copy);
    return rc;
}

/* The request out-argument: OSMP_REQUEST_NULL until a request is made. */
#define CHECK_REQ(p)                                                                                         \
    do {                                                                                                     \
        if (p) {                                                                                             \
            if (!(p)->req) return OSMP_ERR_INVALID_ARG;                                                      \
            *(p)->req = OSMP_REQUEST_NULL;                                                                   \
        }                                                                                                    \
    } while (0)

static inline __attribute__((always_inline)) int barrier(osmp_team_t h, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    struct osmp__args a = {.count = 1, .esize = 0};
    return dispatch(t, h, OSMP_COLL_BARRIER, &a, 0, 0, NULL, 0, p);
}

int osmp_barrier(osmp_team_t h)
{
    return barrier(h, NULL);
}

static inline __attribute__((always_inline)) int bcast(osmp_team_t h, void *buf, size_t count, osmp_dtype_t dtype,
                                                       int root, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    size_t e = esize_of(dtype, count, 1);
    if (!e || root < 0 || root >= t->coll.size || (count && !buf) || buf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    struct osmp__args a = {.in = buf, .out = buf, .count = count, .esize = e, .root = root};
    return dispatch(t, h, OSMP_COLL_BCAST, &a, dtype, 0, NULL, 0, p);
}

int osmp_bcast(osmp_team_t h, void *buf, size_t count, osmp_dtype_t dtype, int root)
{
    return bcast(h, buf, count, dtype, root, NULL);
}

/* Reduce (rooted: only the root needs recvbuf, only the root may be in place)
 * and allreduce (root 0). */
static inline __attribute__((always_inline)) int reduction(osmp_team_t h, osmp_coll_t c, const void *sendbuf,
                                                           void *recvbuf, size_t count, osmp_dtype_t dtype,
                                                           osmp_op_t op, int root, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    struct osmp__args a = {.count = count, .out = recvbuf, .root = root};
    int rc = osmp__reduce_fns_get(dtype, op, &a.fn, &a.fn3);
    if (rc) return rc;
    a.esize = esize_of(dtype, count, 1);
    int rooted = c == OSMP_COLL_REDUCE, me = t->coll.rank, in_place = sendbuf == OSMP_IN_PLACE;
    if (!a.esize || root < 0 || root >= t->coll.size || recvbuf == OSMP_IN_PLACE ||
        (count && (!sendbuf || ((!rooted || me == root) && !recvbuf) || (in_place && rooted && me != root))))
        return OSMP_ERR_INVALID_ARG;
    a.in = in_place ? recvbuf : sendbuf;
    return dispatch(t, h, c, &a, dtype, op, NULL, 0, p);
}

int osmp_reduce(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
                int root)
{
    return reduction(h, OSMP_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, NULL);
}

int osmp_allreduce(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                   osmp_op_t op)
{
    return reduction(h, OSMP_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0, NULL);
}

/* Rooted data movement: the root's buffer holds size blocks; the root's own
 * block may be in place (OSMP_IN_PLACE for the root's `mine`). */
static inline __attribute__((always_inline)) int rooted(osmp_team_t h, osmp_coll_t c, const void *all,
                const void *mine, size_t count, osmp_dtype_t dtype, int root, int mine_is_out, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    size_t e = esize_of(dtype, count, (size_t)t->coll.size);
    if (!e || root < 0 || root >= t->coll.size) return OSMP_ERR_INVALID_ARG;
    int me = t->coll.rank, in_place = mine == OSMP_IN_PLACE;
    if (all == OSMP_IN_PLACE || (count && ((me == root && !all) || !mine || (in_place && me != root))))
        return OSMP_ERR_INVALID_ARG;
    const void *own = in_place ? (const char *)all + (size_t)root * count * e : mine;
    struct osmp__args a = {.count = count, .esize = e, .root = root};
    a.in = mine_is_out ? all : own;
    a.out = (void *)(uintptr_t)(mine_is_out ? own : all);
    return dispatch(t, h, c, &a, dtype, 0, NULL, 0, p);
}

int osmp_gather(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root)
{
    return rooted(h, OSMP_COLL_GATHER, recvbuf, sendbuf, count, dtype, root, 0, NULL);
}

int osmp_scatter(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root)
{
    return rooted(h, OSMP_COLL_SCATTER, sendbuf, recvbuf, count, dtype, root, 1, NULL);
}

/* Every rank contributes a block of size blocks (allgather: its own one, maybe
 * in place; reduce_scatter_block and alltoall: the whole send vector). */
static int everyone(osmp_team_t h, osmp_coll_t c, const void *sendbuf, void *recvbuf, size_t count,
                    osmp_dtype_t dtype, osmp_op_t op, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    struct osmp__args a = {.count = count, .out = recvbuf};
    int reduces = osmp_coll_flags(c) & OSMP_COLL_REDUCES;
    int rc = reduces ? osmp__reduce_fns_get(dtype, op, &a.fn, &a.fn3) : OSMP_OK;
    if (rc) return rc;
    a.esize = esize_of(dtype, count, (size_t)t->coll.size);
    if (!a.esize || (count && (!sendbuf || !recvbuf)) || recvbuf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    size_t block = count * a.esize, stage = 0;
    if (sendbuf != OSMP_IN_PLACE) {
        a.in = sendbuf;
    } else if (c == OSMP_COLL_ALLGATHER) {
        a.in = (const char *)recvbuf + (size_t)t->coll.rank * block;
    } else if (c == OSMP_COLL_ALLTOALL && count) {
        a.in = recvbuf; /* blocks are read from every rank's send buffer while others write theirs: a copy */
        stage = block * (size_t)t->coll.size;
    } else {
        a.in = recvbuf;
    }
    return dispatch(t, h, c, &a, dtype, reduces ? op : 0, recvbuf, stage, p);
}

int osmp_allgather(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype)
{
    return everyone(h, OSMP_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype, 0, NULL);
}

int osmp_reduce_scatter_block(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                              osmp_op_t op)
{
    return everyone(h, OSMP_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dtype, op, NULL);
}

int osmp_alltoall(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype)
{
    return everyone(h, OSMP_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, 0, NULL);
}

/* ---------------------------------------------------------------- vector variants */

/* Every block of the n counts and displacements fits in memory (in bytes of
 * esize), and *extent gets the elements they span; 0 if one overflows. */
static int blocks_fit(const size_t *counts, const size_t *displs, int n, size_t esize, size_t *extent)
{
    size_t end = 0, hi, bytes; /* (no division: a 64-bit one costs a vector call more than the rest of this loop) */
    for (int r = 0; r < n; r++) {
        if (__builtin_add_overflow(displs[r], counts[r], &hi) || __builtin_mul_overflow(hi, esize, &bytes)) return 0;
        if (counts[r] && hi > end) end = hi;
    }
    *extent = end;
    return 1;
}

/* The root's vector side (counts and displs) and this rank's own block. */
static inline __attribute__((always_inline)) int rooted_v(osmp_team_t h, osmp_coll_t c, const void *all,
                const size_t *counts, const size_t *displs, const void *mine, size_t count, osmp_dtype_t dtype,
                int root, int mine_is_out, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    size_t e = osmp_dtype_size(dtype), extent = 0, bytes;
    int me = t->coll.rank, in_place = mine == OSMP_IN_PLACE;
    if (!e || root < 0 || root >= t->coll.size || all == OSMP_IN_PLACE || (in_place && me != root) ||
        __builtin_mul_overflow(count, e, &bytes))
        return OSMP_ERR_INVALID_ARG;
    if (me == root && (!counts || !displs || !blocks_fit(counts, displs, t->coll.size, e, &extent) ||
                       (extent && !all) || (in_place ? 0 : count != counts[root])))
        return OSMP_ERR_INVALID_ARG;
    if (count && !in_place && !mine) return OSMP_ERR_INVALID_ARG;
    struct osmp__args a = {.count = count, .esize = e, .root = root, .vector = 1};
    if (me == root) {
        a.counts = counts;
        a.displs = displs;
        a.count = counts[root];
    }
    const void *own = in_place ? (const char *)all + displs[root] * e : mine;
    a.in = mine_is_out ? all : own;
    a.out = (void *)(uintptr_t)(mine_is_out ? own : all);
    return dispatch(t, h, c, &a, dtype, 0, NULL, 0, p);
}

int osmp_gatherv(osmp_team_t h, const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                 const size_t *displs, osmp_dtype_t dtype, int root)
{
    return rooted_v(h, OSMP_COLL_GATHERV, recvbuf, recvcounts, displs, sendbuf, sendcount, dtype, root, 0, NULL);
}

int osmp_scatterv(osmp_team_t h, const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf,
                  size_t recvcount, osmp_dtype_t dtype, int root)
{
    return rooted_v(h, OSMP_COLL_SCATTERV, sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, 1, NULL);
}

static int allgatherv(osmp_team_t h, const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                      const size_t *displs, osmp_dtype_t dtype, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    size_t e = osmp_dtype_size(dtype), extent = 0;
    int me = t->coll.rank, in_place = sendbuf == OSMP_IN_PLACE;
    if (!e || !recvcounts || !displs || recvbuf == OSMP_IN_PLACE ||
        !blocks_fit(recvcounts, displs, t->coll.size, e, &extent) || (extent && !recvbuf) ||
        (!in_place && (sendcount != recvcounts[me] || (sendcount && !sendbuf))))
        return OSMP_ERR_INVALID_ARG;
    /* Every block empty (every rank has the counts): nothing to run, as for a zero count (call). */
    struct osmp__args a = {.count = recvcounts[me], .esize = e, .counts = recvcounts, .displs = displs,
                           .out = recvbuf, .vector = extent != 0, .vector_bound = extent * e};
    a.in = in_place ? (const char *)recvbuf + displs[me] * e : sendbuf;
    return dispatch(t, h, OSMP_COLL_ALLGATHERV, &a, dtype, 0, NULL, 0, p);
}

int osmp_allgatherv(osmp_team_t h, const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                    const size_t *displs, osmp_dtype_t dtype)
{
    return allgatherv(h, sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, NULL);
}

static int alltoallv(osmp_team_t h, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                     void *recvbuf, const size_t *recvcounts, const size_t *rdispls, osmp_dtype_t dtype,
                     const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    size_t e = osmp_dtype_size(dtype), sextent = 0, rextent = 0;
    int n = t->coll.size, in_place = sendbuf == OSMP_IN_PLACE;
    if (!e || !recvcounts || !rdispls || recvbuf == OSMP_IN_PLACE ||
        !blocks_fit(recvcounts, rdispls, n, e, &rextent) || (rextent && !recvbuf) ||
        (!in_place && (!sendcounts || !sdispls || !blocks_fit(sendcounts, sdispls, n, e, &sextent) ||
                       (sextent && !sendbuf))))
        return OSMP_ERR_INVALID_ARG;
    struct osmp__args a = {.in = sendbuf, .out = recvbuf, .esize = e, .counts = sendcounts, .displs = sdispls,
                           .counts2 = recvcounts, .displs2 = rdispls, .vector = 1};
    size_t stage = 0;
    if (in_place) { /* blocks are read from every rank's send side while others write theirs: a copy */
        a.in = recvbuf;
        stage = rextent * e;
        a.counts = recvcounts;
        a.displs = rdispls;
    }
    return dispatch(t, h, OSMP_COLL_ALLTOALLV, &a, dtype, 0, recvbuf, stage, p);
}

int osmp_alltoallv(osmp_team_t h, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                   void *recvbuf, const size_t *recvcounts, const size_t *rdispls, osmp_dtype_t dtype)
{
    return alltoallv(h, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, NULL);
}

static int reduce_scatter(osmp_team_t h, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                          osmp_dtype_t dtype, osmp_op_t op, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    struct osmp__args a = {.out = recvbuf, .counts = recvcounts, .vector = 1};
    int rc = osmp__reduce_fns_get(dtype, op, &a.fn, &a.fn3);
    if (rc) return rc;
    int n = t->coll.size, in_place = sendbuf == OSMP_IN_PLACE, equal = 1;
    a.esize = osmp_dtype_size(dtype);
    if (!recvcounts || recvbuf == OSMP_IN_PLACE) return OSMP_ERR_INVALID_ARG;
    size_t total = 0, bytes;
    for (int r = 0; r < n; r++) {
        if (__builtin_add_overflow(total, recvcounts[r], &total) || __builtin_mul_overflow(total, a.esize, &bytes))
            return OSMP_ERR_INVALID_ARG;
        equal &= recvcounts[r] == recvcounts[0];
    }
    /* My result needs recvbuf only if my block has elements; the input is
     * sendbuf, or recvbuf in place. */
    if ((recvcounts[t->coll.rank] && !recvbuf) || (total && !(in_place ? recvbuf : sendbuf)))
        return OSMP_ERR_INVALID_ARG;
    a.count = recvcounts[t->coll.rank];
    a.vector = total != 0; /* every block empty (every rank has the counts): nothing to run (call) */
    a.vector_bound = total * a.esize; /* (no overflow: checked above) */
    a.in = in_place ? recvbuf : sendbuf;
    /* In place, block r's result lands at the start of rank r's buffer: with
     * unequal counts it may cover input of later blocks not yet reduced (a copy). */
    return dispatch(t, h, OSMP_COLL_REDUCE_SCATTER, &a, dtype, op, recvbuf, in_place && !equal ? total * a.esize : 0,
                    p);
}

int osmp_reduce_scatter(osmp_team_t h, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                        osmp_dtype_t dtype, osmp_op_t op)
{
    return reduce_scatter(h, sendbuf, recvbuf, recvcounts, dtype, op, NULL);
}

static int scan(osmp_team_t h, osmp_coll_t c, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                osmp_op_t op, const struct post *p)
{
    CHECK_REQ(p);
    CHECK_TEAM(h, t);
    struct osmp__args a = {.count = count, .out = recvbuf};
    int rc = osmp__reduce_fns_get(dtype, op, &a.fn, &a.fn3); /* (rdbl writes received op mine into a third array) */
    if (rc) return rc;
    a.esize = esize_of(dtype, count, 1);
    if (!a.esize || recvbuf == OSMP_IN_PLACE || (count && (!sendbuf || !recvbuf))) return OSMP_ERR_INVALID_ARG;
    a.in = sendbuf == OSMP_IN_PLACE ? recvbuf : sendbuf;
    return dispatch(t, h, c, &a, dtype, op, NULL, 0, p);
}

int osmp_scan(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op)
{
    return scan(h, OSMP_COLL_SCAN, sendbuf, recvbuf, count, dtype, op, NULL);
}

int osmp_exscan(osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op)
{
    return scan(h, OSMP_COLL_EXSCAN, sendbuf, recvbuf, count, dtype, op, NULL);
}

/* ---------------------------------------------------------------- nonblocking and persistent */

/* osmp_i<op> (P: nonblocking) and osmp_<op>_init (persistent), with the
 * blocking call's checks (team/request.c runs them). */
#define NB(name, params, call)                                                                                \
    int osmp_i##name params                                                                                   \
    {                                                                                                         \
        const struct post p_ = {req, 0}, *p = &p_;                                                            \
        return call;                                                                                          \
    }                                                                                                         \
    int osmp_##name##_init params                                                                             \
    {                                                                                                         \
        const struct post p_ = {req, 1}, *p = &p_;                                                            \
        return call;                                                                                          \
    }
NB(barrier, (osmp_team_t h, osmp_request_t *req), barrier(h, p))
NB(bcast, (osmp_team_t h, void *buf, size_t count, osmp_dtype_t dtype, int root, osmp_request_t *req),
   bcast(h, buf, count, dtype, root, p))
NB(reduce,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op, int root,
    osmp_request_t *req),
   reduction(h, OSMP_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, p))
NB(allreduce,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
    osmp_request_t *req),
   reduction(h, OSMP_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0, p))
NB(gather,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root,
    osmp_request_t *req),
   rooted(h, OSMP_COLL_GATHER, recvbuf, sendbuf, count, dtype, root, 0, p))
NB(scatter,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, int root,
    osmp_request_t *req),
   rooted(h, OSMP_COLL_SCATTER, sendbuf, recvbuf, count, dtype, root, 1, p))
NB(allgather, (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_request_t *req),
   everyone(h, OSMP_COLL_ALLGATHER, sendbuf, recvbuf, count, dtype, 0, p))
NB(reduce_scatter_block,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
    osmp_request_t *req),
   everyone(h, OSMP_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dtype, op, p))
NB(alltoall, (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_request_t *req),
   everyone(h, OSMP_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, 0, p))
NB(gatherv,
   (osmp_team_t h, const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
    const size_t *displs, osmp_dtype_t dtype, int root, osmp_request_t *req),
   rooted_v(h, OSMP_COLL_GATHERV, recvbuf, recvcounts, displs, sendbuf, sendcount, dtype, root, 0, p))
NB(scatterv,
   (osmp_team_t h, const void *sendbuf, const size_t *sendcounts, const size_t *displs, void *recvbuf,
    size_t recvcount, osmp_dtype_t dtype, int root, osmp_request_t *req),
   rooted_v(h, OSMP_COLL_SCATTERV, sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, 1, p))
NB(allgatherv,
   (osmp_team_t h, const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
    const size_t *displs, osmp_dtype_t dtype, osmp_request_t *req),
   allgatherv(h, sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, p))
NB(alltoallv,
   (osmp_team_t h, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
    const size_t *recvcounts, const size_t *rdispls, osmp_dtype_t dtype, osmp_request_t *req),
   alltoallv(h, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, p))
NB(reduce_scatter,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, const size_t *recvcounts, osmp_dtype_t dtype, osmp_op_t op,
    osmp_request_t *req),
   reduce_scatter(h, sendbuf, recvbuf, recvcounts, dtype, op, p))
NB(scan,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
    osmp_request_t *req),
   scan(h, OSMP_COLL_SCAN, sendbuf, recvbuf, count, dtype, op, p))
NB(exscan,
   (osmp_team_t h, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype, osmp_op_t op,
    osmp_request_t *req),
   scan(h, OSMP_COLL_EXSCAN, sendbuf, recvbuf, count, dtype, op, p))
#undef NB
