/*
 * nb-noblock: a test never blocks on another participant (docs/design.md
 * section 11), whatever algorithm the call runs: compositions (schedules of
 * resumable parts), alltoall's distance, OSMP_CHECK_ARGS's exchange. Written
 * against include/osmp.h only.
 *
 *   osmp-run -n N -- nb-noblock [--must-idle] OP...
 *       OP: allgather allgatherv reduce_scatter_block reduce_scatter alltoall
 *       alltoallv allreduce. For each, at 4 and 50000 ints per block:
 *         rank 0 posts the call and tests it in a loop until it is done;
 *         every other rank sleeps LATE_MS, posts, says so (a file), then
 *         stays idle outside OSMP (posted, but making no progress: as a rank
 *         blocked in MPI_Send) until rank 0 has seen three more tests return
 *         "not done" after every peer posted (or its request done), and only
 *         then waits.
 *       A test that waited for another participant would wait for idle
 *       peers that wait for it: the peers give up after GIVE_UP_MS and fail
 *       the run, naming it. No wall-clock limit on a test (a loaded machine
 *       deschedules a process for hundreds of ms): the order of events
 *       decides. At least one test must return "not done", and every result
 *       is checked exactly on every rank. Where OSMP_<OP>_ALG is set,
 *       osmp_team_choice must report that algorithm, chosen by the knob.
 *       The files live in a directory rank 0 makes under /tmp and removes.
 *       --must-idle: at 50000 ints, rank 0 must have seen those three tests
 *       (the peers' posts cannot have moved the whole call: small chunks).
 *
 * Exit status 0 when every check passed; the first failure prints what
 * differed and exits 1.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "osmp.h"

#define LATE_MS 200
/* Rank 0's "not done" tests after every peer posted, before it lets them go. */
#define TESTS_AFTER 3
/* Anyone gives up after this long (rank 0's test loop, a peer's idle wait). */
#define GIVE_UP_MS 30000.0

static osmp_team_t world;
static int me, n;
static char dir[64]; /* the signal files' directory (rank 0's mkdtemp) */
static int must_idle;

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, "nb-noblock: rank %d/%d, line %d: ", me, n, __LINE__);                               \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        exit(1);                                                                                             \
    } while (0)
#define OK(call)                                                                                             \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != OSMP_OK) FAIL("%s returned %s", #call, osmp_status_name(rc_));                             \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts)) {}
}

/* One call's buffers and what its result must be. */
struct call {
    const char *op;
    osmp_coll_t coll;
    size_t count; /* ints per block (the vector variants: rank r's block is count + r) */
    int32_t *in, *out, *want;
    size_t out_len;
    size_t *counts, *displs, *counts2, *displs2;
};

static size_t vcount(const struct call *c, int r)
{
    return c->count + (size_t)r;
}

static int32_t val(int rank, size_t i)
{
    return (int32_t)(rank * 100003 + (int)(i % 50000) * 7 + 1);
}

/* The signal files: "<dir>/<what>.<round>[.<rank>]". */
static void touch(const char *what, int round, int rank)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s.%d.%d", dir, what, round, rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) FAIL("cannot create %s", path);
    close(fd);
}

static int exists(const char *what, int round, int rank)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s.%d.%d", dir, what, round, rank);
    return access(path, F_OK) == 0;
}

static void cleanup(void)
{
    if (me != 0 || !*dir) return;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[384];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (*e->d_name != '.') unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

static void *alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) FAIL("out of memory");
    return p;
}

/* The buffers of op at `count`, and the result this rank must get. */
static void make(struct call *c, const char *op, size_t count)
{
    memset(c, 0, sizeof(*c));
    c->op = op;
    c->count = count;
    size_t N = (size_t)n;
    c->counts = alloc(sizeof(size_t) * N);
    c->displs = alloc(sizeof(size_t) * N);
    c->counts2 = alloc(sizeof(size_t) * N);
    c->displs2 = alloc(sizeof(size_t) * N);
    if (!strcmp(op, "allgather")) {
        c->coll = OSMP_COLL_ALLGATHER;
        c->in = alloc(count * 4);
        c->out_len = count * N;
        for (size_t i = 0; i < count; i++) c->in[i] = val(me, i);
        c->want = alloc(c->out_len * 4);
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < count; i++) c->want[(size_t)r * count + i] = val(r, i);
    } else if (!strcmp(op, "allgatherv")) { /* blocks of count + r, one int apart (not packed: gatherv_bcast unpacks) */
        c->coll = OSMP_COLL_ALLGATHERV;
        size_t at = 0;
        for (int r = 0; r < n; r++) {
            c->counts[r] = vcount(c, r);
            c->displs[r] = at;
            at += c->counts[r] + 1;
        }
        c->out_len = at;
        c->in = alloc(vcount(c, me) * 4);
        for (size_t i = 0; i < vcount(c, me); i++) c->in[i] = val(me, i);
        c->want = alloc(at * 4);
        for (size_t i = 0; i < at; i++) c->want[i] = -5; /* the gaps stay as they were */
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < c->counts[r]; i++) c->want[c->displs[r] + i] = val(r, i);
    } else if (!strcmp(op, "reduce_scatter_block") || !strcmp(op, "reduce_scatter")) {
        int block = !strcmp(op, "reduce_scatter_block");
        c->coll = block ? OSMP_COLL_REDUCE_SCATTER_BLOCK : OSMP_COLL_REDUCE_SCATTER;
        size_t total = 0;
        for (int r = 0; r < n; r++) {
            c->counts[r] = block ? count : vcount(c, r);
            c->displs[r] = total;
            total += c->counts[r];
        }
        c->in = alloc(total * 4);
        for (size_t i = 0; i < total; i++) c->in[i] = val(me, i);
        c->out_len = c->counts[me];
        c->want = alloc(c->out_len * 4);
        for (size_t i = 0; i < c->out_len; i++)
            for (int r = 0; r < n; r++) c->want[i] += val(r, c->displs[me] + i);
    } else if (!strcmp(op, "alltoall")) {
        c->coll = OSMP_COLL_ALLTOALL;
        c->in = alloc(count * N * 4);
        c->out_len = count * N;
        c->want = alloc(c->out_len * 4);
        for (int d = 0; d < n; d++)
            for (size_t i = 0; i < count; i++) {
                c->in[(size_t)d * count + i] = val(me, (size_t)d * count + i);
                c->want[(size_t)d * count + i] = val(d, (size_t)me * count + i);
            }
    } else if (!strcmp(op, "alltoallv")) { /* the block from s to d: count + (s + d) % 3 ints */
        c->coll = OSMP_COLL_ALLTOALLV;
        size_t sat = 0, rat = 0;
        for (int r = 0; r < n; r++) {
            c->counts[r] = count + (size_t)((me + r) % 3);
            c->displs[r] = sat;
            sat += c->counts[r];
            c->counts2[r] = count + (size_t)((r + me) % 3);
            c->displs2[r] = rat;
            rat += c->counts2[r];
        }
        c->in = alloc(sat * 4);
        c->out_len = rat;
        c->want = alloc(rat * 4);
        for (int d = 0; d < n; d++)
            for (size_t i = 0; i < c->counts[d]; i++) c->in[c->displs[d] + i] = val(me, (size_t)d * 1000 + i);
        for (int s = 0; s < n; s++)
            for (size_t i = 0; i < c->counts2[s]; i++) c->want[c->displs2[s] + i] = val(s, (size_t)me * 1000 + i);
    } else if (!strcmp(op, "allreduce")) {
        c->coll = OSMP_COLL_ALLREDUCE;
        c->in = alloc(count * 4);
        c->out_len = count;
        c->want = alloc(count * 4);
        for (size_t i = 0; i < count; i++) {
            c->in[i] = val(me, i);
            for (int r = 0; r < n; r++) c->want[i] += val(r, i);
        }
    } else {
        FAIL("unknown operation %s", op);
    }
    c->out = alloc(c->out_len * 4);
    for (size_t i = 0; i < c->out_len; i++) c->out[i] = -5;
}

static void drop(struct call *c)
{
    free(c->in);
    free(c->out);
    free(c->want);
    free(c->counts);
    free(c->displs);
    free(c->counts2);
    free(c->displs2);
}

static int post(struct call *c, osmp_request_t *req)
{
    switch (c->coll) {
    case OSMP_COLL_ALLGATHER:
        return osmp_iallgather(world, c->in, c->out, c->count, OSMP_INT32, req);
    case OSMP_COLL_ALLGATHERV:
        return osmp_iallgatherv(world, c->in, vcount(c, me), c->out, c->counts, c->displs, OSMP_INT32, req);
    case OSMP_COLL_REDUCE_SCATTER_BLOCK:
        return osmp_ireduce_scatter_block(world, c->in, c->out, c->count, OSMP_INT32, OSMP_SUM, req);
    case OSMP_COLL_REDUCE_SCATTER:
        return osmp_ireduce_scatter(world, c->in, c->out, c->counts, OSMP_INT32, OSMP_SUM, req);
    case OSMP_COLL_ALLTOALL:
        return osmp_ialltoall(world, c->in, c->out, c->count, OSMP_INT32, req);
    case OSMP_COLL_ALLTOALLV:
        return osmp_ialltoallv(world, c->in, c->counts, c->displs, c->out, c->counts2, c->displs2, OSMP_INT32, req);
    default:
        return osmp_iallreduce(world, c->in, c->out, c->count, OSMP_INT32, OSMP_SUM, req);
    }
}

/* OSMP_<OP>_ALG, where set, is what the team runs for this call. */
static void check_choice(const struct call *c)
{
    char knob[64] = "OSMP_";
    for (size_t i = 0; c->op[i] && i < 40; i++) knob[5 + i] = (char)toupper((unsigned char)c->op[i]);
    strcat(knob, "_ALG");
    const char *want = getenv(knob);
    if (!want || !*want || !strcmp(want, "auto")) return;
    struct osmp_choice ch;
    OK(osmp_team_choice(world, c->coll, c->count * 4, &ch));
    if (strcmp(ch.name, want) || strcmp(ch.from, "knob"))
        FAIL("%s of %zu B runs %s (from %s), not %s from the knob", c->op, c->count * 4, ch.name, ch.from, want);
}

static void one(const char *op, size_t count, int round)
{
    struct call c;
    make(&c, op, count);
    check_choice(&c);
    osmp_request_t req;
    OK(osmp_barrier(world));
    if (me == 0) {
        double t0 = now_ms(), worst = 0;
        long tests = 0, pending = 0, after = -1; /* after: "not done" tests since every peer posted */
        OK(post(&c, &req));
        for (int done = 0; !done;) {
            if (after < 0) {
                int all = 1;
                for (int r = 1; r < n && all; r++) all = exists("posted", round, r);
                if (all) after = 0;
            }
            double t = now_ms();
            OK(osmp_test(&req, &done));
            double dt = now_ms() - t;
            tests++;
            pending += !done;
            if (dt > worst) worst = dt;
            if (!done && after >= 0 && ++after == TESTS_AFTER) touch("go", round, 0);
            if (now_ms() - t0 > GIVE_UP_MS) FAIL("%s of %zu ints: not done after %.0f ms", op, count, GIVE_UP_MS);
            if (!done) sleep_ms(1);
        }
        if (after < TESTS_AFTER) touch("go", round, 0); /* (done before that: nothing left to wait for) */
        if (!pending) FAIL("%s of %zu ints: done at the first test, before the late peers posted", op, count);
        if (must_idle && count > 4 && after < TESTS_AFTER)
            FAIL("%s of %zu ints: done after %ld tests with every peer posted and idle: the idle phase was not "
                 "tested",
                 op, count, after < 0 ? 0 : after);
        printf("nb-noblock: %s of %zu ints: %ld tests in %.0f ms (%ld not done after every peer posted), the "
               "longest %.2f ms\n",
               op, count, tests, now_ms() - t0, after < 0 ? 0 : after, worst);
    } else {
        sleep_ms(LATE_MS);
        OK(post(&c, &req));
        touch("posted", round, me);
        for (double t0 = now_ms(); !exists("go", round, 0); sleep_ms(1)) /* idle: no OSMP call */
            if (now_ms() - t0 > GIVE_UP_MS)
                FAIL("%s of %zu ints: rank 0 has not seen %d tests return since every peer posted, in %.0f ms: "
                     "its test waits for us",
                     op, count, TESTS_AFTER, GIVE_UP_MS);
        OK(osmp_wait(&req));
    }
    for (size_t i = 0; i < c.out_len; i++)
        if (c.out[i] != c.want[i])
            FAIL("%s of %zu ints: element %zu is %d, not %d", op, count, i, (int)c.out[i], (int)c.want[i]);
    drop(&c);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: nb-noblock OP...\n");
        return 2;
    }
    OK(osmp_init(&world));
    me = osmp_team_rank(world);
    n = osmp_team_size(world);
    if (n < 2) FAIL("needs 2 participants or more");
    if (me == 0) {
        snprintf(dir, sizeof(dir), "/tmp/nb-noblock-XXXXXX");
        if (!mkdtemp(dir)) FAIL("mkdtemp failed");
        atexit(cleanup);
    }
    OK(osmp_bcast(world, dir, sizeof(dir), OSMP_UINT8, 0));
    int round = 0, first = 1;
    if (argc > 1 && !strcmp(argv[1], "--must-idle")) must_idle = first++;
    for (int i = first; i < argc; i++) {
        one(argv[i], 4, round++);
        one(argv[i], 50000, round++);
    }
    OK(osmp_barrier(world));
    OK(osmp_finalize());
    return 0;
}
