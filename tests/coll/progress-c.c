/*
 * progress-c: OSMP's C API keeps the progress promise of include/osmp.h
 * ("Progress"): a posted request completes while its participants block
 * outside OSMP, waiting for one another there (issue 45's program without
 * MPI).
 *
 *   osmp-run -n N -- progress-c [--expect-stuck SECONDS]
 *
 * Rank 0 holds an exclusive lock on a file; every rank posts
 * osmp_iallgather of 4 ints; rank 0 completes it with an osmp_test loop and
 * only then lets the lock go; the others block in flock() for a shared lock
 * (outside OSMP, as in a blocking MPI_Send to rank 0) and only then
 * osmp_wait. Rank 0's test loop completes only if something moves the others'
 * parts meanwhile: OSMP's progress thread (OSMP_PROGRESS=auto or thread).
 * Exact results. A rank gives up after 60 s ("no progress") and exits 2.
 *
 * --expect-stuck S (with OSMP_PROGRESS=none, an algorithm that needs every
 * rank's steps, e.g. OSMP_ALLGATHER_ALG=ring, and more than 2 ranks): rank 0's
 * test loop must still be unfinished after S seconds (the test above can
 * fail); it then lets the lock go and everyone completes by osmp_wait.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "osmp.h"

static int me = -1;
static char path[64];

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, "progress-c: rank %d: ", me);                                                        \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        if (me == 0) unlink(path);                                                                           \
        exit(1);                                                                                             \
    } while (0)
#define OK(call)                                                                                             \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != OSMP_OK) FAIL("%s returned %s", #call, osmp_status_name(rc_));                            \
    } while (0)

static void on_alarm(int sig)
{
    (void)sig;
    char line[128];
    int n = snprintf(line, sizeof(line), "progress-c: rank %d: no progress in 60 s\n", me);
    if (write(2, line, (size_t)n) < 0) {}
    if (me == 0) unlink(path);
    _exit(2);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double stuck = 0;
    if (argc == 3 && !strcmp(argv[1], "--expect-stuck")) stuck = atof(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: progress-c [--expect-stuck SECONDS]\n");
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm(60);
    osmp_team_t t;
    OK(osmp_init(&t));
    me = osmp_team_rank(t);
    int n = osmp_team_size(t);
    /* The lock's file: one per osmp-run job (its processes share their parent). */
    snprintf(path, sizeof(path), "/tmp/osmp-progress-c.%d", (int)getppid());
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0) FAIL("cannot open %s", path);
    if (me == 0 && flock(fd, LOCK_EX)) FAIL("flock");
    OK(osmp_barrier(t)); /* (rank 0 holds the lock now) */

    int in[4], *out = calloc((size_t)n * 4, sizeof(int));
    if (!out) FAIL("out of memory");
    for (int i = 0; i < 4; i++) in[i] = me * 10 + i + 1;
    osmp_request_t r;
    OK(osmp_iallgather(t, in, out, 4, OSMP_INT32, &r));
    if (me == 0) {
        int done = 0;
        double t0 = now_s();
        while (!done && (!stuck || now_s() - t0 < stuck)) OK(osmp_test(&r, &done));
        if (stuck && done) FAIL("the allgather completed while the others were blocked outside OSMP");
        if (flock(fd, LOCK_UN)) FAIL("flock");
        if (stuck) OK(osmp_wait(&r));
        printf("progress-c: rank 0: %s after %.3f s\n", stuck ? "stuck as expected" : "the test loop completed",
               now_s() - t0);
    } else {
        if (flock(fd, LOCK_SH)) FAIL("flock"); /* blocked outside OSMP until rank 0's test loop is over */
        flock(fd, LOCK_UN);
        OK(osmp_wait(&r));
    }
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 4; i++)
            if (out[4 * p + i] != p * 10 + i + 1) FAIL("block %d element %d is %d", p, i, out[4 * p + i]);
    OK(osmp_barrier(t));
    close(fd);
    if (me == 0) unlink(path);
    free(out);
    OK(osmp_finalize());
    return 0;
}
