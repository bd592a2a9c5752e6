/*
 * libosmp_mpi across nodes: a communicator that spans several (pseudo-)nodes
 * runs each collective as OSMP inside every node and the MPI library between
 * the node leaders (local rank 0 of each node).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/osmp_mpi.h"

/* ---------------------------------------------------------------- no staging */

/* Barrier protocol: 1. node barrier; 2. leaders' barrier; 3. node barrier. */
int osmp__mpi_hier_barrier(struct osmp__mpi_comm *s)
{
    int rc = osmp_barrier(s->team); /* 1 */
    if (s->leaders != MPI_COMM_NULL) PMPI_Barrier(s->leaders); /* 2 */
    int rc2 = osmp_barrier(s->team); /* 3 */
    return rc ? rc : rc2;
}

/* Broadcast protocol: 1. the root's node gets it from the root; 2. the leaders
 * from the root's leader; 3. the other nodes from their leader. */
int osmp__mpi_hier_bcast(struct osmp__mpi_comm *s, void *buf, size_t bytes, int root)
{
    int rnode = s->node_of[root], mynode = s->node_of[s->rank], rc = OSMP_OK;
    if (mynode == rnode) rc = osmp_bcast(s->team, buf, bytes, OSMP_UINT8, s->local_rank_of[root]); /* 1 */
    if (s->leaders != MPI_COMM_NULL) PMPI_Bcast(buf, (int)bytes, MPI_BYTE, rnode, s->leaders);      /* 2 */
    if (mynode != rnode) rc = osmp_bcast(s->team, buf, bytes, OSMP_UINT8, 0);                       /* 3 */
    return rc;
}

/* Allreduce protocol: 1. reduce to each node's leader; 2. leaders' allreduce;
 * 3. broadcast in each node. */
int osmp__mpi_hier_allreduce(struct osmp__mpi_comm *s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                             MPI_Op op, osmp_dtype_t odt, osmp_op_t oop)
{
    const void *in = s->local_rank == 0 ? osmp__mpi_in_place(sendbuf) : sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int rc = osmp_reduce(s->team, in, recvbuf, (size_t)count, odt, oop, 0);                  /* 1 */
    if (s->leaders != MPI_COMM_NULL) PMPI_Allreduce(MPI_IN_PLACE, recvbuf, count, dt, op, s->leaders); /* 2 */
    int rc2 = osmp_bcast(s->team, recvbuf, (size_t)count, odt, 0);                           /* 3 */
    return rc ? rc : rc2;
}

/* Reduce protocol: 1. reduce each node to its leader (local rank 0); 2. the
 * leaders reduce to the root's leader; 3. which hands the result to the root if
 * it is not the root. */
int osmp__mpi_hier_reduce(struct osmp__mpi_comm *s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, osmp_dtype_t odt, osmp_op_t oop, int root)
{
    int rnode = s->node_of[root], lroot = s->local_rank_of[root], rc;
    int is_leader = s->local_rank == 0, at_root = s->rank == root;
    void *tmp = NULL;
    if (is_leader && !at_root && !(tmp = malloc((size_t)count * osmp_dtype_size(odt) + 1))) return MPI_ERR_NO_MEM;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (is_leader) /* 1 */
        rc = osmp_reduce(s->team, at_root ? osmp__mpi_in_place(sendbuf) : in, at_root ? recvbuf : tmp, (size_t)count,
                         odt, oop, 0);
    else
        rc = osmp_reduce(s->team, in, NULL, (size_t)count, odt, oop, 0);
    if (is_leader) {
        void *acc = at_root ? recvbuf : tmp;
        PMPI_Reduce(s->node_of[s->rank] == rnode ? MPI_IN_PLACE : acc, acc, count, dt, op, rnode, s->leaders); /* 2 */
        if (s->node_of[s->rank] == rnode && !at_root) PMPI_Send(acc, count, dt, lroot, 7171, s->local);       /* 3 */
    } else if (at_root) {
        PMPI_Recv(recvbuf, count, dt, 0, 7171, s->local, MPI_STATUS_IGNORE);
    }
    free(tmp);
    return rc;
}

/* ---------------------------------------------------------------- staging
 * Gather, allgather and scatter move blocks between nodes in node-major order
 * (each node's ranks contiguous, in local order); ranks of one node need not be
 * contiguous in comm. */

static void node_counts(struct osmp__mpi_comm *s, size_t block)
{
    for (int k = 0; k < s->nnodes; k++) {
        s->node_bytes[k] = (int)((size_t)(s->node_first[k + 1] - s->node_first[k]) * block);
        s->node_displ[k] = (int)((size_t)s->node_first[k] * block);
    }
}

static size_t node_major(const struct osmp__mpi_comm *s, int r)
{
    return (size_t)(s->node_first[s->node_of[r]] + s->local_rank_of[r]);
}

/* Gather protocol, several nodes:
 *   1. each node gathers its blocks at its leader (OSMP);
 *   2. the leaders gather their nodes' blocks at the root's leader (MPI);
 *   3. which passes them to the root (MPI, inside the node) if it is not the root;
 *   4. the root puts every block where its rank says. */
int osmp__mpi_hier_gather(struct osmp__mpi_comm *s, const void *in, void *out, size_t block, int root)
{
    int leader = s->local_rank == 0, at_root = s->rank == root, rnode = s->node_of[root];
    int mine_is_root_node = s->node_of[s->rank] == rnode;
    size_t total = block * (size_t)s->size;
    char *nb = leader ? malloc(block * (size_t)s->local_size + 1) : NULL;
    char *all = (leader && mine_is_root_node) || at_root ? malloc(total + 1) : NULL;
    if ((leader && !nb) || (((leader && mine_is_root_node) || at_root) && !all)) {
        free(nb);
        free(all);
        return OSMP_ERR_NO_MEMORY;
    }
    int rc = osmp_gather(s->team, in ? in : (const char *)out + (size_t)root * block, nb, block, OSMP_UINT8, 0); /* 1 */
    if (leader) { /* 2 */
        node_counts(s, block);
        PMPI_Gatherv(nb, s->node_bytes[s->node_of[s->rank]], MPI_BYTE, all, s->node_bytes, s->node_displ, MPI_BYTE,
                     rnode, s->leaders);
    }
    if (mine_is_root_node && s->local_rank_of[root] != 0) { /* 3 */
        if (leader) PMPI_Send(all, (int)total, MPI_BYTE, s->local_rank_of[root], 7173, s->local);
        if (at_root) PMPI_Recv(all, (int)total, MPI_BYTE, 0, 7173, s->local, MPI_STATUS_IGNORE);
    }
    for (int r = 0; at_root && r < s->size; r++) /* 4 */
        memcpy((char *)out + (size_t)r * block, all + node_major(s, r) * block, block);
    free(nb);
    free(all);
    return rc;
}

/* Allgather protocol, several nodes: 1. gather at each leader (OSMP); 2. the
 * leaders allgather their nodes' blocks (MPI); 3. each leader broadcasts the
 * whole vector in its node (OSMP); 4. every rank puts each block in place. */
int osmp__mpi_hier_allgather(struct osmp__mpi_comm *s, const void *in, void *out, size_t block)
{
    int leader = s->local_rank == 0;
    size_t total = block * (size_t)s->size;
    char *nb = leader ? malloc(block * (size_t)s->local_size + 1) : NULL, *all = malloc(total + 1);
    if ((leader && !nb) || !all) {
        free(nb);
        free(all);
        return OSMP_ERR_NO_MEMORY;
    }
    int rc = osmp_gather(s->team, in ? in : (const char *)out + (size_t)s->rank * block, nb, block, OSMP_UINT8, 0);
    if (leader) {
        node_counts(s, block);
        PMPI_Allgatherv(nb, s->node_bytes[s->node_of[s->rank]], MPI_BYTE, all, s->node_bytes, s->node_displ, MPI_BYTE,
                        s->leaders);
    }
    int rc2 = osmp_bcast(s->team, all, total, OSMP_UINT8, 0);
    for (int r = 0; r < s->size; r++) memcpy((char *)out + (size_t)r * block, all + node_major(s, r) * block, block);
    free(nb);
    free(all);
    return rc ? rc : rc2;
}

/* Scatter protocol, several nodes: 1. the root orders the blocks node-major and
 * hands them to its leader; 2. the leaders scatter node portions (MPI); 3. each
 * leader scatters its portion in its node (OSMP). */
int osmp__mpi_hier_scatter(struct osmp__mpi_comm *s, const void *in, void *out, size_t block, int root)
{
    int leader = s->local_rank == 0, at_root = s->rank == root, rnode = s->node_of[root];
    int mine_is_root_node = s->node_of[s->rank] == rnode;
    size_t total = block * (size_t)s->size;
    char *all = (leader && mine_is_root_node) || at_root ? malloc(total + 1) : NULL;
    char *nb = leader ? malloc(block * (size_t)s->local_size + 1) : NULL;
    if ((leader && !nb) || (((leader && mine_is_root_node) || at_root) && !all)) {
        free(nb);
        free(all);
        return OSMP_ERR_NO_MEMORY;
    }
    for (int r = 0; at_root && r < s->size; r++) /* 1 */
        memcpy(all + node_major(s, r) * block, (const char *)in + (size_t)r * block, block);
    if (mine_is_root_node && s->local_rank_of[root] != 0) {
        if (at_root) PMPI_Send(all, (int)total, MPI_BYTE, 0, 7174, s->local);
        if (leader) PMPI_Recv(all, (int)total, MPI_BYTE, s->local_rank_of[root], 7174, s->local, MPI_STATUS_IGNORE);
    }
    if (leader) { /* 2 */
        node_counts(s, block);
        PMPI_Scatterv(all, s->node_bytes, s->node_displ, MPI_BYTE, nb, s->node_bytes[s->node_of[s->rank]], MPI_BYTE,
                      rnode, s->leaders);
    }
    int rc = osmp_scatter(s->team, nb, out, block, OSMP_UINT8, 0); /* 3 */
    free(nb);
    free(all);
    return rc;
}

