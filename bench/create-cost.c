/*
 * create-cost: the time of osmp_team_create (and of osmp_team_destroy) for a
 * team of every process osmp-run started, its out-of-band allgather run on
 * the world team itself (so the exchange costs what an OSMP allgather does,
 * not a launcher's rendezvous). Rank 0 prints the median and the mean over
 * the creations, in microseconds.
 *
 *   osmp-run -n N [--topology X.xml --bind scatter] -- create-cost [TEAMS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osmp.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int world_allgather(void *ctx, const void *send, void *recv, size_t len)
{
    return osmp_allgather(*(osmp_team_t *)ctx, send, recv, len, OSMP_UINT8);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int teams = argc > 1 ? atoi(argv[1]) : 50;
    osmp_team_t world, team;
    int rc = osmp_init(&world);
    if (rc) {
        fprintf(stderr, "create-cost: osmp_init: %s\n", osmp_status_str(rc));
        return 1;
    }
    int rank = osmp_team_rank(world), size = osmp_team_size(world);
    double *t = calloc((size_t)teams, sizeof(double)), sum = 0;
    if (!t || teams < 1) return 1;
    for (int i = 0; i < teams; i++) {
        struct osmp_team_params p = {.rank = rank, .size = size, .oob_allgather = world_allgather, .oob_ctx = &world};
        osmp_barrier(world);
        double t0 = now_us();
        rc = osmp_team_create(&p, &team);
        t[i] = now_us() - t0;
        sum += t[i];
        if (rc) {
            fprintf(stderr, "create-cost: rank %d: osmp_team_create: %s\n", rank, osmp_status_str(rc));
            return 1;
        }
        osmp_team_destroy(team);
    }
    qsort(t, (size_t)teams, sizeof(double), cmp);
    if (rank == 0)
        printf("create-cost: %d participants, %d creations: median %.0f us, mean %.0f us\n", size, teams,
               t[teams / 2], sum / teams);
    free(t);
    osmp_finalize();
    return 0;
}
