/*
 * libosmp_mpi: the intercepted MPI_ collectives. Each decides, the same way on
 * every rank, whether OSMP runs the call (osmp_mpi.h says when), and runs it
 * inside the node (one OSMP call) or across nodes (hier.c).
 *
 * The bodies serve nb.c's nonblocking MPI_I<op> calls too: with a request
 * (req non-NULL) the OSMP call is osmp_i<op>, the views of the user's buffers
 * live in the request and close at its completion, and only a communicator
 * inside one node runs on OSMP. persist.c's MPI_<op>_init calls run them the
 * same way with the request made persistent (osmp_<op>_init). The blocking calls pass req NULL, which the
 * compiler folds away.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi/osmp_mpi.h"

#define USE_MPI OSMP__MPI_USE_MPI /* from the bodies: the caller makes the PMPI_ call */
#define INLINE static inline __attribute__((always_inline))

/* Where a call keeps its views: on the stack (blocking: `stack`), or in the
 * request made for it (*w; NULL when there is no memory for it). */
INLINE struct osmp__mpi_views *views_of(struct osmp__mpi_views *stack, struct osmp__mpi_nb **w,
                                        struct osmp__mpi_comm *s, osmp_coll_t c, MPI_Request *req)
{
    *w = NULL;
    if (req && !(*w = osmp__mpi_nb_new(s, c))) return NULL;
    struct osmp__mpi_views *x = req ? &(*w)->views : stack;
    osmp__mpi_views_init(x);
    return x;
}

/* The end of a call with views: closed now (blocking), or at its completion (nb.c). */
INLINE int finish(struct osmp__mpi_comm *s, osmp_coll_t c, int rc, struct osmp__mpi_views *x, struct osmp__mpi_nb *w,
                  MPI_Request *req, MPI_Comm comm)
{
    if (!req) osmp__mpi_close(x, !rc, comm);
    return osmp__mpi_end(s, c, rc, w, req);
}

/* A request's OSMP call: osmp_i<op>, or for a persistent collective's _init (persist.c) osmp_<op>_init, which
 * takes the same arguments. */
#define IPOST(w, op, ...)                                                                                    \
    ((w)->persistent ? osmp_##op##_init(__VA_ARGS__, &(w)->oreq) : osmp_i##op(__VA_ARGS__, &(w)->oreq))

/* A call without views as a request: `post` is its IPOST call, on w_'s request. */
#define POST(s, c, req, post)                                                                                \
    __extension__({                                                                                          \
        struct osmp__mpi_nb *w_ = osmp__mpi_nb_new(s, c);                                                    \
        osmp__mpi_end(s, c, w_ ? (post) : OSMP_ERR_NO_MEMORY, w_, req);                                       \
    })

INLINE int barrier(MPI_Comm comm, MPI_Request *req)
{
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, OSMP_COLL_BARRIER), OSMP_COLL_BARRIER, !!req);
    if (s && osmp__mpi_tuned_to_mpi(OSMP_COLL_BARRIER, 0, s->team)) s = (osmp__mpi_pass(OSMP_COLL_BARRIER, R_TUNED), NULL);
    if (!s) return USE_MPI;
    if (req) return POST(s, OSMP_COLL_BARRIER, req, IPOST(w_, barrier, s->team));
    return osmp__mpi_done(s, OSMP_COLL_BARRIER, s->multinode ? osmp__mpi_hier_barrier(s) : osmp_barrier(s->team));
}

OSMP_MPI_ENTRY(int, MPI_Barrier)(MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Barrier);
    int rc = barrier(comm, NULL);
    return rc == USE_MPI ? PMPI_Barrier(comm) : rc;
}

INLINE int bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
    long bytes = osmp__mpi_bytes(dt, count);
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, OSMP_COLL_BCAST), OSMP_COLL_BCAST, !!req);
    if (s && !bytes && root >= 0 && root < s->size) return osmp__mpi_end(s, OSMP_COLL_BCAST, OSMP_OK, NULL, req);
    s = osmp__mpi_movement_ok(s, OSMP_COLL_BCAST, bytes, 1);
    if (!s || root < 0 || root >= s->size) return USE_MPI;
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, OSMP_COLL_BCAST, req)))
        return osmp__mpi_end(s, OSMP_COLL_BCAST, OSMP_ERR_NO_MEMORY, NULL, req);
    /* the root's buffer is input (packed), the others' output (unpacked) */
    struct osmp__mpi_side *b = &x->side[s->rank != root];
    *b = (struct osmp__mpi_side){buf, count, dt, bytes, NULL};
    int rc = osmp__mpi_view(buf, count, dt, bytes, s->rank == root, comm, &b->v);
    if (!rc)
        rc = req            ? IPOST(w, bcast, s->team, b->v, (size_t)bytes, OSMP_UINT8, root)
             : s->multinode ? osmp__mpi_hier_bcast(s, b->v, (size_t)bytes, root)
                            : osmp_bcast(s->team, b->v, (size_t)bytes, OSMP_UINT8, root);
    return finish(s, OSMP_COLL_BCAST, rc, x, w, req, comm);
}

OSMP_MPI_ENTRY(int, MPI_Bcast)(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Bcast);
    int rc = bcast(buf, count, dt, root, comm, NULL);
    return rc == USE_MPI ? PMPI_Bcast(buf, count, dt, root, comm) : rc;
}

/* Allreduce, and reduce (rooted) to root. */
INLINE int reduction(osmp_coll_t c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     int root, MPI_Comm comm, MPI_Request *req)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    int rooted = c == OSMP_COLL_REDUCE;
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_reduction_state(comm, dt, op, count, c, &odt, &oop), c,
                                                   !!req);
    if (!s || (rooted && (root < 0 || root >= s->size))) return USE_MPI;
    if (!count) return osmp__mpi_end(s, c, OSMP_OK, NULL, req); /* (every rank: the count is the same) */
    const void *in = osmp__mpi_in_place(sendbuf);
    size_t n = (size_t)count;
    if (req)
        return POST(s, c, req,
                    rooted ? IPOST(w_, reduce, s->team, in, recvbuf, n, odt, oop, root)
                           : IPOST(w_, allreduce, s->team, in, recvbuf, n, odt, oop));
    int rc = !s->multinode ? rooted ? osmp_reduce(s->team, in, recvbuf, n, odt, oop, root)
                                    : osmp_allreduce(s->team, in, recvbuf, n, odt, oop)
             : rooted ? osmp__mpi_hier_reduce(s, sendbuf, recvbuf, count, dt, op, odt, oop, root)
                      : osmp__mpi_hier_allreduce(s, sendbuf, recvbuf, count, dt, op, odt, oop);
    return osmp__mpi_done(s, c, rc);
}

OSMP_MPI_ENTRY(int, MPI_Allreduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Allreduce);
    int rc = reduction(OSMP_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, 0, comm, NULL);
    return rc == USE_MPI ? PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Reduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                      MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Reduce);
    int rc = reduction(OSMP_COLL_REDUCE, sendbuf, recvbuf, count, dt, op, root, comm, NULL);
    return rc == USE_MPI ? PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm) : rc;
}

/* Gather (the root receives size blocks) and scatter (the root sends them). */
INLINE int rooted(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                  MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, c), c, !!req);
    if (!s) return USE_MPI;
    int size = s->size, gather = c == OSMP_COLL_GATHER;
    int at_root = s->rank == root, in_pl = at_root && (gather ? sendbuf : recvbuf) == MPI_IN_PLACE;
    /* One block as this rank describes it: by the root's vector type at the root, by its own side elsewhere. */
    long block = at_root == gather ? osmp__mpi_bytes(rdt, rcount) : osmp__mpi_bytes(sdt, scount);
    if (!block && root >= 0 && root < size)
        return osmp__mpi_end(s, c, OSMP_OK, NULL, req); /* every rank has no bytes */
    if (!osmp__mpi_movement_ok(s, c, block, size) || root < 0 || root >= size) return USE_MPI;
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, c, req))) return osmp__mpi_end(s, c, OSMP_ERR_NO_MEMORY, NULL, req);
    /* Counts of the root's vector are only read at the root (elsewhere they may be anything). */
    struct osmp__mpi_side *in = &x->side[0], *out = &x->side[1];
    if (gather) {
        *in = (struct osmp__mpi_side){sendbuf, scount, sdt, in_pl ? -1 : block, NULL};
        *out = (struct osmp__mpi_side){recvbuf, at_root ? rcount * size : 0, rdt, at_root ? block * size : -1, NULL};
    } else {
        *in = (struct osmp__mpi_side){sendbuf, at_root ? scount * size : 0, sdt, at_root ? block * size : -1, NULL};
        *out = (struct osmp__mpi_side){recvbuf, rcount, rdt, in_pl ? -1 : block, NULL};
    }
    int rc = osmp__mpi_open_views(in, out, gather && in_pl, comm);
    if (!rc && gather) {
        const void *mine = in_pl ? OSMP_IN_PLACE : in->v;
        rc = req            ? IPOST(w, gather, s->team, mine, out->v, (size_t)block, OSMP_UINT8, root)
             : s->multinode ? osmp__mpi_hier_gather(s, in->v, out->v, (size_t)block, root)
                            : osmp_gather(s->team, mine, out->v, (size_t)block, OSMP_UINT8, root);
    } else if (!rc) { /* in place, the root's block stays where it is in the send buffer */
        void *mine = in_pl ? OSMP_IN_PLACE : out->v;
        rc = req ? IPOST(w, scatter, s->team, in->v, mine, (size_t)block, OSMP_UINT8, root)
             : s->multinode
                 ? osmp__mpi_hier_scatter(s, in->v, in_pl ? (char *)in->v + (size_t)root * (size_t)block : out->v,
                                          (size_t)block, root)
                 : osmp_scatter(s->team, in->v, mine, (size_t)block, OSMP_UINT8, root);
    }
    return finish(s, c, rc, x, w, req, comm);
}

/* Allgather (each rank sends one block) and alltoall (size blocks): every rank
 * receives size blocks; in place, they are also the input. */
static int everyone(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                    MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, c), c, !!req);
    if (!s) return USE_MPI;
    int size = s->size, in_pl = sendbuf == MPI_IN_PLACE;
    int sent = c == OSMP_COLL_ALLTOALL ? size : 1; /* blocks each rank sends */
    long block = osmp__mpi_bytes(rdt, rcount);
    if (!block) return osmp__mpi_end(s, c, OSMP_OK, NULL, req); /* every rank has no bytes */
    if (!osmp__mpi_movement_ok(s, c, block, size)) return USE_MPI;
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, c, req))) return osmp__mpi_end(s, c, OSMP_ERR_NO_MEMORY, NULL, req);
    struct osmp__mpi_side *in = &x->side[0], *out = &x->side[1];
    *in = (struct osmp__mpi_side){sendbuf, in_pl ? 0 : scount * sent, sdt, in_pl ? -1 : block * sent, NULL};
    *out = (struct osmp__mpi_side){recvbuf, rcount * size, rdt, block * size, NULL};
    int rc = osmp__mpi_open_views(in, out, in_pl, comm);
    const void *mine = in_pl ? OSMP_IN_PLACE : in->v;
    if (!rc && c == OSMP_COLL_ALLTOALL)
        rc = req ? IPOST(w, alltoall, s->team, mine, out->v, (size_t)block, OSMP_UINT8)
                 : osmp_alltoall(s->team, mine, out->v, (size_t)block, OSMP_UINT8);
    else if (!rc)
        rc = req            ? IPOST(w, allgather, s->team, mine, out->v, (size_t)block, OSMP_UINT8)
             : s->multinode ? osmp__mpi_hier_allgather(s, in->v, out->v, (size_t)block)
                            : osmp_allgather(s->team, mine, out->v, (size_t)block, OSMP_UINT8);
    return finish(s, c, rc, x, w, req, comm);
}

OSMP_MPI_ENTRY(int, MPI_Gather)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
    MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Gather);
    int rc = rooted(OSMP_COLL_GATHER, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, NULL);
    return rc == USE_MPI ? PMPI_Gather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Scatter)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                       MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Scatter);
    int rc = rooted(OSMP_COLL_SCATTER, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, NULL);
    return rc == USE_MPI ? PMPI_Scatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Allgather)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                         MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Allgather);
    int rc = everyone(OSMP_COLL_ALLGATHER, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, NULL);
    return rc == USE_MPI ? PMPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Alltoall)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Alltoall);
    int rc = everyone(OSMP_COLL_ALLTOALL, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, NULL);
    return rc == USE_MPI ? PMPI_Alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm) : rc;
}

/* Reduce_scatter_block, scan and exscan: inside a node only; across nodes they go to MPI. */
INLINE int node_reduction(osmp_coll_t c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                          MPI_Comm comm, MPI_Request *req)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_reduction_state(comm, dt, op, count, c, &odt, &oop), c, 1);
    if (!s) return USE_MPI;
    if (!count) return osmp__mpi_end(s, c, OSMP_OK, NULL, req);
    const void *in = osmp__mpi_in_place(sendbuf);
    size_t n = (size_t)count;
    if (req)
        return POST(s, c, req,
                    c == OSMP_COLL_SCAN     ? IPOST(w_, scan, s->team, in, recvbuf, n, odt, oop)
                    : c == OSMP_COLL_EXSCAN ? IPOST(w_, exscan, s->team, in, recvbuf, n, odt, oop)
                                            : IPOST(w_, reduce_scatter_block, s->team, in, recvbuf, n, odt, oop));
    int rc = c == OSMP_COLL_SCAN     ? osmp_scan(s->team, in, recvbuf, n, odt, oop)
             : c == OSMP_COLL_EXSCAN ? osmp_exscan(s->team, in, recvbuf, n, odt, oop)
                                     : osmp_reduce_scatter_block(s->team, in, recvbuf, n, odt, oop);
    return osmp__mpi_done(s, c, rc);
}

OSMP_MPI_ENTRY(int, MPI_Reduce_scatter_block)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                                    MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Reduce_scatter_block);
    int rc = node_reduction(OSMP_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, count, dt, op, comm, NULL);
    return rc == USE_MPI ? PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, dt, op, comm) : rc;
}


/* ---------------------------------------------------------------- vector variants
 * On OSMP inside a node; across nodes they go to MPI (R_MULTINODE). Data moves
 * as bytes: each rank describes its own side (a view of its own buffer, packed
 * where its datatype is not plain), so ranks may use different datatypes. */

/* Gatherv and scatterv: the root's side is the vector. */
INLINE int rooted_v(osmp_coll_t c, const void *sendbuf, int scount, const int *scounts, const int *sdispls,
                    MPI_Datatype sdt, void *recvbuf, int rcount, const int *rcounts, const int *rdispls,
                    MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, c), c, 1);
    if (!s || root < 0 || root >= s->size) return USE_MPI;
    int gather = c == OSMP_COLL_GATHERV, at_root = s->rank == root;
    int in_pl = at_root && (gather ? sendbuf : recvbuf) == MPI_IN_PLACE;
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, c, req))) return osmp__mpi_end(s, c, OSMP_ERR_NO_MEMORY, NULL, req);
    struct osmp__mpi_vview *vec = &x->vec[0];
    osmp__mpi_vinit(vec, gather ? recvbuf : sendbuf, gather ? rcounts : scounts, gather ? rdispls : sdispls,
                    gather ? rdt : sdt);
    x->nvec = at_root;
    x->n = s->size;
    x->vec_unpack[0] = gather;
    /* My own block, unless in place at the root: gatherv's input, scatterv's output. */
    const void *obuf = gather ? sendbuf : recvbuf;
    int ocount = gather ? scount : rcount;
    MPI_Datatype odt = gather ? sdt : rdt;
    long obytes = in_pl ? 0 : osmp__mpi_bytes(odt, ocount);
    struct osmp__mpi_side *own = &x->side[!gather];
    *own = (struct osmp__mpi_side){obuf, ocount, odt, obytes, NULL};
    int rc = obytes < 0 ? OSMP_ERR_INVALID_ARG : OSMP_OK;
    if (!rc && !in_pl) rc = osmp__mpi_view(obuf, ocount, odt, obytes, gather, comm, &own->v);
    if (!rc && at_root) rc = osmp__mpi_vopen(vec, s->size, !gather || in_pl, comm);
    void *mine = in_pl ? OSMP_IN_PLACE : own->v;
    if (!rc && gather)
        rc = req ? IPOST(w, gatherv, s->team, mine, (size_t)obytes, vec->v, vec->bc, vec->bd, OSMP_UINT8, root)
                 : osmp_gatherv(s->team, mine, (size_t)obytes, vec->v, vec->bc, vec->bd, OSMP_UINT8, root);
    else if (!rc)
        rc = req ? IPOST(w, scatterv, s->team, vec->v, vec->bc, vec->bd, mine, (size_t)obytes, OSMP_UINT8, root)
                 : osmp_scatterv(s->team, vec->v, vec->bc, vec->bd, mine, (size_t)obytes, OSMP_UINT8, root);
    return finish(s, c, rc, x, w, req, comm);
}

OSMP_MPI_ENTRY(int, MPI_Gatherv)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                       const int *displs, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Gatherv);
    int rc = rooted_v(OSMP_COLL_GATHERV, sendbuf, scount, NULL, NULL, sdt, recvbuf, 0, rcounts, displs, rdt, root,
                      comm, NULL);
    return rc == USE_MPI ? PMPI_Gatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Scatterv)(const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype sdt,
    void *recvbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Scatterv);
    int rc = rooted_v(OSMP_COLL_SCATTERV, sendbuf, 0, scounts, displs, sdt, recvbuf, rcount, NULL, NULL, rdt, root,
                      comm, NULL);
    return rc == USE_MPI ? PMPI_Scatterv(sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm) : rc;
}

INLINE int allgatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                      const int *displs, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    const osmp_coll_t c = OSMP_COLL_ALLGATHERV;
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, c), c, 1);
    if (!s) return USE_MPI;
    if (!osmp__mpi_any_count(rcounts, s->size)) return osmp__mpi_end(s, c, OSMP_OK, NULL, req); /* every rank knows */
    int in_pl = sendbuf == MPI_IN_PLACE;
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, c, req))) return osmp__mpi_end(s, c, OSMP_ERR_NO_MEMORY, NULL, req);
    struct osmp__mpi_vview *vec = &x->vec[0];
    osmp__mpi_vinit(vec, recvbuf, rcounts, displs, rdt);
    x->nvec = 1;
    x->n = s->size;
    x->vec_unpack[0] = 1;
    long sbytes = in_pl ? 0 : osmp__mpi_bytes(sdt, scount);
    struct osmp__mpi_side *own = &x->side[0];
    *own = (struct osmp__mpi_side){sendbuf, scount, sdt, sbytes, NULL};
    int rc = sbytes < 0 ? OSMP_ERR_INVALID_ARG : OSMP_OK;
    if (!rc && !in_pl) rc = osmp__mpi_view(sendbuf, scount, sdt, sbytes, 1, comm, &own->v);
    if (!rc) rc = osmp__mpi_vopen(vec, s->size, in_pl, comm);
    const void *mine = in_pl ? OSMP_IN_PLACE : own->v;
    size_t mbytes = in_pl ? 0 : (size_t)sbytes;
    if (!rc)
        rc = req ? IPOST(w, allgatherv, s->team, mine, mbytes, vec->v, vec->bc, vec->bd, OSMP_UINT8)
                 : osmp_allgatherv(s->team, mine, mbytes, vec->v, vec->bc, vec->bd, OSMP_UINT8);
    return finish(s, c, rc, x, w, req, comm);
}

OSMP_MPI_ENTRY(int, MPI_Allgatherv)(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf,
    const int *rcounts, const int *displs, MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Allgatherv);
    int rc = allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, NULL);
    return rc == USE_MPI ? PMPI_Allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm) : rc;
}

INLINE int alltoallv(const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt, void *recvbuf,
                     const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    const osmp_coll_t c = OSMP_COLL_ALLTOALLV;
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_state(comm, c), c, 1);
    if (!s) return USE_MPI;
    int in_pl = sendbuf == MPI_IN_PLACE;
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, c, req))) return osmp__mpi_end(s, c, OSMP_ERR_NO_MEMORY, NULL, req);
    struct osmp__mpi_vview *out = &x->vec[0], *in = &x->vec[1];
    osmp__mpi_vinit(in, sendbuf, scounts, sdispls, sdt);
    osmp__mpi_vinit(out, recvbuf, rcounts, rdispls, rdt);
    x->nvec = in_pl ? 1 : 2;
    x->n = s->size;
    x->vec_unpack[0] = 1;
    x->vec_unpack[1] = 0;
    int rc = in_pl ? OSMP_OK : osmp__mpi_vopen(in, s->size, 1, comm);
    if (!rc) rc = osmp__mpi_vopen(out, s->size, in_pl, comm);
    const void *mine = in_pl ? OSMP_IN_PLACE : in->v;
    if (!rc)
        rc = req ? IPOST(w, alltoallv, s->team, mine, in->bc, in->bd, out->v, out->bc, out->bd, OSMP_UINT8)
                 : osmp_alltoallv(s->team, mine, in->bc, in->bd, out->v, out->bc, out->bd, OSMP_UINT8);
    return finish(s, c, rc, x, w, req, comm);
}

OSMP_MPI_ENTRY(int, MPI_Alltoallv)(const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt,
                         void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Alltoallv);
    int rc = alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, NULL);
    return rc == USE_MPI ? PMPI_Alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm) : rc;
}

INLINE int reduce_scatter(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
                          MPI_Comm comm, MPI_Request *req)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    const osmp_coll_t c = OSMP_COLL_REDUCE_SCATTER;
    /* (a count of 1: the counts differ by rank; 0 would skip the datatype's and the operation's lookups) */
    struct osmp__mpi_comm *s = osmp__mpi_node_only(osmp__mpi_reduction_state(comm, dt, op, 1, c, &odt, &oop), c, 1);
    if (!s) return USE_MPI;
    if (!osmp__mpi_any_count(rcounts, s->size)) return osmp__mpi_end(s, c, OSMP_OK, NULL, req); /* every rank knows */
    struct osmp__mpi_views stack, *x;
    struct osmp__mpi_nb *w;
    if (!(x = views_of(&stack, &w, s, c, req))) return osmp__mpi_end(s, c, OSMP_ERR_NO_MEMORY, NULL, req);
    size_t *counts = s->size <= OSMP__MPI_VIEW_INLINE ? x->few : malloc(sizeof(size_t) * (size_t)s->size);
    x->counts = counts;
    int rc = counts ? OSMP_OK : OSMP_ERR_NO_MEMORY;
    for (int r = 0; !rc && r < s->size; r++)
        if (rcounts[r] < 0) rc = OSMP_ERR_INVALID_ARG;
        else counts[r] = (size_t)rcounts[r];
    const void *in = osmp__mpi_in_place(sendbuf);
    if (!rc)
        rc = req ? IPOST(w, reduce_scatter, s->team, in, recvbuf, counts, odt, oop)
                 : osmp_reduce_scatter(s->team, in, recvbuf, counts, odt, oop);
    return finish(s, c, rc, x, w, req, comm);
}

OSMP_MPI_ENTRY(int, MPI_Reduce_scatter)(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt,
    MPI_Op op, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Reduce_scatter);
    int rc = reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm, NULL);
    return rc == USE_MPI ? PMPI_Reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Scan)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Scan);
    int rc = node_reduction(OSMP_COLL_SCAN, sendbuf, recvbuf, count, dt, op, comm, NULL);
    return rc == USE_MPI ? PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm) : rc;
}

OSMP_MPI_ENTRY(int, MPI_Exscan)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm)
{
    OSMP_MPI_ENTERED(MPI_Exscan);
    int rc = node_reduction(OSMP_COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, NULL);
    return rc == USE_MPI ? PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm) : rc;
}

/* ---------------------------------------------------------------- for nb.c (osmp_mpi.h) */

int osmp__mpi_nb_barrier(MPI_Comm comm, MPI_Request *req)
{
    return barrier(comm, req);
}

int osmp__mpi_nb_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
    return bcast(buf, count, dt, root, comm, req);
}

int osmp__mpi_nb_reduction(osmp_coll_t c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                           int root, MPI_Comm comm, MPI_Request *req)
{
    return reduction(c, sendbuf, recvbuf, count, dt, op, root, comm, req);
}

int osmp__mpi_nb_rooted(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return rooted(c, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, req);
}

int osmp__mpi_nb_everyone(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf,
                          int rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return everyone(c, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req);
}

int osmp__mpi_nb_node_reduction(osmp_coll_t c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                                MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return node_reduction(c, sendbuf, recvbuf, count, dt, op, comm, req);
}

int osmp__mpi_nb_rooted_v(osmp_coll_t c, const void *sendbuf, int scount, const int *scounts, const int *sdispls,
                          MPI_Datatype sdt, void *recvbuf, int rcount, const int *rcounts, const int *rdispls,
                          MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req)
{
    return rooted_v(c, sendbuf, scount, scounts, sdispls, sdt, recvbuf, rcount, rcounts, rdispls, rdt, root, comm,
                    req);
}

int osmp__mpi_nb_allgatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                            const int *displs, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req)
{
    return allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, req);
}

int osmp__mpi_nb_alltoallv(const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt,
                           void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm,
                           MPI_Request *req)
{
    return alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, req);
}

int osmp__mpi_nb_reduce_scatter(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
                                MPI_Comm comm, MPI_Request *req)
{
    return reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm, req);
}
