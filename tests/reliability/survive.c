/*
 * survive: collectives under fire. Written against include/osmp.h only.
 *
 *   osmp-run -n N -- survive loop [--seconds S] [--suicide RANK:ITER]
 *       Runs a mix of collectives (checking every result) until S seconds have
 *       passed on rank 0 (default 30; every rank stops at the same iteration).
 *       A participant that gets OSMP_ERR_PEER_LOST or
 *       OSMP_ERR_TIMEOUT (from any call, osmp_init included) prints
 *       "survive: rank R: <status> in <call> after <ms> ms" and exits 3; any
 *       other failure exits 1. With --suicide, rank RANK kills itself with
 *       SIGKILL at iteration ITER (0: before osmp_init). With --late RANK:S,
 *       rank RANK sleeps S seconds before osmp_init (OSMP_JOIN_TIMEOUT).
 *   osmp-run -n N -- survive stress [--small K] [--large M]
 *       K allreduce of 8 bytes, then M allreduce of 1 MiB (default 1000 and
 *       100), every result checked; rank 0 prints the time of each part.
 *   osmp-run -n N -- survive mismatch
 *       With OSMP_CHECK_ARGS=1: rank 1 passes another count (then another root,
 *       dtype, op) and everybody must get OSMP_ERR_MISMATCH; the team must still
 *       work afterwards.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "osmp.h"

static int rank = -1, size;
static double t0;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fail(const char *what, int rc)
{
    if (rc == OSMP_ERR_PEER_LOST || rc == OSMP_ERR_TIMEOUT) {
        printf("survive: rank %d: %s in %s after %.0f ms\n", rank, osmp_status_name(rc), what, (now() - t0) * 1e3);
        fflush(stdout);
        exit(3);
    }
    fprintf(stderr, "survive: rank %d: %s: %s\n", rank, what, rc ? osmp_status_name(rc) : "wrong result");
    exit(1);
}

#define CALL(what, call)                                                                                     \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_) fail(what, rc_);                                                                            \
    } while (0)

/* While a team lives, no name of it may exist in /dev/shm (the creator, whose
 * pid the name carries, unlinks it once everyone has mapped it): checked here,
 * because osmp-run's cleanup at exit would hide a name left behind. */
static void no_segment_name(void)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "osmp-%d-", (int)getpid()); /* (then its pid namespace and random digits) */
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "survive: rank %d: /dev/shm/%s exists while its team is alive\n", rank, e->d_name);
            exit(1);
        }
    if (d) closedir(d);
}

static void loop(osmp_team_t w, double seconds, int victim, long at)
{
    enum { BIG = 1 << 20 };
    int64_t *big = malloc(BIG), *sum = malloc(BIG), *all = malloc(sizeof(int64_t) * (size_t)size);
    if (!big || !sum || !all) fail("malloc", 0);
    /* Rank 0's clock decides when all stop, carried by the allreduce: a rank
     * that stopped on its own clock would call osmp_finalize's barrier while
     * the others call the next allreduce, mismatched collectives whose result
     * is undefined (as in MPI). */
    for (long it = 1, stop = 0; !stop; it++) {
        if (rank == victim && it == at) raise(SIGKILL);
        int64_t v = rank + it, in[2] = {v, rank == 0 && now() - t0 >= seconds}, s[2];
        CALL("allreduce 8 B", osmp_allreduce(w, in, s, 2, OSMP_INT64, OSMP_SUM));
        if (s[0] != (int64_t)size * (size - 1) / 2 + (int64_t)size * it) fail("allreduce 8 B", 0);
        stop = s[1];
        CALL("barrier", osmp_barrier(w));
        if (it == 1) no_segment_name(); /* after everyone's first call: the team is complete */
        int64_t b = rank == (int)(it % size) ? it : -1;
        CALL("bcast 8 B", osmp_bcast(w, &b, 1, OSMP_INT64, (int)(it % size)));
        if (b != it) fail("bcast 8 B", 0);
        CALL("allgather", osmp_allgather(w, &v, all, 1, OSMP_INT64));
        for (int r = 0; r < size; r++)
            if (all[r] != r + it) fail("allgather", 0);
        if (it % 16 == 0) {
            size_t n = BIG / sizeof(int64_t);
            for (size_t i = 0; i < n; i++) big[i] = (int64_t)i + rank;
            CALL("allreduce 1 MiB", osmp_allreduce(w, big, sum, n, OSMP_INT64, OSMP_SUM));
            if (sum[n - 1] != (int64_t)(n - 1) * size + (int64_t)size * (size - 1) / 2) fail("allreduce 1 MiB", 0);
        }
    }
    free(big);
    free(sum);
    free(all);
}

static void stress(osmp_team_t w, long small, long large)
{
    double a = now();
    for (long i = 0; i < small; i++) {
        int64_t v = rank + i, s;
        CALL("allreduce 8 B", osmp_allreduce(w, &v, &s, 1, OSMP_INT64, OSMP_SUM));
        if (s != (int64_t)size * (size - 1) / 2 + (int64_t)size * i) fail("allreduce 8 B", 0);
    }
    double b = now();
    size_t n = (1 << 20) / sizeof(double);
    double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
    if (!in || !out) fail("malloc", 0);
    for (long i = 0; i < large; i++) {
        for (size_t k = 0; k < n; k += 4096) in[k] = (double)(rank + i);
        CALL("allreduce 1 MiB", osmp_allreduce(w, in, out, n, OSMP_DOUBLE, OSMP_SUM));
        for (size_t k = 0; k < n; k += 4096)
            if (out[k] != (double)size * (double)(size - 1) / 2 + (double)size * (double)i) fail("allreduce 1 MiB", 0);
    }
    double c = now();
    if (rank == 0)
        printf("survive stress: %d participants: %ld allreduce of 8 B in %.3f s (%.1f us each), %ld of 1 MiB in "
               "%.3f s (%.2f ms each)\n",
               size, small, b - a, small ? (b - a) / (double)small * 1e6 : 0.0, large, c - b,
               large ? (c - b) / (double)large * 1e3 : 0.0);
    free(in);
    free(out);
}

static void expect_mismatch(const char *what, int rc)
{
    if (rc != OSMP_ERR_MISMATCH) {
        fprintf(stderr, "survive: rank %d: %s gave %s, not OSMP_ERR_MISMATCH\n", rank, what, osmp_status_name(rc));
        exit(1);
    }
}

static void mismatch(osmp_team_t w)
{
    int64_t v[4] = {1, 2, 3, 4}, s[4];
    int odd = rank == 1;
    expect_mismatch("allreduce count", osmp_allreduce(w, v, s, odd ? 3 : 4, OSMP_INT64, OSMP_SUM));
    expect_mismatch("allreduce op", osmp_allreduce(w, v, s, 4, OSMP_INT64, odd ? OSMP_MAX : OSMP_SUM));
    expect_mismatch("bcast root", osmp_bcast(w, v, 4, OSMP_INT64, odd ? 1 : 0));
    expect_mismatch("bcast dtype", osmp_bcast(w, v, 4, odd ? OSMP_UINT64 : OSMP_INT64, 0));
    expect_mismatch("different collectives", odd ? osmp_barrier(w) : osmp_bcast(w, v, 1, OSMP_INT64, 0));
    CALL("allreduce after the mismatches", osmp_allreduce(w, v, s, 4, OSMP_INT64, OSMP_SUM));
    for (int i = 0; i < 4; i++)
        if (s[i] != v[i] * size) fail("allreduce after the mismatches", 0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    double seconds = 30;
    int victim = -1, late = -1, late_s = 0;
    long at = -1, small = 1000, large = 100;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--suicide") == 0 && sscanf(argv[i + 1], "%d:%ld", &victim, &at) == 2) continue;
        else if (strcmp(argv[i], "--late") == 0 && sscanf(argv[i + 1], "%d:%d", &late, &late_s) == 2) continue;
        else if (strcmp(argv[i], "--small") == 0) small = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--large") == 0) large = atol(argv[i + 1]);
        else break;
    }
    if (strcmp(mode, "loop") && strcmp(mode, "stress") && strcmp(mode, "mismatch")) {
        fprintf(stderr, "usage: survive loop [--seconds S] [--suicide RANK:ITER] [--late RANK:S] | stress [--small K] [--large M] | "
                        "mismatch\n");
        return 2;
    }
    t0 = now();
    const char *r = getenv("OSMP_RUN_RANK");
    if (r) rank = atoi(r);
    if (rank == victim && at == 0) raise(SIGKILL);
    if (rank == late) sleep((unsigned)late_s);
    osmp_team_t w;
    CALL("osmp_init", osmp_init(&w));
    rank = osmp_team_rank(w);
    size = osmp_team_size(w);
    if (strcmp(mode, "loop") == 0) loop(w, seconds, victim, at);
    if (strcmp(mode, "stress") == 0) stress(w, small, large);
    if (strcmp(mode, "mismatch") == 0) mismatch(w);
    CALL("osmp_finalize", osmp_finalize());
    return 0;
}
