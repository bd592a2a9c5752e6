/*
 * agree-mpi: collectives on MPI_COMM_WORLD and on a duplicate of it, their
 * results checked exactly, and where libosmp_mpi ran the allreduces: each rank
 * prints "agree-mpi: rank R (pid P): allreduce A on OSMP, P passed to MPI, results
 * exact" (osmp_mpi_stat; with its pid). tests/mpi/agree-mpi.sh runs it with one rank's
 * topology made different, where every communicator must go to MPI and the
 * program run on (issue 45).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rank, size;

static void check(MPI_Comm comm, const char *name)
{
    enum { N = 1000 };
    static int in[N], out[N], all[64 * 4];
    for (int i = 0; i < N; i++) in[i] = rank * 1000 + i;
    MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < N; i++)
        if (out[i] != 1000 * size * (size - 1) / 2 + size * i) {
            fprintf(stderr, "agree-mpi: rank %d: %s allreduce element %d: %d\n", rank, name, i, out[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    int b = rank == size - 1 ? 77 : 0, mine[4] = {rank, -rank, 3 * rank, 7};
    MPI_Bcast(&b, 1, MPI_INT, size - 1, comm);
    MPI_Allgather(mine, 4, MPI_INT, all, 4, MPI_INT, comm);
    for (int r = 0; r < size && size <= 64; r++)
        if (all[4 * r] != r || all[4 * r + 1] != -r || all[4 * r + 2] != 3 * r || all[4 * r + 3] != 7 || b != 77) {
            fprintf(stderr, "agree-mpi: rank %d: %s bcast or allgather wrong at rank %d\n", rank, name, r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(MPI_COMM_WORLD, "world");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    check(dup, "dup");
    MPI_Comm_free(&dup);
    long acc = -1, passed = -1;
    int (*stat)(const char *, long *, long *) = (int (*)(const char *, long *, long *))dlsym(RTLD_DEFAULT, "osmp_mpi_stat");
    if (stat) stat("allreduce", &acc, &passed);
    printf("agree-mpi: rank %d (pid %d): allreduce %ld on OSMP, %ld passed to MPI, results exact\n", rank, (int)getpid(), acc,
           passed);
    MPI_Finalize();
    return 0;
}
