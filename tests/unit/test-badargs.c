/*
 * Bad input on every public entry point: the documented status, never a crash,
 * never a write into the caller's buffers or output arguments (osmp.h's error
 * contract), and a team that still works after rejecting calls.
 *
 * Each rejected collective runs twice: first in a forked child on a team of one
 * of its own (a crash or a stray write there is reported without taking the
 * rest of the test down), then, if the child behaved, on the real team.
 * Runs outside osmp-run: osmp_init gives a team of one.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

extern char **environ;

/* ---------------------------------------------------------------- collectives as data */

/* The collectives come from OSMP_COLL_MAP (osmp.h): whether one takes a root or an operation is read from
 * the map; which buffers and arrays it takes is one row of coll_args per entry of the map. The rows are
 * designated (none can slide into another's place), there is one per collective (static assertion), and
 * test_collective_list fails on a row left out (its name is NULL) or one that disagrees with the map. */
enum { SC, SD, RC, RD, NARR }; /* the v variants' arrays: sendcounts, sdispls, recvcounts, rdispls */
#define ARR(x) (1u << (x)) /* the bit of an array in coll_args[].arrays */
enum { IP_NONE, IP_SEND, IP_RECV }; /* where OSMP_IN_PLACE is allowed (IP_RECV: at the root) */
static const struct {
    const char *name;
    int send, recv, dtype; /* takes a send buffer (bcast's one buffer), a receive buffer, a datatype */
    unsigned arrays;       /* ARR(SC) | ...: the count and displacement arrays it takes */
    int in_place;
} coll_args[] = {
    [OSMP_COLL_BARRIER] = {"barrier", 0, 0, 0, 0, IP_NONE},
    [OSMP_COLL_BCAST] = {"bcast", 1, 0, 1, 0, IP_NONE},
    [OSMP_COLL_REDUCE] = {"reduce", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_ALLREDUCE] = {"allreduce", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_GATHER] = {"gather", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_ALLGATHER] = {"allgather", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_SCATTER] = {"scatter", 1, 1, 1, 0, IP_RECV},
    [OSMP_COLL_REDUCE_SCATTER_BLOCK] = {"reduce_scatter_block", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_ALLTOALL] = {"alltoall", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_GATHERV] = {"gatherv", 1, 1, 1, ARR(RC) | ARR(RD), IP_SEND},
    [OSMP_COLL_SCATTERV] = {"scatterv", 1, 1, 1, ARR(SC) | ARR(SD), IP_RECV},
    [OSMP_COLL_ALLGATHERV] = {"allgatherv", 1, 1, 1, ARR(RC) | ARR(RD), IP_SEND},
    [OSMP_COLL_ALLTOALLV] = {"alltoallv", 1, 1, 1, ARR(SC) | ARR(SD) | ARR(RC) | ARR(RD), IP_SEND},
    [OSMP_COLL_REDUCE_SCATTER] = {"reduce_scatter", 1, 1, 1, ARR(RC), IP_SEND},
    [OSMP_COLL_SCAN] = {"scan", 1, 1, 1, 0, IP_SEND},
    [OSMP_COLL_EXSCAN] = {"exscan", 1, 1, 1, 0, IP_SEND},
};
_Static_assert(sizeof(coll_args) / sizeof(*coll_args) == OSMP_COLL_COUNT, "one row per entry of OSMP_COLL_MAP");
#define FLAGS_OF(NAME, name, flags) flags,
static const unsigned map_flags[] = {OSMP_COLL_MAP(FLAGS_OF)};
#undef FLAGS_OF
#define has_send(c) (coll_args[c].send)
#define has_recv(c) (coll_args[c].recv)
#define has_dtype(c) (coll_args[c].dtype)
#define has_arrays(c) (coll_args[c].arrays)
#define has_op(c) (!!(map_flags[c] & OSMP_COLL_REDUCES))
#define has_root(c) (!!(map_flags[c] & OSMP_COLL_ROOTED))
#define in_place_recv(c) (coll_args[c].in_place == IP_RECV) /* scatter, scatterv: recvbuf at the root */

enum { NUL, BUF, INP }; /* what a buffer argument is: NULL, a real buffer, OSMP_IN_PLACE */

/* One call. The v variants get every rank count elements (their scalar count too), at displacements
 * displ[0] + rank * count (sdispls; scatterv's displs) and displ[1] + rank * count (rdispls; gatherv's and
 * allgatherv's displs); an array marked NUL in arr is passed as NULL. */
struct call {
    osmp_coll_t c;
    int send, recv;
    size_t count;
    osmp_dtype_t dtype;
    osmp_op_t op;
    int root;
    int arr[NARR]; /* BUF or NUL, for the arrays the collective takes */
    size_t displ[2]; /* first displacement of the send and the receive side */
};

static struct call base(osmp_coll_t c)
{
    return (struct call){c, BUF, BUF, 4, OSMP_INT32, OSMP_SUM, 0, {BUF, BUF, BUF, BUF}, {0, 0}};
}

static void *arg_buf(int kind, void *buf)
{
    return kind == NUL ? NULL : kind == INP ? OSMP_IN_PLACE : buf;
}

#define MAX_TEAM 4 /* teams here have one or two members */

static int run_call(osmp_team_t team, const struct call *k, void *s, void *r)
{
    void *sp = arg_buf(k->send, s), *rp = arg_buf(k->recv, r);
    size_t cnt[MAX_TEAM], sd[MAX_TEAM], rd[MAX_TEAM];
    for (int i = 0; i < MAX_TEAM; i++)
        cnt[i] = k->count, sd[i] = k->displ[0] + (size_t)i * k->count, rd[i] = k->displ[1] + (size_t)i * k->count;
    const size_t *a[NARR] = {cnt, sd, cnt, rd};
    for (int i = 0; i < NARR; i++)
        if (k->arr[i] == NUL) a[i] = NULL;
    switch (k->c) {
    case OSMP_COLL_BARRIER: return osmp_barrier(team);
    case OSMP_COLL_BCAST: return osmp_bcast(team, sp, k->count, k->dtype, k->root);
    case OSMP_COLL_REDUCE: return osmp_reduce(team, sp, rp, k->count, k->dtype, k->op, k->root);
    case OSMP_COLL_ALLREDUCE: return osmp_allreduce(team, sp, rp, k->count, k->dtype, k->op);
    case OSMP_COLL_GATHER: return osmp_gather(team, sp, rp, k->count, k->dtype, k->root);
    case OSMP_COLL_ALLGATHER: return osmp_allgather(team, sp, rp, k->count, k->dtype);
    case OSMP_COLL_SCATTER: return osmp_scatter(team, sp, rp, k->count, k->dtype, k->root);
    case OSMP_COLL_REDUCE_SCATTER_BLOCK: return osmp_reduce_scatter_block(team, sp, rp, k->count, k->dtype, k->op);
    case OSMP_COLL_ALLTOALL: return osmp_alltoall(team, sp, rp, k->count, k->dtype);
    case OSMP_COLL_GATHERV: return osmp_gatherv(team, sp, k->count, rp, a[RC], a[RD], k->dtype, k->root);
    case OSMP_COLL_SCATTERV: return osmp_scatterv(team, sp, a[SC], a[SD], rp, k->count, k->dtype, k->root);
    case OSMP_COLL_ALLGATHERV: return osmp_allgatherv(team, sp, k->count, rp, a[RC], a[RD], k->dtype);
    case OSMP_COLL_ALLTOALLV: return osmp_alltoallv(team, sp, a[SC], a[SD], rp, a[RC], a[RD], k->dtype);
    case OSMP_COLL_REDUCE_SCATTER: return osmp_reduce_scatter(team, sp, rp, a[RC], k->dtype, k->op);
    case OSMP_COLL_SCAN: return osmp_scan(team, sp, rp, k->count, k->dtype, k->op);
    case OSMP_COLL_EXSCAN: return osmp_exscan(team, sp, rp, k->count, k->dtype, k->op);
    default: return 1; /* a collective without a case here fails every expectation */
    }
}

static void describe(const struct call *k, char *out, size_t len)
{
    static const char *const kind[] = {"NULL", "buf", "IN_PLACE"};
    static const char *const arr_name[NARR] = {"sendcounts", "sdispls", "recvcounts", "rdispls"};
    int at = snprintf(out, len, "%s(send=%s, recv=%s, count=%zu, dtype=%d, op=%d, root=%d", osmp_coll_name(k->c),
                      kind[k->send], kind[k->recv], k->count, (int)k->dtype, (int)k->op, k->root);
    for (int i = 0; i < NARR && at > 0 && (size_t)at < len; i++)
        if (has_arrays(k->c) & ARR(i))
            at += snprintf(out + at, len - (size_t)at, ", %s=%s", arr_name[i], kind[k->arr[i]]);
    for (int i = 0; i < 2 && at > 0 && (size_t)at < len; i++)
        if (k->displ[i])
            at += snprintf(out + at, len - (size_t)at, ", %s starts at %zu", arr_name[2 * i + 1], k->displ[i]);
    if (at > 0 && (size_t)at < len) snprintf(out + at, len - (size_t)at, ")");
}

/* ---------------------------------------------------------------- canaries */

#define BUFSZ 256 /* bytes; every valid call here uses at most 64 */

static void canary_fill(unsigned char *b, unsigned seed)
{
    for (size_t i = 0; i < BUFSZ; i++) b[i] = (unsigned char)(0xa5 ^ (i * 31u + seed));
}

static int canary_ok(const unsigned char *b, unsigned seed)
{
    for (size_t i = 0; i < BUFSZ; i++)
        if (b[i] != (unsigned char)(0xa5 ^ (i * 31u + seed))) return 0;
    return 1;
}

/* Heap buffers, so that the sanitizer build sees any access past them; one
 * pair per thread (the thread team's members check their own calls). */
static _Thread_local unsigned char *S, *R;

static int alloc_buffers(void)
{
    S = malloc(BUFSZ);
    R = malloc(BUFSZ);
    return S && R;
}

static void free_buffers(void)
{
    free(S);
    free(R);
    S = R = NULL;
}

/* Child exit codes: 64 + (-status) when the buffers were left alone. */
#define EXIT_CANARY 40
#define EXIT_SETUP 41
#define EXIT_ODD 42

/* ---------------------------------------------------------------- expectations */

/* Runs call k on team and checks status `want` and untouched buffers. isolate:
 * first in a forked child (a team of one of its own stands in for a live team
 * of one); the real call only if the child behaved. */
static void expect_call_at(osmp_team_t team, struct call k, int want, int isolate, int line)
{
    char what[256];
    describe(&k, what, sizeof(what));
    if (isolate) {
        int live1 = team && osmp_team_size(team) == 1; /* decided here: in the child it is not a member */
        canary_fill(S, 1);
        canary_fill(R, 2);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            osmp_team_t t = team;
            struct osmp_team_params p = {.rank = 0, .size = 1};
            if (live1 && osmp_team_create(&p, &t) != OSMP_OK) _exit(EXIT_SETUP);
            int rc = run_call(t, &k, S, R);
            if (!canary_ok(S, 1) || !canary_ok(R, 2) || osmp_in_place_marker != 0) _exit(EXIT_CANARY);
            _exit(rc <= 0 && rc > -60 ? 64 - rc : EXIT_ODD);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid) {
            fprintf(stderr, "line %d: %s: fork/waitpid failed\n", line, what);
            test_failures++;
            return;
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) < 64) {
            if (WIFSIGNALED(st))
                fprintf(stderr, "line %d: %s crashed with signal %d (expected %s)\n", line, what, WTERMSIG(st),
                        osmp_status_name(want));
            else if (WEXITSTATUS(st) == EXIT_CANARY)
                fprintf(stderr, "line %d: %s wrote into the caller's buffers (expected %s)\n", line, what,
                        osmp_status_name(want));
            else
                fprintf(stderr, "line %d: %s: child exited with %d (crash or sanitizer report?) (expected %s)\n",
                        line, what, WEXITSTATUS(st), osmp_status_name(want));
            test_failures++;
            return;
        }
        int got = 64 - WEXITSTATUS(st);
        if (got != want) {
            fprintf(stderr, "line %d: %s returned %s, expected %s\n", line, what, osmp_status_name(got),
                    osmp_status_name(want));
            test_failures++;
            return;
        }
    }
    canary_fill(S, 3);
    canary_fill(R, 4);
    int got = run_call(team, &k, S, R);
    if (got != want) {
        fprintf(stderr, "line %d: %s returned %s, expected %s\n", line, what, osmp_status_name(got),
                osmp_status_name(want));
        test_failures++;
    }
    if (!canary_ok(S, 3) || !canary_ok(R, 4)) {
        fprintf(stderr, "line %d: %s wrote into the caller's buffers\n", line, what);
        test_failures++;
    }
}
#define EXPECT(team, k, want) expect_call_at(team, k, want, 1, __LINE__)
#define EXPECT_HERE(team, k, want) expect_call_at(team, k, want, 0, __LINE__)

/* Every collective with valid arguments on a handle that cannot be used. */
static void expect_all_colls_at(osmp_team_t team, int want, int isolate, int line)
{
    for (int c = 0; c < OSMP_COLL_COUNT; c++) expect_call_at(team, base((osmp_coll_t)c), want, isolate, line);
}
#define expect_all_colls(team, want, isolate) expect_all_colls_at(team, want, isolate, __LINE__)

static osmp_team_t world;

/* ---------------------------------------------------------------- 1. bad arguments, team of one */

static void test_bad_collective_args(void)
{
    REQUIRE_OK(osmp_init(&world));
    CHECK_INT(osmp_team_size(world), 1);
    CHECK_INT(osmp_team_rank(world), 0);
    static const osmp_dtype_t bad_dtype[] = {OSMP_DTYPE_COUNT, (osmp_dtype_t)-1, (osmp_dtype_t)1000,
                                             (osmp_dtype_t)INT_MIN};
    static const osmp_op_t bad_op[] = {OSMP_OP_COUNT, (osmp_op_t)-1, (osmp_op_t)INT_MAX};
    static const osmp_op_t int_only[] = {OSMP_LAND, OSMP_LOR, OSMP_LXOR, OSMP_BAND, OSMP_BOR, OSMP_BXOR};
    static const int bad_root[] = {-1, 1, INT_MIN, INT_MAX};
    /* count * element size > SIZE_MAX */
    static const struct {
        osmp_dtype_t d;
        size_t count;
    } too_big[] = {{OSMP_INT64, SIZE_MAX / 2 + 1}, {OSMP_UINT64, SIZE_MAX / 2 + 1}, {OSMP_DOUBLE, SIZE_MAX / 2 + 1},
                   {OSMP_UINT64, SIZE_MAX},        {OSMP_INT32, SIZE_MAX / 4 + 1},  {OSMP_FLOAT, SIZE_MAX / 4 + 1},
                   {OSMP_INT16, SIZE_MAX / 2 + 1}, {OSMP_DOUBLE, SIZE_MAX / 8 * 3}};

    for (int ci = 0; ci < OSMP_COLL_COUNT; ci++) {
        osmp_coll_t c = (osmp_coll_t)ci;
        struct call k = base(c);
        EXPECT(NULL, k, OSMP_ERR_INVALID_ARG);
        if (has_send(c)) {
            k = base(c), k.send = NUL;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        if (has_recv(c)) {
            k = base(c), k.recv = NUL;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        if (has_send(c) || has_recv(c)) {
            /* count 0: no buffer needed, nothing touched */
            k = base(c), k.count = 0, k.send = k.recv = NUL;
            EXPECT(world, k, OSMP_OK);
            k = base(c), k.count = 0;
            EXPECT(world, k, OSMP_OK);
        }
        for (size_t i = 0; has_root(c) && i < sizeof(bad_root) / sizeof(*bad_root); i++) {
            k = base(c), k.root = bad_root[i];
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            k.count = 0;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        for (size_t i = 0; has_dtype(c) && i < sizeof(bad_dtype) / sizeof(*bad_dtype); i++) {
            k = base(c), k.dtype = bad_dtype[i];
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            k.count = 0;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        for (size_t i = 0; has_op(c) && i < sizeof(bad_op) / sizeof(*bad_op); i++) {
            k = base(c), k.op = bad_op[i];
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            k.count = 0;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        for (int d = OSMP_FLOAT; has_op(c) && d <= OSMP_BFLOAT16; d++) /* the floating point types */
            for (size_t i = 0; i < sizeof(int_only) / sizeof(*int_only); i++) {
                k = base(c), k.dtype = (osmp_dtype_t)d, k.op = int_only[i];
                EXPECT(world, k, OSMP_ERR_TYPE);
                k.count = 0;
                EXPECT(world, k, OSMP_ERR_TYPE);
            }
        for (size_t i = 0; has_dtype(c) && i < sizeof(too_big) / sizeof(*too_big); i++) {
            k = base(c), k.dtype = too_big[i].d, k.count = too_big[i].count;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        /* OSMP_IN_PLACE is a send buffer (scatter, scatterv: a receive buffer at the root), never anything else. */
        if (has_recv(c) && !in_place_recv(c)) {
            k = base(c), k.recv = INP;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            k.send = INP;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            k.send = NUL;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        if (has_recv(c)) { /* in place with no buffer to work in */
            k = base(c);
            if (in_place_recv(c))
                k.recv = INP, k.send = NUL;
            else
                k.send = INP, k.recv = NUL;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        if (c == OSMP_COLL_BCAST) { /* MPI_Bcast has no MPI_IN_PLACE: buf is the receive buffer elsewhere */
            k = base(c), k.send = INP;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        if (in_place_recv(c)) { /* scatter's (scatterv's) send buffer is never in place */
            k = base(c), k.send = INP;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            k.recv = INP;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
        }
        /* The v variants' arrays: NULL where they are read (a team of one: its root reads all of them), with
         * a count array also when the count is 0 (nothing else says how many elements come); in place,
         * alltoallv reads no send side (checked valid in check_valid_calls). */
        for (int i = 0; i < NARR; i++) {
            if (!(has_arrays(c) & ARR(i))) continue;
            k = base(c), k.arr[i] = NUL;
            EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            if (i == SC || i == RC) {
                k.count = 0;
                EXPECT(world, k, OSMP_ERR_INVALID_ARG);
                k.send = k.recv = NUL;
                EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            }
            if (c == OSMP_COLL_ALLTOALLV && (i == RC || i == RD)) { /* in place, the receive side describes both */
                k = base(c), k.arr[i] = NUL, k.send = INP, k.arr[SC] = k.arr[SD] = NUL;
                EXPECT(world, k, OSMP_ERR_INVALID_ARG);
            }
        }
        /* Displacements whose block ends beyond SIZE_MAX bytes (or elements), on each side in turn. */
        static const struct {
            osmp_dtype_t d;
            size_t displ;
        } far[] = {{OSMP_INT32, SIZE_MAX / 2}, {OSMP_INT8, SIZE_MAX - 1}, {OSMP_INT32, SIZE_MAX / 4 - 2},
                   {OSMP_DOUBLE, SIZE_MAX / 8}, {OSMP_UINT16, SIZE_MAX}};
        for (int side = 0; side < 2; side++)
            for (size_t i = 0; (has_arrays(c) & ARR(side ? RD : SD)) && i < sizeof(far) / sizeof(*far); i++) {
                k = base(c), k.dtype = far[i].d, k.displ[side] = far[i].displ;
                EXPECT(world, k, OSMP_ERR_INVALID_ARG);
                if (c == OSMP_COLL_ALLTOALLV && side == 1) { /* in place: the receive side is read for both */
                    k.send = INP, k.arr[SC] = k.arr[SD] = NUL;
                    EXPECT(world, k, OSMP_ERR_INVALID_ARG);
                }
            }
    }
}

/* ---------------------------------------------------------------- valid calls give the right result */

static void fill_values(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 7 + 3);
}

/* The buffer holds n bytes of the pattern from byte `at` on and the canary everywhere else. */
static int result_ok(const unsigned char *r, size_t at, size_t n, unsigned seed)
{
    unsigned char want[BUFSZ];
    canary_fill(want, seed);
    fill_values(want + at, n);
    return memcmp(r, want, BUFSZ) == 0;
}

/* One valid call of every collective, with and without OSMP_IN_PLACE, on a team of one; the v variants also
 * with their blocks 3 elements into the buffers (bytes before them left alone), and alltoallv in place with
 * NULL sendcounts and sdispls (not read). Exscan leaves a team of one's recvbuf alone. */
static void check_valid_calls(osmp_team_t team)
{
    /* 4 elements of each type: at most 32 bytes moved, 24 bytes into the buffers */
    static const struct {
        osmp_coll_t c;
        osmp_dtype_t d;
        osmp_op_t op;
    } v[] = {
        {OSMP_COLL_BARRIER, OSMP_INT32, OSMP_SUM},
        {OSMP_COLL_BCAST, OSMP_INT64, OSMP_SUM},
        {OSMP_COLL_REDUCE, OSMP_INT32, OSMP_SUM},
        {OSMP_COLL_REDUCE, OSMP_DOUBLE, OSMP_MAX},
        {OSMP_COLL_ALLREDUCE, OSMP_UINT64, OSMP_BXOR},
        {OSMP_COLL_ALLREDUCE, OSMP_FLOAT, OSMP_MIN},
        {OSMP_COLL_GATHER, OSMP_INT16, OSMP_SUM},
        {OSMP_COLL_ALLGATHER, OSMP_UINT32, OSMP_SUM},
        {OSMP_COLL_SCATTER, OSMP_INT8, OSMP_SUM},
        {OSMP_COLL_REDUCE_SCATTER_BLOCK, OSMP_FLOAT, OSMP_SUM},
        {OSMP_COLL_REDUCE_SCATTER_BLOCK, OSMP_UINT16, OSMP_BOR},
        {OSMP_COLL_ALLTOALL, OSMP_DOUBLE, OSMP_SUM},
        {OSMP_COLL_GATHERV, OSMP_INT16, OSMP_SUM},
        {OSMP_COLL_SCATTERV, OSMP_INT8, OSMP_SUM},
        {OSMP_COLL_ALLGATHERV, OSMP_UINT32, OSMP_SUM},
        {OSMP_COLL_ALLTOALLV, OSMP_DOUBLE, OSMP_SUM},
        {OSMP_COLL_REDUCE_SCATTER, OSMP_FLOAT, OSMP_SUM},
        {OSMP_COLL_REDUCE_SCATTER, OSMP_UINT16, OSMP_BOR},
        {OSMP_COLL_SCAN, OSMP_INT32, OSMP_SUM},
        {OSMP_COLL_SCAN, OSMP_DOUBLE, OSMP_MAX},
        {OSMP_COLL_EXSCAN, OSMP_INT64, OSMP_SUM},
        {OSMP_COLL_EXSCAN, OSMP_UINT8, OSMP_BXOR},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
        for (size_t displ = 0; displ <= 3; displ += 3) {
            osmp_coll_t c = v[i].c;
            unsigned arrays = has_arrays(c);
            if (displ && !(arrays & (ARR(SD) | ARR(RD)))) continue;
            struct call k = base(c);
            k.dtype = v[i].d, k.op = v[i].op, k.displ[0] = k.displ[1] = displ;
            size_t e = osmp_dtype_size(v[i].d), n = c == OSMP_COLL_BARRIER ? 0 : 4 * e;
            size_t s_at = arrays & ARR(SD) ? displ * e : 0, r_at = arrays & ARR(RD) ? displ * e : 0;
            char what[256];
            describe(&k, what, sizeof(what));
            /* out of place: recv gets send's values, nothing around them; send unchanged */
            canary_fill(S, 5);
            fill_values(S + s_at, n);
            canary_fill(R, 6);
            int rc = run_call(team, &k, S, R);
            if (rc != OSMP_OK) fprintf(stderr, "  valid %s returned %s\n", what, osmp_status_name(rc));
            CHECK_INT(rc, OSMP_OK);
            if (!result_ok(S, s_at, n, 5)) {
                fprintf(stderr, "  valid %s changed its send buffer\n", what);
                test_failures++;
            }
            if (has_recv(c) && !result_ok(R, r_at, c == OSMP_COLL_EXSCAN ? 0 : n, 6)) {
                fprintf(stderr, "  valid %s: wrong result%s\n", what,
                        c == OSMP_COLL_EXSCAN ? " (rank 0's recvbuf must be left alone)" : "");
                test_failures++;
            }
            if (!has_recv(c)) continue;
            /* in place: the data is where it was */
            if (in_place_recv(c))
                k.recv = INP;
            else
                k.send = INP;
            if (c == OSMP_COLL_ALLTOALLV) k.arr[SC] = k.arr[SD] = NUL;
            describe(&k, what, sizeof(what));
            canary_fill(S, 7);
            canary_fill(R, 8);
            if (in_place_recv(c))
                fill_values(S + s_at, n);
            else
                fill_values(R + r_at, n);
            rc = run_call(team, &k, S, R);
            if (rc != OSMP_OK) fprintf(stderr, "  valid %s returned %s\n", what, osmp_status_name(rc));
            CHECK_INT(rc, OSMP_OK);
            int in_s = in_place_recv(c);
            if (!result_ok(S, s_at, in_s ? n : 0, 7) || !result_ok(R, r_at, in_s ? 0 : n, 8)) {
                fprintf(stderr, "  valid %s: wrong result in place\n", what);
                test_failures++;
            }
        }
    CHECK(osmp_team_plan(team) != NULL);
}

static void test_team_still_works(void)
{
    check_valid_calls(world);
}

/* ---------------------------------------------------------------- 2. destroyed handles */

static void test_destroyed_team(void)
{
    struct osmp_team_params p = {.rank = 0, .size = 1};
    osmp_team_t t = NULL;
    REQUIRE_OK(osmp_team_create(&p, &t));
    CHECK_INT(osmp_barrier(t), OSMP_OK);
    CHECK_INT(osmp_team_destroy(t), OSMP_OK);
    expect_all_colls(t, OSMP_ERR_BAD_TEAM, 1);
    CHECK_INT(osmp_team_rank(t), OSMP_ERR_BAD_TEAM);
    CHECK_INT(osmp_team_size(t), OSMP_ERR_BAD_TEAM);
    CHECK(osmp_team_plan(t) == NULL);
    osmp_team_t child = (osmp_team_t)(uintptr_t)0x5a5a;
    CHECK_INT(osmp_team_create_threads(t, 1, 0, &child), OSMP_ERR_BAD_TEAM);
    CHECK(child == (osmp_team_t)(uintptr_t)0x5a5a);
    CHECK_INT(osmp_team_destroy(t), OSMP_ERR_BAD_TEAM);
    CHECK_INT(osmp_team_destroy(t), OSMP_ERR_BAD_TEAM);
    /* a bad argument does not hide the dead handle, nor crash */
    struct call k = base(OSMP_COLL_ALLREDUCE);
    k.send = k.recv = NUL;
    EXPECT(t, k, OSMP_ERR_BAD_TEAM);
    k = base(OSMP_COLL_BCAST), k.root = -1, k.dtype = (osmp_dtype_t)-1;
    EXPECT(t, k, OSMP_ERR_BAD_TEAM);

    /* the live world is not affected */
    CHECK_INT(osmp_barrier(world), OSMP_OK);
}

static void test_finalize_and_init_again(void)
{
    osmp_team_t old = world, again = NULL;
    CHECK_INT(osmp_init(&again), OSMP_OK); /* a second init gives the same world */
    CHECK(again == old);
    CHECK_INT(osmp_finalize(), OSMP_OK);
    expect_all_colls(old, OSMP_ERR_BAD_TEAM, 1);
    CHECK_INT(osmp_team_rank(old), OSMP_ERR_BAD_TEAM);
    CHECK_INT(osmp_team_size(old), OSMP_ERR_BAD_TEAM);
    CHECK(osmp_team_plan(old) == NULL);
    CHECK_INT(osmp_team_destroy(old), OSMP_ERR_BAD_TEAM);
    CHECK_INT(osmp_finalize(), OSMP_OK); /* nothing left to finalize */
    world = NULL;
    REQUIRE_OK(osmp_init(&world));
    CHECK(world != old);
    CHECK_INT(osmp_team_size(world), 1);
    CHECK_INT(osmp_team_rank(world), 0);
    check_valid_calls(world);
    CHECK_INT(osmp_barrier(old), OSMP_ERR_BAD_TEAM); /* the new world did not revive the old handle */
}

/* ---------------------------------------------------------------- 3a. forked child */

static void test_forked_child_not_member(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        test_failures = 0;
        expect_all_colls(world, OSMP_ERR_NOT_MEMBER, 0);
        struct call k = base(OSMP_COLL_ALLREDUCE);
        k.count = 0;
        EXPECT_HERE(world, k, OSMP_ERR_NOT_MEMBER);
        CHECK_INT(osmp_team_rank(world), OSMP_ERR_NOT_MEMBER);
        CHECK_INT(osmp_team_size(world), OSMP_ERR_NOT_MEMBER);
        CHECK(osmp_team_plan(world) == NULL);
        osmp_team_t th = (osmp_team_t)(uintptr_t)0x5a5a;
        CHECK_INT(osmp_team_create_threads(world, 1, 0, &th), OSMP_ERR_NOT_MEMBER);
        CHECK(th == (osmp_team_t)(uintptr_t)0x5a5a);
        CHECK_INT(osmp_team_destroy(world), OSMP_ERR_NOT_MEMBER);
        CHECK_INT(osmp_barrier(world), OSMP_ERR_NOT_MEMBER); /* the failed destroy left it alone */
        /* the child can make a team of its own */
        struct osmp_team_params p = {.rank = 0, .size = 1};
        osmp_team_t own = NULL;
        CHECK_INT(osmp_team_create(&p, &own), OSMP_OK);
        if (own) {
            check_valid_calls(own);
            CHECK_INT(osmp_team_destroy(own), OSMP_OK);
        }
        fflush(NULL);
        _exit(test_failures ? 1 : 0);
    }
    CHECK(pid > 0);
    int st = -1;
    CHECK_INT(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st));
    CHECK_INT(WEXITSTATUS(st), 0);
    /* the parent's world is intact */
    CHECK_INT(osmp_barrier(world), OSMP_OK);
    check_valid_calls(world);
}

/* ---------------------------------------------------------------- 3b. thread teams */

static osmp_team_t th[2];
static int th_rc[2];
static pthread_barrier_t th_sync;

/* Argument errors on a team of two, rejected locally by each thread. */
static void thread_local_rejections(osmp_team_t mine, int rank)
{
    static const osmp_dtype_t one_byte[] = {OSMP_UINT8, OSMP_INT8};
    struct call k;
    /* count * 1 fits, count * 1 * size (2) does not */
    for (int ci = OSMP_COLL_GATHER; ci <= OSMP_COLL_ALLTOALL; ci++)
        for (size_t d = 0; d < 2; d++) {
            k = base((osmp_coll_t)ci), k.dtype = one_byte[d], k.count = SIZE_MAX / 2 + 1;
            EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
            k.count = SIZE_MAX;
            EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        }
    k = base(OSMP_COLL_ALLGATHER), k.dtype = OSMP_UINT16, k.count = SIZE_MAX / 4 + 1;
    EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
    for (int ci = 0; ci < OSMP_COLL_COUNT; ci++) {
        if (!has_root(ci)) continue;
        k = base((osmp_coll_t)ci), k.root = 2;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k.root = -1;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
    }
    if (rank == 1) { /* in place only at the root */
        k = base(OSMP_COLL_REDUCE), k.send = INP;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_GATHER), k.send = INP;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_SCATTER), k.recv = INP;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_GATHERV), k.send = INP;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k.arr[RC] = k.arr[RD] = NUL, k.recv = NUL; /* as a non-root passes them: still in place */
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_SCATTERV), k.recv = INP;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k.arr[SC] = k.arr[SD] = NUL, k.send = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        /* a non-root's own buffer with a non-zero count */
        k = base(OSMP_COLL_GATHERV), k.send = NUL, k.recv = NUL, k.arr[RC] = k.arr[RD] = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_SCATTERV), k.recv = NUL, k.send = NUL, k.arr[SC] = k.arr[SD] = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
    } else { /* the root needs its receive (scatter: send) buffer, and the v variants its arrays */
        k = base(OSMP_COLL_REDUCE), k.recv = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_GATHER), k.recv = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_SCATTER), k.send = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_GATHERV), k.recv = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        k = base(OSMP_COLL_SCATTERV), k.send = NUL;
        EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
        for (int c = 0; c < OSMP_COLL_COUNT; c++)
            for (int i = 0; has_root(c) && i < NARR; i++)
                if (has_arrays(c) & ARR(i)) {
                    k = base((osmp_coll_t)c), k.arr[i] = NUL;
                    EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
                }
    }
    /* every rank reads the arrays of the v variants without a root */
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
        for (int i = 0; !has_root(c) && i < NARR; i++)
            if (has_arrays(c) & ARR(i)) {
                k = base((osmp_coll_t)c), k.arr[i] = NUL;
                EXPECT_HERE(mine, k, OSMP_ERR_INVALID_ARG);
            }
}

static void *thread_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    th_rc[i] = osmp_team_create_threads(world, 2, i, &th[i]);
    pthread_barrier_wait(&th_sync); /* 1: both created */
    pthread_barrier_wait(&th_sync); /* 2: main checked the handles */
    if (th_rc[0] || th_rc[1]) return NULL;
    /* the other thread's handle is not mine */
    osmp_team_t other = th[1 - i];
    CHECK_INT(osmp_barrier(other), OSMP_ERR_NOT_MEMBER);
    int32_t in[4] = {1, 2, 3, 4}, out[4] = {9, 9, 9, 9};
    CHECK_INT(osmp_allreduce(other, in, out, 4, OSMP_INT32, OSMP_SUM), OSMP_ERR_NOT_MEMBER);
    CHECK(out[0] == 9 && out[1] == 9 && out[2] == 9 && out[3] == 9);
    CHECK_INT(osmp_team_destroy(other), OSMP_ERR_NOT_MEMBER);
    CHECK_INT(osmp_team_rank(other), OSMP_ERR_NOT_MEMBER);
    CHECK(osmp_team_plan(other) == NULL);
    pthread_barrier_wait(&th_sync); /* 3: cross checks done, before anyone joins a collective */

    osmp_team_t mine = th[i];
    CHECK(alloc_buffers());
    CHECK_INT(osmp_team_rank(mine), i);
    CHECK_INT(osmp_team_size(mine), 2);
    thread_local_rejections(mine, i);
    /* the team of two still works, including the buffers only the root needs */
    CHECK_INT(osmp_barrier(mine), OSMP_OK);
    int32_t v = i + 1, sum = -1;
    CHECK_INT(osmp_allreduce(mine, &v, &sum, 1, OSMP_INT32, OSMP_SUM), OSMP_OK);
    CHECK_INT(sum, 3);
    int32_t all[2] = {-1, -1};
    CHECK_INT(osmp_gather(mine, &v, i == 0 ? all : NULL, 1, OSMP_INT32, 0), OSMP_OK);
    if (i == 0) CHECK(all[0] == 1 && all[1] == 2);
    int32_t part = -1, src[2] = {10, 20};
    CHECK_INT(osmp_scatter(mine, i == 0 ? src : NULL, &part, 1, OSMP_INT32, 0), OSMP_OK);
    CHECK_INT(part, 10 * (i + 1));
    sum = -1;
    CHECK_INT(osmp_reduce(mine, &v, i == 1 ? &sum : NULL, 1, OSMP_INT32, OSMP_MAX, 1), OSMP_OK);
    if (i == 1) CHECK_INT(sum, 2);
    CHECK_INT(osmp_team_destroy(mine), OSMP_OK);
    free_buffers();
    return NULL;
}

static void test_thread_teams_not_member(void)
{
    pthread_t tid[2];
    pthread_barrier_init(&th_sync, NULL, 3);
    for (int i = 0; i < 2; i++) CHECK_INT(pthread_create(&tid[i], NULL, thread_main, (void *)(intptr_t)i), 0);
    pthread_barrier_wait(&th_sync); /* 1 */
    CHECK_INT(th_rc[0], OSMP_OK);
    CHECK_INT(th_rc[1], OSMP_OK);
    for (int i = 0; i < 2 && !th_rc[0] && !th_rc[1]; i++) {
        CHECK_INT(osmp_barrier(th[i]), OSMP_ERR_NOT_MEMBER);
        expect_all_colls(th[i], OSMP_ERR_NOT_MEMBER, 0);
        CHECK_INT(osmp_team_rank(th[i]), OSMP_ERR_NOT_MEMBER);
        CHECK_INT(osmp_team_size(th[i]), OSMP_ERR_NOT_MEMBER);
        CHECK(osmp_team_plan(th[i]) == NULL);
        osmp_team_t sub = (osmp_team_t)(uintptr_t)0x5a5a;
        CHECK_INT(osmp_team_create_threads(th[i], 1, 0, &sub), OSMP_ERR_NOT_MEMBER);
        CHECK(sub == (osmp_team_t)(uintptr_t)0x5a5a);
        CHECK_INT(osmp_team_destroy(th[i]), OSMP_ERR_NOT_MEMBER);
    }
    pthread_barrier_wait(&th_sync); /* 2 */
    pthread_barrier_wait(&th_sync); /* 3 */
    for (int i = 0; i < 2; i++) pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&th_sync);
    if (th_rc[0] || th_rc[1]) return;
    for (int i = 0; i < 2; i++) { /* destroyed by their owners: dead for everyone */
        CHECK_INT(osmp_barrier(th[i]), OSMP_ERR_BAD_TEAM);
        CHECK_INT(osmp_team_destroy(th[i]), OSMP_ERR_BAD_TEAM);
    }
    CHECK_INT(osmp_barrier(world), OSMP_OK);
}

/* OSMP_IN_PLACE where it is not allowed, on a team of two (bcast: the
 * non-root receives into buf): both members call, in a forked child of its own
 * (a parent team of one, two threads), under an alarm in case one joins alone. */
struct pair_arg {
    osmp_team_t parent;
    struct call k;
    int want, index, bad;
};

static void *pair_thread(void *arg)
{
    struct pair_arg *a = arg;
    osmp_team_t t = NULL;
    int rc = osmp_team_create_threads(a->parent, 2, a->index, &t);
    if (rc || !alloc_buffers()) {
        fprintf(stderr, "  thread %d: team of two: %s\n", a->index, osmp_status_name(rc));
        a->bad = 1;
        return NULL;
    }
    canary_fill(S, 11);
    canary_fill(R, 12);
    rc = run_call(t, &a->k, S, R);
    if (rc != a->want || !canary_ok(S, 11) || !canary_ok(R, 12)) {
        char what[256];
        describe(&a->k, what, sizeof(what));
        fprintf(stderr, "  rank %d of 2: %s returned %s (expected %s)%s\n", a->index, what, osmp_status_name(rc),
                osmp_status_name(a->want), canary_ok(S, 11) && canary_ok(R, 12) ? "" : ", wrote into the buffers");
        a->bad = 1;
    }
    osmp_team_destroy(t);
    free_buffers();
    return NULL;
}

static void expect_pair_at(struct call k, int want, int line)
{
    char what[256];
    describe(&k, what, sizeof(what));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        struct osmp_team_params p = {.rank = 0, .size = 1};
        struct pair_arg a[2] = {{.k = k, .want = want, .index = 0}, {.k = k, .want = want, .index = 1}};
        if (osmp_team_create(&p, &a[0].parent) != OSMP_OK) _exit(EXIT_SETUP);
        a[1].parent = a[0].parent;
        pthread_t tid[2];
        for (int i = 0; i < 2; i++)
            if (pthread_create(&tid[i], NULL, pair_thread, &a[i])) _exit(EXIT_SETUP);
        for (int i = 0; i < 2; i++) pthread_join(tid[i], NULL);
        fflush(NULL);
        _exit(a[0].bad || a[1].bad ? 1 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (pid > 0 && WIFSIGNALED(st))
            fprintf(stderr, "line %d: %s on a team of two: %s with signal %d\n", line, what,
                    WTERMSIG(st) == SIGALRM ? "hung, killed" : "crashed", WTERMSIG(st));
        else
            fprintf(stderr, "line %d: %s on a team of two failed (exit %d, expected %s at both ranks)\n", line,
                    what, pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1, osmp_status_name(want));
        test_failures++;
    }
}
#define EXPECT_PAIR(k, want) expect_pair_at(k, want, __LINE__)

static void test_in_place_team_of_two(void)
{
    EXPECT_PAIR(base(OSMP_COLL_BARRIER), OSMP_OK); /* the harness itself */
    struct call k = base(OSMP_COLL_BCAST);
    k.send = INP;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    k = base(OSMP_COLL_SCATTER), k.send = INP;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    k = base(OSMP_COLL_ALLREDUCE), k.recv = INP;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    k = base(OSMP_COLL_ALLGATHER), k.recv = INP;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    /* every collective: OSMP_IN_PLACE as a receive buffer (scatter, scatterv: as the send buffer), at every rank */
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        if (!has_recv(c)) continue;
        k = base((osmp_coll_t)c);
        if (in_place_recv(c))
            k.send = INP;
        else
            k.recv = INP;
        EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    }
    /* reduce_scatter: each rank's count fits, their sum (the send buffer) does not */
    k = base(OSMP_COLL_REDUCE_SCATTER), k.dtype = OSMP_UINT8, k.count = SIZE_MAX / 2 + 1;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    k.send = INP;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    k = base(OSMP_COLL_REDUCE_SCATTER), k.dtype = OSMP_INT64, k.count = SIZE_MAX / 16 + 1;
    EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    /* rank 1's block from the rank-order displacements (count at count) ends beyond SIZE_MAX: every rank
     * reads the arrays of allgatherv and alltoallv (gatherv's and scatterv's only the root: a non-root
     * knows only its own count) */
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        if (has_root(c) || !(has_arrays(c) & (ARR(SD) | ARR(RD)))) continue;
        k = base((osmp_coll_t)c), k.dtype = OSMP_UINT8, k.count = SIZE_MAX / 2 + 1;
        EXPECT_PAIR(k, OSMP_ERR_INVALID_ARG);
    }
}

/* ---------------------------------------------------------------- 4. team creation */

static void test_team_create_params(void)
{
    const osmp_team_t sentinel = (osmp_team_t)(uintptr_t)0x5a5a;
    osmp_team_t out = sentinel;
    struct osmp_team_params ok = {.rank = 0, .size = 1};
    CHECK_INT(osmp_team_create(NULL, &out), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_team_create(&ok, NULL), OSMP_ERR_INVALID_ARG);
    struct {
        int rank, size;
    } bad[] = {{0, 0}, {0, -1}, {-1, 1}, {1, 1}, {2, 2}, {INT_MIN, 1}, {0, INT_MIN}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct osmp_team_params p = ok;
        p.rank = bad[i].rank, p.size = bad[i].size;
        p.oob_allgather = NULL;
        CHECK_INT(osmp_team_create(&p, &out), OSMP_ERR_INVALID_ARG);
    }
    struct osmp_team_params two = {.rank = 0, .size = 2}; /* no out-of-band exchange */
    CHECK_INT(osmp_team_create(&two, &out), OSMP_ERR_INVALID_ARG);
    two.rank = 1;
    CHECK_INT(osmp_team_create(&two, &out), OSMP_ERR_INVALID_ARG);
    CHECK(out == sentinel);
    /* undocumented statuses: a failure, nothing written, nothing left in /dev/shm */
    struct osmp_team_params far = ok;
    far.mask |= OSMP_TEAM_PARAM_CORE;
    far.core = 1 << 20;
    int rc = osmp_team_create(&far, &out);
    CHECK(rc < 0);
    struct osmp_team_params spec = ok;
    spec.mask |= OSMP_TEAM_PARAM_HIERARCHY;
    spec.hierarchy = "l3,bogus";
    rc = osmp_team_create(&spec, &out);
    CHECK(rc < 0);
    CHECK(out == sentinel);
    /* the line that names the participant and the step (the same on every participant), "" where the
     * arguments are refused before the exchange */
    CHECK_STR(osmp_team_last_error(), "team creation: rank 0: malformed hierarchy spec (reading the knobs)");
    CHECK_INT(osmp_team_create(&two, &out), OSMP_ERR_INVALID_ARG);
    CHECK_STR(osmp_team_last_error(), "");
    /* parameters of a newer header (unknown mask bits) and a topology bit without a topology */
    struct osmp_team_params newer = ok;
    newer.mask = 1u << 20;
    CHECK_INT(osmp_team_create(&newer, &out), OSMP_ERR_INVALID_ARG);
    struct osmp_team_params notopo = ok;
    notopo.mask = OSMP_TEAM_PARAM_TOPO;
    CHECK_INT(osmp_team_create(&notopo, &out), OSMP_ERR_INVALID_ARG);
    struct osmp_team_params notraffic = ok;
    notraffic.mask = OSMP_TEAM_PARAM_TRAFFIC; /* the bit without the counters */
    CHECK_INT(osmp_team_create(&notraffic, &out), OSMP_ERR_INVALID_ARG);
    struct osmp_team_params negcore = ok;
    negcore.mask = OSMP_TEAM_PARAM_CORE;
    negcore.core = -1;
    CHECK_INT(osmp_team_create(&negcore, &out), OSMP_ERR_RANGE);
    CHECK(out == sentinel);
    /* a caller's topology: its cores, not this machine's, bound the core */
    osmp_topo_t eight;
    CHECK_INT(osmp_topo_load(OSMP_TOPO_SYNTHETIC, "pack:2 core:4 pu:1", 0, &eight), OSMP_OK);
    CHECK_INT(osmp_topo_is_this_machine(eight), 0);
    struct osmp_team_params own = ok;
    own.mask = OSMP_TEAM_PARAM_TOPO | OSMP_TEAM_PARAM_CORE;
    own.topo = eight;
    own.core = 8;
    CHECK_INT(osmp_team_create(&own, &out), OSMP_ERR_RANGE);
    CHECK_STR(osmp_team_last_error(), "team creation: rank 0: index out of range (building the plans)");
    own.core = 7;
    osmp_team_t mine;
    CHECK_INT(osmp_team_create(&own, &mine), OSMP_OK);
    CHECK_STR(osmp_team_last_error(), "");
    CHECK_INT(osmp_barrier(mine), OSMP_OK);
    CHECK_INT(osmp_team_destroy(mine), OSMP_OK);
    osmp_topo_destroy(eight);
    /* the version of the library is the header's */
    int major = -1, minor = -1, patch = -1;
    CHECK_INT(osmp_version(&major, &minor, &patch), OSMP_VERSION);
    CHECK_INT(major, OSMP_VERSION_MAJOR);
    CHECK_INT(minor, OSMP_VERSION_MINOR);
    CHECK_INT(patch, OSMP_VERSION_PATCH);
    CHECK_INT(osmp_version(NULL, NULL, NULL), OSMP_VERSION);

    /* osmp_team_create_threads */
    CHECK_INT(osmp_team_create_threads(NULL, 1, 0, &out), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_team_create_threads(world, 1, 0, NULL), OSMP_ERR_INVALID_ARG);
    struct {
        int n, index;
    } tb[] = {{0, 0}, {-1, 0}, {INT_MIN, 0}, {1, -1}, {1, 1}, {2, 2}, {2, -1}, {3, INT_MAX}, {0, -1}};
    for (size_t i = 0; i < sizeof(tb) / sizeof(*tb); i++)
        CHECK_INT(osmp_team_create_threads(world, tb[i].n, tb[i].index, &out), OSMP_ERR_INVALID_ARG);
    CHECK(out == sentinel);
    CHECK_INT(osmp_barrier(world), OSMP_OK);
}

/* ---------------------------------------------------------------- 5. init, status strings */

/* The list of collectives: the library's names and flags are the header's, and every row of coll_args is
 * there and agrees with the map (arrays exactly for the v variants; OSMP_IN_PLACE only with buffers). */
static void test_collective_list(void)
{
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        if (!coll_args[c].name) {
            fprintf(stderr, "  collective %d (%s) has no row in coll_args\n", c, osmp_coll_name((osmp_coll_t)c));
            test_failures++;
            continue;
        }
        CHECK_STR(osmp_coll_name((osmp_coll_t)c), coll_args[c].name);
        CHECK_INT(osmp_coll_flags((osmp_coll_t)c), map_flags[c]);
        CHECK_INT(!!(map_flags[c] & OSMP_COLL_VECTOR), has_arrays(c) != 0);
        CHECK(coll_args[c].in_place == IP_NONE || has_recv(c));
        CHECK(!has_op(c) || has_dtype(c));
    }
    CHECK_INT(OSMP_COLL_COUNT, 16);
    CHECK(osmp_coll_name(OSMP_COLL_COUNT) == NULL);
    CHECK(osmp_coll_name((osmp_coll_t)-1) == NULL);
    CHECK_INT((int)osmp_coll_flags(OSMP_COLL_COUNT), 0);
}

static void test_init_and_status(void)
{
    CHECK_INT(osmp_init(NULL), OSMP_ERR_INVALID_ARG);
    static const struct {
        int value;
        const char *name, *text;
    } map[] = {
#define ROW(name, value, text) {value, "OSMP_" #name, text},
        OSMP_STATUS_MAP(ROW)
#undef ROW
    };
    const int n = (int)(sizeof(map) / sizeof(*map));
    for (int i = 0; i < n; i++) {
        const char *s = osmp_status_str(map[i].value), *nm = osmp_status_name(map[i].value);
        CHECK(s != NULL && nm != NULL);
        CHECK_STR(s, map[i].text);
        CHECK_STR(nm, map[i].name);
        CHECK(s && strcmp(s, "unknown status") != 0);
        for (int j = 0; j < i; j++) {
            CHECK(map[i].value != map[j].value);
            CHECK(nm && strcmp(nm, osmp_status_name(map[j].value)) != 0);
            CHECK(s && strcmp(s, osmp_status_str(map[j].value)) != 0);
        }
    }
    CHECK_INT(OSMP_ERR_PEER_LOST, -13);
    CHECK_INT(OSMP_ERR_TIMEOUT, -14);
    CHECK_INT(OSMP_ERR_MISMATCH, -15);
    CHECK_INT(OSMP_ERR_BAD_TEAM, -16);
    CHECK_INT(OSMP_ERR_NOT_MEMBER, -17);
    CHECK_INT(OSMP_ERR_COPY, -18);
    static const int unknown[] = {1, 2, -19, -100, 1000, INT_MIN, INT_MAX};
    for (size_t u = 0; u < sizeof(unknown) / sizeof(*unknown); u++) {
        CHECK_STR(osmp_status_str(unknown[u]), "unknown status");
        const char *nm = osmp_status_name(unknown[u]);
        CHECK(nm != NULL); /* the name's fallback is not documented: just not a real one */
        for (int i = 0; nm && i < n; i++) CHECK(strcmp(nm, map[i].name) != 0);
    }
    /* datatype sizes: 0 for an invalid one */
    CHECK_INT(osmp_dtype_size(OSMP_DTYPE_COUNT), 0);
    CHECK_INT(osmp_dtype_size((osmp_dtype_t)-1), 0);
    CHECK_INT(osmp_dtype_size((osmp_dtype_t)INT_MIN), 0);
    CHECK_INT(osmp_dtype_size(OSMP_DOUBLE), 8);
}

/* ---------------------------------------------------------------- 6. topology, plan, graph */

static void test_topology_args(void)
{
    const osmp_topo_t sentinel = (osmp_topo_t)(uintptr_t)0x5a5a;
    osmp_topo_t out = sentinel;
    char path[4200];
    snprintf(path, sizeof(path), "%s/does-not-exist-%d.xml", OSMP_TOPOLOGIES_DIR, (int)getpid());

    CHECK(osmp_topo_load(OSMP_TOPO_SYNTHETIC, "package:2 core:4 pu:1", 0, NULL) < 0);
    CHECK(osmp_topo_load((osmp_topo_source_t)3, "package:2 core:4 pu:1", 0, &out) < 0);
    CHECK(osmp_topo_load((osmp_topo_source_t)-1, "package:2 core:4 pu:1", 0, &out) < 0);
    CHECK(osmp_topo_load(OSMP_TOPO_SYNTHETIC, "package:2 core:4 pu:1", 1u << 7, &out) < 0);
    CHECK(osmp_topo_load(OSMP_TOPO_XML, NULL, 0, &out) < 0);
    CHECK(osmp_topo_load(OSMP_TOPO_SYNTHETIC, NULL, 0, &out) < 0);
    CHECK(out == sentinel);
    /* documented: missing or malformed input */
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, path, 0, &out), OSMP_ERR_TOPO_LOAD);
    CHECK(strlen(osmp_topo_last_error()) > 0);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/test.h", 0, &out), OSMP_ERR_TOPO_LOAD);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, "/", 0, &out), OSMP_ERR_TOPO_LOAD);
    static const char *const bad_synth[] = {"", "   ", "bogus:3", "package:2 core:0 pu:1", "package:-1 pu:1",
                                            "package:2 core:4 pu:1 junk"};
    for (size_t i = 0; i < sizeof(bad_synth) / sizeof(*bad_synth); i++) {
        int rc = osmp_topo_load(OSMP_TOPO_SYNTHETIC, bad_synth[i], 0, &out);
        if (rc != OSMP_ERR_TOPO_LOAD) fprintf(stderr, "  synthetic \"%s\": %s\n", bad_synth[i], osmp_status_name(rc));
        CHECK_INT(rc, OSMP_ERR_TOPO_LOAD);
        CHECK(strlen(osmp_topo_last_error()) > 0);
    }
    CHECK(out == sentinel);

    osmp_topo_t t = load_checked(OSMP_TOPO_SYNTHETIC, "package:2 core:4 pu:1", 0);
    if (!t) return;
    CHECK_INT(osmp_topo_last_error()[0], 0); /* a good load clears it */
    CHECK_INT(osmp_topo_ncores(t), 8);
    CHECK(osmp_topo_ncores(NULL) < 0);
    CHECK(osmp_topo_root(NULL) == NULL);
    CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_KIND_COUNT), 0);
    CHECK_INT(osmp_topo_count(t, (osmp_domain_kind_t)-1), 0);
    CHECK_INT(osmp_topo_count(NULL, OSMP_DOMAIN_CORE), 0);
    /* osmp_topo_domain: NULL out of range */
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_CORE, 7) != NULL);
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_CORE, 8) == NULL);
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_CORE, -1) == NULL);
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_CORE, INT_MAX) == NULL);
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_PACKAGE, 2) == NULL);
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_KIND_COUNT, 0) == NULL);
    CHECK(osmp_topo_domain(t, (osmp_domain_kind_t)-1, 0) == NULL);
    CHECK(osmp_topo_domain(NULL, OSMP_DOMAIN_CORE, 0) == NULL);
    /* osmp_topo_domain_of: NULL if core out of range */
    CHECK(osmp_topo_domain_of(t, 8, OSMP_DOMAIN_PACKAGE) == NULL);
    CHECK(osmp_topo_domain_of(t, -1, OSMP_DOMAIN_PACKAGE) == NULL);
    CHECK(osmp_topo_domain_of(t, 0, OSMP_DOMAIN_KIND_COUNT) == NULL);
    CHECK(osmp_topo_domain_of(t, 0, (osmp_domain_kind_t)-1) == NULL);
    CHECK(osmp_topo_domain_of(NULL, 0, OSMP_DOMAIN_PACKAGE) == NULL);
    /* kind names */
    CHECK(osmp_domain_kind_name(OSMP_DOMAIN_KIND_COUNT) == NULL);
    CHECK(osmp_domain_kind_name((osmp_domain_kind_t)-1) == NULL);
    CHECK_INT(osmp_domain_kind_parse("bogus", 5), -1);
    CHECK_INT(osmp_domain_kind_parse("", 0), -1);
    CHECK_INT(osmp_domain_kind_parse("l3x", 2), OSMP_DOMAIN_L3); /* len bounds the name */
    (void)osmp_dist_rung_name(-1); /* no fallback documented: no crash */
    (void)osmp_dist_rung_name(OSMP_DIST_RUNGS);
    (void)osmp_graph_kind_name((osmp_graph_kind_t)-1);
    (void)osmp_graph_kind_name((osmp_graph_kind_t)99);
    /* osmp_topo_distance: negative status if out of range; key: UINT32_MAX */
    CHECK_INT(osmp_topo_distance(t, 0, 7), OSMP_DIST_MACHINE);
    static const int bad_core[][2] = {{0, 8}, {8, 0}, {-1, 0}, {0, -1}, {INT_MAX, INT_MIN}};
    for (size_t i = 0; i < sizeof(bad_core) / sizeof(*bad_core); i++) {
        CHECK(osmp_topo_distance(t, bad_core[i][0], bad_core[i][1]) < 0);
        CHECK(osmp_topo_distance_key(t, bad_core[i][0], bad_core[i][1]) == UINT32_MAX);
    }
    CHECK(osmp_topo_distance(NULL, 0, 0) < 0);
    CHECK(osmp_topo_distance_key(NULL, 0, 0) == UINT32_MAX);
    /* osmp_topo_check: OSMP_ERR_TOPO_INVALID without a topology */
    char why[128] = "";
    CHECK_INT(osmp_topo_check(NULL, why, sizeof(why)), OSMP_ERR_TOPO_INVALID);
    CHECK_INT(osmp_topo_check(NULL, NULL, 0), OSMP_ERR_TOPO_INVALID);

    /* osmp_topo_place: INVALID_ARG for an unknown policy, cores untouched */
    int cores[16], keep[16];
    for (int i = 0; i < 16; i++) cores[i] = keep[i] = -7 - i;
    char err[256];
    static const char *const bad_policy[] = {"bogus", "", "random:", "random:x", "random:-1", "random:1x",
                                             "random:99999999999999999999999", "linear "};
    for (size_t i = 0; i < sizeof(bad_policy) / sizeof(*bad_policy); i++) {
        err[0] = '\0';
        CHECK_INT(osmp_topo_place(t, bad_policy[i], 4, cores, err, sizeof(err)), OSMP_ERR_INVALID_ARG);
        CHECK(err[0] != '\0');
    }
    CHECK(osmp_topo_place(NULL, "linear", 4, cores, err, sizeof(err)) < 0);
    CHECK(osmp_topo_place(t, "linear", 4, NULL, err, sizeof(err)) < 0);
    CHECK(osmp_topo_place(t, "linear", -1, cores, err, sizeof(err)) < 0);
    CHECK(osmp_topo_place(t, "bogus", 4, cores, NULL, 0) < 0);
    CHECK(memcmp(cores, keep, sizeof(cores)) == 0);

    /* osmp_core_list_parse: INVALID_ARG malformed, RANGE out of range or over cap; nothing written */
    int n = -5;
    CHECK(osmp_core_list_parse(NULL, 8, cores, 16, &n, err, sizeof(err)) < 0);
    CHECK(osmp_core_list_parse("0-3", 8, cores, 16, NULL, err, sizeof(err)) < 0);
    CHECK(osmp_core_list_parse("0-3", 8, NULL, 16, &n, err, sizeof(err)) < 0);
    static const struct {
        const char *list;
        int cap, want;
    } cl[] = {
        {"0", 0, OSMP_ERR_RANGE},           {"0-3", 3, OSMP_ERR_RANGE},         {"5-2", 16, OSMP_ERR_INVALID_ARG},
        {"99999999999", 16, OSMP_ERR_RANGE}, {"0-99999999999", 16, OSMP_ERR_RANGE}, {"8", 16, OSMP_ERR_RANGE},
        {"", 16, OSMP_ERR_INVALID_ARG},      {"-1", 16, OSMP_ERR_INVALID_ARG},    {"1,", 16, OSMP_ERR_INVALID_ARG},
        {",1", 16, OSMP_ERR_INVALID_ARG},    {"1-", 16, OSMP_ERR_INVALID_ARG},    {"a", 16, OSMP_ERR_INVALID_ARG},
        {"1--2", 16, OSMP_ERR_INVALID_ARG},  {"0-7,0-7,0-7", 16, OSMP_ERR_RANGE}, {"1 ", 16, OSMP_ERR_INVALID_ARG},
    };
    for (size_t i = 0; i < sizeof(cl) / sizeof(*cl); i++) {
        err[0] = '\0';
        int rc = osmp_core_list_parse(cl[i].list, 8, cl[i].cap ? cores : NULL, cl[i].cap, &n, err, sizeof(err));
        if (rc != cl[i].want) fprintf(stderr, "  core list \"%s\" cap %d: %s\n", cl[i].list, cl[i].cap, osmp_status_name(rc));
        CHECK_INT(rc, cl[i].want);
        CHECK(err[0] != '\0');
    }
    CHECK_INT(n, -5);
    CHECK(memcmp(cores, keep, sizeof(cores)) == 0);
    CHECK_INT(osmp_core_list_parse("5-2", 8, cores, 16, &n, NULL, 0), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_core_list_parse("0-7", 8, cores, 16, &n, err, sizeof(err)), OSMP_OK);
    CHECK_INT(n, 8);

    /* osmp_spec_parse: OSMP_ERR_SPEC with a reason; levels and count untouched */
    struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS], lv_keep[OSMP_SPEC_MAX_LEVELS];
    memset(lv, 0x5a, sizeof(lv));
    memcpy(lv_keep, lv, sizeof(lv));
    int nl = -5;
    CHECK(osmp_spec_parse(NULL, lv, &nl, err, sizeof(err)) < 0);
    CHECK(osmp_spec_parse("l3", NULL, &nl, err, sizeof(err)) < 0);
    CHECK(osmp_spec_parse("l3", lv, NULL, err, sizeof(err)) < 0);
    static const char *const bad_spec[] = {
        "bogus", "l3,,package", "l3,", ",l3", "pu", "l3:0", "l3:4097", "l3:-1", "l3:x", "l3:", "l3:99999999999999999999",
        "l3 package", "l3;package", "\xff", "l3:2:2",
        "l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3,l3" /* 17 levels */};
    for (size_t i = 0; i < sizeof(bad_spec) / sizeof(*bad_spec); i++) {
        err[0] = '\0';
        int rc = osmp_spec_parse(bad_spec[i], lv, &nl, err, sizeof(err));
        if (rc != OSMP_ERR_SPEC) fprintf(stderr, "  spec \"%s\": %s\n", bad_spec[i], osmp_status_name(rc));
        CHECK_INT(rc, OSMP_ERR_SPEC);
        CHECK(err[0] != '\0');
        CHECK_INT(osmp_spec_parse(bad_spec[i], lv, &nl, NULL, 0), OSMP_ERR_SPEC);
    }
    CHECK_INT(nl, -5);
    CHECK(memcmp(lv, lv_keep, sizeof(lv)) == 0);

    /* osmp_plan_default_spec: a buffer too small fails without writing into it */
    char spec[64];
    CHECK_INT(osmp_plan_default_spec(t, spec, sizeof(spec)), OSMP_OK);
    CHECK(osmp_plan_default_spec(NULL, spec, sizeof(spec)) < 0);
    CHECK(osmp_plan_default_spec(t, NULL, 16) < 0);
    char small[3] = {'#', '#', '#'};
    CHECK(osmp_plan_default_spec(t, small, sizeof(small)) < 0);
    if (small[0] != '#' || small[1] != '#' || small[2] != '#')
        fprintf(stderr, "  osmp_plan_default_spec(len 3) wrote \"%.2s\" into its output on failure\n", small);
    CHECK(small[0] == '#' && small[1] == '#' && small[2] == '#');

    /* osmp_plan_create: RANGE for a core or root out of range, SPEC for a bad spec */
    const int good[4] = {0, 1, 4, 5}, far[4] = {0, 1, 8, 5}, neg[4] = {0, -1, 4, 5};
    const struct osmp_plan *psent = (const struct osmp_plan *)(uintptr_t)0x5a5a;
    struct osmp_plan *plan = (struct osmp_plan *)(uintptr_t)psent;
    CHECK(osmp_plan_create(t, NULL, 4, NULL, 0, &plan) < 0);
    CHECK(osmp_plan_create(NULL, good, 4, NULL, 0, &plan) < 0);
    CHECK(osmp_plan_create(t, good, 4, NULL, 0, NULL) < 0);
    CHECK(osmp_plan_create(t, good, 0, NULL, 0, &plan) < 0);
    CHECK(osmp_plan_create(t, good, -1, NULL, 0, &plan) < 0);
    CHECK_INT(osmp_plan_create(t, good, 4, NULL, 4, &plan), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, good, 4, NULL, -1, &plan), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, far, 4, NULL, 0, &plan), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, neg, 4, NULL, 0, &plan), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, good, 4, "bogus", 0, &plan), OSMP_ERR_SPEC);
    CHECK_INT(osmp_plan_create(t, good, 4, "l3:0", 0, &plan), OSMP_ERR_SPEC);
    CHECK(plan == psent);
    plan = NULL;
    CHECK_INT(osmp_plan_create(t, good, 4, NULL, 0, &plan), OSMP_OK);
    CHECK_INT(osmp_plan_check(NULL, why, sizeof(why)), OSMP_ERR_PLAN_INVALID);

    /* osmp_graph_create: RANGE for root, a core or too many ranks (MST, RING) */
    const struct osmp_graph *gsent = (const struct osmp_graph *)(uintptr_t)0x5a5a;
    struct osmp_graph *g = (struct osmp_graph *)(uintptr_t)gsent;
    CHECK(osmp_graph_create(t, NULL, 4, 0, OSMP_GRAPH_MST, NULL, &g) < 0);
    CHECK(osmp_graph_create(NULL, good, 4, 0, OSMP_GRAPH_MST, NULL, &g) < 0);
    CHECK(osmp_graph_create(t, good, 4, 0, OSMP_GRAPH_MST, NULL, NULL) < 0);
    CHECK(osmp_graph_create(t, good, 0, 0, OSMP_GRAPH_MST, NULL, &g) < 0);
    CHECK(osmp_graph_create(t, good, -1, 0, OSMP_GRAPH_MST, NULL, &g) < 0);
    CHECK(osmp_graph_create(t, good, 4, 0, (osmp_graph_kind_t)99, NULL, &g) < 0);
    CHECK(osmp_graph_create(t, good, 4, 0, (osmp_graph_kind_t)-1, NULL, &g) < 0);
    CHECK(osmp_graph_create(t, good, 4, 0, OSMP_GRAPH_PLAN, NULL, &g) < 0); /* PLAN needs the plan */
    if (plan) {
        CHECK(osmp_graph_create(t, good, 3, 0, OSMP_GRAPH_PLAN, plan, &g) < 0); /* not this plan's size */
        CHECK(osmp_graph_create(t, good, 4, 1, OSMP_GRAPH_PLAN, plan, &g) < 0); /* nor its root */
    }
    for (int kind = OSMP_GRAPH_PLAN; kind <= OSMP_GRAPH_RANKRING; kind++) {
        CHECK_INT(osmp_graph_create(t, good, 4, 4, (osmp_graph_kind_t)kind, plan, &g), OSMP_ERR_RANGE);
        CHECK_INT(osmp_graph_create(t, good, 4, -1, (osmp_graph_kind_t)kind, plan, &g), OSMP_ERR_RANGE);
        if (kind != OSMP_GRAPH_PLAN) {
            CHECK_INT(osmp_graph_create(t, far, 4, 0, (osmp_graph_kind_t)kind, NULL, &g), OSMP_ERR_RANGE);
            CHECK_INT(osmp_graph_create(t, neg, 4, 0, (osmp_graph_kind_t)kind, NULL, &g), OSMP_ERR_RANGE);
        }
    }
    static int many[OSMP_GRAPH_MAX_RANKS + 1]; /* all on core 0: valid cores, too many ranks */
    CHECK_INT(osmp_graph_create(t, many, OSMP_GRAPH_MAX_RANKS + 1, 0, OSMP_GRAPH_MST, NULL, &g), OSMP_ERR_RANGE);
    CHECK_INT(osmp_graph_create(t, many, OSMP_GRAPH_MAX_RANKS + 1, 0, OSMP_GRAPH_RING, NULL, &g), OSMP_ERR_RANGE);
    CHECK(g == gsent);

    /* destroy functions take NULL */
    osmp_graph_destroy(NULL);
    osmp_plan_destroy(NULL);
    osmp_topo_destroy(NULL);
    osmp_plan_destroy(plan);
    osmp_topo_destroy(t);
}

/* ---------------------------------------------------------------- main */

/* Outside osmp-run, with default knobs, whatever the caller's environment. */
static void clean_environment(void)
{
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "OSMP_", 5) == 0) {
                char name[256];
                size_t len = strcspn(*e, "=");
                snprintf(name, sizeof(name), "%.*s", (int)len, *e);
                unsetenv(name);
                again = 1;
                break;
            }
    }
    setenv("OSMP_JOIN_TIMEOUT", "30", 1); /* a hung thread team fails before ctest's timeout */
}

int main(void)
{
    clean_environment();
    if (!alloc_buffers()) return 1;
    RUN(test_collective_list);
    RUN(test_init_and_status);
    RUN(test_bad_collective_args);
    if (!world) return TEST_EXIT();
    RUN(test_team_still_works);
    RUN(test_team_create_params);
    RUN(test_destroyed_team);
    RUN(test_forked_child_not_member);
    RUN(test_thread_teams_not_member);
    RUN(test_in_place_team_of_two);
    RUN(test_finalize_and_init_again);
    RUN(test_topology_args);
    CHECK_INT(osmp_finalize(), OSMP_OK);
    free_buffers();
    return TEST_EXIT();
}
