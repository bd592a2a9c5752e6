/*
 * nb-check: the rules of nonblocking and persistent collectives (include/osmp.h),
 * beyond what coll-check --calls covers (one request at a time). Written against
 * include/osmp.h only; every result checked exactly.
 *
 *   osmp-run -n N [...] -- nb-check [--threads T]
 *       many requests outstanding at once (more than 16), of every kind, sizes
 *       from 0 (NULL buffers) to several chunks, every root, completed by
 *       osmp_waitall, one by one in reverse order, in an order that differs
 *       between participants, by osmp_waitany, osmp_testall and round-robin
 *       osmp_test; blocking calls between posts; persistent requests started
 *       many times with new input each time and by osmp_startall; a request
 *       freed while active; the errors the API promises.
 *   osmp-run -n N -- nb-check --dead VICTIM
 *       every participant posts requests, VICTIM kills itself (SIGKILL) right
 *       after; every other participant's osmp_waitall must return
 *       OSMP_ERR_PEER_LOST with every request completed, within a second: it
 *       prints "nb-check: rank R: OSMP_ERR_PEER_LOST after M ms" and exits 3.
 *
 * Exit status 0 when every check passed; the first failure prints what
 * differed and exits 1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "osmp.h"

static osmp_team_t world;

#define FAIL(t, ...)                                                                                         \
    do {                                                                                                     \
        fprintf(stderr, "nb-check: rank %d/%d, line %d: ", osmp_team_rank(t), osmp_team_size(t), __LINE__);  \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        _exit(1);                                                                                            \
    } while (0)
#define OK(t, call)                                                                                          \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != OSMP_OK) FAIL(t, "%s returned %s", #call, osmp_status_name(rc_));                         \
    } while (0)
#define EXPECT(t, call, status)                                                                              \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != (status)) FAIL(t, "%s returned %s, not %s", #call, osmp_status_name(rc_), #status);       \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- a batch of requests */

/* One request of a batch and what its result must be. */
enum kind { K_BARRIER, K_ALLREDUCE, K_BCAST, K_REDUCE, K_GATHER, K_SCATTER, K_ALLGATHER, K_ALLTOALL, K_SCAN,
            K_EXSCAN, K_GATHERV, K_ALLREDUCE_ZERO, K_NKINDS };

struct item {
    enum kind kind;
    size_t count; /* int64 elements (per block) */
    int root;
    int64_t *in, *out;
    size_t *counts, *displs;
    osmp_request_t req;
};

static int64_t val(int rank, size_t i, int salt)
{
    return (int64_t)rank * 1000003 + (int64_t)i * 7 + salt;
}

/* Item k of a batch of seed `salt`: the same on every participant (kind, count, root). */
static void item_make(osmp_team_t t, struct item *it, int k, int salt)
{
    int n = osmp_team_size(t), me = osmp_team_rank(t);
    static const size_t sizes[] = {1, 3, 17, 1000, 40000, 0};
    memset(it, 0, sizeof(*it));
    it->kind = (enum kind)((k + salt) % K_NKINDS);
    it->count = sizes[(k * 5 + salt) % 6];
    if (it->kind == K_ALLREDUCE_ZERO) it->count = 0;
    it->root = (k * 7 + salt) % n;
    size_t all = it->count * (size_t)n;
    if (it->count) {
        it->in = malloc(sizeof(int64_t) * (all ? all : 1));
        it->out = malloc(sizeof(int64_t) * (all ? all : 1));
        if (!it->in || !it->out) FAIL(t, "no memory");
        for (size_t i = 0; i < all; i++) it->in[i] = val(me, i, salt + k), it->out[i] = -1;
    }
    if (it->kind == K_GATHERV) {
        it->counts = calloc((size_t)n, sizeof(size_t));
        it->displs = calloc((size_t)n, sizeof(size_t));
        for (int r = 0, at = 0; r < n; r++) {
            it->counts[r] = it->count ? (size_t)(r % 3) * it->count / 2 : 0;
            it->displs[r] = (size_t)at;
            at += (int)it->counts[r];
        }
    }
}

static int item_post(osmp_team_t t, struct item *it, int persistent)
{
    int me = osmp_team_rank(t);
    osmp_request_t *q = &it->req;
    size_t c = it->count;
    switch (it->kind) {
    case K_BARRIER:
        return persistent ? osmp_barrier_init(t, q) : osmp_ibarrier(t, q);
    case K_ALLREDUCE:
    case K_ALLREDUCE_ZERO:
        return persistent ? osmp_allreduce_init(t, it->in, it->out, c, OSMP_INT64, OSMP_SUM, q)
                          : osmp_iallreduce(t, it->in, it->out, c, OSMP_INT64, OSMP_SUM, q);
    case K_BCAST:
        if (me == it->root && c) memcpy(it->out, it->in, c * sizeof(int64_t));
        return persistent ? osmp_bcast_init(t, it->out, c, OSMP_INT64, it->root, q)
                          : osmp_ibcast(t, it->out, c, OSMP_INT64, it->root, q);
    case K_REDUCE:
        return osmp_ireduce(t, it->in, it->out, c, OSMP_INT64, OSMP_MAX, it->root, q);
    case K_GATHER:
        return osmp_igather(t, it->in, it->out, c, OSMP_INT64, it->root, q);
    case K_SCATTER:
        return osmp_iscatter(t, it->in, it->out, c, OSMP_INT64, it->root, q);
    case K_ALLGATHER:
        return osmp_iallgather(t, it->in, it->out, c, OSMP_INT64, q);
    case K_ALLTOALL:
        return osmp_ialltoall(t, it->in, it->out, c, OSMP_INT64, q);
    case K_SCAN:
        return osmp_iscan(t, it->in, it->out, c, OSMP_INT64, OSMP_SUM, q);
    case K_EXSCAN:
        return osmp_iexscan(t, it->in, it->out, c, OSMP_INT64, OSMP_SUM, q);
    case K_GATHERV:
        return osmp_igatherv(t, it->in, it->counts[me], me == it->root ? it->out : NULL, it->counts, it->displs,
                             OSMP_INT64, it->root, q);
    default:
        return OSMP_ERR_INVALID_ARG;
    }
}

/* The result of a completed item, checked exactly (salt as made). */
static void item_check(osmp_team_t t, struct item *it, int k, int salt)
{
    int n = osmp_team_size(t), me = osmp_team_rank(t), s = salt + k;
    size_t c = it->count;
    if (it->req != OSMP_REQUEST_NULL) FAIL(t, "item %d: a completed request is not OSMP_REQUEST_NULL", k);
    for (size_t i = 0; i < c; i++) {
        int64_t want = 0, got = it->out[i];
        switch (it->kind) {
        case K_ALLREDUCE:
            for (int r = 0; r < n; r++) want += val(r, i, s);
            break;
        case K_BCAST:
            want = val(it->root, i, s);
            break;
        case K_REDUCE:
            if (me != it->root) continue;
            want = val(n - 1, i, s);
            break;
        case K_SCATTER:
            want = val(it->root, (size_t)me * c + i, s);
            break;
        case K_SCAN:
        case K_EXSCAN:
            if (it->kind == K_EXSCAN && me == 0) continue;
            for (int r = 0; r < me + (it->kind == K_SCAN); r++) want += val(r, i, s);
            break;
        default:
            continue;
        }
        if (got != want) FAIL(t, "item %d (kind %d, %zu elements, root %d): element %zu is %lld, not %lld", k, it->kind, c,
                              it->root, i, (long long)got, (long long)want);
    }
    int all = it->kind == K_ALLGATHER || it->kind == K_ALLTOALL || (it->kind == K_GATHER && me == it->root);
    for (size_t i = 0; all && i < c * (size_t)n; i++) {
        size_t b = i / c, j = i % c;
        int64_t want = it->kind == K_ALLTOALL ? val((int)b, (size_t)me * c + j, s) : val((int)b, j, s);
        if (it->out[i] != want) FAIL(t, "item %d (kind %d): element %zu is %lld, not %lld", k, it->kind, i,
                                     (long long)it->out[i], (long long)want);
    }
    if (it->kind == K_GATHERV && me == it->root)
        for (int r = 0; r < n; r++)
            for (size_t j = 0; j < it->counts[r]; j++)
                if (it->out[it->displs[r] + j] != val(r, j, s)) FAIL(t, "item %d: gatherv block %d wrong", k, r);
}

static void item_free(struct item *it)
{
    free(it->in);
    free(it->out);
    free(it->counts);
    free(it->displs);
}

#define BATCH 40 /* more than the 16 the issue names */

enum order { O_WAITALL, O_REVERSE, O_SHUFFLED, O_WAITANY, O_TESTALL, O_ROUNDROBIN, O_NORDERS };

static void batch(osmp_team_t t, enum order order, int salt, int blocking_between)
{
    struct item it[BATCH];
    osmp_request_t reqs[BATCH];
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    for (int k = 0; k < BATCH; k++) {
        item_make(t, &it[k], k, salt);
        OK(t, item_post(t, &it[k], 0));
        if (!it[k].req) FAIL(t, "item %d: no request", k); /* (zero counts too: complete, until reaped) */
        if (blocking_between && k % 9 == 4) { /* a blocking call among them: after the earlier ones, on every rank */
            int64_t x = me + 1, sum = 0;
            OK(t, osmp_allreduce(t, &x, &sum, 1, OSMP_INT64, OSMP_SUM));
            if (sum != (int64_t)n * (n + 1) / 2) FAIL(t, "blocking allreduce among requests: %lld", (long long)sum);
        }
    }
    for (int k = 0; k < BATCH; k++) reqs[k] = it[k].req;
    switch (order) {
    case O_WAITALL:
        OK(t, osmp_waitall(BATCH, reqs));
        break;
    case O_REVERSE:
        for (int k = BATCH - 1; k >= 0; k--) OK(t, osmp_wait(&reqs[k]));
        break;
    case O_SHUFFLED: { /* each participant its own order */
        int idx[BATCH];
        unsigned x = 2654435761u * (unsigned)(me + 1) + (unsigned)salt;
        for (int k = 0; k < BATCH; k++) idx[k] = k;
        for (int k = BATCH - 1; k > 0; k--) {
            x = x * 1103515245u + 12345u;
            int j = (int)(x % (unsigned)(k + 1)), tmp = idx[k];
            idx[k] = idx[j];
            idx[j] = tmp;
        }
        for (int k = 0; k < BATCH; k++) OK(t, osmp_wait(&reqs[idx[k]]));
        break;
    }
    case O_WAITANY: {
        int seen[BATCH] = {0}, index;
        for (int k = 0; k < BATCH; k++) {
            OK(t, osmp_waitany(BATCH, reqs, &index));
            if (index < 0) break; /* (zero-count ones were complete at their post) */
            if (seen[index]++) FAIL(t, "osmp_waitany gave index %d twice", index);
        }
        OK(t, osmp_waitany(BATCH, reqs, &index));
        if (index != -1) FAIL(t, "osmp_waitany with nothing active gave index %d", index);
        break;
    }
    case O_TESTALL:
        for (int done = 0; !done;) OK(t, osmp_testall(BATCH, reqs, &done));
        break;
    case O_ROUNDROBIN:
        for (int left = BATCH; left;) {
            left = 0;
            for (int k = 0; k < BATCH; k++) {
                int done;
                OK(t, osmp_test(&reqs[k], &done));
                if (!done) left++;
                else if (reqs[k] != OSMP_REQUEST_NULL) FAIL(t, "osmp_test done but the request is not NULL");
            }
        }
        break;
    default:
        break;
    }
    for (int k = 0; k < BATCH; k++) {
        it[k].req = reqs[k];
        item_check(t, &it[k], k, salt);
        item_free(&it[k]);
    }
}

/* ---------------------------------------------------------------- persistent requests */

static void persistent(osmp_team_t t)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    enum { N = 1000 };
    int64_t *in = malloc(N * sizeof(int64_t)), *out = malloc(N * sizeof(int64_t)), x = 0, sum = 0;
    osmp_request_t q[3] = {OSMP_REQUEST_NULL, OSMP_REQUEST_NULL, OSMP_REQUEST_NULL};
    OK(t, osmp_allreduce_init(t, in, out, N, OSMP_INT64, OSMP_SUM, &q[0]));
    OK(t, osmp_barrier_init(t, &q[1]));
    OK(t, osmp_allreduce_init(t, &x, &sum, 1, OSMP_INT64, OSMP_MAX, &q[2]));
    int done = 0;
    OK(t, osmp_test(&q[0], &done)); /* inactive: complete at once, and stays */
    if (!done || !q[0]) FAIL(t, "an inactive persistent request tested not done, or vanished");
    for (int iter = 0; iter < 60; iter++) {
        for (int i = 0; i < N; i++) in[i] = (int64_t)(me + iter) * i; /* new input every start */
        x = me * 10 + iter;
        if (iter % 2) {
            OK(t, osmp_startall(3, q));
        } else {
            OK(t, osmp_start(&q[0]));
            EXPECT(t, osmp_start(&q[0]), OSMP_ERR_INVALID_ARG); /* active */
            OK(t, osmp_start(&q[2]));
            OK(t, osmp_start(&q[1]));
        }
        OK(t, iter % 3 ? osmp_waitall(3, q) : osmp_wait(&q[2]));
        if (!(iter % 3)) OK(t, osmp_waitall(2, q));
        for (int k = 0; k < 3; k++)
            if (!q[k]) FAIL(t, "a completed persistent request became OSMP_REQUEST_NULL");
        for (int i = 0; i < N; i++) {
            int64_t want = 0;
            for (int r = 0; r < n; r++) want += (int64_t)(r + iter) * i;
            if (out[i] != want) FAIL(t, "persistent allreduce, start %d: element %d is %lld, not %lld", iter, i,
                                     (long long)out[i], (long long)want);
        }
        if (sum != (int64_t)(n - 1) * 10 + iter) FAIL(t, "persistent max, start %d: %lld", iter, (long long)sum);
    }
    for (int k = 0; k < 3; k++) {
        OK(t, osmp_request_free(&q[k]));
        if (q[k]) FAIL(t, "osmp_request_free left the handle");
    }
    free(in);
    free(out);
}

/* ---------------------------------------------------------------- the rest of the rules */

static void freed_active(osmp_team_t t)
{
    int n = osmp_team_size(t), me = osmp_team_rank(t);
    int64_t x = me, sum = -1;
    osmp_request_t q;
    OK(t, osmp_iallreduce(t, &x, &sum, 1, OSMP_INT64, OSMP_SUM, &q));
    OK(t, osmp_request_free(&q)); /* still runs to its end */
    if (q) FAIL(t, "osmp_request_free left the handle");
    OK(t, osmp_barrier(t)); /* a blocking call completes it first */
    if (sum != (int64_t)n * (n - 1) / 2) FAIL(t, "a freed request's allreduce gave %lld", (long long)sum);
}

static void errors(osmp_team_t t)
{
    int64_t x = 0;
    osmp_request_t q = (osmp_request_t)&x; /* garbage, overwritten by every refusal */
    EXPECT(t, osmp_iallreduce(t, &x, &x, 1, OSMP_INT64, OSMP_SUM, NULL), OSMP_ERR_INVALID_ARG);
    EXPECT(t, osmp_ibcast(t, &x, 1, OSMP_INT64, osmp_team_size(t), &q), OSMP_ERR_INVALID_ARG);
    if (q != OSMP_REQUEST_NULL) FAIL(t, "a refused post left *req");
    q = (osmp_request_t)&x;
    EXPECT(t, osmp_iallreduce(t, &x, &x, 1, OSMP_DOUBLE, OSMP_BAND, &q), OSMP_ERR_TYPE);
    if (q != OSMP_REQUEST_NULL) FAIL(t, "a refused post left *req");
    EXPECT(t, osmp_ibarrier(NULL, &q), OSMP_ERR_INVALID_ARG);
    EXPECT(t, osmp_wait(NULL), OSMP_ERR_INVALID_ARG);
    q = OSMP_REQUEST_NULL;
    OK(t, osmp_wait(&q));
    int done = 0;
    OK(t, osmp_test(&q, &done));
    if (!done) FAIL(t, "OSMP_REQUEST_NULL tested not done");
    EXPECT(t, osmp_start(&q), OSMP_ERR_INVALID_ARG);
    OK(t, osmp_ibarrier(t, &q));
    EXPECT(t, osmp_start(&q), OSMP_ERR_INVALID_ARG); /* not persistent, and active */
    OK(t, osmp_wait(&q));
    EXPECT(t, osmp_waitall(-1, &q), OSMP_ERR_INVALID_ARG);
    OK(t, osmp_waitall(0, NULL));
    int index = 7;
    OK(t, osmp_waitany(1, &q, &index));
    if (index != -1) FAIL(t, "osmp_waitany over OSMP_REQUEST_NULL gave %d", index);
}

static void check_all(osmp_team_t t)
{
    errors(t);
    for (int o = 0; o < O_NORDERS; o++) batch(t, (enum order)o, o * 3 + 1, o % 2);
    persistent(t);
    freed_active(t);
    OK(t, osmp_barrier(t));
}

/* ---------------------------------------------------------------- a participant dies */

static int dead(osmp_team_t t, int victim)
{
    int me = osmp_team_rank(t);
    struct item it[BATCH];
    osmp_request_t reqs[BATCH];
    OK(t, osmp_barrier(t));
    /* A survivor still posting when the victim dies may learn of it from the
     * post (posting moves the queue); then it completes what it posted. */
    int rc = OSMP_OK, posted = 0;
    for (; posted < BATCH; posted++) {
        item_make(t, &it[posted], posted, 5);
        rc = item_post(t, &it[posted], 0);
        if (rc) break;
        reqs[posted] = it[posted].req;
    }
    if (me == victim) {
        if (rc) FAIL(t, "the victim's post %d returned %s", posted, osmp_status_name(rc));
        raise(SIGKILL);
    }
    if (rc != OSMP_OK && rc != OSMP_ERR_PEER_LOST)
        FAIL(t, "post %d with a dead peer returned %s", posted, osmp_status_name(rc));
    double t0 = now_ms();
    int wrc = osmp_waitall(posted, reqs);
    double took = now_ms() - t0;
    for (int k = 0; k < posted; k++)
        if (reqs[k] != OSMP_REQUEST_NULL) FAIL(t, "request %d not completed by a failed osmp_waitall", k);
    if (rc == OSMP_OK) rc = wrc;
    else if (wrc != OSMP_OK && wrc != OSMP_ERR_PEER_LOST)
        FAIL(t, "osmp_waitall after a failed post returned %s", osmp_status_name(wrc));
    if (rc != OSMP_ERR_PEER_LOST) FAIL(t, "posting and osmp_waitall with a dead peer returned %s", osmp_status_name(rc));
    if (took > 1000) FAIL(t, "the loss took %.0f ms to show", took);
    printf("nb-check: rank %d: %s after %.0f ms\n", me, osmp_status_name(rc), took);
    fflush(stdout);
    EXPECT(t, osmp_team_destroy(t), OSMP_ERR_PEER_LOST);
    _exit(3);
}

/* ---------------------------------------------------------------- threads */

struct thread_arg {
    int nthreads, index;
};

static void *thread_main(void *p)
{
    const struct thread_arg *a = p;
    osmp_team_t t;
    OK(world, osmp_team_create_threads(world, a->nthreads, a->index, &t));
    check_all(t);
    OK(t, osmp_team_destroy(t));
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = 0, victim = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dead") && i + 1 < argc) victim = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: nb-check [--threads T] [--dead VICTIM]\n");
            return 2;
        }
    }
    OK(NULL, osmp_init(&world));
    if (victim >= 0) return dead(world, victim);
    if (nthreads > 0) {
        pthread_t th[64];
        struct thread_arg args[64];
        if (nthreads > 64) return 2;
        for (int i = 0; i < nthreads; i++) {
            args[i] = (struct thread_arg){nthreads, i};
            pthread_create(&th[i], NULL, thread_main, &args[i]);
        }
        for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    } else {
        check_all(world);
    }
    int me = osmp_team_rank(world);
    OK(world, osmp_finalize());
    if (me == 0) printf("nb-check: all checks passed\n");
    return 0;
}
