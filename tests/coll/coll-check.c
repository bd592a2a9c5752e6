/*
 * coll-check: run every collective of the public API on a team and check every
 * result exactly (integers) or against a sequential reference and bitwise
 * across participants (floating point). Written against include/osmp.h only,
 * with its own reference arithmetic (not the library's kernels).
 *
 *   osmp-run -n N [--topology F.xml ...] -- coll-check [--threads T] [--level quick|full]
 *
 * With --threads T every process starts T threads that form one team (threads
 * of several processes when run under osmp-run with N > 1). Exit status 0 when
 * every check passed; the first failure prints what differed and exits 1.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osmp.h"

static int level_full;
static int nthreads;
static osmp_team_t world;

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, "coll-check: rank %d/%d: ", osmp_team_rank(t), osmp_team_size(t));                   \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        fflush(stderr);                                                                                      \
        _exit(1);                                                                                            \
    } while (0)

#define EXPECT_OK(call)                                                                                      \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != OSMP_OK) FAIL("%s returned %s", #call, osmp_status_name(rc_));                            \
    } while (0)

static const char *const dtype_names[] = {"int8",   "int16",  "int32",  "int64", "uint8",
                                          "uint16", "uint32", "uint64", "float", "double"};
static const char *const op_names[] = {"sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor"};

static int is_float(osmp_dtype_t d)
{
    return d == OSMP_FLOAT || d == OSMP_DOUBLE;
}

static int is_signed(osmp_dtype_t d)
{
    return d <= OSMP_INT64;
}

static int op_allowed(osmp_dtype_t d, osmp_op_t op)
{
    return !is_float(d) || op <= OSMP_MAX;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ---- element access through 64-bit integers or doubles ---- */

static int64_t get_int(osmp_dtype_t d, const void *p, size_t i)
{
    switch (d) {
    case OSMP_INT8: return ((const int8_t *)p)[i];
    case OSMP_INT16: return ((const int16_t *)p)[i];
    case OSMP_INT32: return ((const int32_t *)p)[i];
    case OSMP_INT64: return ((const int64_t *)p)[i];
    case OSMP_UINT8: return ((const uint8_t *)p)[i];
    case OSMP_UINT16: return ((const uint16_t *)p)[i];
    case OSMP_UINT32: return ((const uint32_t *)p)[i];
    case OSMP_UINT64: return (int64_t)((const uint64_t *)p)[i];
    default: return 0;
    }
}

/* Store the low bits of v (wrap-around, as the library promises). */
static void put_int(osmp_dtype_t d, void *p, size_t i, uint64_t v)
{
    switch (d) {
    case OSMP_INT8: case OSMP_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case OSMP_INT16: case OSMP_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case OSMP_INT32: case OSMP_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = v; break;
    }
}

static double get_f(osmp_dtype_t d, const void *p, size_t i)
{
    return d == OSMP_FLOAT ? ((const float *)p)[i] : ((const double *)p)[i];
}

static void put_f(osmp_dtype_t d, void *p, size_t i, double v)
{
    if (d == OSMP_FLOAT)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

/* Input elements first .. first+count-1 of `rank` for an operation (salt separates calls). */
static void fill(osmp_dtype_t d, osmp_op_t op, void *buf, size_t first, size_t count, int rank, uint64_t salt)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t h = mix(salt * 0x100000001b3ULL + (uint64_t)rank * 1000003ULL + first + i);
        if (is_float(d))
            put_f(d, buf, i, op == OSMP_PROD ? 1.0 + (double)((int)(h % 17) - 8) / 64.0
                                              : (double)((int)(h % 2001) - 1000) / 8.0);
        else
            put_int(d, buf, i, (op >= OSMP_LAND && op <= OSMP_LXOR && h % 3 == 0) ? 0 : h >> 7);
    }
}

/* Reference: fold the inputs of ranks 0..n-1 in order, in the type's own width. */
static void reference(osmp_dtype_t d, osmp_op_t op, void *out, size_t first, size_t count, int n, uint64_t salt)
{
    size_t e = osmp_dtype_size(d);
    char *tmp = malloc(e * count);
    for (int r = 0; r < n; r++) {
        fill(d, op, r ? tmp : out, first, count, r, salt);
        if (!r) continue;
        for (size_t i = 0; i < count; i++) {
            if (is_float(d)) {
                double a = get_f(d, out, i), b = get_f(d, tmp, i), v = 0;
                switch (op) {
                case OSMP_SUM: v = a + b; break;
                case OSMP_PROD: v = a * b; break;
                case OSMP_MIN: v = b < a ? b : a; break;
                default: v = b > a ? b : a; break;
                }
                put_f(d, out, i, v);
                continue;
            }
            int64_t a = get_int(d, out, i), b = get_int(d, tmp, i);
            uint64_t ua = (uint64_t)a, ub = (uint64_t)b, v = 0;
            int less = is_signed(d) ? b < a : (uint64_t)b < (uint64_t)a;
            switch (op) {
            case OSMP_SUM: v = ua + ub; break;
            case OSMP_PROD: v = ua * ub; break;
            case OSMP_MIN: v = less ? ub : ua; break;
            case OSMP_MAX: v = less ? ua : ub; break;
            case OSMP_LAND: v = a && b; break;
            case OSMP_LOR: v = a || b; break;
            case OSMP_LXOR: v = !a != !b; break;
            case OSMP_BAND: v = ua & ub; break;
            case OSMP_BOR: v = ua | ub; break;
            case OSMP_BXOR: v = ua ^ ub; break;
            default: break;
            }
            put_int(d, out, i, v);
        }
    }
    /* Logical operations give 0 or 1, also for a lone contribution (osmp.h). */
    for (size_t i = 0; op >= OSMP_LAND && op <= OSMP_LXOR && i < count; i++)
        put_int(d, out, i, get_int(d, out, i) != 0);
    free(tmp);
}

static uint64_t checksum(const void *p, size_t bytes)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < bytes; i++) h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ULL;
    return h;
}

/* Compare a reduction result with the reference; floats within a relative
 * tolerance (the tree combines in another order than the reference). */
static void check_window(osmp_team_t t, const char *what, osmp_dtype_t d, osmp_op_t op, const void *got,
                         size_t first, size_t count, size_t whole, uint64_t salt);

/* The reference costs every participant n inputs per element: beyond 16
 * participants, large results are checked in windows of 64 elements every 4096
 * (every chunk of the pipeline, the first and the last element included). */
static void check_reduced(osmp_team_t t, const char *what, osmp_dtype_t d, osmp_op_t op, const void *got,
                          size_t first, size_t count, uint64_t salt)
{
    if (osmp_team_size(t) <= 16 || count <= 4096) {
        check_window(t, what, d, op, got, first, count, count, salt);
        return;
    }
    size_t e = osmp_dtype_size(d);
    for (size_t at = 0;; at += 4096) {
        if (at + 64 > count) at = count - 64; /* the last window ends at the last element */
        check_window(t, what, d, op, (const char *)got + at * e, first + at, 64, count, salt);
        if (at + 64 >= count) break;
    }
}

static void check_window(osmp_team_t t, const char *what, osmp_dtype_t d, osmp_op_t op, const void *got,
                         size_t first, size_t count, size_t whole, uint64_t salt)
{
    size_t e = osmp_dtype_size(d);
    char *want = malloc(e * (count ? count : 1));
    reference(d, op, want, first, count, osmp_team_size(t), salt);
    for (size_t i = 0; i < count; i++) {
        if (is_float(d)) {
            double g = get_f(d, got, i), w = get_f(d, want, i);
            double tol = (d == OSMP_FLOAT ? 1e-5 : 1e-12) * (fabs(w) > 1 ? fabs(w) : 1);
            if (!(fabs(g - w) <= tol))
                FAIL("%s %s %s count %zu: element %zu is %.17g, expected %.17g", what, dtype_names[d], op_names[op],
                     whole, first + i, g, w);
        } else if (memcmp((const char *)got + i * e, want + i * e, e) != 0) {
            FAIL("%s %s %s count %zu: element %zu is %lld, expected %lld", what, dtype_names[d], op_names[op], whole,
                 first + i, (long long)get_int(d, got, i), (long long)get_int(d, want, i));
        }
    }
    free(want);
}

/* Every participant must hold the same bytes (floats included). */
static void check_identical(osmp_team_t t, const char *what, const void *buf, size_t bytes)
{
    int n = osmp_team_size(t);
    uint64_t mine = checksum(buf, bytes), *all = malloc(sizeof(uint64_t) * (size_t)n);
    EXPECT_OK(osmp_allgather(t, &mine, all, 1, OSMP_UINT64));
    for (int r = 0; r < n; r++)
        if (all[r] != mine) FAIL("%s: rank %d holds other bytes than this rank", what, r);
    free(all);
}

/* ---- the checks ---- */

/* Per thread: every participant draws the same sequence of salts. */
static _Thread_local uint64_t salt_counter = 1;

static void check_reductions(osmp_team_t t, size_t count, osmp_dtype_t d, osmp_op_t op, int root)
{
    int me = osmp_team_rank(t);
    size_t e = osmp_dtype_size(d), bytes = e * count;
    uint64_t salt = salt_counter++;
    char *in = malloc(bytes + 1), *out = malloc(bytes + 1);
    fill(d, op, in, 0, count, me, salt);
    memset(out, 0xa5, bytes + 1);
    /* allreduce, not in place then in place */
    EXPECT_OK(osmp_allreduce(t, in, out, count, d, op));
    check_reduced(t, "allreduce", d, op, out, 0, count, salt);
    if ((unsigned char)out[bytes] != 0xa5) FAIL("allreduce wrote past the buffer");
    check_identical(t, "allreduce", out, bytes);
    memcpy(out, in, bytes);
    EXPECT_OK(osmp_allreduce(t, OSMP_IN_PLACE, out, count, d, op));
    check_reduced(t, "allreduce in place", d, op, out, 0, count, salt);
    /* reduce to root, then in place at the root */
    memset(out, 0xa5, bytes);
    EXPECT_OK(osmp_reduce(t, in, me == root ? out : NULL, count, d, op, root));
    if (me == root) check_reduced(t, "reduce", d, op, out, 0, count, salt);
    if (me == root) memcpy(out, in, bytes);
    EXPECT_OK(osmp_reduce(t, me == root ? OSMP_IN_PLACE : in, me == root ? out : NULL, count, d, op, root));
    if (me == root) check_reduced(t, "reduce in place", d, op, out, 0, count, salt);
    free(in);
    free(out);
}

static void check_reduce_scatter(osmp_team_t t, size_t count, osmp_dtype_t d, osmp_op_t op)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t e = osmp_dtype_size(d), bytes = e * count;
    uint64_t salt = salt_counter++;
    char *in = malloc(bytes * (size_t)n), *out = malloc(bytes * (size_t)n);
    fill(d, op, in, 0, count * (size_t)n, me, salt);
    EXPECT_OK(osmp_reduce_scatter_block(t, in, out, count, d, op));
    check_reduced(t, "reduce_scatter_block", d, op, out, (size_t)me * count, count, salt);
    memcpy(out, in, bytes * (size_t)n);
    EXPECT_OK(osmp_reduce_scatter_block(t, OSMP_IN_PLACE, out, count, d, op));
    check_reduced(t, "reduce_scatter_block in place", d, op, out, (size_t)me * count, count, salt);
    free(in);
    free(out);
}

/* Byte j of rank r's block, for the data-movement collectives. */
static unsigned char pattern(int r, size_t j, uint64_t salt)
{
    return (unsigned char)mix(salt + (uint64_t)r * 0x9e37ULL + j * 31);
}

static void fill_block(void *p, int r, size_t bytes, uint64_t salt)
{
    for (size_t j = 0; j < bytes; j++) ((unsigned char *)p)[j] = pattern(r, j, salt);
}

static void check_block(osmp_team_t t, const char *what, const void *p, int r, size_t bytes, uint64_t salt)
{
    for (size_t j = 0; j < bytes; j++)
        if (((const unsigned char *)p)[j] != pattern(r, j, salt))
            FAIL("%s: block of rank %d, byte %zu of %zu is wrong", what, r, j, bytes);
}

static void check_movement(osmp_team_t t, size_t count, osmp_dtype_t d, int root)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t e = osmp_dtype_size(d), bytes = e * count, all = bytes * (size_t)n;
    uint64_t salt = salt_counter++;
    char *mine = malloc(bytes + 1), *big = malloc(all + 1);
    /* bcast */
    if (me == root) fill_block(big, root, bytes, salt);
    else memset(big, 0, bytes);
    EXPECT_OK(osmp_bcast(t, big, count, d, root));
    check_block(t, "bcast", big, root, bytes, salt);
    /* gather, then in place */
    fill_block(mine, me, bytes, salt);
    memset(big, 0, all);
    EXPECT_OK(osmp_gather(t, mine, me == root ? big : NULL, count, d, root));
    for (int r = 0; me == root && r < n; r++) check_block(t, "gather", big + (size_t)r * bytes, r, bytes, salt);
    if (me == root) {
        memset(big, 0, all);
        fill_block(big + (size_t)root * bytes, root, bytes, salt);
    }
    EXPECT_OK(osmp_gather(t, me == root ? OSMP_IN_PLACE : mine, me == root ? big : NULL, count, d, root));
    for (int r = 0; me == root && r < n; r++) check_block(t, "gather in place", big + (size_t)r * bytes, r, bytes, salt);
    /* scatter (blocks from the root: block r carries pattern r), then in place */
    for (int r = 0; me == root && r < n; r++) fill_block(big + (size_t)r * bytes, r, bytes, salt + 1);
    memset(mine, 0, bytes);
    EXPECT_OK(osmp_scatter(t, me == root ? big : NULL, mine, count, d, root));
    check_block(t, "scatter", mine, me, bytes, salt + 1);
    EXPECT_OK(osmp_scatter(t, me == root ? big : NULL, me == root ? OSMP_IN_PLACE : mine, count, d, root));
    check_block(t, "scatter in place", me == root ? big + (size_t)root * bytes : mine, me, bytes, salt + 1);
    /* allgather, then in place */
    fill_block(mine, me, bytes, salt + 2);
    memset(big, 0, all);
    big[all] = 0x5a;
    EXPECT_OK(osmp_allgather(t, mine, big, count, d));
    for (int r = 0; r < n; r++) check_block(t, "allgather", big + (size_t)r * bytes, r, bytes, salt + 2);
    if (big[all] != 0x5a) FAIL("allgather wrote past the buffer");
    memset(big, 0, all);
    fill_block(big + (size_t)me * bytes, me, bytes, salt + 2);
    EXPECT_OK(osmp_allgather(t, OSMP_IN_PLACE, big, count, d));
    for (int r = 0; r < n; r++) check_block(t, "allgather in place", big + (size_t)r * bytes, r, bytes, salt + 2);
    free(mine);
    free(big);
}

/* Alltoall: block j of rank i carries pattern (i * n + j). */
static void check_alltoall(osmp_team_t t, size_t count, osmp_dtype_t d)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t bytes = osmp_dtype_size(d) * count, all = bytes * (size_t)n;
    uint64_t salt = salt_counter++;
    char *in = malloc(all), *out = malloc(all);
    for (int j = 0; j < n; j++) fill_block(in + (size_t)j * bytes, me * n + j, bytes, salt);
    memset(out, 0, all);
    EXPECT_OK(osmp_alltoall(t, in, out, count, d));
    for (int i = 0; i < n; i++) check_block(t, "alltoall", out + (size_t)i * bytes, i * n + me, bytes, salt);
    memcpy(out, in, all);
    EXPECT_OK(osmp_alltoall(t, OSMP_IN_PLACE, out, count, d));
    for (int i = 0; i < n; i++) check_block(t, "alltoall in place", out + (size_t)i * bytes, i * n + me, bytes, salt);
    free(in);
    free(out);
}

/* Bad arguments are rejected locally, before any communication. */
static void check_errors(osmp_team_t t)
{
    int n = osmp_team_size(t);
    double x = 1, y = 0;
    char c = 0;
    if (osmp_allreduce(t, &x, &y, 1, OSMP_DOUBLE, OSMP_BXOR) != OSMP_ERR_TYPE) FAIL("bxor on double accepted");
    if (osmp_allreduce(t, &x, &y, 1, OSMP_FLOAT, OSMP_LAND) != OSMP_ERR_TYPE) FAIL("land on float accepted");
    if (osmp_allreduce(t, &x, &y, 1, (osmp_dtype_t)99, OSMP_SUM) != OSMP_ERR_INVALID_ARG) FAIL("dtype 99 accepted");
    if (osmp_allreduce(t, &x, &y, 1, OSMP_INT32, (osmp_op_t)-1) != OSMP_ERR_INVALID_ARG) FAIL("op -1 accepted");
    if (osmp_allreduce(t, NULL, &y, 1, OSMP_DOUBLE, OSMP_SUM) != OSMP_ERR_INVALID_ARG) FAIL("NULL sendbuf accepted");
    if (osmp_bcast(t, &c, 1, OSMP_INT8, n) != OSMP_ERR_INVALID_ARG) FAIL("root = size accepted");
    if (osmp_bcast(t, &c, 1, OSMP_INT8, -1) != OSMP_ERR_INVALID_ARG) FAIL("root -1 accepted");
    if (osmp_gather(t, &c, &c, SIZE_MAX / 2, OSMP_INT64, 0) != OSMP_ERR_INVALID_ARG) FAIL("count overflow accepted");
    if (y != 0 || c != 0) FAIL("a rejected call wrote into a buffer");
    if (osmp_barrier(NULL) != OSMP_ERR_INVALID_ARG) FAIL("NULL team accepted");
}

static void run_checks(osmp_team_t t)
{
    int n = osmp_team_size(t);
    int big_team = n > 16;
    for (int i = 0; i < 3; i++) EXPECT_OK(osmp_barrier(t));
    check_errors(t);
    /* Counts of the issue: 0, 1, 7, 64, 1000, 65536, 1 MiB + 3. */
    static const size_t counts[] = {0, 1, 7, 64, 1000, 65536, (1u << 20) + 3};
    size_t ncounts = sizeof(counts) / sizeof(counts[0]);
    for (size_t ci = 0; ci < ncounts; ci++) {
        size_t count = counts[ci];
        int small = count <= 64;
        if (!level_full && count > 65536) continue;
        /* every root for teams up to 11 and counts up to 1000; the ends and the middle otherwise */
        int roots[3] = {0, n - 1, n / 2}, every = n <= 11 && count <= 1000;
        for (int root = 0; root < (every ? n : 3); root++) {
            int rt = every ? root : roots[root];
            /* the full dtype x op matrix for small counts, a rotating subset beyond */
            for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
                for (int op = 0; op < OSMP_OP_COUNT; op++) {
                    if (!op_allowed(d, op)) continue;
                    int pick = small ? (rt == 0 || (d + op + rt) % 7 == 0)
                                     : ((size_t)(d * OSMP_OP_COUNT + op) % 13 == (ci + (size_t)rt) % 13);
                    /* big teams: a subset, but always a multi-chunk integer sum at root 0 */
                    if (big_team && !small)
                        pick = (pick && (d == OSMP_INT32 || d == OSMP_DOUBLE) && op <= OSMP_MAX) ||
                               (d == OSMP_INT32 && op == OSMP_SUM && rt == 0);
                    if (count > 65536) pick = (d == OSMP_INT32 && op == OSMP_SUM) || (d == OSMP_DOUBLE && op == OSMP_SUM && rt == 0) ||
                                             (d == OSMP_UINT8 && op == OSMP_BXOR && rt == 0);
                    if (pick) check_reductions(t, count, d, op, rt);
                }
            osmp_dtype_t md = (osmp_dtype_t)((ci + (size_t)rt) % OSMP_DTYPE_COUNT);
            if (!(big_team && count > 65536)) check_movement(t, count, md, rt);
        }
        /* reduce_scatter_block and alltoall move n blocks per rank: bound the memory */
        if ((size_t)n * count * 8 <= (size_t)(64 << 20) / (big_team ? 8 : 1)) {
            for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
                for (int op = 0; op < OSMP_OP_COUNT; op++)
                    if (op_allowed(d, op) && (small ? (d + op) % 3 == 0 : (d == OSMP_INT64 && op == OSMP_SUM)))
                        check_reduce_scatter(t, count, d, op);
            check_alltoall(t, count, (osmp_dtype_t)(ci % OSMP_DTYPE_COUNT));
        }
    }
    for (int i = 0; i < 3; i++) EXPECT_OK(osmp_barrier(t));
}

static void *thread_main(void *arg)
{
    int index = (int)(intptr_t)arg;
    osmp_team_t team;
    int rc = osmp_team_create_threads(world, nthreads, index, &team);
    if (rc) {
        fprintf(stderr, "coll-check: thread %d: team creation: %s\n", index, osmp_status_str(rc));
        _exit(1);
    }
    run_checks(team);
    if (osmp_team_destroy(team)) _exit(1);
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) nthreads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--level") == 0 && i + 1 < argc) level_full = strcmp(argv[++i], "full") == 0;
        else {
            fprintf(stderr, "usage: coll-check [--threads T] [--level quick|full]\n");
            return 2;
        }
    }
    int rc = osmp_init(&world);
    if (rc) {
        fprintf(stderr, "coll-check: osmp_init: %s\n", osmp_status_str(rc));
        return 1;
    }
    if (nthreads > 0) {
        pthread_t *th = malloc(sizeof(pthread_t) * (size_t)nthreads);
        for (int i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
        for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
        free(th);
    } else {
        run_checks(world);
    }
    int me = osmp_team_rank(world);
    if (osmp_finalize()) return 1;
    if (me == 0) printf("coll-check: all checks passed\n");
    return 0;
}
