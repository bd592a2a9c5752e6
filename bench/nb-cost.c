/*
 * nb-cost: what a nonblocking call adds to the blocking one in OSMP's own API.
 * Times osmp_allreduce against osmp_iallreduce + osmp_wait of the same doubles,
 * interleaved round by round, median of the rounds (rank 0 prints).
 *
 *   build/tools/osmp-run -n 2 -- build/nb-cost [DOUBLES [ROUNDS CALLS [SLEEP_US]]]   (default 1 11 20000)
 * With SLEEP_US, also what is left for osmp_wait after the caller slept
 * SLEEP_US between post and wait (the core free meanwhile: what
 * OSMP_PROGRESS=thread can move in the background), median over the calls.
 * Instructions instead of time, repeatable on a busy machine (per call: divide
 * the inclusive counts of osmp_allreduce, and of osmp_iallreduce plus
 * osmp_wait, by ROUNDS * CALLS):
 *   OSMP_SPIN=0 build/tools/osmp-run -n 2 -- valgrind --tool=callgrind --callgrind-out-file=cg.%p \
 *     build/nb-cost 1 11 20000
 *   callgrind_annotate --inclusive=yes cg.PID | grep -E 'osmp_(i?allreduce|wait) '
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osmp.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_) {                                                                                           \
            fprintf(stderr, "nb-cost: %s: %s\n", #call, osmp_status_name(rc_));                              \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1;
    int rounds = argc > 3 ? atoi(argv[2]) : 11, calls = argc > 3 ? atoi(argv[3]) : 20000;
    if (!n || rounds < 1 || rounds > 1000 || calls < 1) {
        fprintf(stderr, "usage: nb-cost [DOUBLES [ROUNDS CALLS]]\n");
        return 2;
    }
    osmp_team_t team;
    CHECK(osmp_init(&team));
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    double *blocking = malloc((size_t)rounds * sizeof(double)), *nb = malloc((size_t)rounds * sizeof(double));
    if (!x || !y || !blocking || !nb) return 1;
    for (size_t i = 0; i < n; i++) x[i] = osmp_team_rank(team);
    for (int r = 0; r < rounds; r++) {
        CHECK(osmp_barrier(team));
        double t0 = now_us();
        for (int i = 0; i < calls; i++) CHECK(osmp_allreduce(team, x, y, n, OSMP_DOUBLE, OSMP_SUM));
        blocking[r] = (now_us() - t0) / calls;
        CHECK(osmp_barrier(team));
        t0 = now_us();
        for (int i = 0; i < calls; i++) {
            osmp_request_t q;
            CHECK(osmp_iallreduce(team, x, y, n, OSMP_DOUBLE, OSMP_SUM, &q));
            CHECK(osmp_wait(&q));
        }
        nb[r] = (now_us() - t0) / calls;
    }
    long sleep_us = argc > 4 ? atol(argv[4]) : 0;
    double left = 0;
    if (sleep_us > 0) {
        double *w = malloc((size_t)calls * sizeof(double));
        if (!w) return 1;
        for (int i = 0; i < calls; i++) {
            osmp_request_t q;
            CHECK(osmp_barrier(team));
            CHECK(osmp_iallreduce(team, x, y, n, OSMP_DOUBLE, OSMP_SUM, &q));
            struct timespec nap = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
            nanosleep(&nap, NULL);
            double t0 = now_us();
            CHECK(osmp_wait(&q));
            w[i] = now_us() - t0;
        }
        qsort(w, (size_t)calls, sizeof(double), cmp);
        left = w[calls / 2];
        free(w);
    }
    qsort(blocking, (size_t)rounds, sizeof(double), cmp);
    qsort(nb, (size_t)rounds, sizeof(double), cmp);
    if (osmp_team_rank(team) == 0)
        printf("nb-cost: %zu doubles, %d participants, %d rounds of %d calls: osmp_allreduce %.3f us, "
               "osmp_iallreduce + osmp_wait %.3f us, ratio %.2f\n",
               n, osmp_team_size(team), rounds, calls, blocking[rounds / 2], nb[rounds / 2],
               nb[rounds / 2] / blocking[rounds / 2]);
    if (osmp_team_rank(team) == 0 && sleep_us > 0)
        printf("nb-cost: posted, slept %ld us, then osmp_wait took %.3f us (median of %d)\n", sleep_us, left, calls);
    free(x);
    free(y);
    free(blocking);
    free(nb);
    CHECK(osmp_finalize());
    return 0;
}
