/*
 * coll-check: run every collective of the public API on a team and check every
 * result exactly (integers) or against a sequential reference and bitwise
 * across participants (floating point). Written against include/osmp.h only,
 * with its own reference arithmetic (not the library's kernels).
 *
 * The vector variants get irregular counts (some ranks none, one rank a block
 * of several chunks from scale 1000 on), blocks out of rank order with gaps
 * whose bytes must keep a sentinel, and NULL for every array and buffer a rank
 * does not need; scan and exscan are checked against the rank-order fold of
 * the ranks before each rank.
 *
 *   osmp-run -n N [--topology F.xml ...] -- coll-check [--threads T] [--level quick|full] [--only reductions|scans]
 *                                                      [--calls blocking|wait|test|persistent]
 *
 * --calls makes every collective call a request instead: osmp_i<op> then
 * osmp_wait (wait) or osmp_test until done (test), or osmp_<op>_init,
 * osmp_start, osmp_wait, osmp_request_free (persistent); each checked to
 * leave the request as MPI says (OSMP_REQUEST_NULL, or inactive).
 *
 * --only reductions checks allreduce and reduce alone (the same counts, roots
 * and pairs), --only scans scan and exscan alone, for the runs that force such
 * an algorithm: they stay short.
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

/* --calls: 0 blocking, 1 wait, 2 test, 3 persistent. */
static int call_mode;
static __thread osmp_request_t cur_req;

/* A posted request's completion as --calls says; the status the blocking call would return. */
static int complete(int rc, osmp_request_t *q)
{
    if (rc) {
        if (*q != OSMP_REQUEST_NULL) {
            fprintf(stderr, "coll-check: a refused post left a request\n");
            _exit(1);
        }
        return rc;
    }
    if (call_mode == 3 && (rc = osmp_start(q)) != OSMP_OK) return rc;
    if (call_mode == 2) {
        int done = 0;
        while (!done)
            if ((rc = osmp_test(q, &done)) != OSMP_OK) break;
    } else {
        rc = osmp_wait(q);
    }
    if ((call_mode == 3) != (*q != OSMP_REQUEST_NULL)) {
        fprintf(stderr, "coll-check: a completed request is %s\n", *q ? "not OSMP_REQUEST_NULL" : "gone (persistent)");
        _exit(1);
    }
    if (call_mode == 3) {
        int done = 0, rc2 = osmp_test(q, &done); /* inactive: complete at once */
        if (rc2 || !done || osmp_request_free(q) || *q != OSMP_REQUEST_NULL) {
            fprintf(stderr, "coll-check: an inactive persistent request did not test done or free\n");
            _exit(1);
        }
    }
    return rc;
}
#define AS_REQUEST(name, ...)                                                                                \
    (call_mode ? complete(call_mode == 3 ? osmp_##name##_init(__VA_ARGS__, &cur_req)                         \
                                         : osmp_i##name(__VA_ARGS__, &cur_req),                              \
                          &cur_req)                                                                          \
               : (osmp_##name)(__VA_ARGS__))
#define osmp_barrier(...) AS_REQUEST(barrier, __VA_ARGS__)
#define osmp_bcast(...) AS_REQUEST(bcast, __VA_ARGS__)
#define osmp_reduce(...) AS_REQUEST(reduce, __VA_ARGS__)
#define osmp_allreduce(...) AS_REQUEST(allreduce, __VA_ARGS__)
#define osmp_gather(...) AS_REQUEST(gather, __VA_ARGS__)
#define osmp_scatter(...) AS_REQUEST(scatter, __VA_ARGS__)
#define osmp_allgather(...) AS_REQUEST(allgather, __VA_ARGS__)
#define osmp_reduce_scatter_block(...) AS_REQUEST(reduce_scatter_block, __VA_ARGS__)
#define osmp_alltoall(...) AS_REQUEST(alltoall, __VA_ARGS__)
#define osmp_gatherv(...) AS_REQUEST(gatherv, __VA_ARGS__)
#define osmp_scatterv(...) AS_REQUEST(scatterv, __VA_ARGS__)
#define osmp_allgatherv(...) AS_REQUEST(allgatherv, __VA_ARGS__)
#define osmp_alltoallv(...) AS_REQUEST(alltoallv, __VA_ARGS__)
#define osmp_reduce_scatter(...) AS_REQUEST(reduce_scatter, __VA_ARGS__)
#define osmp_scan(...) AS_REQUEST(scan, __VA_ARGS__)
#define osmp_exscan(...) AS_REQUEST(exscan, __VA_ARGS__)

static int level_full;
static int only_reductions, only_scans;
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

/* The same, naming the case (root, sizes) that failed. */
#define EXPECT_OK_IN(what, call)                                                                             \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != OSMP_OK) FAIL("%s: %s returned %s", what, #call, osmp_status_name(rc_));                  \
    } while (0)

static const char *const dtype_names[] = {"int8",   "int16",  "int32",  "int64",   "uint8",   "uint16",
                                          "uint32", "uint64", "float", "double", "float16", "bfloat16"};
static const char *const op_names[] = {"sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor"};

static int is_half(osmp_dtype_t d)
{
    return d == OSMP_FLOAT16 || d == OSMP_BFLOAT16;
}

static int is_float(osmp_dtype_t d)
{
    return d == OSMP_FLOAT || d == OSMP_DOUBLE || is_half(d);
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

/* 16-bit floats: the compiler's _Float16, and bfloat16 as binary32's upper half rounded to nearest even
 * (the values the checks use are exact in both: no rounding happens). */
static double bf16_get(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t bf16_put(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

static double get_f(osmp_dtype_t d, const void *p, size_t i)
{
    switch (d) {
    case OSMP_FLOAT: return ((const float *)p)[i];
    case OSMP_FLOAT16: return (double)((const _Float16 *)p)[i];
    case OSMP_BFLOAT16: return bf16_get(((const uint16_t *)p)[i]);
    default: return ((const double *)p)[i];
    }
}

static void put_f(osmp_dtype_t d, void *p, size_t i, double v)
{
    switch (d) {
    case OSMP_FLOAT: ((float *)p)[i] = (float)v; break;
    case OSMP_FLOAT16: ((_Float16 *)p)[i] = (_Float16)v; break;
    case OSMP_BFLOAT16: ((uint16_t *)p)[i] = bf16_put(v); break;
    default: ((double *)p)[i] = v; break;
    }
}

/* Input elements first .. first+count-1 of `rank` for an operation (salt separates calls). */
static void fill(osmp_dtype_t d, osmp_op_t op, void *buf, size_t first, size_t count, int rank, uint64_t salt)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t h = mix(salt * 0x100000001b3ULL + (uint64_t)rank * 1000003ULL + first + i);
        if (is_half(d)) /* integers whose sums and products over 256 ranks stay exact in both (bfloat16: up to
                           256); MIN and MAX exact on any value: fractions too */
            put_f(d, buf, i, op == OSMP_PROD ? (h % 5 == 0 ? -1.0 : 1.0)
                             : op == OSMP_SUM ? (double)((int)(h % 3) - 1)
                                              : (double)((int)(h % 2001) - 1000) / 8.0);
        else if (is_float(d)) /* full mantissas (a random fraction): sums round differently in another order, so
                            check_identical sees a participant that combined in its own order */
            put_f(d, buf, i, op == OSMP_PROD ? 1.0 + (double)((int)(h % 17) - 8) / 64.0
                                              : (double)((int)(h % 2001) - 1000) / 8.0 + (double)(h >> 11) * 0x1p-53);
        else
            put_int(d, buf, i, (op >= OSMP_LAND && op <= OSMP_LXOR && h % 3 == 0) ? 0 : h >> 7);
    }
}

/* Fold rank r's input elements first .. first+count-1 into acc (acc op input, in the type's own width;
 * tmp: scratch of count elements). */
static void fold_rank(osmp_dtype_t d, osmp_op_t op, void *acc, void *tmp, size_t first, size_t count, int r,
                      uint64_t salt)
{
    fill(d, op, tmp, first, count, r, salt);
    for (size_t i = 0; i < count; i++) {
        if (is_float(d)) {
            double a = get_f(d, acc, i), b = get_f(d, tmp, i), v = 0;
            switch (op) {
            case OSMP_SUM: v = a + b; break;
            case OSMP_PROD: v = a * b; break;
            case OSMP_MIN: v = b < a ? b : a; break;
            default: v = b > a ? b : a; break;
            }
            put_f(d, acc, i, v);
            continue;
        }
        int64_t a = get_int(d, acc, i), b = get_int(d, tmp, i);
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
        put_int(d, acc, i, v);
    }
}

/* Logical operations give 0 or 1, also for a lone contribution (osmp.h). */
static void logical_01(osmp_dtype_t d, osmp_op_t op, void *acc, size_t count)
{
    for (size_t i = 0; op >= OSMP_LAND && op <= OSMP_LXOR && i < count; i++)
        put_int(d, acc, i, get_int(d, acc, i) != 0);
}

/* Reference: fold the inputs of ranks 0..n-1 (n >= 1) in order, in the type's own width. */
static void reference(osmp_dtype_t d, osmp_op_t op, void *out, size_t first, size_t count, int n, uint64_t salt)
{
    size_t e = osmp_dtype_size(d);
    char *tmp = malloc(e * (count ? count : 1));
    fill(d, op, out, first, count, 0, salt);
    for (int r = 1; r < n; r++) fold_rank(d, op, out, tmp, first, count, r, salt);
    logical_01(d, op, out, count);
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

/* Compare count result elements (elements first.. of a result of `whole`) with the reference values. */
static void compare(osmp_team_t t, const char *what, osmp_dtype_t d, osmp_op_t op, const void *got, const void *want,
                    size_t first, size_t count, size_t whole)
{
    size_t e = osmp_dtype_size(d);
    for (size_t i = 0; i < count; i++) {
        if (is_half(d)) { /* exact inputs (fill): every order gives the same bits */
            if (memcmp((const char *)got + i * e, (const char *)want + i * e, e) != 0)
                FAIL("%s %s %s count %zu: element %zu is %.17g, expected %.17g", what, dtype_names[d], op_names[op],
                     whole, first + i, get_f(d, got, i), get_f(d, want, i));
        } else if (is_float(d)) {
            double g = get_f(d, got, i), w = get_f(d, want, i);
            /* rounding of n inputs below 126 in magnitude, in any order: about n ulps of 126 */
            double n = osmp_team_size(t), ulp126 = d == OSMP_FLOAT ? 0x1p-17 : 0x1p-46;
            double tol = (d == OSMP_FLOAT ? 1e-5 : 1e-12) * (fabs(w) > 1 ? fabs(w) : 1) + 2 * n * ulp126;
            if (!(fabs(g - w) <= tol))
                FAIL("%s %s %s count %zu: element %zu is %.17g, expected %.17g", what, dtype_names[d], op_names[op],
                     whole, first + i, g, w);
        } else if (memcmp((const char *)got + i * e, (const char *)want + i * e, e) != 0) {
            FAIL("%s %s %s count %zu: element %zu is %lld, expected %lld", what, dtype_names[d], op_names[op], whole,
                 first + i, (long long)get_int(d, got, i), (long long)get_int(d, want, i));
        }
    }
}

static void check_window(osmp_team_t t, const char *what, osmp_dtype_t d, osmp_op_t op, const void *got,
                         size_t first, size_t count, size_t whole, uint64_t salt)
{
    size_t e = osmp_dtype_size(d);
    char *want = malloc(e * (count ? count : 1));
    reference(d, op, want, first, count, osmp_team_size(t), salt);
    compare(t, what, d, op, got, want, first, count, whole);
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

/* ---- vector variants: irregular counts (zeros, one block of several chunks), displacements with gaps and
 * blocks out of rank order; bytes outside the blocks keep a sentinel ---- */

#define SENTINEL 0xa5
#define TAIL 64 /* sentinel bytes after every buffer the library writes into */

/* The rank whose block is large from scale 1000 on: near the middle, never one of the zero ranks. */
static int big_rank(int n)
{
    int b = n / 2;
    return (b * 7 + 3) % 5 ? b : (b + 1) % n;
}

/* Elements rank r (of n) has at scale c: (r*7+3) % 5 quarters of c, rounded up, so ranks 1, 6, 11, ... have
 * none; with `big`, from c = 1000 on, big_rank(n) has 70001 more (more than 64 KiB, several chunks, at any
 * element size). */
static size_t vcount(int r, int n, size_t c, int big)
{
    size_t k = (size_t)((r * 7 + 3) % 5), v = (k * c + 3) / 4;
    return v + (big && c >= 1000 && r == big_rank(n) ? 70001 : 0);
}

/* Alltoallv: elements rank i sends rank j at scale c. Irregular (zero for (7i + 3j + 1) % 5 == 0) or, for
 * in place, symmetric (what j sends i is what i sends j, as MPI requires there); from c = 1000 on, the
 * pairs i + j = n - 1 (one per rank, both ways) have a block of several chunks. */
static size_t pair_count(int i, int j, int n, size_t c, int symmetric)
{
    size_t k = (size_t)(symmetric ? (i + j + (i * j) % 3) % 5 : (7 * i + 3 * j + 1) % 5), v = (k * c + 3) / 4;
    return v + (c >= 1000 && i + j == n - 1 ? 70001 : 0);
}

enum { PACKED, REVERSED, ROTATED };

/* Displacements (elements) of n blocks of cnt[r] elements. PACKED: rank order, no gaps. REVERSED: rank n-1
 * first; ROTATED: rank n/3 first, then on in rank order; both with r % 3 elements of gap before block r and
 * 2 after the last. Returns the elements the blocks and gaps span. */
static size_t layout(int n, const size_t *cnt, size_t *displ, int kind)
{
    size_t at = 0;
    for (int p = 0; p < n; p++) {
        int r = kind == REVERSED ? n - 1 - p : kind == ROTATED ? (p + n / 3) % n : p;
        if (kind != PACKED) at += (size_t)(r % 3);
        displ[r] = at;
        at += cnt[r];
    }
    return at + (kind != PACKED ? 2 : 0);
}

/* What a buffer of `bytes` must hold: block r (cnt[r] elements of e bytes at displ[r]) carries
 * pattern(r * mul + add), every other byte the sentinel. */
static void expect_blocks(unsigned char *want, size_t bytes, int n, const size_t *cnt, const size_t *displ, size_t e,
                          int mul, int add, uint64_t salt)
{
    memset(want, SENTINEL, bytes);
    for (int r = 0; r < n; r++) fill_block(want + displ[r] * e, r * mul + add, cnt[r] * e, salt);
}

/* got must equal want; else name the first byte that differs: in which block, or in a gap. */
static void check_layout(osmp_team_t t, const char *what, const unsigned char *got, const unsigned char *want,
                         size_t bytes, int n, const size_t *cnt, const size_t *displ, size_t e)
{
    if (!memcmp(got, want, bytes)) return;
    size_t at = 0;
    while (got[at] == want[at]) at++;
    for (int r = 0; r < n; r++)
        if (at >= displ[r] * e && at < (displ[r] + cnt[r]) * e)
            FAIL("%s: block of rank %d (%zu elements at displacement %zu), byte %zu is 0x%02x, expected 0x%02x", what,
                 r, cnt[r], displ[r], at - displ[r] * e, got[at], want[at]);
    FAIL("%s: byte %zu of %zu, outside every block (a gap or past the end), is 0x%02x: the sentinel 0x%02x was "
         "overwritten", what, at, bytes, got[at], want[at]);
}

static void check_tail(osmp_team_t t, const char *what, const unsigned char *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (p[i] != SENTINEL) FAIL("%s wrote past the end of its block (byte %zu after it)", what, i);
}

/* Gatherv and scatterv at one root: the root's blocks laid out by `kind`; the other ranks pass NULL for
 * everything only the root reads, and ranks without elements a NULL buffer. */
static void check_gatherv_scatterv_counts(osmp_team_t t, size_t *cnt, size_t c, osmp_dtype_t d, int root, int kind)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t), rt = me == root;
    size_t e = osmp_dtype_size(d);
    uint64_t salt = salt_counter++;
    size_t *displ = malloc(sizeof(size_t) * (size_t)n);
    size_t bytes = layout(n, cnt, displ, kind) * e + TAIL, mb = cnt[me] * e;
    unsigned char *mine = malloc(mb + TAIL), *all = rt ? malloc(bytes) : NULL, *want = rt ? malloc(bytes) : NULL;
    unsigned char *send = cnt[me] ? mine : NULL;
    char what[160];
    const char *order = kind == REVERSED ? "reversed" : kind == ROTATED ? "rotated" : "packed";

    /* gatherv, then in place (the root's block already at displ[root]) */
    snprintf(what, sizeof(what), "gatherv (%s %s blocks, scale %zu, root %d)", dtype_names[d], order, c, root);
    fill_block(mine, me, mb, salt);
    if (rt) memset(all, SENTINEL, bytes);
    EXPECT_OK_IN(what, osmp_gatherv(t, send, cnt[me], all, rt ? cnt : NULL, rt ? displ : NULL, d, root));
    check_block(t, "gatherv's send buffer", mine, me, mb, salt);
    if (rt) {
        expect_blocks(want, bytes - TAIL, n, cnt, displ, e, 1, 0, salt);
        memset(want + bytes - TAIL, SENTINEL, TAIL);
        check_layout(t, what, all, want, bytes, n, cnt, displ, e);
        memset(all, SENTINEL, bytes);
        fill_block(all + displ[root] * e, root, mb, salt);
    }
    snprintf(what, sizeof(what), "gatherv in place (%s %s blocks, scale %zu, root %d)", dtype_names[d], order, c,
             root);
    EXPECT_OK_IN(what, osmp_gatherv(t, rt ? OSMP_IN_PLACE : send, cnt[me], all, rt ? cnt : NULL, rt ? displ : NULL,
                                    d, root));
    if (rt) check_layout(t, what, all, want, bytes, n, cnt, displ, e);

    /* scatterv: block r of the root's buffer (pattern r) lands in rank r's buffer; the root's is unchanged */
    snprintf(what, sizeof(what), "scatterv (%s %s blocks, scale %zu, root %d)", dtype_names[d], order, c, root);
    if (rt) {
        expect_blocks(want, bytes - TAIL, n, cnt, displ, e, 1, 0, salt + 1);
        memset(want + bytes - TAIL, SENTINEL, TAIL);
        memcpy(all, want, bytes);
    }
    memset(mine, SENTINEL, mb + TAIL);
    EXPECT_OK_IN(what, osmp_scatterv(t, all, rt ? cnt : NULL, rt ? displ : NULL, send, cnt[me], d, root));
    check_block(t, what, mine, me, mb, salt + 1);
    check_tail(t, what, mine + mb, TAIL);
    if (rt) check_layout(t, "scatterv's send buffer (changed)", all, want, bytes, n, cnt, displ, e);
    /* in place at the root: its block stays where it is, its receive buffer is not touched */
    snprintf(what, sizeof(what), "scatterv in place (%s %s blocks, scale %zu, root %d)", dtype_names[d], order, c,
             root);
    memset(mine, SENTINEL, mb + TAIL);
    EXPECT_OK_IN(what, osmp_scatterv(t, all, rt ? cnt : NULL, rt ? displ : NULL, rt ? OSMP_IN_PLACE : send, cnt[me],
                                     d, root));
    if (rt) {
        check_layout(t, what, all, want, bytes, n, cnt, displ, e);
        check_tail(t, "scatterv in place at the root (its own receive buffer)", mine, mb + TAIL);
    } else {
        check_block(t, what, mine, me, mb, salt + 1);
        check_tail(t, what, mine + mb, TAIL);
    }
    free(displ);
    free(mine);
    free(all);
    free(want);
}

static void check_gatherv_scatterv(osmp_team_t t, size_t c, osmp_dtype_t d, int root, int kind)
{
    int n = osmp_team_size(t);
    size_t *cnt = malloc(sizeof(size_t) * (size_t)n);
    for (int r = 0; r < n; r++) cnt[r] = vcount(r, n, c, 1);
    check_gatherv_scatterv_counts(t, cnt, c, d, root, kind);
    free(cnt);
}

/* Gatherv and scatterv with blocks on either side of a mini line's and a pair of lines' data (56 and 112 B:
 * shm/mailbox.h) and of none, at every root, each rank's block another size than its neighbours' (the
 * root's own too): a team of two sends its one block in the lines its size takes, larger teams one line per
 * rank (coll/gather/gather_direct.c, coll/scatter/scatter_direct.c). */
static void check_vector_line_sizes(osmp_team_t t)
{
    static const size_t sizes[] = {0, 1, 56, 57, 100, 112, 113, 300};
    size_t ns = sizeof(sizes) / sizeof(sizes[0]);
    int n = osmp_team_size(t);
    size_t *cnt = malloc(sizeof(size_t) * (size_t)n);
    for (int root = 0; root < n; root++)
        for (size_t i = 0; i < ns; i++) {
            for (int r = 0; r < n; r++) cnt[r] = sizes[(i + (size_t)r * 3) % ns];
            check_gatherv_scatterv_counts(t, cnt, sizes[i], OSMP_UINT8, root, root % 2 ? ROTATED : REVERSED);
        }
    free(cnt);
}

/* The direct exchange (allreduce, allgather, alltoall on small flat teams) at vectors on either side of the
 * mailbox line's inline data (48 B, else a ring slot: coll/coll.h osmp__direct_claim) and of a mini line's
 * and a pair of lines' data (56, 112: the rooted calls' and tree passes' messages), as bytes of uint8,
 * whose sums wrap. */
static void check_direct_line_sizes(osmp_team_t t)
{
    static const size_t sizes[] = {48, 49, 56, 57, 100, 112, 113, 120};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        check_reductions(t, sizes[i], OSMP_UINT8, OSMP_SUM, 0);
        check_movement(t, sizes[i], OSMP_UINT8, 0);
    }
}

/* Allgatherv with blocks laid out by `kind` (PACKED is the contiguous case), then in place. */
static void check_allgatherv(osmp_team_t t, size_t c, osmp_dtype_t d, int kind)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t e = osmp_dtype_size(d);
    uint64_t salt = salt_counter++;
    size_t *cnt = malloc(sizeof(size_t) * (size_t)n), *displ = malloc(sizeof(size_t) * (size_t)n);
    for (int r = 0; r < n; r++) cnt[r] = vcount(r, n, c, 1);
    size_t bytes = layout(n, cnt, displ, kind) * e + TAIL, mb = cnt[me] * e;
    unsigned char *mine = malloc(mb + 1), *all = malloc(bytes), *want = malloc(bytes);
    char what[160];
    const char *order = kind == REVERSED ? "reversed" : kind == ROTATED ? "rotated" : "packed";
    expect_blocks(want, bytes - TAIL, n, cnt, displ, e, 1, 0, salt);
    memset(want + bytes - TAIL, SENTINEL, TAIL);

    snprintf(what, sizeof(what), "allgatherv (%s %s blocks, scale %zu)", dtype_names[d], order, c);
    fill_block(mine, me, mb, salt);
    memset(all, SENTINEL, bytes);
    EXPECT_OK_IN(what, osmp_allgatherv(t, cnt[me] ? mine : NULL, cnt[me], all, cnt, displ, d));
    check_layout(t, what, all, want, bytes, n, cnt, displ, e);
    check_block(t, "allgatherv's send buffer", mine, me, mb, salt);

    snprintf(what, sizeof(what), "allgatherv in place (%s %s blocks, scale %zu)", dtype_names[d], order, c);
    memset(all, SENTINEL, bytes);
    fill_block(all + displ[me] * e, me, mb, salt);
    EXPECT_OK_IN(what, osmp_allgatherv(t, OSMP_IN_PLACE, cnt[me], all, cnt, displ, d));
    check_layout(t, what, all, want, bytes, n, cnt, displ, e);
    free(cnt);
    free(displ);
    free(mine);
    free(all);
    free(want);
}

/* Alltoallv: the block rank i sends rank j carries pattern(i * n + j); send blocks ROTATED, receive blocks
 * REVERSED. In place: symmetric counts, recvbuf (REVERSED) holds the blocks to send, sendcounts and sdispls
 * are NULL (not read). */
static void check_alltoallv(osmp_team_t t, size_t c, osmp_dtype_t d)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t e = osmp_dtype_size(d);
    uint64_t salt = salt_counter++;
    size_t *sc = malloc(sizeof(size_t) * (size_t)n), *sd = malloc(sizeof(size_t) * (size_t)n);
    size_t *rc = malloc(sizeof(size_t) * (size_t)n), *rd = malloc(sizeof(size_t) * (size_t)n);
    char what[160];
    for (int j = 0; j < n; j++) {
        sc[j] = pair_count(me, j, n, c, 0);
        rc[j] = pair_count(j, me, n, c, 0);
    }
    size_t sbytes = layout(n, sc, sd, ROTATED) * e, rbytes = layout(n, rc, rd, REVERSED) * e + TAIL;
    unsigned char *in = malloc(sbytes), *check = malloc(sbytes > rbytes ? sbytes : rbytes), *out = malloc(rbytes);
    expect_blocks(in, sbytes, n, sc, sd, e, 1, me * n, salt);
    memset(out, SENTINEL, rbytes);
    snprintf(what, sizeof(what), "alltoallv (%s, scale %zu)", dtype_names[d], c);
    EXPECT_OK_IN(what, osmp_alltoallv(t, in, sc, sd, out, rc, rd, d));
    expect_blocks(check, rbytes - TAIL, n, rc, rd, e, n, me, salt);
    memset(check + rbytes - TAIL, SENTINEL, TAIL);
    check_layout(t, what, out, check, rbytes, n, rc, rd, e);
    expect_blocks(check, sbytes, n, sc, sd, e, 1, me * n, salt);
    check_layout(t, "alltoallv's send buffer (changed)", in, check, sbytes, n, sc, sd, e);

    /* in place */
    for (int j = 0; j < n; j++) rc[j] = pair_count(me, j, n, c, 1);
    free(out);
    free(check);
    rbytes = layout(n, rc, rd, REVERSED) * e + TAIL;
    out = malloc(rbytes);
    check = malloc(rbytes);
    expect_blocks(out, rbytes - TAIL, n, rc, rd, e, 1, me * n, salt + 1);
    memset(out + rbytes - TAIL, SENTINEL, TAIL);
    snprintf(what, sizeof(what), "alltoallv in place (%s, scale %zu)", dtype_names[d], c);
    EXPECT_OK_IN(what, osmp_alltoallv(t, OSMP_IN_PLACE, NULL, NULL, out, rc, rd, d));
    expect_blocks(check, rbytes - TAIL, n, rc, rd, e, n, me, salt + 1);
    memset(check + rbytes - TAIL, SENTINEL, TAIL);
    check_layout(t, what, out, check, rbytes, n, rc, rd, e);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(in);
    free(check);
    free(out);
}

/* Reduce_scatter with irregular recvcounts (some zero): rank r gets elements off[r] .. off[r]+rc[r]-1 of
 * the reduction; then in place (recvbuf holds the whole input, the result goes to its start). */
static void check_reduce_scatter_v(osmp_team_t t, size_t c, osmp_dtype_t d, osmp_op_t op)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t e = osmp_dtype_size(d), total = 0, off = 0;
    uint64_t salt = salt_counter++;
    size_t *rc = malloc(sizeof(size_t) * (size_t)n);
    for (int r = 0; r < n; r++) {
        rc[r] = vcount(r, n, c, 0); /* no extra block: scale 65536 has blocks of several chunks */
        if (r == me) off = total;
        total += rc[r];
    }
    size_t mb = rc[me] * e;
    char *in = malloc(total * e + 1), *out = malloc(mb + TAIL), *buf = malloc(total * e + TAIL);
    char what[96];
    fill(d, op, in, 0, total, me, salt);
    memset(out, SENTINEL, mb + TAIL);
    snprintf(what, sizeof(what), "reduce_scatter (scale %zu, %zu of %zu)", c, rc[me], total);
    EXPECT_OK_IN(what, osmp_reduce_scatter(t, in, out, rc, d, op));
    check_reduced(t, what, d, op, out, off, rc[me], salt);
    check_tail(t, what, (unsigned char *)out + mb, TAIL);
    memcpy(buf, in, total * e);
    memset(buf + total * e, SENTINEL, TAIL);
    snprintf(what, sizeof(what), "reduce_scatter in place (scale %zu, %zu of %zu)", c, rc[me], total);
    EXPECT_OK_IN(what, osmp_reduce_scatter(t, OSMP_IN_PLACE, buf, rc, d, op));
    check_reduced(t, what, d, op, buf, off, rc[me], salt);
    check_tail(t, what, (unsigned char *)buf + total * e, TAIL);
    free(rc);
    free(in);
    free(out);
    free(buf);
}

/* Buffers of zero elements may be NULL ("NULL buffers with non-zero counts" are the error): the vector
 * checks above pass NULL for a rank's own block of gatherv, scatterv and allgatherv when it is empty; here
 * reduce_scatter's recvbuf on the ranks whose recvcounts entry is 0 (1, 6, 11, ...; not in place, where
 * recvbuf holds the whole input), and alltoallv's, allgatherv's and reduce_scatter's buffers when every
 * count is 0. Last, so that
 * everything else has been checked when this fails. */
static void check_null_empty_blocks(osmp_team_t t)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t *rc = malloc(sizeof(size_t) * (size_t)n), total = 0, off = 0;
    for (int r = 0; r < n; r++) {
        rc[r] = vcount(r, n, 7, 0);
        if (r == me) off = total;
        total += rc[r];
    }
    uint64_t salt = salt_counter++;
    int32_t *in = malloc(sizeof(int32_t) * total), *out = malloc(sizeof(int32_t) * (rc[me] + 1));
    fill(OSMP_INT32, OSMP_SUM, in, 0, total, me, salt);
    int rcode = osmp_reduce_scatter(t, in, rc[me] ? out : NULL, rc, OSMP_INT32, OSMP_SUM);
    if (rcode != OSMP_OK)
        FAIL("reduce_scatter (int32 sum, recvcounts[%d] = %zu of %zu elements, recvbuf %s) returned %s", me, rc[me],
             total, rc[me] ? "given" : "NULL", osmp_status_name(rcode));
    check_reduced(t, "reduce_scatter, empty blocks' recvbuf NULL", OSMP_INT32, OSMP_SUM, out, off, rc[me], salt);
    /* Alltoallv of nothing at all: both buffers NULL (every pair's path is "none": alltoallv_direct.c). */
    size_t *zero = calloc((size_t)n, sizeof(size_t));
    rcode = osmp_alltoallv(t, NULL, zero, zero, NULL, zero, zero, OSMP_INT32);
    if (rcode != OSMP_OK) FAIL("alltoallv of zero counts, NULL buffers, returned %s", osmp_status_name(rcode));
    /* Every block empty, which every rank knows: nothing runs (api.c), and still nothing is wrong. */
    rcode = osmp_allgatherv(t, NULL, 0, NULL, zero, zero, OSMP_INT32);
    if (rcode != OSMP_OK)
        FAIL("allgatherv of zero counts, NULL buffers, returned %s", osmp_status_name(rcode));
    rcode = osmp_reduce_scatter(t, NULL, NULL, zero, OSMP_INT32, OSMP_SUM);
    if (rcode != OSMP_OK)
        FAIL("reduce_scatter of zero counts, NULL buffers, returned %s", osmp_status_name(rcode));
    free(zero);
    free(rc);
    free(in);
    free(out);
}

/* Scan and exscan, each out of place and in place. Rank r's results against the reference folded in rank
 * order: ranks 0..r-1 (exscan), then rank r on top (scan); beyond 16 participants large results in windows
 * (as check_reduced). Exscan leaves rank 0's recvbuf alone: the sentinel, or (in place) its input. A lone
 * contribution (scan at rank 0, exscan at rank 1) is that input as it is, as in MPI: logical operations
 * give 0 or 1 from two contributions on (src/team/api.c; unlike a team of one's allreduce). */
static void check_scan(osmp_team_t t, size_t count, osmp_dtype_t d, osmp_op_t op)
{
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    size_t e = osmp_dtype_size(d), bytes = e * count;
    uint64_t salt = salt_counter++;
    char *in = malloc(bytes + 1), *res[4], *want = malloc(bytes + 1), *tmp = malloc(bytes + 1);
    static const char *const name[4] = {"exscan", "exscan in place", "scan", "scan in place"};
    fill(d, op, in, 0, count, me, salt);
    for (int k = 0; k < 4; k++) {
        res[k] = malloc(bytes + TAIL);
        memset(res[k], SENTINEL, bytes + TAIL);
        if (k & 1) memcpy(res[k], in, bytes);
    }
    char what[96];
    snprintf(what, sizeof(what), "%s %s count %zu", dtype_names[d], op_names[op], count);
    EXPECT_OK_IN(what, osmp_exscan(t, in, res[0], count, d, op));
    EXPECT_OK_IN(what, osmp_exscan(t, OSMP_IN_PLACE, res[1], count, d, op));
    EXPECT_OK_IN(what, osmp_scan(t, in, res[2], count, d, op));
    EXPECT_OK_IN(what, osmp_scan(t, OSMP_IN_PLACE, res[3], count, d, op));
    for (int k = 0; k < 4; k++) check_tail(t, name[k], (unsigned char *)res[k] + bytes, TAIL);
    if (me == 0) {
        for (size_t i = 0; i < bytes; i++)
            if ((unsigned char)res[0][i] != SENTINEL)
                FAIL("exscan %s %s count %zu: rank 0's recvbuf was written (byte %zu)", dtype_names[d], op_names[op],
                     count, i);
        if (memcmp(res[1], in, bytes))
            FAIL("exscan in place %s %s count %zu: rank 0's recvbuf was changed", dtype_names[d], op_names[op],
                 count);
    }
    size_t win = n <= 16 || count <= 4096 ? count : 64;
    for (size_t at = 0;; at += 4096) {
        if (at + win > count) at = count - win; /* the last window ends at the last element */
        /* exscan: ranks 0 .. me-1 */
        fill(d, op, want, at, win, 0, salt);
        if (me > 0) {
            for (int r = 1; r < me; r++) fold_rank(d, op, want, tmp, at, win, r, salt);
            compare(t, name[0], d, op, res[0] + at * e, want, at, win, count);
            compare(t, name[1], d, op, res[1] + at * e, want, at, win, count);
            fold_rank(d, op, want, tmp, at, win, me, salt);
        }
        compare(t, name[2], d, op, res[2] + at * e, want, at, win, count);
        compare(t, name[3], d, op, res[3] + at * e, want, at, win, count);
        if (at + win >= count) break;
    }
    for (int k = 0; k < 4; k++) free(res[k]);
    free(in);
    free(want);
    free(tmp);
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
    /* the vector variants, scan and exscan: one count of 1 per rank, displacements in rank order */
    size_t *cnt = malloc(sizeof(size_t) * (size_t)n), *displ = malloc(sizeof(size_t) * (size_t)n);
    char *buf = calloc((size_t)n + 1, 8), *zero = calloc((size_t)n + 1, 8);
    for (int r = 0; r < n; r++) cnt[r] = 1, displ[r] = (size_t)r;
    static const struct {
        const char *what;
        int want;
    } vcase[] = {
        {"scan bxor on double", OSMP_ERR_TYPE},       {"exscan land on float", OSMP_ERR_TYPE},
        {"scan op -1", OSMP_ERR_INVALID_ARG},         {"exscan dtype 99", OSMP_ERR_INVALID_ARG},
        {"scan recvbuf in place", OSMP_ERR_INVALID_ARG},
        {"gatherv root = size", OSMP_ERR_INVALID_ARG}, {"scatterv root -1", OSMP_ERR_INVALID_ARG},
        {"allgatherv NULL recvcounts", OSMP_ERR_INVALID_ARG}, {"allgatherv NULL displs", OSMP_ERR_INVALID_ARG},
        {"allgatherv recvbuf in place", OSMP_ERR_INVALID_ARG}, {"alltoallv recvbuf in place", OSMP_ERR_INVALID_ARG},
        {"alltoallv NULL rdispls", OSMP_ERR_INVALID_ARG}, {"alltoallv NULL sendcounts", OSMP_ERR_INVALID_ARG},
        {"reduce_scatter NULL recvcounts", OSMP_ERR_INVALID_ARG}, {"reduce_scatter lxor on float", OSMP_ERR_TYPE},
        {"reduce_scatter dtype 99", OSMP_ERR_INVALID_ARG},
    };
    for (size_t i = 0; i < sizeof(vcase) / sizeof(*vcase); i++) {
        char *s = buf, *r = buf + 8 * (size_t)n / 2; /* never used: every call is rejected */
        int rc = 0;
        switch (i) {
        case 0: rc = osmp_scan(t, s, r, 1, OSMP_DOUBLE, OSMP_BXOR); break;
        case 1: rc = osmp_exscan(t, s, r, 1, OSMP_FLOAT, OSMP_LAND); break;
        case 2: rc = osmp_scan(t, s, r, 1, OSMP_INT32, (osmp_op_t)-1); break;
        case 3: rc = osmp_exscan(t, s, r, 1, (osmp_dtype_t)99, OSMP_SUM); break;
        case 4: rc = osmp_scan(t, s, OSMP_IN_PLACE, 1, OSMP_INT8, OSMP_SUM); break;
        case 5: rc = osmp_gatherv(t, s, 1, r, cnt, displ, OSMP_INT8, n); break;
        case 6: rc = osmp_scatterv(t, s, cnt, displ, r, 1, OSMP_INT8, -1); break;
        case 7: rc = osmp_allgatherv(t, s, 1, r, NULL, displ, OSMP_INT8); break;
        case 8: rc = osmp_allgatherv(t, s, 1, r, cnt, NULL, OSMP_INT8); break;
        case 9: rc = osmp_allgatherv(t, s, 1, OSMP_IN_PLACE, cnt, displ, OSMP_INT8); break;
        case 10: rc = osmp_alltoallv(t, s, cnt, displ, OSMP_IN_PLACE, cnt, displ, OSMP_INT8); break;
        case 11: rc = osmp_alltoallv(t, s, cnt, displ, r, cnt, NULL, OSMP_INT8); break;
        case 12: rc = osmp_alltoallv(t, s, NULL, displ, r, cnt, displ, OSMP_INT8); break;
        case 13: rc = osmp_reduce_scatter(t, s, r, NULL, OSMP_INT8, OSMP_SUM); break;
        case 14: rc = osmp_reduce_scatter(t, s, r, cnt, OSMP_FLOAT, OSMP_LXOR); break;
        case 15: rc = osmp_reduce_scatter(t, s, r, cnt, (osmp_dtype_t)99, OSMP_SUM); break;
        }
        if (rc != vcase[i].want)
            FAIL("%s: returned %s, expected %s", vcase[i].what, osmp_status_name(rc),
                 osmp_status_name(vcase[i].want));
        if (memcmp(buf, zero, 8 * ((size_t)n + 1))) FAIL("%s: the rejected call wrote into a buffer", vcase[i].what);
    }
    free(cnt);
    free(displ);
    free(buf);
    free(zero);
}

/* Which datatype/operation pairs the scans and reduce_scatter check at one count. Quick level: every pair
 * at 0, 1 and 7 elements (reduce_scatter: at 7; beyond 16 participants, where its calls cost most, every pair
 * once, half of them at 1 and the others at 7), then the int32 and double sums and a rotating thirteenth up
 * to 1000 (reduce_scatter beyond 16: the sums), the sums beyond. Full level: every pair up to 1000 and, for
 * the scans, beyond; reduce_scatter beyond 1000 the sums and a rotating third. */
static int pick_pair(int d, int op, size_t ci, size_t count, int scan, int big_team)
{
    if (!op_allowed((osmp_dtype_t)d, (osmp_op_t)op)) return 0;
    size_t rot = (size_t)(d * OSMP_OP_COUNT + op);
    int sums = op == OSMP_SUM && (d == OSMP_INT32 || d == OSMP_DOUBLE);
    if (level_full) return scan || count <= 1000 || sums || rot % 3 == ci % 3;
    if (scan ? count <= 7 : count == 7 && !big_team) return 1;
    if (!scan && big_team && (count == 1 || count == 7)) return (int)(rot % 2) == (count == 7);
    if (sums) return 1;
    return count <= 1000 && (scan || !big_team) && rot % 13 == ci % 13;
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
        if (only_scans) {
            if (count != 64 && count <= 65536)
                for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
                    for (int op = 0; op < OSMP_OP_COUNT; op++)
                        if (pick_pair(d, op, ci, count, 1, big_team)) check_scan(t, count, d, op);
            continue;
        }
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
            if (only_reductions) continue;
            osmp_dtype_t md = (osmp_dtype_t)((ci + (size_t)rt) % OSMP_DTYPE_COUNT);
            if (!(big_team && count > 65536)) check_movement(t, count, md, rt);
            /* irregular blocks, the root's out of rank order with gaps */
            if (count <= 65536)
                check_gatherv_scatterv(t, count, (osmp_dtype_t)((ci + (size_t)rt + 3) % OSMP_DTYPE_COUNT), rt,
                                       rt % 2 ? ROTATED : REVERSED);
        }
        if (only_reductions) continue;
        if (count == 64) check_vector_line_sizes(t), check_direct_line_sizes(t); /* (once) */
        /* scan and exscan at the counts 0, 1, 7, 1000, 65536 */
        if (count != 64 && count <= 65536)
            for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
                for (int op = 0; op < OSMP_OP_COUNT; op++)
                    if (pick_pair(d, op, ci, count, 1, big_team)) check_scan(t, count, d, op);
        /* reduce_scatter_block and alltoall move n blocks per rank: bound the memory */
        if ((size_t)n * count * 8 <= (size_t)(64 << 20) / (big_team ? 8 : 1)) {
            for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
                for (int op = 0; op < OSMP_OP_COUNT; op++)
                    if (op_allowed(d, op) && (small ? (d + op) % 3 == 0 : (d == OSMP_INT64 && op == OSMP_SUM)))
                        check_reduce_scatter(t, count, d, op);
            check_alltoall(t, count, (osmp_dtype_t)(ci % OSMP_DTYPE_COUNT));
            if (count <= 65536) {
                for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
                    for (int op = 0; op < OSMP_OP_COUNT; op++)
                        if (pick_pair(d, op, ci, count, 0, big_team)) check_reduce_scatter_v(t, count, d, op);
                check_allgatherv(t, count, (osmp_dtype_t)((ci + 5) % OSMP_DTYPE_COUNT), PACKED);
                check_allgatherv(t, count, (osmp_dtype_t)((ci + 6) % OSMP_DTYPE_COUNT), ci % 2 ? ROTATED : REVERSED);
                check_alltoallv(t, count, (osmp_dtype_t)((ci + 7) % OSMP_DTYPE_COUNT));
            }
        }
    }
    if (!only_reductions && !only_scans) check_null_empty_blocks(t);
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
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            static const char *const modes[] = {"blocking", "wait", "test", "persistent"};
            const char *m = argv[++i];
            call_mode = -1;
            for (int k = 0; k < 4; k++)
                if (strcmp(m, modes[k]) == 0) call_mode = k;
            if (call_mode < 0) {
                fprintf(stderr, "coll-check: --calls blocking|wait|test|persistent\n");
                return 2;
            }
        }
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
                 (strcmp(argv[i + 1], "reductions") == 0 || strcmp(argv[i + 1], "scans") == 0)) {
            only_reductions = argv[i + 1][0] == 'r';
            only_scans = !only_reductions;
            i++;
        } else {
            fprintf(stderr, "usage: coll-check [--threads T] [--level quick|full] [--only reductions|scans]\n");
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
