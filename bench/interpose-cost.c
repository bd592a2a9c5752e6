/*
 * interpose-cost: what libosmp_mpi adds to a call. Times MPI_Allreduce of one
 * double on MPI_COMM_SELF (intercepted when the library is preloaded) against
 * osmp_allreduce on a team of one, best of 7 rounds of 2,000,000 calls each.
 *
 *   mpirun -n 1 -x LD_PRELOAD=$PWD/build/libosmp_mpi.so build/interpose-cost [ROUNDS CALLS]
 * Instructions instead of time, repeatable on a busy machine (per call: divide by CALLS * ROUNDS):
 *   mpirun -n 1 -x LD_PRELOAD=$PWD/build/libosmp_mpi.so valgrind --tool=callgrind \
 *     --toggle-collect=osmp_allreduce --toggle-collect=MPI_Allreduce build/interpose-cost 1 10000
 */
#include <stdlib.h>
#include <mpi.h>
#include <stdio.h>

#include "osmp.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    osmp_team_t team;
    struct osmp_team_params p = {.rank = 0, .size = 1};
    if (osmp_team_create(&p, &team) != OSMP_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    double x = 1, y = 0, best_osmp = 1e9, best_mpi = 1e9;
    int rounds = argc > 2 ? atoi(argv[1]) : 7, calls = argc > 2 ? atoi(argv[2]) : 2000000;
    for (int r = 0; r < rounds; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < calls; i++) osmp_allreduce(team, &x, &y, 1, OSMP_DOUBLE, OSMP_SUM);
        double t1 = MPI_Wtime();
        for (int i = 0; i < calls; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
        double t2 = MPI_Wtime();
        if ((t1 - t0) / calls < best_osmp) best_osmp = (t1 - t0) / calls;
        if ((t2 - t1) / calls < best_mpi) best_mpi = (t2 - t1) / calls;
    }
    printf("osmp_allreduce on a team of one: %.1f ns; MPI_Allreduce on MPI_COMM_SELF: %.1f ns; difference %.1f ns\n",
           best_osmp * 1e9, best_mpi * 1e9, (best_mpi - best_osmp) * 1e9);
    osmp_team_destroy(team);
    MPI_Finalize();
    return 0;
}
