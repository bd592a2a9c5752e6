/*
 * map-check: prints, per rank, where it runs and what MPI_Cart_create gave it,
 * for tests/mpi/map-check.py: "rank R cpus LIST cart C core K" with LIST the
 * affinity of the process right after MPI_Init (sched_getaffinity), C its rank
 * in a 1-D non-periodic grid of all ranks created with reorder = REORDER (argv[1]),
 * K the logical core it was bound to (-1 when the affinity holds several PUs).
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
    /* one line per rank, in rank order */
    for (int k = 0; k < n; k++) {
        if (k == r) {
            printf("rank %d cpus %s cart %d\n", r, list, cr);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
