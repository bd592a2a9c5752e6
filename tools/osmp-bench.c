/*
 * osmp-bench: OSMP against the MPI library it runs under, side by side, in one run.
 *
 *   mpirun -n N osmp-bench [--ops allreduce,bcast,...] [--sizes 1:4M] [--iters I] [--warmup W]
 *                          [--rounds R] [--check] [--json FILE] [--quick]
 *
 * For each operation and message size, rounds alternate the MPI library's own
 * call (PMPI_, so an interposed libosmp_mpi is bypassed) and OSMP's call on a team
 * built from MPI_COMM_WORLD. Latency is OSU's: the average time per call over I
 * calls, each followed by a barrier outside the timed region, maximized over
 * ranks. The table shows the median of the rounds, the ratio OSMP/MPI, and the
 * physical bound measured in the same run (see bound() below).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic.h"
#include "osmp.h"

/* The collectives come from OSMP_COLL_MAP (osmp.h). */

static osmp_team_t team;
static int rank, size;
static char *sbuf, *rbuf, *cbuf;

static int oob(void *ctx, const void *send, void *recv, size_t len)
{
    (void)ctx;
    return PMPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS;
}

/* The collectives call() runs (not yet the vector variants and scans). */
static int benched(osmp_coll_t op)
{
    return !(osmp_coll_flags(op) & OSMP_COLL_VECTOR) && op != OSMP_COLL_SCAN && op != OSMP_COLL_EXSCAN;
}

/* One call of op on `bytes` per rank: reductions on doubles, movement on bytes. */
static int call(int use_osmp, osmp_coll_t op, size_t bytes, char *out)
{
    int n = (int)(bytes / 8), b = (int)bytes;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (op) {
    case OSMP_COLL_BARRIER: return use_osmp ? osmp_barrier(team) : PMPI_Barrier(w);
    case OSMP_COLL_BCAST: return use_osmp ? osmp_bcast(team, out, bytes, OSMP_UINT8, 0) : PMPI_Bcast(out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_REDUCE:
        return use_osmp ? osmp_reduce(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM, 0)
                        : PMPI_Reduce(sbuf, out, n, MPI_DOUBLE, MPI_SUM, 0, w);
    case OSMP_COLL_ALLREDUCE:
        return use_osmp ? osmp_allreduce(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM)
                        : PMPI_Allreduce(sbuf, out, n, MPI_DOUBLE, MPI_SUM, w);
    case OSMP_COLL_GATHER:
        return use_osmp ? osmp_gather(team, sbuf, out, bytes, OSMP_UINT8, 0)
                        : PMPI_Gather(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_ALLGATHER:
        return use_osmp ? osmp_allgather(team, sbuf, out, bytes, OSMP_UINT8)
                        : PMPI_Allgather(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, w);
    case OSMP_COLL_SCATTER:
        return use_osmp ? osmp_scatter(team, sbuf, out, bytes, OSMP_UINT8, 0)
                        : PMPI_Scatter(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_REDUCE_SCATTER_BLOCK:
        return use_osmp ? osmp_reduce_scatter_block(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM)
                        : PMPI_Reduce_scatter_block(sbuf, out, n, MPI_DOUBLE, MPI_SUM, w);
    case OSMP_COLL_ALLTOALL:
        return use_osmp ? osmp_alltoall(team, sbuf, out, bytes, OSMP_UINT8)
                        : PMPI_Alltoall(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, w);
    default: return OSMP_ERR_UNSUPPORTED; /* not benched() */
    }
}

/* OSU latency of one round, seconds per call, maximum over ranks. */
static double round_time(int use_osmp, osmp_coll_t op, size_t bytes, int iters)
{
    double sum = 0;
    for (int i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        call(use_osmp, op, bytes, rbuf);
        sum += MPI_Wtime() - t0;
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    double mine = sum / iters, worst;
    PMPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* Both libraries must produce the same bytes (the reductions sum small
 * integers as doubles, exactly). Returns 0 when they agree on every rank. */
static int check(osmp_coll_t op, size_t bytes)
{
    size_t out = bytes * (size_t)size + 64;
    memset(rbuf, 0x11, out);
    memset(cbuf, 0x22, out);
    if (op == OSMP_COLL_BCAST && rank == 0) { /* the root sends what it holds */
        memcpy(rbuf, sbuf, bytes);
        memcpy(cbuf, sbuf, bytes);
    }
    call(0, op, bytes, rbuf);
    call(1, op, bytes, cbuf);
    size_t valid = op == OSMP_COLL_BARRIER || ((op == OSMP_COLL_GATHER || op == OSMP_COLL_REDUCE) && rank != 0) ? 0
                   : op == OSMP_COLL_GATHER || op == OSMP_COLL_ALLGATHER || op == OSMP_COLL_ALLTOALL ? bytes * (size_t)size
                   : osmp_coll_flags(op) & OSMP_COLL_REDUCES ? bytes / 8 * 8
                                                                  : bytes;
    int bad = memcmp(rbuf, cbuf, valid) != 0, any;
    PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- the physical bound ----
 * One-way latency L: half the round trip of a cache line between rank 0 and the
 * farthest rank (ping-pong on a shared window, average of 20000 trips).
 * Bandwidth B: memcpy of 4 MiB by one core (cache-cold for the second MiB on).
 * Bound of an operation = L + (bytes that must arrive at the busiest rank) / B:
 *   barrier L; bcast, reduce, allreduce L + s/B; gather, scatter, allgather,
 *   alltoall, reduce_scatter_block L + (n-1) s / B. */
static double lat_one_way, bandwidth;

static void measure_limits(void)
{
    MPI_Comm node;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nr, ns;
    PMPI_Comm_rank(node, &nr);
    PMPI_Comm_size(node, &ns);
    MPI_Win win;
    osmp_atomic64_t *line;
    PMPI_Win_allocate_shared(nr == 0 ? 2 * OSMP_CACHE_LINE : 0, 1, MPI_INFO_NULL, node, &line, &win);
    MPI_Aint sz;
    int du;
    PMPI_Win_shared_query(win, 0, &sz, &du, &line);
    double worst = 0;
    for (int peer = 1; peer < ns; peer++) {
        PMPI_Barrier(node);
        const uint64_t trips = 20000;
        if (nr == 0) osmp__store_release(&line[0], 0);
        PMPI_Barrier(node);
        double t0 = MPI_Wtime();
        for (uint64_t k = 1; k <= trips && (nr == 0 || nr == peer); k++) {
            if (nr == 0) {
                osmp__store_release(&line[0], 2 * k - 1);
                while (osmp__load_acquire(&line[0]) != 2 * k) osmp__cpu_relax();
            } else {
                while (osmp__load_acquire(&line[0]) != 2 * k - 1) osmp__cpu_relax();
                osmp__store_release(&line[0], 2 * k);
            }
        }
        double rt = (MPI_Wtime() - t0) / (double)trips;
        if (nr == 0 && rt > worst) worst = rt;
    }
    PMPI_Bcast(&worst, 1, MPI_DOUBLE, 0, node);
    lat_one_way = worst / 2;
    PMPI_Win_free(&win);
    PMPI_Comm_free(&node);
    size_t n = 4u << 20;
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n);
    memset(b, 2, n);
    double best = 1e9;
    for (int r = 0; r < 20; r++) {
        double t0 = MPI_Wtime();
        memcpy(b, a, n);
        double t = MPI_Wtime() - t0;
        if (t < best) best = t;
        a[r] = b[n - 1 - r]; /* keep the copy alive */
    }
    bandwidth = (double)n / best;
    free(a);
    free(b);
}

static double bound(osmp_coll_t op, size_t bytes)
{
    double in = op == OSMP_COLL_BARRIER ? 0 : !(osmp_coll_flags(op) & OSMP_COLL_BLOCKS) ? (double)bytes : (double)bytes * (size - 1);
    return lat_one_way + in / bandwidth;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024;
    else if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
    return (size_t)v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ops_arg = NULL, *json = NULL;
    size_t smin = 1, smax = 4 << 20;
    int iters = 200, warmup = 20, rounds = 9, do_check = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ops") && v) ops_arg = argv[++i];
        else if (!strcmp(a, "--sizes") && v) {
            const char *colon = strchr(v, ':');
            smin = parse_size(v);
            smax = colon ? parse_size(colon + 1) : smin;
            i++;
        } else if (!strcmp(a, "--iters") && v) iters = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) warmup = atoi(argv[++i]);
        else if (!strcmp(a, "--rounds") && v) rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--check")) do_check = 1;
        else if (!strcmp(a, "--quick")) {
            rounds = 5, iters = 50, warmup = 5;
            if (smax > (1u << 20)) smax = 1u << 20;
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: osmp-bench [--ops LIST] [--sizes MIN:MAX] [--iters I] [--warmup W] "
                                "[--rounds R] [--check] [--json FILE] [--quick]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (iters < 1 || rounds < 1 || smin < 1 || smax < smin || smax > (256u << 20)) {
        if (rank == 0) fprintf(stderr, "osmp-bench: bad --iters/--rounds/--sizes\n");
        MPI_Finalize();
        return 2;
    }
    int want[OSMP_COLL_COUNT];
    for (int o = 0; o < OSMP_COLL_COUNT; o++) want[o] = !ops_arg && benched(o);
    if (ops_arg) {
        char *copy = strdup(ops_arg), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int o = 0; o < OSMP_COLL_COUNT; o++)
                if (!strcmp(tok, osmp_coll_name(o)) && benched(o)) want[o] = found = 1;
            if (!found) {
                if (rank == 0) fprintf(stderr, "osmp-bench: unknown operation \"%s\"\n", tok);
                MPI_Finalize();
                return 2;
            }
        }
        free(copy);
    }
    struct osmp_team_params p = {.rank = rank, .size = size, .oob_allgather = oob};
    int rc = osmp_team_create(&p, &team);
    if (rc) {
        fprintf(stderr, "osmp-bench: osmp_team_create: %s\n", osmp_status_str(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t cap = smax * (size_t)size + 64;
    sbuf = malloc(cap), rbuf = malloc(cap), cbuf = malloc(cap);
    for (size_t i = 0; i < cap / 8; i++) ((double *)sbuf)[i] = (double)((i + (size_t)rank) % 64);
    measure_limits();
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl) *nl = '\0';
    for (char *c = lib; *c; c++) /* JSON-safe: MPICH's string holds tabs */
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = ' ';
    FILE *js = NULL;
    if (rank == 0) {
        printf("osmp-bench: %d processes, %s\n", size, lib);
        printf("bound: one-way cache-line latency %.3f us, memcpy %.1f GB/s; median of %d rounds, %d calls each\n",
               lat_one_way * 1e6, bandwidth / 1e9, rounds, iters);
        if (json && !(js = fopen(json, "w"))) fprintf(stderr, "osmp-bench: cannot write %s\n", json);
        if (js)
            fprintf(js, "{\"processes\": %d, \"mpi\": \"%s\", \"latency_us\": %.4f, \"bandwidth_gbs\": %.3f,\n \"results\": [",
                    size, lib, lat_one_way * 1e6, bandwidth / 1e9);
    }
    int first = 1, failed = 0, tty = isatty(2);
    double *to = malloc(sizeof(double) * (size_t)rounds), *tm = malloc(sizeof(double) * (size_t)rounds);
    for (int o = 0; o < OSMP_COLL_COUNT; o++) {
        if (!want[o]) continue;
        if (rank == 0 && !tty) fprintf(stderr, "osmp-bench: %s\n", osmp_coll_name(o)); /* progress */
        if (rank == 0)
            printf("\n%-22s %10s %12s %12s %7s %12s %8s\n", osmp_coll_name(o), "bytes", "OSMP us", "MPI us", "ratio",
                   "bound us", "/bound");
        for (size_t bytes = o == OSMP_COLL_BARRIER ? 0 : smin; bytes <= (o == OSMP_COLL_BARRIER ? 0 : smax); bytes = bytes ? bytes * 2 : 1) {
            if ((osmp_coll_flags(o) & OSMP_COLL_REDUCES) && bytes < 8) continue;
            if (rank == 0 && tty) fprintf(stderr, "osmp-bench: %s %zu bytes     \r", osmp_coll_name(o), bytes);
            int it = bytes >= (1u << 20) ? (iters / 10 > 5 ? iters / 10 : 5) : iters;
            for (int w = 0; w < warmup; w++) {
                call(0, o, bytes, rbuf);
                call(1, o, bytes, rbuf);
            }
            if (do_check && check(o, bytes)) {
                failed = 1;
                if (rank == 0) printf("%-22s %10zu CHECK FAILED: OSMP and MPI results differ\n", "", bytes);
            }
            for (int r = 0; r < rounds; r++) { /* interleaved, alternating who goes first */
                if (r % 2) {
                    to[r] = round_time(1, o, bytes, it);
                    tm[r] = round_time(0, o, bytes, it);
                } else {
                    tm[r] = round_time(0, o, bytes, it);
                    to[r] = round_time(1, o, bytes, it);
                }
            }
            qsort(to, (size_t)rounds, sizeof(double), cmp_double);
            qsort(tm, (size_t)rounds, sizeof(double), cmp_double);
            double mo = to[rounds / 2] * 1e6, mm = tm[rounds / 2] * 1e6, bd = bound(o, bytes) * 1e6;
            if (rank == 0) {
                printf("%-22s %10zu %12.3f %12.3f %7.2f %12.3f %8.2f\n", "", bytes, mo, mm, mo / mm, bd, mo / bd);
                if (js)
                    fprintf(js, "%s\n  {\"op\": \"%s\", \"bytes\": %zu, \"osmp_us\": %.4f, \"mpi_us\": %.4f, \"bound_us\": %.4f}",
                            first ? "" : ",", osmp_coll_name(o), bytes, mo, mm, bd);
                first = 0;
            }
            if (bytes == 0) break;
        }
    }
    if (rank == 0) {
        if (tty) fprintf(stderr, "%60s\r", "");
        if (js) {
            fprintf(js, "\n]}\n");
            fclose(js);
        }
    }
    free(to);
    free(tm);
    osmp_team_destroy(team);
    MPI_Finalize();
    return failed;
}
