/*
 * libosmp_mpi: the intercepted MPI_ collectives. Each decides, the same way on
 * every rank, whether OSMP runs the call (osmp_mpi.h says when), and runs it
 * inside the node (one OSMP call) or across nodes (hier.c).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi/osmp_mpi.h"

/* Data movement runs on OSMP inside one node (s: the communicator's state, or
 * NULL when it goes to MPI anyway); the views hold nblocks blocks of `block`
 * bytes (block < 0: a datatype of no size), which must fit an int. The tune
 * table's bytes are one block, as osmp-bench counts them (bcast: the message). */
static inline __attribute__((always_inline)) struct osmp__mpi_comm *
movement_ok(struct osmp__mpi_comm *s, osmp_coll_t c, long block, int nblocks)
{
    if (!s) return NULL;
    long total;
    if (block < 0 || __builtin_mul_overflow(block, (long)nblocks, &total) || total > INT_MAX)
        return (void)osmp__mpi_pass(c, block < 0 ? R_DTYPE : R_COUNT_LIMIT), NULL;
    if (s->multinode && c == OSMP_COLL_ALLTOALL) return (void)osmp__mpi_pass(c, R_MULTINODE), NULL;
    if (osmp__mpi_tuned_to_mpi(c, block, s->size)) return (void)osmp__mpi_pass(c, R_TUNED), NULL;
    return s;
}

static inline __attribute__((always_inline)) struct osmp__mpi_comm *reduction_state(MPI_Comm comm, MPI_Datatype dt,
                                                                                    MPI_Op op, int count, osmp_coll_t c,
                                          osmp_dtype_t *odt, osmp_op_t *oop)
{
    unsigned ops;
    /* Nothing to reduce (the caller returns at once; IMB starts at 0 bytes): no lookups. */
    if (!count && dt != MPI_DATATYPE_NULL && op != MPI_OP_NULL) return osmp__mpi_state(comm, c);
    if (count < 0 || osmp__mpi_dtype(dt, odt, &ops)) return (void)osmp__mpi_pass(c, R_DTYPE), NULL;
    if (osmp__mpi_op(op, ops, oop)) return (void)osmp__mpi_pass(c, R_OP), NULL;
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (s && s->size == 1 && (*oop == OSMP_LAND || *oop == OSMP_LOR || *oop == OSMP_LXOR))
        return (void)osmp__mpi_pass(c, R_LONE_LOGICAL), NULL;
    if (s && osmp__mpi_tuned_to_mpi(c, (long)count * (long)osmp_dtype_size(*odt), s->size))
        return (void)osmp__mpi_pass(c, R_TUNED), NULL;
    return s;
}

OSMP_MPI_ENTRY(int, MPI_Barrier)(MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Barrier);
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, OSMP_COLL_BARRIER);
    if (s && osmp__mpi_tuned_to_mpi(OSMP_COLL_BARRIER, 0, s->size)) s = (osmp__mpi_pass(OSMP_COLL_BARRIER, R_TUNED), NULL);
    if (!s) return PMPI_Barrier(comm);
    return osmp__mpi_done(s, OSMP_COLL_BARRIER, s->multinode ? osmp__mpi_hier_barrier(s) : osmp_barrier(s->team));
}

OSMP_MPI_ENTRY(int, MPI_Bcast)(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Bcast);
    long bytes = osmp__mpi_bytes(dt, count);
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, OSMP_COLL_BCAST);
    if (s && !bytes && root >= 0 && root < s->size) return osmp__mpi_done(s, OSMP_COLL_BCAST, OSMP_OK);
    s = movement_ok(s, OSMP_COLL_BCAST, bytes, 1);
    if (!s || root < 0 || root >= s->size) return PMPI_Bcast(buf, count, dt, root, comm);
    void *v;
    int rc = osmp__mpi_view(buf, count, dt, bytes, s->rank == root, comm, &v);
    if (!rc)
        rc = s->multinode ? osmp__mpi_hier_bcast(s, v, (size_t)bytes, root)
                          : osmp_bcast(s->team, v, (size_t)bytes, OSMP_UINT8, root);
    osmp__mpi_unview(v, buf, count, dt, bytes, !rc && s->rank != root, comm);
    return osmp__mpi_done(s, OSMP_COLL_BCAST, rc);
}

OSMP_MPI_ENTRY(int, MPI_Allreduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Allreduce);
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, count, OSMP_COLL_ALLREDUCE, &odt, &oop);
    if (!s) return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    if (!count)
        return osmp__mpi_done(s, OSMP_COLL_ALLREDUCE, OSMP_OK); /* (every rank: the count is the same) */
    int rc = s->multinode ? osmp__mpi_hier_allreduce(s, sendbuf, recvbuf, count, dt, op, odt, oop)
                          : osmp_allreduce(s->team, osmp__mpi_in_place(sendbuf), recvbuf, (size_t)count, odt, oop);
    return osmp__mpi_done(s, OSMP_COLL_ALLREDUCE, rc);
}

OSMP_MPI_ENTRY(int, MPI_Reduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                      MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Reduce);
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, count, OSMP_COLL_REDUCE, &odt, &oop);
    if (!s || root < 0 || root >= s->size) return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    if (!count) return osmp__mpi_done(s, OSMP_COLL_REDUCE, OSMP_OK);
    int rc = s->multinode ? osmp__mpi_hier_reduce(s, sendbuf, recvbuf, count, dt, op, odt, oop, root)
                          : osmp_reduce(s->team, osmp__mpi_in_place(sendbuf), recvbuf, (size_t)count, odt, oop, root);
    return osmp__mpi_done(s, OSMP_COLL_REDUCE, rc);
}

/* The send and receive sides of a data-movement call, as contiguous views. A
 * side with bytes < 0 is absent on this rank (not the root, or in place): its
 * view stays NULL. */
struct side {
    const void *buf;
    int count;
    MPI_Datatype dt;
    long bytes;
    void *v;
};

/* Views of both sides; the receive side is packed too where it holds input (in place). */
static inline __attribute__((always_inline)) int open_views(struct side *in, struct side *out, int pack_out,
                                                            MPI_Comm comm)
{
    int rc = in->bytes < 0 ? OSMP_OK : osmp__mpi_view(in->buf, in->count, in->dt, in->bytes, 1, comm, &in->v);
    if (!rc && out->bytes >= 0) rc = osmp__mpi_view(out->buf, out->count, out->dt, out->bytes, pack_out, comm, &out->v);
    return rc;
}

/* Free the views, unpacking the receive side into the user's buffer if the call succeeded. */
static inline __attribute__((always_inline)) void close_views(struct side *in, struct side *out, int ok,
                                                              MPI_Comm comm)
{
    osmp__mpi_unview(in->v, (void *)(uintptr_t)in->buf, in->count, in->dt, in->bytes, 0, comm);
    osmp__mpi_unview(out->v, (void *)(uintptr_t)out->buf, out->count, out->dt, out->bytes, ok, comm);
}

#define USE_MPI (-1) /* from the shared bodies below: the caller makes the PMPI_ call */

/* Gather (the root receives size blocks) and scatter (the root sends them). */
static inline __attribute__((always_inline)) int rooted(osmp_coll_t c, const void *sendbuf, int scount,
                MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (!s) return USE_MPI;
    int size = s->size, gather = c == OSMP_COLL_GATHER;
    int at_root = s->rank == root, in_pl = at_root && (gather ? sendbuf : recvbuf) == MPI_IN_PLACE;
    /* One block as this rank describes it: by the root's vector type at the root, by its own side elsewhere. */
    long block = at_root == gather ? osmp__mpi_bytes(rdt, rcount) : osmp__mpi_bytes(sdt, scount);
    if (!block && root >= 0 && root < size)
        return osmp__mpi_done(s, c, OSMP_OK); /* every rank has no bytes */
    if (!movement_ok(s, c, block, size) || root < 0 || root >= size) return USE_MPI;
    /* Counts of the root's vector are only read at the root (elsewhere they may be anything). */
    struct side in, out;
    if (gather) {
        in = (struct side){sendbuf, scount, sdt, in_pl ? -1 : block, NULL};
        out = (struct side){recvbuf, at_root ? rcount * size : 0, rdt, at_root ? block * size : -1, NULL};
    } else {
        in = (struct side){sendbuf, at_root ? scount * size : 0, sdt, at_root ? block * size : -1, NULL};
        out = (struct side){recvbuf, rcount, rdt, in_pl ? -1 : block, NULL};
    }
    int rc = open_views(&in, &out, gather && in_pl, comm);
    if (!rc && gather)
        rc = s->multinode ? osmp__mpi_hier_gather(s, in.v, out.v, (size_t)block, root)
                          : osmp_gather(s->team, in_pl ? OSMP_IN_PLACE : in.v, out.v, (size_t)block, OSMP_UINT8, root);
    else if (!rc) /* in place, the root's block stays where it is in the send buffer */
        rc = s->multinode ? osmp__mpi_hier_scatter(s, in.v, in_pl ? (char *)in.v + (size_t)root * (size_t)block : out.v,
                                                   (size_t)block, root)
                          : osmp_scatter(s->team, in.v, in_pl ? OSMP_IN_PLACE : out.v, (size_t)block, OSMP_UINT8, root);
    close_views(&in, &out, !rc, comm);
    return osmp__mpi_done(s, c, rc);
}

/* Allgather (each rank sends one block) and alltoall (size blocks): every rank
 * receives size blocks; in place, they are also the input. */
static int everyone(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                    MPI_Datatype rdt, MPI_Comm comm)
{
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (!s) return USE_MPI;
    int size = s->size, in_pl = sendbuf == MPI_IN_PLACE;
    int sent = c == OSMP_COLL_ALLTOALL ? size : 1; /* blocks each rank sends */
    long block = osmp__mpi_bytes(rdt, rcount);
    if (!block) return osmp__mpi_done(s, c, OSMP_OK); /* every rank has no bytes */
    if (!movement_ok(s, c, block, size)) return USE_MPI;
    struct side in = {sendbuf, in_pl ? 0 : scount * sent, sdt, in_pl ? -1 : block * sent, NULL};
    struct side out = {recvbuf, rcount * size, rdt, block * size, NULL};
    int rc = open_views(&in, &out, in_pl, comm);
    const void *mine = in_pl ? OSMP_IN_PLACE : in.v;
    if (!rc && c == OSMP_COLL_ALLTOALL)
        rc = osmp_alltoall(s->team, mine, out.v, (size_t)block, OSMP_UINT8);
    else if (!rc)
        rc = s->multinode ? osmp__mpi_hier_allgather(s, in.v, out.v, (size_t)block)
                          : osmp_allgather(s->team, mine, out.v, (size_t)block, OSMP_UINT8);
    close_views(&in, &out, !rc, comm);
    return osmp__mpi_done(s, c, rc);
}

OSMP_MPI_ENTRY(int, MPI_Gather)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
    MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Gather);
    int rc = rooted(OSMP_COLL_GATHER, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm);
    return rc == USE_MPI ? PMPI_Gather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Scatter)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                       MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Scatter);
    int rc = rooted(OSMP_COLL_SCATTER, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm);
    return rc == USE_MPI ? PMPI_Scatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Allgather)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                         MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Allgather);
    int rc = everyone(OSMP_COLL_ALLGATHER, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    return rc == USE_MPI ? PMPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Alltoall)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Alltoall);
    int rc = everyone(OSMP_COLL_ALLTOALL, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    return rc == USE_MPI ? PMPI_Alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm) : rc;
}

/* Reduce_scatter_block, scan and exscan: inside a node only; across nodes they go to MPI. */
static inline __attribute__((always_inline)) int node_reduction(osmp_coll_t c, const void *sendbuf,
                                                                void *recvbuf, int count, MPI_Datatype dt,
                                                                MPI_Op op, MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, count, c, &odt, &oop);
    if (s && s->multinode) s = (osmp__mpi_pass(c, R_MULTINODE), NULL);
    if (!s) return USE_MPI;
    if (!count) return osmp__mpi_done(s, c, OSMP_OK);
    const void *in = osmp__mpi_in_place(sendbuf);
    int rc = c == OSMP_COLL_SCAN ? osmp_scan(s->team, in, recvbuf, (size_t)count, odt, oop)
             : c == OSMP_COLL_EXSCAN
                 ? osmp_exscan(s->team, in, recvbuf, (size_t)count, odt, oop)
                 : osmp_reduce_scatter_block(s->team, in, recvbuf, (size_t)count, odt, oop);
    return osmp__mpi_done(s, c, rc);
}

OSMP_MPI_ENTRY(int, MPI_Reduce_scatter_block)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                                    MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Reduce_scatter_block);
    int rc = node_reduction(OSMP_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dt, op, comm);
    return rc == USE_MPI ? PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, dt, op, comm) : rc;
}


/* ---------------------------------------------------------------- vector variants
 * On OSMP inside a node; across nodes they go to MPI (R_MULTINODE). Data moves
 * as bytes: each rank describes its own side (a view of its own buffer, packed
 * where its datatype is not plain), so ranks may use different datatypes. */

/* 0 when every one of the n counts is 0 (a negative one, an error, is not). */
static int any_count(const int *counts, int n)
{
    int any = 0;
    for (int r = 0; r < n; r++)
        any |= counts[r];
    return any;
}

static struct osmp__mpi_comm *vector_state(MPI_Comm comm, osmp_coll_t c)
{
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (s && s->multinode) return (void)osmp__mpi_pass(c, R_MULTINODE), NULL;
    return s;
}

/* Gatherv and scatterv: the root's side is the vector. */
static inline __attribute__((always_inline)) int rooted_v(osmp_coll_t c, const void *sendbuf, int scount,
                const int *scounts, const int *sdispls, MPI_Datatype sdt, void *recvbuf, int rcount,
                const int *rcounts, const int *rdispls, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    struct osmp__mpi_comm *s = vector_state(comm, c);
    if (!s || root < 0 || root >= s->size) return USE_MPI;
    int gather = c == OSMP_COLL_GATHERV, at_root = s->rank == root;
    int in_pl = at_root && (gather ? sendbuf : recvbuf) == MPI_IN_PLACE;
    struct osmp__mpi_vview vec;
    osmp__mpi_vinit(&vec, gather ? recvbuf : sendbuf, gather ? rcounts : scounts, gather ? rdispls : sdispls,
                    gather ? rdt : sdt);
    /* My own block, unless in place at the root. */
    const void *obuf = gather ? sendbuf : recvbuf;
    int ocount = gather ? scount : rcount;
    MPI_Datatype odt = gather ? sdt : rdt;
    long obytes = in_pl ? 0 : osmp__mpi_bytes(odt, ocount);
    void *own = NULL;
    int rc = obytes < 0 ? OSMP_ERR_INVALID_ARG : OSMP_OK;
    if (!rc && !in_pl) rc = osmp__mpi_view(obuf, ocount, odt, obytes, gather, comm, &own);
    if (!rc && at_root) rc = osmp__mpi_vopen(&vec, s->size, !gather || in_pl, comm);
    if (!rc && gather)
        rc = osmp_gatherv(s->team, in_pl ? OSMP_IN_PLACE : own, (size_t)obytes, vec.v, vec.bc, vec.bd, OSMP_UINT8,
                          root);
    else if (!rc)
        rc = osmp_scatterv(s->team, vec.v, vec.bc, vec.bd, in_pl ? OSMP_IN_PLACE : own, (size_t)obytes, OSMP_UINT8,
                           root);
    if (at_root) osmp__mpi_vclose(&vec, s->size, !rc && gather, comm);
    if (!in_pl) osmp__mpi_unview(own, (void *)(uintptr_t)obuf, ocount, odt, obytes, !rc && !gather, comm);
    return osmp__mpi_done(s, c, rc);
}

OSMP_MPI_ENTRY(int, MPI_Gatherv)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                       const int *displs, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Gatherv);
    int rc = rooted_v(OSMP_COLL_GATHERV, sendbuf, scount, NULL, NULL, sdt, recvbuf, 0, rcounts, displs, rdt, root,
                      comm);
    return rc == USE_MPI ? PMPI_Gatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Scatterv)(const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype sdt,
    void *recvbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Scatterv);
    int rc = rooted_v(OSMP_COLL_SCATTERV, sendbuf, 0, scounts, displs, sdt, recvbuf, rcount, NULL, NULL, rdt, root,
                      comm);
    return rc == USE_MPI ? PMPI_Scatterv(sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Allgatherv)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf,
    const int *rcounts, const int *displs, MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Allgatherv);
    struct osmp__mpi_comm *s = vector_state(comm, OSMP_COLL_ALLGATHERV);
    if (!s) return PMPI_Allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm);
    if (!any_count(rcounts, s->size))
        return osmp__mpi_done(s, OSMP_COLL_ALLGATHERV, OSMP_OK); /* every rank knows */
    int in_pl = sendbuf == MPI_IN_PLACE;
    struct osmp__mpi_vview vec;
    osmp__mpi_vinit(&vec, recvbuf, rcounts, displs, rdt);
    long sbytes = in_pl ? 0 : osmp__mpi_bytes(sdt, scount);
    void *own = NULL;
    int rc = sbytes < 0 ? OSMP_ERR_INVALID_ARG : OSMP_OK;
    if (!rc && !in_pl) rc = osmp__mpi_view(sendbuf, scount, sdt, sbytes, 1, comm, &own);
    if (!rc) rc = osmp__mpi_vopen(&vec, s->size, in_pl, comm);
    if (!rc)
        rc = osmp_allgatherv(s->team, in_pl ? OSMP_IN_PLACE : own, in_pl ? 0 : (size_t)sbytes, vec.v, vec.bc, vec.bd,
                             OSMP_UINT8);
    osmp__mpi_vclose(&vec, s->size, !rc, comm);
    if (!in_pl) osmp__mpi_unview(own, (void *)(uintptr_t)sendbuf, scount, sdt, sbytes, 0, comm);
    return osmp__mpi_done(s, OSMP_COLL_ALLGATHERV, rc);
}

OSMP_MPI_ENTRY(int, MPI_Alltoallv)(const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt,
                         void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Alltoallv);
    struct osmp__mpi_comm *s = vector_state(comm, OSMP_COLL_ALLTOALLV);
    if (!s) return PMPI_Alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm);
    int in_pl = sendbuf == MPI_IN_PLACE;
    struct osmp__mpi_vview in, out;
    osmp__mpi_vinit(&in, sendbuf, scounts, sdispls, sdt);
    osmp__mpi_vinit(&out, recvbuf, rcounts, rdispls, rdt);
    int rc = in_pl ? OSMP_OK : osmp__mpi_vopen(&in, s->size, 1, comm);
    if (!rc) rc = osmp__mpi_vopen(&out, s->size, in_pl, comm);
    if (!rc)
        rc = osmp_alltoallv(s->team, in_pl ? OSMP_IN_PLACE : in.v, in.bc, in.bd, out.v, out.bc, out.bd, OSMP_UINT8);
    if (!in_pl) osmp__mpi_vclose(&in, s->size, 0, comm);
    osmp__mpi_vclose(&out, s->size, !rc, comm);
    return osmp__mpi_done(s, OSMP_COLL_ALLTOALLV, rc);
}

OSMP_MPI_ENTRY(int, MPI_Reduce_scatter)(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt,
    MPI_Op op, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Reduce_scatter);
    osmp_dtype_t odt;
    osmp_op_t oop;
    /* (a count of 1: the counts differ by rank; 0 would skip the datatype's and the operation's lookups) */
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, 1, OSMP_COLL_REDUCE_SCATTER, &odt, &oop);
    if (s && s->multinode) s = (osmp__mpi_pass(OSMP_COLL_REDUCE_SCATTER, R_MULTINODE), NULL);
    if (!s) return PMPI_Reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm);
    if (!any_count(rcounts, s->size))
        return osmp__mpi_done(s, OSMP_COLL_REDUCE_SCATTER, OSMP_OK); /* every rank knows */
    size_t few[OSMP__MPI_VIEW_INLINE];
    size_t *counts = s->size <= OSMP__MPI_VIEW_INLINE ? few : malloc(sizeof(size_t) * (size_t)s->size);
    int rc = counts ? OSMP_OK : OSMP_ERR_NO_MEMORY;
    for (int r = 0; !rc && r < s->size; r++)
        if (rcounts[r] < 0) rc = OSMP_ERR_INVALID_ARG;
        else counts[r] = (size_t)rcounts[r];
    if (!rc) rc = osmp_reduce_scatter(s->team, osmp__mpi_in_place(sendbuf), recvbuf, counts, odt, oop);
    if (counts != few) free(counts);
    return osmp__mpi_done(s, OSMP_COLL_REDUCE_SCATTER, rc);
}

OSMP_MPI_ENTRY(int, MPI_Scan)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Scan);
    int rc = node_reduction(OSMP_COLL_SCAN, sendbuf, recvbuf, count, dt, op, comm);
    return rc == USE_MPI ? PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Exscan)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Exscan);
    int rc = node_reduction(OSMP_COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, comm);
    return rc == USE_MPI ? PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm) : rc;
}
