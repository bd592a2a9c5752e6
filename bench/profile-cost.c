/*
 * profile-cost: what OSMP_PROFILE adds to a point-to-point send. Times a
 * 1-byte message to oneself (MPI_Irecv, MPI_Send, MPI_Wait) on MPI_COMM_WORLD
 * and on a duplicate of it (whose ranks go through the translation table),
 * best of 7 rounds of 200,000 messages each. Run it three ways:
 *
 *   mpirun -n 1 build/profile-cost                                          # no libosmp_mpi
 *   mpirun -n 1 -x LD_PRELOAD=$PWD/build/libosmp_mpi.so build/profile-cost   # profiling off
 *   OSMP_PROFILE=/tmp/p.mat mpirun -n 1 -x LD_PRELOAD=$PWD/build/libosmp_mpi.so -x OSMP_PROFILE build/profile-cost
 * Instructions per send, repeatable on a busy machine: the difference between
 * `1 20000` and `1 10000` (ROUNDS CALLS) divided by 20,000, under
 *   mpirun -n 1 [-x LD_PRELOAD=... [-x OSMP_PROFILE]] valgrind --tool=callgrind \
 *     --toggle-collect=MPI_Send build/profile-cost 1 N         (--toggle-collect=PMPI_Send without the library)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double per_message(MPI_Comm comm, int rounds, int calls)
{
    char s = 1, r;
    MPI_Request rq;
    double best = 1e9;
    for (int k = 0; k < rounds; k++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < calls; i++) {
            MPI_Irecv(&r, 1, MPI_CHAR, 0, 0, comm, &rq);
            MPI_Send(&s, 1, MPI_CHAR, 0, 0, comm);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        double t = (MPI_Wtime() - t0) / calls;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = argc > 2 ? atoi(argv[1]) : 7, calls = argc > 2 ? atoi(argv[2]) : 200000;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    double w = per_message(MPI_COMM_WORLD, rounds, calls), d = per_message(dup, rounds, calls);
    printf("1-byte message to self: MPI_COMM_WORLD %.1f ns, a duplicate %.1f ns\n", w * 1e9, d * 1e9);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
