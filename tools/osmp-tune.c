/*
 * osmp-tune: time every algorithm of every collective on this machine, at the
 * team size it runs at, and write the tune table the runtime and libosmp_mpi
 * load at team creation (docs/tuning.md).
 *
 *   osmp-run -n 128 -- osmp-tune [--quick] [--ops LIST] [--sizes LIST] [--out FILE]
 *   mpirun -n 128 osmp-tune ...      (adds the MPI library's own call as a choice: "mpi")
 *
 * Method. Per collective and block size, each candidate (an algorithm, kary
 * with radix 2 and 4, and "mpi" under mpirun) runs on a team of its own whose
 * tune table forces it; a candidate's time is the slowest rank's average over
 * a batch of back-to-back calls (about 2 ms of them). Rounds run every
 * candidate once, in an order that rotates from round to round, so that a
 * slow spell of the machine hits each alike; after at least 3 rounds, tuning
 * stops once the candidate with the lowest median has been the same for 3
 * rounds in a row (at most --rounds). The winners by size become bands, their
 * borders at the geometric middle between two measured sizes. Then, with the
 * winners in place: per collective that copies blocks once, from which size
 * the single copy wins; and for the large reductions and broadcasts the chunk
 * and pipeline depth. Every rank computes the same decisions from the same
 * reduced times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef OSMP_TUNE_MPI
#include <mpi.h>
#endif

#include "coll/coll.h"
#include "coll/tune.h"
#include "common/knobs.h"
#include "common/machine.h"
#include "osmp.h"
#include "topo/measured.h"

static osmp_team_t world;
static int rank, size, use_mpi;
static char *sbuf, *rbuf;
static size_t *vcount, *vdispl;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (rank == 0) {
        fprintf(stderr, "osmp-tune: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
    }
    va_end(ap);
#ifdef OSMP_TUNE_MPI
    if (use_mpi) MPI_Abort(MPI_COMM_WORLD, 2);
#endif
    exit(2);
}

static int world_allgather(void *ctx, const void *send, void *recv, size_t len)
{
    (void)ctx;
#ifdef OSMP_TUNE_MPI
    if (use_mpi)
        return PMPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS;
#endif
    return osmp_allgather(world, send, recv, len, OSMP_UINT8) != OSMP_OK;
}

/* A team over the same participants whose tune table is `table`. */
static osmp_team_t team_with(const char *table)
{
    struct osmp_team_params p = {.mask = OSMP_TEAM_PARAM_TUNE, .rank = rank, .size = size,
                                 .oob_allgather = world_allgather, .tune = table};
    osmp_team_t t;
    int rc = osmp_team_create(&p, &t);
    if (rc) die("team creation failed: %s", osmp_status_str(rc));
    return t;
}

/* One call of collective c on team t (NULL: the MPI library's) with `bytes` per block. */
static int call(osmp_team_t t, osmp_coll_t c, size_t bytes)
{
    size_t n = bytes / 8;
#ifdef OSMP_TUNE_MPI
    if (!t) {
        MPI_Comm w = MPI_COMM_WORLD;
        int b = (int)bytes, k = (int)n;
        switch (c) {
        case OSMP_COLL_BARRIER: return PMPI_Barrier(w);
        case OSMP_COLL_BCAST: return PMPI_Bcast(rbuf, b, MPI_BYTE, 0, w);
        case OSMP_COLL_REDUCE: return PMPI_Reduce(sbuf, rbuf, k, MPI_DOUBLE, MPI_SUM, 0, w);
        case OSMP_COLL_ALLREDUCE: return PMPI_Allreduce(sbuf, rbuf, k, MPI_DOUBLE, MPI_SUM, w);
        case OSMP_COLL_GATHER: return PMPI_Gather(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, 0, w);
        case OSMP_COLL_ALLGATHER: return PMPI_Allgather(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, w);
        case OSMP_COLL_SCATTER: return PMPI_Scatter(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, 0, w);
        case OSMP_COLL_REDUCE_SCATTER_BLOCK: return PMPI_Reduce_scatter_block(sbuf, rbuf, k, MPI_DOUBLE, MPI_SUM, w);
        case OSMP_COLL_ALLTOALL: return PMPI_Alltoall(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, w);
        case OSMP_COLL_SCAN: return PMPI_Scan(sbuf, rbuf, k, MPI_DOUBLE, MPI_SUM, w);
        case OSMP_COLL_EXSCAN: return PMPI_Exscan(sbuf, rbuf, k, MPI_DOUBLE, MPI_SUM, w);
        default: return -1;
        }
    }
#endif
    for (int r = 0; r < size; r++) vcount[r] = osmp_coll_flags(c) & OSMP_COLL_REDUCES ? n : bytes, vdispl[r] = (size_t)r * vcount[r];
    switch (c) {
    case OSMP_COLL_BARRIER: return osmp_barrier(t);
    case OSMP_COLL_BCAST: return osmp_bcast(t, rbuf, bytes, OSMP_UINT8, 0);
    case OSMP_COLL_REDUCE: return osmp_reduce(t, sbuf, rbuf, n, OSMP_DOUBLE, OSMP_SUM, 0);
    case OSMP_COLL_ALLREDUCE: return osmp_allreduce(t, sbuf, rbuf, n, OSMP_DOUBLE, OSMP_SUM);
    case OSMP_COLL_GATHER: return osmp_gather(t, sbuf, rbuf, bytes, OSMP_UINT8, 0);
    case OSMP_COLL_ALLGATHER: return osmp_allgather(t, sbuf, rbuf, bytes, OSMP_UINT8);
    case OSMP_COLL_SCATTER: return osmp_scatter(t, sbuf, rbuf, bytes, OSMP_UINT8, 0);
    case OSMP_COLL_REDUCE_SCATTER_BLOCK: return osmp_reduce_scatter_block(t, sbuf, rbuf, n, OSMP_DOUBLE, OSMP_SUM);
    case OSMP_COLL_ALLTOALL: return osmp_alltoall(t, sbuf, rbuf, bytes, OSMP_UINT8);
    case OSMP_COLL_GATHERV: return osmp_gatherv(t, sbuf, bytes, rbuf, vcount, vdispl, OSMP_UINT8, 0);
    case OSMP_COLL_SCATTERV: return osmp_scatterv(t, sbuf, vcount, vdispl, rbuf, bytes, OSMP_UINT8, 0);
    case OSMP_COLL_ALLGATHERV: return osmp_allgatherv(t, sbuf, bytes, rbuf, vcount, vdispl, OSMP_UINT8);
    case OSMP_COLL_ALLTOALLV:
        return osmp_alltoallv(t, sbuf, vcount, vdispl, rbuf, vcount, vdispl, OSMP_UINT8);
    case OSMP_COLL_REDUCE_SCATTER: return osmp_reduce_scatter(t, sbuf, rbuf, vcount, OSMP_DOUBLE, OSMP_SUM);
    case OSMP_COLL_SCAN: return osmp_scan(t, sbuf, rbuf, n, OSMP_DOUBLE, OSMP_SUM);
    case OSMP_COLL_EXSCAN: return osmp_exscan(t, sbuf, rbuf, n, OSMP_DOUBLE, OSMP_SUM);
    default: return -1;
    }
}

/* The slowest rank's value (every rank gets it). */
static double max_over_ranks(double v)
{
    double out = v;
    if (osmp_allreduce(world, &v, &out, 1, OSMP_DOUBLE, OSMP_MAX)) die("allreduce on the world team failed");
    return out;
}

/* Seconds per call of c on t at `bytes`: `it` calls back to back, the slowest rank's average. */
static double batch(osmp_team_t t, osmp_coll_t c, size_t bytes, int it)
{
    osmp_barrier(world);
    double t0 = now();
    for (int i = 0; i < it; i++)
        if (call(t, c, bytes)) die("%s of %zu bytes failed", osmp_coll_name(c), bytes);
    return max_over_ranks((now() - t0) / it);
}

/* ---- candidates, rounds, medians ---- */

#define MAX_CAND 12
struct cand {
    char name[24]; /* as a tune row names it */
    char *table;      /* its tune table (malloc) */
    osmp_team_t team; /* NULL: the MPI library */
    int skip;         /* not raced at this size (runs_itself) */
    double t[64];     /* per round */
};

static char sig_line[256];
static int quick, max_rounds = 9;
static double t_start, work_done, work_total;

static void progress(const char *what)
{
    if (rank != 0) return;
    double frac = work_total > 0 ? work_done / work_total : 0, el = now() - t_start;
    double left = frac > 0.01 ? el * (1 - frac) / frac : 0;
    char bar[31];
    int fill = (int)(frac * 30 + 0.5);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "%s[%s] %3d%%  %-32s %3dm%02ds left%s", isatty(2) ? "\r" : "", bar, (int)(frac * 100 + 0.5),
            what, (int)left / 60, (int)left % 60, isatty(2) ? "   " : "\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double s[64];
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The index of the candidate with the lowest median after r rounds. */
static int best_after(const struct cand *cs, int nc, int r)
{
    int best = -1;
    for (int k = 0; k < nc; k++)
        if (!cs[k].skip && (best < 0 || median(cs[k].t, r) < median(cs[best].t, r))) best = k;
    return best;
}

/* Does the candidate's team run the candidate at this size? An algorithm that
 * ends at a size (direct at its line or slot) passes larger calls to the next
 * row: timing it there would time that one, and a table naming it there would
 * not run it. The same answer on every rank (the same table, the same team). */
static int runs_itself(const struct cand *x, osmp_coll_t c, size_t bytes)
{
    struct osmp_choice ch;
    if (!x->team || osmp_team_choice(x->team, c, bytes, &ch)) return 1;
    return strcmp(ch.name, x->name) == 0;
}

/* Rounds over the candidates at one size until the best is settled; its index. */
static int race(struct cand *cs, int nc, osmp_coll_t c, size_t bytes, const char *what)
{
    int it = 1;
    for (int k = 0; k < nc; k++) { /* warm up each (first touch of its buffers); the batch size from the slowest */
        if (cs[k].skip) continue;
        call(cs[k].team, c, bytes);
        double one = batch(cs[k].team, c, bytes, 1);
        int want = one > 0 ? (int)(2e-3 / one) : 200;
        if (k == 0 || want < it) it = want < 1 ? 1 : want > 200 ? 200 : want;
    }
    int r = 0, streak = 0, last = -1;
    for (; r < max_rounds; r++) {
        for (int j = 0; j < nc; j++) {
            int k = (j + r) % nc;
            if (!cs[k].skip) cs[k].t[r] = batch(cs[k].team, c, bytes, it);
        }
        int b = best_after(cs, nc, r + 1);
        streak = b == last ? streak + 1 : 1;
        last = b;
        work_done += 1;
        progress(what);
        if (r + 1 >= 3 && streak >= 3) break;
    }
    work_done += max_rounds - (r < max_rounds ? r + 1 : r); /* the rounds it did not need */
    return last;
}

static void cand_table(struct cand *x, const char *rows)
{
    free(x->table);
    if (asprintf(&x->table, "%s\n%s", sig_line, rows) < 0) die("no memory");
}

/* ---- the table ---- */

static char out_rows[1 << 16];
static size_t out_len;

static void emit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out_rows + out_len, sizeof(out_rows) - out_len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(out_rows) - out_len) die("the table grew beyond %zu bytes", sizeof(out_rows));
    out_len += (size_t)n;
}

static void bytes_word(char *buf, size_t len, uint64_t b)
{
    if (b == UINT64_MAX) snprintf(buf, len, "max");
    else if (b && b % 1048576 == 0) snprintf(buf, len, "%" PRIu64 "M", b / 1048576);
    else if (b && b % 1024 == 0) snprintf(buf, len, "%" PRIu64 "K", b / 1024);
    else snprintf(buf, len, "%" PRIu64, b);
}

/* The winner's rows of one collective, merged into bands. */
static void emit_bands(osmp_coll_t c, const size_t *sizes, const int *win, const size_t *upto, int ns,
                       struct cand *cs, char *rows, size_t rows_len)
{
    uint64_t lo = 0;
    size_t at = 0;
    for (int i = 0; i < ns; i++) {
        if (i + 1 < ns && win[i + 1] == win[i]) continue;
        uint64_t hi = i + 1 < ns ? (uint64_t)sqrt((double)sizes[i] * (double)sizes[i + 1]) : UINT64_MAX;
        /* where the winner ends (its own limit, not a size class's: runs_itself), the next band begins */
        if (upto[i] < hi && !runs_itself(&cs[win[i]], c, (size_t)hi)) hi = upto[i];
        if (hi < lo) hi = lo;
        char l[24], h[24];
        bytes_word(l, sizeof(l), lo);
        bytes_word(h, sizeof(h), hi);
        int n = snprintf(rows + at, rows_len - at, "%-22s %5d %8s %8s %s\n", osmp_coll_name(c), size, l, h,
                         cs[win[i]].name);
        if (n > 0 && (size_t)n < rows_len - at) at += (size_t)n;
        if (hi == UINT64_MAX) break;
        lo = hi + 1;
    }
}

/* Candidates of collective c: its algorithms (kary with radix 2 and 4), and the MPI library's. */
static int candidates(osmp_coll_t c, struct cand *cs)
{
    int nc = 0;
    for (const struct osmp__alg *a = osmp__algs_of(c); a->name && nc < MAX_CAND - 2; a++) {
        for (int radix = 2; radix <= (a->takes_radix ? 4 : 2); radix *= 2) {
            struct cand *x = &cs[nc++];
            memset(x, 0, sizeof(*x));
            snprintf(x->name, sizeof(x->name), a->takes_radix ? "%s:%d" : "%s", a->name, radix);
        }
    }
#ifdef OSMP_TUNE_MPI
    if (use_mpi && c != OSMP_COLL_GATHERV && c != OSMP_COLL_SCATTERV && c != OSMP_COLL_ALLGATHERV &&
        c != OSMP_COLL_ALLTOALLV && c != OSMP_COLL_REDUCE_SCATTER) {
        memset(&cs[nc], 0, sizeof(cs[nc]));
        snprintf(cs[nc++].name, sizeof(cs[0].name), "mpi");
    }
#endif
    return nc;
}

/* Collectives with a single-copy path (select.c thresholds; tuned from SINGLE_COPY_FROM up). */
#define SINGLE_COPY_FROM 16384
static int copies_once(osmp_coll_t c)
{
    return c == OSMP_COLL_BCAST || c == OSMP_COLL_REDUCE || c == OSMP_COLL_GATHER || c == OSMP_COLL_ALLGATHER ||
           c == OSMP_COLL_SCATTER || c == OSMP_COLL_ALLTOALL || c == OSMP_COLL_GATHERV || c == OSMP_COLL_SCATTERV ||
           c == OSMP_COLL_ALLGATHERV || c == OSMP_COLL_ALLTOALLV;
}

static void open_teams(osmp_coll_t c, struct cand *cs, int nc, const char *extra)
{
    for (int k = 0; k < nc; k++) {
        if (!strcmp(cs[k].name, "mpi")) continue;
        char rows[2048];
        snprintf(rows, sizeof(rows), "%s%s %d 0 max %s\n", extra, osmp_coll_name(c), size, cs[k].name);
        cand_table(&cs[k], rows);
        cs[k].team = team_with(cs[k].table);
    }
}

static void close_teams(struct cand *cs, int nc)
{
    for (int k = 0; k < nc; k++) {
        if (cs[k].team) osmp_team_destroy(cs[k].team), cs[k].team = NULL;
        free(cs[k].table);
        cs[k].table = NULL;
    }
}

static int parse_list(const char *s, size_t *out, int max)
{
    int n = 0;
    char *dup = strdup(s), *save = NULL;
    for (char *w = strtok_r(dup, ",", &save); w && n < max; w = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(w, &end);
        double mul = *end == 'K' || *end == 'k' ? 1024 : *end == 'M' || *end == 'm' ? 1048576 : 1;
        if (mul > 1) end++;
        if (end == w || *end || v < 0 || v * mul > 256.0 * 1048576) die("bad size \"%s\" in --sizes (0..256M)", w);
        out[n++] = (size_t)(v * mul);
    }
    free(dup);
    return n;
}

static const char usage[] =
    "usage: osmp-run -n N -- osmp-tune [options]     (or: mpirun -n N osmp-tune [options], adds MPI as a choice)\n"
    "Times every algorithm of every collective at this team size and writes the tune table (docs/tuning.md)\n"
    "that teams of this size on this machine load at creation.\n"
    "  --quick          4 sizes, at most 5 rounds: a few minutes\n"
    "  --ops LIST       collectives to tune (default: all but the vector variants), e.g. allreduce,bcast\n"
    "  --sizes LIST     block sizes in bytes, e.g. 8,4K,256K (default: 8 to 8M by factors of 4)\n"
    "  --rounds N       at most N rounds per size (default 9; 3 at least)\n"
    "  --no-settings    tune the algorithms only, not single copy, chunk and pipeline depth\n"
    "  --out FILE       where to write (default: this machine's cache, which teams load by default)\n";

int main(int argc, char **argv)
{
    const char *ops = NULL, *sizes_arg = NULL, *out = NULL;
    int settings = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--no-settings")) settings = 0;
        else if (!strcmp(a, "--ops") && has) ops = argv[++i];
        else if (!strcmp(a, "--sizes") && has) sizes_arg = argv[++i];
        else if (!strcmp(a, "--out") && has) out = argv[++i];
        else if (!strcmp(a, "--rounds") && has) max_rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return fputs(usage, stdout), 0;
        else return fprintf(stderr, "osmp-tune: unknown option %s\n%s", a, usage), 2;
    }
    if (max_rounds < 3 || max_rounds > 64) return fprintf(stderr, "osmp-tune: --rounds must be in 3..64\n"), 2;
    if (quick && max_rounds > 5) max_rounds = 5;
    int rc;
    if (getenv("OSMP_RUN_FD")) {
        rc = osmp_init(&world);
    } else {
#ifdef OSMP_TUNE_MPI
        MPI_Init(&argc, &argv);
        use_mpi = 1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        PMPI_Comm_size(MPI_COMM_WORLD, &size);
        struct osmp_team_params p = {.rank = rank, .size = size, .oob_allgather = world_allgather};
        rc = osmp_team_create(&p, &world);
#else
        fprintf(stderr, "osmp-tune: run it under osmp-run (osmp-run -n N -- osmp-tune); this build has no MPI\n");
        return 2;
#endif
    }
    if (rc) die("no team: %s", osmp_status_str(rc));
    rank = osmp_team_rank(world);
    size = osmp_team_size(world);
    if (size < 2) die("a team of one has nothing to tune: run it under osmp-run -n N or mpirun -n N");

    osmp_topo_t topo;
    if (osmp__topo_load_knob(osmp__knob_str(OSMP_KNOB_TOPOLOGY), &topo)) die("%s", osmp_topo_last_error());
    char words[160];
    uint64_t sig = osmp__tune_signature(topo, words, sizeof(words));
    snprintf(sig_line, sizeof(sig_line), "topology %016" PRIx64 " %s", sig, words);

    int want[OSMP_COLL_COUNT] = {0}, nops = 0;
    for (int c = 0; c < OSMP_COLL_COUNT; c++) want[c] = !ops && !(osmp_coll_flags((osmp_coll_t)c) & OSMP_COLL_VECTOR);
    if (ops) {
        char *dup = strdup(ops), *save = NULL;
        for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int c = 0; c < OSMP_COLL_COUNT; c++)
                if (!strcmp(w, osmp_coll_name((osmp_coll_t)c))) want[c] = found = 1;
            if (!found) die("unknown collective \"%s\" in --ops", w);
        }
        free(dup);
    }
    size_t sizes[32];
    int ns;
    if (sizes_arg) ns = parse_list(sizes_arg, sizes, 32);
    else if (quick) ns = parse_list("8,1K,64K,1M", sizes, 32);
    else ns = parse_list("8,32,128,512,2K,8K,32K,128K,512K,2M,8M", sizes, 32);
    size_t maxb = 0;
    for (int i = 0; i < ns; i++) {
        if (i && sizes[i] <= sizes[i - 1]) die("--sizes must rise");
        if (sizes[i] > maxb) maxb = sizes[i];
    }
    size_t buf = (maxb + 64) * (size_t)size;
    sbuf = calloc(1, buf);
    rbuf = calloc(1, buf);
    vcount = calloc((size_t)size, sizeof(size_t));
    vdispl = calloc((size_t)size, sizeof(size_t));
    if (!sbuf || !rbuf || !vcount || !vdispl) die("no memory for %zu-byte buffers", buf);

    struct cand *cs = calloc(MAX_CAND, sizeof(struct cand));
    if (!cs) die("no memory");
    /* The progress bar counts rounds: every race may take max_rounds (those it does not need count as done). */
    int big_sizes = 0;
    for (int i = 0; i < ns; i++) big_sizes += sizes[i] >= SINGLE_COPY_FROM;
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
        if (want[c]) {
            nops++;
            work_total += (double)max_rounds * (c == OSMP_COLL_BARRIER ? 1 : ns);
            if (settings && copies_once((osmp_coll_t)c)) work_total += (double)max_rounds * big_sizes;
        }
    if (settings && sizes[ns - 1] >= 65536) work_total += 2.0 * max_rounds;
    t_start = now();
    static char all_rows[1 << 15];
    int win[32];
    size_t upto[32];
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        if (!want[c]) continue;
        int nc = candidates((osmp_coll_t)c, cs);
        open_teams((osmp_coll_t)c, cs, nc, "");
        int n = c == OSMP_COLL_BARRIER ? 1 : ns;
        if (nc == 1) work_done += (double)max_rounds * n; /* nothing to choose */
        size_t zero = 0;
        const size_t *sz = c == OSMP_COLL_BARRIER ? &zero : sizes;
        for (int i = 0; i < n; i++) {
            char what[64];
            snprintf(what, sizeof(what), "%s %zu B", osmp_coll_name((osmp_coll_t)c), sz[i]);
            for (int k = 0; k < nc; k++) cs[k].skip = !runs_itself(&cs[k], (osmp_coll_t)c, sz[i]);
            win[i] = nc == 1 ? 0 : race(cs, nc, (osmp_coll_t)c, sz[i], what);
            struct osmp_choice ch;
            upto[i] = cs[win[i]].team && !osmp_team_choice(cs[win[i]].team, (osmp_coll_t)c, sz[i], &ch) ? ch.hi
                                                                                                        : SIZE_MAX;
            if (rank == 0 && getenv("OSMP_TUNE_VERBOSE")) {
                fprintf(stderr, "\n%s:", what);
                for (int k = 0; k < nc; k++)
                    if (cs[k].skip) fprintf(stderr, " %s (not at this size)", cs[k].name);
                    else fprintf(stderr, " %s %.2f us", cs[k].name, 1e6 * median(cs[k].t, 3));
                fprintf(stderr, "\n");
            }
            for (int k = 0; k < nc; k++) cs[k].skip = 0;
        }
        char rows[4096];
        emit_bands((osmp_coll_t)c, sz, win, upto, n, cs, rows, sizeof(rows));
        strncat(all_rows, rows, sizeof(all_rows) - strlen(all_rows) - 1);
        close_teams(cs, nc);
    }
    emit("%s\n", sig_line);
    emit("# osmp tune table (docs/tuning.md), written by osmp-tune");
    for (int i = 1; i < argc; i++) emit(" %s", argv[i]);
    emit("\n# %d participants under %s; per size the candidate with the lowest median time of the slowest rank,\n"
         "# settled over 3 rounds in a row (at most %d); borders at the geometric middle of the sizes measured\n",
         size, use_mpi ? "mpirun" : "osmp-run", max_rounds);
    emit("# COLLECTIVE          RANKS  MIN_BYTES MAX_BYTES CHOICE\n%s", all_rows);

    if (settings) {
        /* Single copy: with the winners, from which size copying once wins at every larger size measured. */
        struct cand two[2];
        for (int c = 0; c < OSMP_COLL_COUNT; c++) {
            if (!want[c] || !copies_once((osmp_coll_t)c)) continue;
            size_t from = SIZE_MAX;
            int i = ns - 1;
            for (; i >= 0 && sizes[i] >= SINGLE_COPY_FROM; i--) {
                static char rows[1 << 16];
                for (int k = 0; k < 2; k++) {
                    memset(&two[k], 0, sizeof(two[k]));
                    snprintf(two[k].name, sizeof(two[k].name), k ? "once" : "staged");
                    snprintf(rows, sizeof(rows), "%sset %d single_copy_min.%s %s\n", all_rows, size,
                             osmp_coll_name((osmp_coll_t)c), k ? "0" : "never");
                    cand_table(&two[k], rows);
                    two[k].team = team_with(two[k].table);
                }
                char what[64];
                snprintf(what, sizeof(what), "%s %zu B single copy", osmp_coll_name((osmp_coll_t)c), sizes[i]);
                int w = race(two, 2, (osmp_coll_t)c, sizes[i], what);
                close_teams(two, 2);
                if (w != 1) {
                    i--;
                    break;
                }
                from = sizes[i];
            }
            for (; i >= 0 && sizes[i] >= SINGLE_COPY_FROM; i--) work_done += max_rounds; /* races not run */
            if (from == SIZE_MAX) emit("set %5d single_copy_min.%s never\n", size, osmp_coll_name((osmp_coll_t)c));
            else emit("set %5d single_copy_min.%s %zu\n", size, osmp_coll_name((osmp_coll_t)c), from);
        }
        /* Chunk, then depth: allreduce at the largest size measured, with the winners. */
        static const long chunks[] = {16384, 32768, 65536, 131072}, depths[] = {4, 8, 16};
        struct cand sets[4];
        size_t big = sizes[ns - 1];
        long best_chunk = 0;
        for (int phase = 0; phase < 2 && big >= 65536; phase++) {
            int nset = phase ? 3 : 4;
            for (int k = 0; k < nset; k++) {
                static char rows[1 << 16];
                memset(&sets[k], 0, sizeof(sets[k]));
                snprintf(sets[k].name, sizeof(sets[k].name), "%ld", phase ? depths[k] : chunks[k]);
                if (phase) snprintf(rows, sizeof(rows), "%sset %d chunk %ld\nset %d pipeline_depth %ld\n", all_rows, size,
                                    best_chunk, size, depths[k]);
                else snprintf(rows, sizeof(rows), "%sset %d chunk %ld\n", all_rows, size, chunks[k]);
                cand_table(&sets[k], rows);
                sets[k].team = team_with(sets[k].table);
            }
            char what[64];
            snprintf(what, sizeof(what), "allreduce %zu B %s", big, phase ? "depth" : "chunk");
            int w = race(sets, nset, OSMP_COLL_ALLREDUCE, big, what);
            close_teams(sets, nset);
            if (phase) emit("set %5d pipeline_depth %ld\n", size, depths[w]);
            else emit("set %5d chunk %ld\n", size, best_chunk = chunks[w]);
        }
    }
    work_done = work_total;
    progress("done");
    if (rank == 0) {
        if (isatty(2)) fprintf(stderr, "\n");
        char path[4096], why[256];
        if (!out) {
            if (osmp__cache_path("tune", "txt", path, sizeof(path), why, sizeof(why))) die("%s; name one with --out", why);
            char dir[4096];
            snprintf(dir, sizeof(dir), "%s", path);
            for (char *s = dir + 1; *s; s++) /* mkdir -p of its folder */
                if (*s == '/') {
                    *s = '\0';
                    mkdir(dir, 0755);
                    *s = '/';
                }
            out = path;
        }
        FILE *f = fopen(out, "w");
        if (!f || fwrite(out_rows, 1, out_len, f) != out_len || fclose(f)) die("cannot write %s: %s", out, strerror(errno));
        printf("osmp-tune: %d participants, %.0f s; tune table written to %s (osmp-topo --algorithms shows it)\n", size,
               now() - t_start, out);
    }
    osmp_barrier(world);
    osmp_topo_destroy(topo);
    free(cs);
    free(sbuf);
    free(rbuf);
    free(vcount);
    free(vdispl);
#ifdef OSMP_TUNE_MPI
    if (use_mpi) {
        osmp_team_destroy(world);
        MPI_Finalize();
        return 0;
    }
#endif
    osmp_finalize();
    return 0;
}
