/*
 * map-check: prints, per rank, where it runs and what MPI_Cart_create gave it,
 * for tests/mpi/map-check.py: "rank R cpus LIST cart C core K" with LIST the
 * affinity of the process right after MPI_Init (sched_getaffinity), C its rank
 * in a 1-D non-periodic grid of all ranks created with reorder = REORDER (argv[1]),
 * and "dist D nbrs A,B": its rank in a line graph 0-1-2-...-(n-1) made by
 * MPI_Dist_graph_create_adjacent (each rank declaring its neighbours by its
 * world rank, weight 1) with the same reorder, and the out neighbours it reports.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    cpu_set_t set;
    sched_getaffinity(0, sizeof(set), &set); /* first thing after MPI_Init: the binding the program sees */
    int n, r, reorder = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    char list[1024] = "";
    int len = 0;
    for (int c = 0; c < CPU_SETSIZE && len < 1000; c++)
        if (CPU_ISSET(c, &set)) len += snprintf(list + len, sizeof(list) - (size_t)len, "%s%d", len ? "," : "", c);
    int dims[1] = {n}, periods[1] = {0}, cr = -1;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, reorder, &cart);
    MPI_Comm_rank(cart, &cr);
    int src[2], nin = 0, nb[2] = {-1, -1}, dr = -1, indeg, outdeg, weighted;
    if (r > 0) src[nin++] = r - 1;
    if (r + 1 < n) src[nin++] = r + 1;
    MPI_Comm dist;
    int ones[2] = {1, 1}; /* weighted (MPI_UNWEIGHTED trips gcc's -Wstringop-overread on a constant address) */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, src, ones, nin, src, ones, MPI_INFO_NULL, reorder, &dist);
    MPI_Comm_rank(dist, &dr);
    MPI_Dist_graph_neighbors_count(dist, &indeg, &outdeg, &weighted);
    int ins[2], outs[2], inw[2], outw[2];
    MPI_Dist_graph_neighbors(dist, indeg, ins, inw, outdeg, outs, outw);
    for (int k = 0; k < outdeg && k < 2; k++) nb[k] = outs[k];
    if (nb[0] > nb[1] && nb[1] >= 0) {
        int x = nb[0];
        nb[0] = nb[1], nb[1] = x;
    }
    /* one line per rank, in rank order */
    for (int k = 0; k < n; k++) {
        if (k == r) {
            printf("rank %d cpus %s cart %d dist %d nbrs %d,%d\n", r, list, cr, dr, nb[0], nb[1]);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&cart);
    MPI_Comm_free(&dist);
    MPI_Finalize();
    return 0;
}
