/*
 * mini-bench: OSMP against the MPI library in one run (until osmp-bench exists).
 *
 *   mpirun -n 2 mini-bench [--rounds R] [--iters I]
 *
 * For each case it alternates rounds of the MPI library's call and OSMP's call
 * on a team built from MPI_COMM_WORLD (MPI_Allgather is the out-of-band
 * exchange). A round is I calls after a barrier; its time is the average per
 * call, maximized over ranks (OSU's definition). The table shows the median of
 * the rounds and the ratio OSMP/MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

static int oob(void *ctx, const void *send, void *recv, size_t len)
{
    return MPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, *(MPI_Comm *)ctx) != MPI_SUCCESS;
}

enum kind { ALLREDUCE, BCAST, BARRIER };
struct bench_case {
    const char *name;
    enum kind kind;
    size_t bytes;
};

static osmp_team_t team;
static double *sbuf, *rbuf;

static void call(int use_osmp, const struct bench_case *c)
{
    int n = (int)(c->bytes / sizeof(double));
    if (c->kind == ALLREDUCE) {
        if (use_osmp) osmp_allreduce(team, sbuf, rbuf, (size_t)n, OSMP_DOUBLE, OSMP_SUM);
        else MPI_Allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (c->kind == BCAST) {
        if (use_osmp) osmp_bcast(team, rbuf, (size_t)n, OSMP_DOUBLE, 0);
        else MPI_Bcast(rbuf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else {
        if (use_osmp) osmp_barrier(team);
        else MPI_Barrier(MPI_COMM_WORLD);
    }
}

static double timed_round(int use_osmp, const struct bench_case *c, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) call(use_osmp, c);
    double mine = (MPI_Wtime() - t0) / iters, worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rounds = 15, iters = 2000, rank, size;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[++i]);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm = MPI_COMM_WORLD;
    struct osmp_team_params p = {.rank = rank, .size = size, .core = -1, .oob_allgather = oob, .oob_ctx = &comm};
    int rc = osmp_team_create(&p, &team);
    if (rc) {
        fprintf(stderr, "osmp_team_create: %s\n", osmp_status_str(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const struct bench_case cases[] = {
        {"barrier", BARRIER, 0},          {"allreduce 8 B", ALLREDUCE, 8},  {"bcast 8 B", BCAST, 8},
        {"allreduce 64 KiB", ALLREDUCE, 65536}, {"bcast 64 KiB", BCAST, 65536},
        {"allreduce 1 MiB", ALLREDUCE, 1 << 20}, {"bcast 1 MiB", BCAST, 1 << 20},
    };
    sbuf = calloc(1 << 17, sizeof(double));
    rbuf = calloc(1 << 17, sizeof(double));
    if (rank == 0) printf("%d processes, median of %d rounds\n%-18s %12s %12s %8s\n", size, rounds, "case", "OSMP us", "MPI us", "ratio");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const struct bench_case *c = &cases[k];
        int it = c->bytes >= (1 << 20) ? iters / 20 : c->bytes >= 65536 ? iters / 4 : iters;
        if (it < 10) it = 10;
        double *to = malloc(sizeof(double) * (size_t)rounds), *tm = malloc(sizeof(double) * (size_t)rounds);
        timed_round(1, c, it); /* warm-up, both */
        timed_round(0, c, it);
        for (int r = 0; r < rounds; r++) { /* interleaved, alternating who goes first */
            if (r % 2) {
                to[r] = timed_round(1, c, it);
                tm[r] = timed_round(0, c, it);
            } else {
                tm[r] = timed_round(0, c, it);
                to[r] = timed_round(1, c, it);
            }
        }
        qsort(to, (size_t)rounds, sizeof(double), cmp_double);
        qsort(tm, (size_t)rounds, sizeof(double), cmp_double);
        if (rank == 0)
            printf("%-18s %12.3f %12.3f %8.2f\n", c->name, to[rounds / 2] * 1e6, tm[rounds / 2] * 1e6,
                   to[rounds / 2] / tm[rounds / 2]);
        free(to);
        free(tm);
    }
    osmp_team_destroy(team);
    MPI_Finalize();
    return 0;
}
