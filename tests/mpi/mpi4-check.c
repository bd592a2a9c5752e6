/*
 * mpi4-check: MPI 4 big-count (MPI_*_c) collectives, which libosmp_mpi leaves
 * to the MPI library, and a persistent one (MPI_*_init: on OSMP since
 * src/mpi/persist.c; persist-check tests those), mixed on one communicator
 * with the blocking calls it runs on OSMP: every result must be right.
 * Built only where mpi.h says MPI_VERSION >= 4 (MPICH 4 here, not Open MPI 4.1).
 *   mpirun -n N [LD_PRELOAD=libosmp_mpich.so] mpi4-check
 */
#include <mpi.h>
#include <stdio.h>

static int failures;

static void expect(int ok, const char *what, int rank)
{
    if (!ok) {
        fprintf(stderr, "mpi4-check: rank %d: %s wrong\n", rank, what);
        failures++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x[3], y[3], p[3];
    long long want = (long long)size * (size + 1) / 2;
    MPI_Request req;
    MPI_Allreduce_init(x, p, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 3; i++) x[i] = rank + 1 + i * round;
        MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* on OSMP */
        MPI_Start(&req);                                            /* persistent: OSMP */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double z[3];
        MPI_Allreduce_c(x, z, (MPI_Count)3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* big count: MPI */
        for (int i = 0; i < 3; i++) {
            double w = (double)want + (double)size * i * round;
            expect(y[i] == w, "MPI_Allreduce", rank);
            expect(p[i] == w, "MPI_Allreduce_init", rank);
            expect(z[i] == w, "MPI_Allreduce_c", rank);
        }
        int b = rank == 0 ? 42 + round : -1;
        MPI_Bcast_c(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
        expect(b == 42 + round, "MPI_Bcast_c", rank);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&req);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi4-check: %s (%d ranks)\n", all ? "FAILED" : "all checks passed", size);
    MPI_Finalize();
    return all != 0;
}
