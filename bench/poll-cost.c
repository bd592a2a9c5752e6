/*
 * poll-cost: what one call of the MPI library's progress costs when nothing is
 * in flight, the call a rank waiting inside OSMP makes (docs/design.md section
 * 5, "The runtime's progress while a participant waits"): opal_progress under
 * Open MPI, and PMPI_Iprobe on MPI_COMM_WORLD for a message from oneself under
 * libosmp_mpi's tag under both (MPICH 4.0.2 has no MPIX_Stream_progress).
 * Prints each rank's mean over CALLS calls.
 *
 *   mpirun -n 2 build/poll-cost-ompi [CALLS]          (default 200000)
 *   mpirun.mpich -n 2 build/poll-cost-mpich [CALLS]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, flag, n = argc > 1 ? atoi(argv[1]) : 200000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int (*progress)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "opal_progress");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; progress && i < n; i++) progress();
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; i++) PMPI_Iprobe(rank, 32749, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    double t2 = MPI_Wtime();
    if (progress) printf("poll-cost: rank %d: opal_progress %.0f ns\n", rank, (t1 - t0) / n * 1e9);
    printf("poll-cost: rank %d: PMPI_Iprobe %.0f ns\n", rank, (t2 - t1) / n * 1e9);
    MPI_Finalize();
    return 0;
}
