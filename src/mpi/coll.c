/*
 * libosmp_mpi: the intercepted MPI_ collectives. Each decides, the same way on
 * every rank, whether OSMP runs the call (osmp_mpi.h says when), and runs it
 * inside the node (one OSMP call) or across nodes (hier.c).
 */
#include <limits.h>
#include <stdint.h>

#include "mpi/osmp_mpi.h"

/* Data movement runs on OSMP inside one node; bytes must fit the views. */
static struct osmp__mpi_comm *movement_state(MPI_Comm comm, osmp_coll_t c, long bytes)
{
    if (bytes < 0 || bytes > INT_MAX) return (void)osmp__mpi_pass(c, bytes < 0 ? R_DTYPE : R_COUNT_LIMIT), NULL;
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (s && s->multinode && c == OSMP_COLL_ALLTOALL) return (void)osmp__mpi_pass(c, R_MULTINODE), NULL;
    return s;
}

static struct osmp__mpi_comm *reduction_state(MPI_Comm comm, MPI_Datatype dt, MPI_Op op, int count, osmp_coll_t c,
                                          osmp_dtype_t *odt, osmp_op_t *oop)
{
    if (count < 0 || osmp__mpi_dtype(dt, odt)) return (void)osmp__mpi_pass(c, R_DTYPE), NULL;
    if (osmp__mpi_op(op, *odt, oop)) return (void)osmp__mpi_pass(c, R_OP), NULL;
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (s && s->size == 1 && (*oop == OSMP_LAND || *oop == OSMP_LOR || *oop == OSMP_LXOR))
        return (void)osmp__mpi_pass(c, R_LONE_LOGICAL), NULL;
    return s;
}

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, OSMP_COLL_BARRIER);
    if (!s) return PMPI_Barrier(comm);
    return osmp__mpi_done(s, OSMP_COLL_BARRIER, s->multinode ? osmp__mpi_hier_barrier(s) : osmp_barrier(s->team));
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    long bytes = osmp__mpi_bytes(dt, count);
    struct osmp__mpi_comm *s = movement_state(comm, OSMP_COLL_BCAST, bytes);
    if (!s || root < 0 || root >= s->size) return PMPI_Bcast(buf, count, dt, root, comm);
    void *v;
    int rc = osmp__mpi_view(buf, count, dt, bytes, s->rank == root, comm, &v);
    if (!rc)
        rc = s->multinode ? osmp__mpi_hier_bcast(s, v, (size_t)bytes, root)
                          : osmp_bcast(s->team, v, (size_t)bytes, OSMP_UINT8, root);
    osmp__mpi_unview(v, buf, count, dt, bytes, !rc && s->rank != root, comm);
    return osmp__mpi_done(s, OSMP_COLL_BCAST, rc);
}

EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, count, OSMP_COLL_ALLREDUCE, &odt, &oop);
    if (!s) return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    int rc = s->multinode ? osmp__mpi_hier_allreduce(s, sendbuf, recvbuf, count, dt, op, odt, oop)
                          : osmp_allreduce(s->team, osmp__mpi_in_place(sendbuf), recvbuf, (size_t)count, odt, oop);
    return osmp__mpi_done(s, OSMP_COLL_ALLREDUCE, rc);
}

EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                      MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, count, OSMP_COLL_REDUCE, &odt, &oop);
    if (!s || root < 0 || root >= s->size) return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    int rc = s->multinode ? osmp__mpi_hier_reduce(s, sendbuf, recvbuf, count, dt, op, odt, oop, root)
                          : osmp_reduce(s->team, osmp__mpi_in_place(sendbuf), recvbuf, (size_t)count, odt, oop, root);
    return osmp__mpi_done(s, OSMP_COLL_REDUCE, rc);
}

EXPORT int MPI_Gather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt,
                      int root, MPI_Comm comm)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int at_root = rank == root, in_pl = at_root && sendbuf == MPI_IN_PLACE;
    long block = at_root ? osmp__mpi_bytes(rdt, rcount) : osmp__mpi_bytes(sdt, scount);
    struct osmp__mpi_comm *s = movement_state(comm, OSMP_COLL_GATHER, block < 0 ? -1 : block * size);
    if (!s || root < 0 || root >= size) return PMPI_Gather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm);
    void *in = NULL, *out = NULL;
    int rc = in_pl ? OSMP_OK : osmp__mpi_view(sendbuf, scount, sdt, block, 1, comm, &in);
    if (!rc && at_root) rc = osmp__mpi_view(recvbuf, rcount * size, rdt, block * size, in_pl, comm, &out);
    if (!rc)
        rc = s->multinode ? osmp__mpi_hier_gather(s, in_pl ? NULL : in, out, (size_t)block, root)
                          : osmp_gather(s->team, in_pl ? OSMP_IN_PLACE : in, out, (size_t)block, OSMP_UINT8, root);
    osmp__mpi_unview(in, (void *)(uintptr_t)sendbuf, scount, sdt, block, 0, comm);
    osmp__mpi_unview(out, recvbuf, rcount * size, rdt, block * size, !rc, comm);
    return osmp__mpi_done(s, OSMP_COLL_GATHER, rc);
}

EXPORT int MPI_Allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                         MPI_Datatype rdt, MPI_Comm comm)
{
    int size;
    PMPI_Comm_size(comm, &size);
    int in_pl = sendbuf == MPI_IN_PLACE;
    long block = osmp__mpi_bytes(rdt, rcount);
    struct osmp__mpi_comm *s = movement_state(comm, OSMP_COLL_ALLGATHER, block < 0 ? -1 : block * size);
    if (!s) return PMPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    void *in = NULL, *out = NULL;
    int rc = in_pl ? OSMP_OK : osmp__mpi_view(sendbuf, scount, sdt, block, 1, comm, &in);
    if (!rc) rc = osmp__mpi_view(recvbuf, rcount * size, rdt, block * size, in_pl, comm, &out);
    if (!rc)
        rc = s->multinode ? osmp__mpi_hier_allgather(s, in_pl ? NULL : in, out, (size_t)block)
                          : osmp_allgather(s->team, in_pl ? OSMP_IN_PLACE : in, out, (size_t)block, OSMP_UINT8);
    osmp__mpi_unview(in, (void *)(uintptr_t)sendbuf, scount, sdt, block, 0, comm);
    osmp__mpi_unview(out, recvbuf, rcount * size, rdt, block * size, !rc, comm);
    return osmp__mpi_done(s, OSMP_COLL_ALLGATHER, rc);
}

EXPORT int MPI_Scatter(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                       MPI_Datatype rdt, int root, MPI_Comm comm)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int at_root = rank == root, in_pl = at_root && recvbuf == MPI_IN_PLACE;
    long block = at_root ? osmp__mpi_bytes(sdt, scount) : osmp__mpi_bytes(rdt, rcount);
    struct osmp__mpi_comm *s = movement_state(comm, OSMP_COLL_SCATTER, block < 0 ? -1 : block * size);
    if (!s || root < 0 || root >= size) return PMPI_Scatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm);
    void *in = NULL, *out = NULL;
    int rc = at_root ? osmp__mpi_view(sendbuf, scount * size, sdt, block * size, 1, comm, &in) : OSMP_OK;
    if (!rc && !in_pl) rc = osmp__mpi_view(recvbuf, rcount, rdt, block, 0, comm, &out);
    if (!rc)
        rc = s->multinode ? osmp__mpi_hier_scatter(s, in, in_pl ? (char *)in + (size_t)root * (size_t)block : out, (size_t)block, root)
                          : osmp_scatter(s->team, in, in_pl ? OSMP_IN_PLACE : out, (size_t)block, OSMP_UINT8, root);
    osmp__mpi_unview(in, (void *)(uintptr_t)sendbuf, scount * size, sdt, block * size, 0, comm);
    osmp__mpi_unview(out, recvbuf, rcount, rdt, block, !rc, comm);
    return osmp__mpi_done(s, OSMP_COLL_SCATTER, rc);
}

EXPORT int MPI_Alltoall(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm)
{
    int size;
    PMPI_Comm_size(comm, &size);
    int in_pl = sendbuf == MPI_IN_PLACE;
    long block = osmp__mpi_bytes(rdt, rcount);
    struct osmp__mpi_comm *s = movement_state(comm, OSMP_COLL_ALLTOALL, block < 0 ? -1 : block * size);
    if (!s) return PMPI_Alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    void *in = NULL, *out = NULL;
    int rc = in_pl ? OSMP_OK : osmp__mpi_view(sendbuf, scount * size, sdt, block * size, 1, comm, &in);
    if (!rc) rc = osmp__mpi_view(recvbuf, rcount * size, rdt, block * size, in_pl, comm, &out);
    if (!rc) rc = osmp_alltoall(s->team, in_pl ? OSMP_IN_PLACE : in, out, (size_t)block, OSMP_UINT8);
    osmp__mpi_unview(in, (void *)(uintptr_t)sendbuf, scount * size, sdt, block * size, 0, comm);
    osmp__mpi_unview(out, recvbuf, rcount * size, rdt, block * size, !rc, comm);
    return osmp__mpi_done(s, OSMP_COLL_ALLTOALL, rc);
}

EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                                    MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = reduction_state(comm, dt, op, count, OSMP_COLL_REDUCE_SCATTER_BLOCK, &odt, &oop);
    if (s && s->multinode) s = (osmp__mpi_pass(OSMP_COLL_REDUCE_SCATTER_BLOCK, R_MULTINODE), NULL);
    if (!s) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, dt, op, comm);
    return osmp__mpi_done(s, OSMP_COLL_REDUCE_SCATTER_BLOCK, osmp_reduce_scatter_block(s->team, osmp__mpi_in_place(sendbuf), recvbuf, (size_t)count, odt, oop));
}

