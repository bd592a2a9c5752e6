/*
 * After a failure inside OSMP, the next communicator works (issue 16). Run
 * with OSMP_FAULT=alloc:N@R (or copy:, seg:) and MPI_ERRORS_RETURN: a
 * long-lived dup builds the team first, then each attempt dups the world
 * (sharing that team), runs five collectives and checks their values; the
 * ranks agree through PMPI_Allreduce (not intercepted) whether the attempt
 * worked. A failed team must not be shared again: the attempt after a failure
 * gets a new team and must work. Exit 0 when an attempt worked within three.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int run_ops(MPI_Comm c)
{
    enum { N = 5000, B = 40000 };
    int ok = 1;
    int *in = malloc(sizeof(int) * N * (size_t)size), *out = malloc(sizeof(int) * N * (size_t)size);
    char *buf = malloc(B);
    for (int i = 0; i < N * size; i++) in[i] = rank * 7 + i;
    ok &= MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, c) == MPI_SUCCESS;
    for (int i = 0; ok && i < N; i++) ok = out[i] == 7 * size * (size - 1) / 2 + size * i;
    for (int i = 0; i < B; i++) buf[i] = (char)(rank == 1 % size ? i * 3 + 1 : 0);
    ok &= MPI_Bcast(buf, B, MPI_CHAR, 1 % size, c) == MPI_SUCCESS;
    for (int i = 0; ok && i < B; i++) ok = buf[i] == (char)(i * 3 + 1);
    ok &= MPI_Allgather(in, N, MPI_INT, out, N, MPI_INT, c) == MPI_SUCCESS;
    for (int r = 0; ok && r < size; r++)
        for (int i = 0; ok && i < N; i++) ok = out[r * N + i] == r * 7 + i;
    ok &= MPI_Alltoall(in, N, MPI_INT, out, N, MPI_INT, c) == MPI_SUCCESS;
    for (int r = 0; ok && r < size; r++)
        for (int i = 0; ok && i < N; i++) ok = out[r * N + i] == r * 7 + rank * N + i;
    ok &= MPI_Reduce_scatter_block(in, out, N, MPI_INT, MPI_SUM, c) == MPI_SUCCESS;
    for (int i = 0; ok && i < N; i++) ok = out[i] == 7 * size * (size - 1) / 2 + size * (rank * N + i);
    free(in);
    free(out);
    free(buf);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* dups inherit it */
    MPI_Comm keep;
    MPI_Comm_dup(MPI_COMM_WORLD, &keep);
    MPI_Barrier(keep); /* its team: the attempts' dups share it until it fails */
    int worked = 0, attempts = 0;
    while (!worked && attempts < 3) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        int ok = run_ops(c);
        PMPI_Allreduce(&ok, &worked, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Comm_free(&c);
        attempts++;
    }
    MPI_Comm_free(&keep);
    if (rank == 0) printf("fault-next: %s after %d attempt(s)\n", worked ? "worked" : "FAILED", attempts);
    MPI_Finalize();
    return !worked;
}
