/*
 * osmp-bench: collective latency as applications see it, and OSMP against the
 * MPI library it runs under. `osmp-bench --help` lists the options;
 * docs/measurements.md ("How the numbers are taken") says what each mode
 * measures and how bench/compare uses them.
 *
 * Modes (--mode):
 *  osu   per-call latency as the OSU micro-benchmarks define it: each call timed
 *        alone, MPI_Barrier (the library's own: libosmp_mpi's when preloaded)
 *        after it outside the timed region; a rank's latency is its average over
 *        the calls; reported: average over ranks (what OSU prints), max, min.
 *        The program calls MPI_ functions: run it with and without libosmp_mpi
 *        in LD_PRELOAD to compare (bench/compare does, interleaved).
 *  b2b   back to back, as IMB does: N calls in a row, no barrier between, the
 *        time over N; reported: max over ranks (IMB's t_max), average, min.
 *  side  OSMP's calls (a team over MPI_COMM_WORLD) and the MPI library's own
 *        (PMPI_, so a preloaded libosmp_mpi is bypassed) interleaved in one
 *        process, OSU timing, each followed by its own library's barrier.
 *  nb    the nonblocking collectives (MPI_I<op>, through MPI_) as the OSU
 *        micro-benchmarks 7 time them (osu_iallreduce and the others): per
 *        round, pure communication (post, MPI_Wait at once, OSU timing), then
 *        overall (post, a dummy compute lasting this rank's pure time, MPI_Wait),
 *        and the blocking MPI_<op> in OSU timing in the same round; reported:
 *        pure, overall, compute, overlap % = max(0, 100 (1 - (overall -
 *        compute) / pure)) and pure / blocking (see nb_round()).
 * Every mode takes the median of --rounds rounds and reports the bound measured
 * in the same run (see measure_line() and copy_time()).
 * osmp-tune (tools/osmp-tune.c) writes the tune table.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
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
static const char *alloc; /* --alloc: malloc, mpi or osmp */

/* The message buffers, from where --alloc says; never freed (the process ends). */
static char *buf_alloc(size_t bytes)
{
    void *p = NULL;
    if (!strcmp(alloc, "mpi")) {
        if (MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p) != MPI_SUCCESS) p = NULL;
    } else if (!strcmp(alloc, "osmp")) {
        if (osmp_alloc(bytes, &p) != OSMP_OK) p = NULL;
    } else {
        p = malloc(bytes);
    }
    if (!p) {
        fprintf(stderr, "osmp-bench: no memory for %zu-byte buffers (--alloc %s)\n", bytes, alloc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

enum lib { LIB_PMPI, LIB_OSMP, LIB_MPI }; /* LIB_MPI: the MPI_ symbol, libosmp_mpi's when preloaded */
enum mode { MODE_OSU, MODE_B2B, MODE_SIDE, MODE_NB };
static const char *const mode_name[] = {"osu", "b2b", "side", "nb"};
#define MODES 4

static int oob(void *ctx, const void *send, void *recv, size_t len)
{
    (void)ctx;
    return PMPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS;
}

/* The collectives call() runs: all of them. The vector variants and the
 * scans run when --ops names them (not by default: the tune table and
 * bench/compare's rows predate them), the vector variants with every block
 * the same, as IMB runs them. */
static int benched(osmp_coll_t op)
{
    return (unsigned)op < OSMP_COLL_COUNT;
}
static int by_default(osmp_coll_t op)
{
    return !(osmp_coll_flags(op) & OSMP_COLL_VECTOR) && op != OSMP_COLL_SCAN && op != OSMP_COLL_EXSCAN;
}

/* The vector variants' counts and displacements: every rank's block `count`
 * elements, back to back (MPI's as int, OSMP's as size_t). */
static int *vcount, *vdispl;
static size_t *zcount, *zdispl, vblock = SIZE_MAX;

static void vector_blocks(size_t count)
{
    if (count == vblock) return;
    for (int r = 0; r < size; r++) {
        vcount[r] = (int)count, vdispl[r] = r * (int)count;
        zcount[r] = count, zdispl[r] = (size_t)r * count;
    }
    vblock = count;
}

/* One MPI call through PMPI_ or MPI_. */
#define MPICALL(lib, fn, ...) ((lib) == LIB_PMPI ? PMPI_##fn(__VA_ARGS__) : MPI_##fn(__VA_ARGS__))

/* One call of op on `bytes` per rank: reductions on doubles, movement on bytes. */
static int call(enum lib lib, osmp_coll_t op, size_t bytes, char *out)
{
    int n = (int)(bytes / 8), b = (int)bytes, o = lib == LIB_OSMP;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (op) {
    case OSMP_COLL_BARRIER: return o ? osmp_barrier(team) : MPICALL(lib, Barrier, w);
    case OSMP_COLL_BCAST: return o ? osmp_bcast(team, out, bytes, OSMP_UINT8, 0) : MPICALL(lib, Bcast, out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_REDUCE:
        return o ? osmp_reduce(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM, 0)
                 : MPICALL(lib, Reduce, sbuf, out, n, MPI_DOUBLE, MPI_SUM, 0, w);
    case OSMP_COLL_ALLREDUCE:
        return o ? osmp_allreduce(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM)
                 : MPICALL(lib, Allreduce, sbuf, out, n, MPI_DOUBLE, MPI_SUM, w);
    case OSMP_COLL_GATHER:
        return o ? osmp_gather(team, sbuf, out, bytes, OSMP_UINT8, 0)
                 : MPICALL(lib, Gather, sbuf, b, MPI_BYTE, out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_ALLGATHER:
        return o ? osmp_allgather(team, sbuf, out, bytes, OSMP_UINT8)
                 : MPICALL(lib, Allgather, sbuf, b, MPI_BYTE, out, b, MPI_BYTE, w);
    case OSMP_COLL_SCATTER:
        return o ? osmp_scatter(team, sbuf, out, bytes, OSMP_UINT8, 0)
                 : MPICALL(lib, Scatter, sbuf, b, MPI_BYTE, out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_REDUCE_SCATTER_BLOCK:
        return o ? osmp_reduce_scatter_block(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM)
                 : MPICALL(lib, Reduce_scatter_block, sbuf, out, n, MPI_DOUBLE, MPI_SUM, w);
    case OSMP_COLL_ALLTOALL:
        return o ? osmp_alltoall(team, sbuf, out, bytes, OSMP_UINT8)
                 : MPICALL(lib, Alltoall, sbuf, b, MPI_BYTE, out, b, MPI_BYTE, w);
    case OSMP_COLL_SCAN:
        return o ? osmp_scan(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM)
                 : MPICALL(lib, Scan, sbuf, out, n, MPI_DOUBLE, MPI_SUM, w);
    case OSMP_COLL_EXSCAN:
        return o ? osmp_exscan(team, sbuf, out, (size_t)n, OSMP_DOUBLE, OSMP_SUM)
                 : MPICALL(lib, Exscan, sbuf, out, n, MPI_DOUBLE, MPI_SUM, w);
    default: break;
    }
    vector_blocks(osmp_coll_flags(op) & OSMP_COLL_REDUCES ? (size_t)n : bytes);
    switch (op) {
    case OSMP_COLL_GATHERV:
        return o ? osmp_gatherv(team, sbuf, bytes, out, zcount, zdispl, OSMP_UINT8, 0)
                 : MPICALL(lib, Gatherv, sbuf, b, MPI_BYTE, out, vcount, vdispl, MPI_BYTE, 0, w);
    case OSMP_COLL_SCATTERV:
        return o ? osmp_scatterv(team, sbuf, zcount, zdispl, out, bytes, OSMP_UINT8, 0)
                 : MPICALL(lib, Scatterv, sbuf, vcount, vdispl, MPI_BYTE, out, b, MPI_BYTE, 0, w);
    case OSMP_COLL_ALLGATHERV:
        return o ? osmp_allgatherv(team, sbuf, bytes, out, zcount, zdispl, OSMP_UINT8)
                 : MPICALL(lib, Allgatherv, sbuf, b, MPI_BYTE, out, vcount, vdispl, MPI_BYTE, w);
    case OSMP_COLL_ALLTOALLV:
        return o ? osmp_alltoallv(team, sbuf, zcount, zdispl, out, zcount, zdispl, OSMP_UINT8)
                 : MPICALL(lib, Alltoallv, sbuf, vcount, vdispl, MPI_BYTE, out, vcount, vdispl, MPI_BYTE, w);
    case OSMP_COLL_REDUCE_SCATTER:
        return o ? osmp_reduce_scatter(team, sbuf, out, zcount, OSMP_DOUBLE, OSMP_SUM)
                 : MPICALL(lib, Reduce_scatter, sbuf, out, vcount, MPI_DOUBLE, MPI_SUM, w);
    default: return OSMP_ERR_UNSUPPORTED; /* not benched() */
    }
}

/* The nonblocking form of call(): MPI_I<op> through MPI_ (libosmp_mpi's when
 * preloaded), the same arguments, the request in *rq. MPI has one for every
 * operation benched(). */
static int icall(osmp_coll_t op, size_t bytes, char *out, MPI_Request *rq)
{
    int n = (int)(bytes / 8), b = (int)bytes;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (op) {
    case OSMP_COLL_BARRIER: return MPI_Ibarrier(w, rq);
    case OSMP_COLL_BCAST: return MPI_Ibcast(out, b, MPI_BYTE, 0, w, rq);
    case OSMP_COLL_REDUCE: return MPI_Ireduce(sbuf, out, n, MPI_DOUBLE, MPI_SUM, 0, w, rq);
    case OSMP_COLL_ALLREDUCE: return MPI_Iallreduce(sbuf, out, n, MPI_DOUBLE, MPI_SUM, w, rq);
    case OSMP_COLL_GATHER: return MPI_Igather(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, 0, w, rq);
    case OSMP_COLL_ALLGATHER: return MPI_Iallgather(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, w, rq);
    case OSMP_COLL_SCATTER: return MPI_Iscatter(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, 0, w, rq);
    case OSMP_COLL_REDUCE_SCATTER_BLOCK: return MPI_Ireduce_scatter_block(sbuf, out, n, MPI_DOUBLE, MPI_SUM, w, rq);
    case OSMP_COLL_ALLTOALL: return MPI_Ialltoall(sbuf, b, MPI_BYTE, out, b, MPI_BYTE, w, rq);
    case OSMP_COLL_SCAN: return MPI_Iscan(sbuf, out, n, MPI_DOUBLE, MPI_SUM, w, rq);
    case OSMP_COLL_EXSCAN: return MPI_Iexscan(sbuf, out, n, MPI_DOUBLE, MPI_SUM, w, rq);
    default: break;
    }
    vector_blocks(osmp_coll_flags(op) & OSMP_COLL_REDUCES ? (size_t)n : bytes);
    switch (op) {
    case OSMP_COLL_GATHERV: return MPI_Igatherv(sbuf, b, MPI_BYTE, out, vcount, vdispl, MPI_BYTE, 0, w, rq);
    case OSMP_COLL_SCATTERV: return MPI_Iscatterv(sbuf, vcount, vdispl, MPI_BYTE, out, b, MPI_BYTE, 0, w, rq);
    case OSMP_COLL_ALLGATHERV: return MPI_Iallgatherv(sbuf, b, MPI_BYTE, out, vcount, vdispl, MPI_BYTE, w, rq);
    case OSMP_COLL_ALLTOALLV:
        return MPI_Ialltoallv(sbuf, vcount, vdispl, MPI_BYTE, out, vcount, vdispl, MPI_BYTE, w, rq);
    case OSMP_COLL_REDUCE_SCATTER: return MPI_Ireduce_scatter(sbuf, out, vcount, MPI_DOUBLE, MPI_SUM, w, rq);
    default: *rq = MPI_REQUEST_NULL; return OSMP_ERR_UNSUPPORTED; /* not benched() */
    }
}

/* The barrier applications put between calls: the library's own. */
static void lib_barrier(enum lib lib)
{
    if (lib == LIB_OSMP) osmp_barrier(team);
    else MPICALL(lib, Barrier, MPI_COMM_WORLD);
}

struct stat3 {
    double avg, max, min; /* over ranks, seconds per call */
};

static struct stat3 over_ranks(double mine)
{
    struct stat3 s;
    PMPI_Allreduce(&mine, &s.avg, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&mine, &s.max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(&mine, &s.min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    s.avg /= size;
    return s;
}

/* OSU: each call timed alone, the library's barrier after it (untimed). */
static struct stat3 osu_round(enum lib lib, osmp_coll_t op, size_t bytes, int iters)
{
    double sum = 0;
    lib_barrier(lib);
    for (int i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        call(lib, op, bytes, rbuf);
        sum += MPI_Wtime() - t0;
        lib_barrier(lib);
    }
    return over_ranks(sum / iters);
}

/* IMB: a barrier, then iters calls in a row, timed together. */
static struct stat3 b2b_round(enum lib lib, osmp_coll_t op, size_t bytes, int iters)
{
    lib_barrier(lib);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) call(lib, op, bytes, rbuf);
    double mine = (MPI_Wtime() - t0) / iters;
    lib_barrier(lib);
    return over_ranks(mine);
}

/* ---- nonblocking mode: OSU's osu_i<op> ----
 * The dummy compute (OSU's dummy_compute / do_compute_cpu): a small
 * floating-point kernel (one row of an 8 x 8 product, ~10 ns) run until the
 * wall clock says the target has passed, so it lasts the target to within a
 * kernel and a clock read (MPI_Wtime, ~40 ns on the development machine); the
 * compute measured around it is the target plus ~0.1-0.2 us of clock reads.
 * OSU's 25 x 25 kernel overshoots by up to a microsecond, more than a small
 * call's time. With
 * --nb-tests N (OSU's -t, --num-test-calls; OSU 7 calls none by default and
 * neither does this) the target is cut into N parts, MPI_Test after each;
 * their time is returned, and the compute time reported excludes it (OSU's
 * "Compute" column: cpu_time - test_time). */
static float dc_a[8][8], dc_x[8], dc_y[8];
static int nb_tests;

static void dc_init(void)
{
    for (int i = 0; i < 8; i++) {
        dc_x[i] = dc_y[i] = 1.0f;
        for (int j = 0; j < 8; j++) dc_a[i][j] = 2.0f;
    }
}

static void dc_kernel(void)
{
    static unsigned row;
    unsigned i = row++ & 7;
    for (int j = 0; j < 8; j++) dc_x[i] = dc_x[i] + dc_a[i][j] * dc_a[j][i] + dc_y[j];
}

static double dummy_compute(double target, MPI_Request *rq)
{
    int parts = nb_tests > 0 ? nb_tests : 1;
    double test_time = 0, part = target / parts;
    for (int k = 0; k < parts; k++) {
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < part) dc_kernel();
        if (nb_tests > 0) {
            int flag;
            double t1 = MPI_Wtime();
            MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
            test_time += MPI_Wtime() - t1;
        }
    }
    return test_time;
}

/* OSU's overlap: the share of the pure communication time hidden behind the
 * compute, max(0, 100 (1 - (overall - compute) / pure)); compute without the
 * MPI_Test calls. */
static double overlap_pct(double pure, double overall, double compute)
{
    if (!(pure > 0)) return 0;
    double o = 100.0 * (1.0 - (overall - compute) / pure);
    return o > 0 ? o : 0;
}

struct nbstat {
    struct stat3 pure;                          /* post + MPI_Wait at once, over ranks */
    double overall, compute, tests, post, wait; /* overlapped calls: averages over ranks, seconds per call */
};

/* One round of osu_i<op>: iters calls posted and waited for at once (pure),
 * the library's barrier after each (untimed); then iters calls posted, this
 * rank's own pure time of computing (OSU feeds each rank its own latency),
 * MPI_Wait; overall = post to wait's return; the barrier after each. */
static struct nbstat nb_round(osmp_coll_t op, size_t bytes, int iters)
{
    struct nbstat s;
    MPI_Request rq;
    double sum = 0;
    lib_barrier(LIB_MPI);
    for (int i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        icall(op, bytes, rbuf, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        sum += MPI_Wtime() - t0;
        lib_barrier(LIB_MPI);
    }
    double pure = sum / iters, overall = 0, comp = 0, tests = 0, post = 0, wait = 0;
    s.pure = over_ranks(pure);
    for (int i = 0; i < iters; i++) {
        double t0 = MPI_Wtime();
        icall(op, bytes, rbuf, &rq);
        double tc = MPI_Wtime();
        tests += dummy_compute(pure, &rq);
        double tw = MPI_Wtime();
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        overall += t1 - t0, post += tc - t0, comp += tw - tc, wait += t1 - tw;
        lib_barrier(LIB_MPI);
    }
    double mine[5] = {overall, comp - tests, tests, post, wait}, all[5];
    PMPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 5; k++) all[k] /= (double)iters * size;
    s.overall = all[0], s.compute = all[1], s.tests = all[2], s.post = all[3], s.wait = all[4];
    return s;
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
    call(LIB_PMPI, op, bytes, rbuf);
    call(LIB_OSMP, op, bytes, cbuf);
    int gathers = op == OSMP_COLL_GATHER || op == OSMP_COLL_GATHERV;
    /* (exscan leaves rank 0's output undefined in MPI) */
    size_t valid = op == OSMP_COLL_BARRIER || ((gathers || op == OSMP_COLL_REDUCE) && rank != 0) ||
                           (op == OSMP_COLL_EXSCAN && rank == 0)
                       ? 0
                   : gathers || op == OSMP_COLL_ALLGATHER || op == OSMP_COLL_ALLTOALL || op == OSMP_COLL_ALLGATHERV ||
                           op == OSMP_COLL_ALLTOALLV
                       ? bytes * (size_t)size
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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

/* ---- the bound ----
 * Cache-line latency: a line ping-ponged between node rank 0 and each other
 * rank (pinned as the launcher bound them); one-way = half the worst round trip.
 * Copy: the time one core takes to copy `bytes` another core has just written,
 * into a destination it reuses (hot, as a benchmark's buffers are): node rank 0
 * writes a shared buffer, node rank 1 copies it, median of the repetitions.
 * Bound of an operation = one-way latency + copy(bytes that must arrive at the
 * busiest rank): barrier: no bytes; bcast, reduce, allreduce: s; gather,
 * scatter, allgather, alltoall, reduce_scatter_block: (n-1) s. */
static double line_rt, line_rt_after; /* round trip before and after the measurement, seconds */
static MPI_Comm node;
static int nr, ns;
static MPI_Win cwin;
static char *cshared, *cpriv;
static size_t ccap;
static osmp_atomic64_t *cflag;

static double measure_line(void)
{
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
    PMPI_Win_free(&win);
    return worst;
}

static void copy_setup(size_t cap)
{
    ccap = cap;
    PMPI_Win_allocate_shared(nr == 0 ? (MPI_Aint)(cap + 8192) : 0, 1, MPI_INFO_NULL, node, &cshared, &cwin);
    MPI_Aint sz;
    int du;
    PMPI_Win_shared_query(cwin, 0, &sz, &du, &cshared);
    /* Both ends page-aligned: the libraries place their windows differently,
     * and a source and destination whose addresses agree in the low 12 bits
     * only by accident (4K aliasing) made MPICH's copies 10x slower. */
    cshared = (char *)(((uintptr_t)cshared + 4095) & ~(uintptr_t)4095);
    cflag = (osmp_atomic64_t *)(void *)(cshared + cap);
    if (nr == 0) osmp__store_release(cflag, 0);
    cpriv = aligned_alloc(4096, (cap + 4095) / 4096 * 4096 + 4096);
    memset(cpriv, 0, cap);
    PMPI_Barrier(node);
}

/* Seconds for one core to copy `bytes` another core just wrote (collective over the world). */
static double copy_time(size_t bytes)
{
    if (bytes > ccap) bytes = ccap;
    double t = 0;
    if (bytes) {
        int reps = bytes >= (1u << 20) ? 11 : 51, reader = ns > 1 ? 1 : 0;
        double dt[51];
        static uint64_t gen;
        for (int r = 0; r < reps; r++) {
            PMPI_Barrier(node);
            gen++;
            if (nr == 0) {
                memset(cshared, (int)(gen & 0x7f), bytes);
                osmp__store_release(cflag, gen);
            }
            if (nr == reader) {
                while (osmp__load_acquire(cflag) != gen) osmp__cpu_relax();
                double t0 = MPI_Wtime();
                memcpy(cpriv, cshared, bytes);
                dt[r] = MPI_Wtime() - t0;
                if (cpriv[bytes - 1] != (char)(gen & 0x7f)) dt[r] = 0; /* keeps the copy; never taken */
            }
        }
        if (nr == reader) t = median(dt, reps);
        PMPI_Bcast(&t, 1, MPI_DOUBLE, reader, node);
    }
    PMPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

static double bound(osmp_coll_t op, size_t bytes)
{
    size_t in = op == OSMP_COLL_BARRIER ? 0 : !(osmp_coll_flags(op) & OSMP_COLL_BLOCKS) ? bytes : bytes * (size_t)(size - 1);
    return line_rt / 2 + copy_time(in);
}

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n N [--bind-to core] osmp-bench [options]\n"
            "  --mode osu|b2b|side|nb  what is timed (default osu):\n"
            "      osu   each MPI_ call timed alone, MPI_Barrier after it (OSU micro-benchmarks); avg, max, min over\n"
            "            ranks of each rank's average. Calls MPI_: with libosmp_mpi in LD_PRELOAD they run on OSMP.\n"
            "      b2b   ITERS MPI_ calls in a row, no barrier between (IMB); time / ITERS, max (IMB t_max), avg, min\n"
            "      side  OSMP's call and the MPI library's (PMPI_) interleaved in one process, OSU timing, each\n"
            "            followed by its own library's barrier; ratio = OSMP / MPI (averages over ranks)\n"
            "      nb    the nonblocking MPI_I<op> of each operation, as OSU's osu_i<op> (OSU 7): pure = post and\n"
            "            MPI_Wait at once; overall = post, compute for this rank's pure time, MPI_Wait; compute = the\n"
            "            compute alone; overlap %% = max(0, 100 (1 - (overall - compute) / pure)); and the blocking\n"
            "            MPI_<op> in the same round (OSU timing): pure / blocking. Averages over ranks; calls MPI_\n"
            "            (with libosmp_mpi in LD_PRELOAD, whatever of MPI_I<op>, MPI_Wait, MPI_Test it intercepts)\n"
            "  --ops LIST           comma-separated operations (default: all but the vector variants and scans):\n"
            "                       barrier,bcast,reduce,allreduce,gather,allgather,scatter,reduce_scatter_block,alltoall\n"
            "                       and, when named, gatherv,scatterv,allgatherv,alltoallv,reduce_scatter (every\n"
            "                       block of SIZE bytes, as IMB runs them), scan,exscan (doubles, as the reductions);\n"
            "                       nb mode also takes the nonblocking\n"
            "                       names (iallreduce, ibcast, ...) for them\n"
            "  --sizes MIN[:MAX]    message sizes in bytes per rank, powers of two from MIN to MAX, K/M suffixes\n"
            "                       (default 1:4M; barrier is always 0 bytes; reductions skip 1-7 bytes);\n"
            "                       or a list A,B,C (ascending): these sizes only. MIN 0: the zero counts\n"
            "                       too, the first size IMB runs\n"
            "  --iters I            timed calls per round (default 200; a tenth, at least 5, from 1 MiB up)\n"
            "  --warmup W           untimed calls before each size (default 20)\n"
            "  --rounds R           rounds per size; the median is reported (default 9)\n"
            "  --nb-tests N         nb mode: N MPI_Test calls spread through the compute (OSU's -t; default 0,\n"
            "                       as OSU: the compute runs without them), their time left out of compute\n"
            "  --check              side mode: also check that OSMP and MPI give the same bytes (exit 1 if not)\n"
            "  --no-bound           skip the bound (the cross-core copies; the cache-line round trip is still\n"
            "                       timed before and after the measurement, ~10 ms each, and printed: state:)\n"
            "  --alloc malloc|mpi|osmp  where the message buffers come from (default malloc): MPI_Alloc_mem\n"
            "                       (osmp_alloc's mappable memory when libosmp_mpi is preloaded), or osmp_alloc\n"
            "  --json FILE          also write the results as JSON (rank 0)\n"
            "  --quick              5 rounds of 50 calls, warmup 5, sizes up to 1 MiB\n"
            "  --help               this text\n"
            "Exit status: 0, 1 when --check found a difference, 2 on bad usage.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "osmp-bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, " (osmp-bench --help lists the options)\n");
    }
    MPI_Finalize();
    return 2;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return -1;
    if (*end == 'K' || *end == 'k') v <<= 10, end++;
    else if (*end == 'M' || *end == 'm') v <<= 20, end++;
    if (*end && *end != ':' && *end != ',') return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    /* libosmp_mpi exports osmp_mpi_stat: present means the MPI_ calls may run on OSMP. */
    int preloaded = dlsym(RTLD_DEFAULT, "osmp_mpi_stat") != NULL;
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ops_arg = NULL, *json = NULL;
    alloc = "malloc";
    size_t smin = 1, smax = 4 << 20, list[64];
    int nlist = 0; /* --sizes A,B,C: these sizes only */
    int iters = 200, warmup = 20, rounds = 9, do_check = 0, no_bound = 0, quick = 0;
    enum mode mode = MODE_OSU;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "--ops") || !strcmp(a, "--sizes") || !strcmp(a, "--iters") || !strcmp(a, "--warmup") ||
                    !strcmp(a, "--rounds") || !strcmp(a, "--json") || !strcmp(a, "--mode") || !strcmp(a, "--alloc") ||
                    !strcmp(a, "--nb-tests");
        if (takes && !v) return bad_usage("option %s needs a value", a);
        if (takes) i++;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0) usage(stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(a, "--ops")) ops_arg = v;
        else if (!strcmp(a, "--sizes")) {
            const char *colon = strchr(v, ':');
            if (strchr(v, ',')) {
                for (const char *p = v; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
                    if (nlist == 64 || parse_size(p, &list[nlist]) || (p[strcspn(p, ",")] != ',' && p[strcspn(p, ",")]))
                        return bad_usage("bad --sizes \"%s\"", v);
                    if (nlist && list[nlist] <= list[nlist - 1]) return bad_usage("--sizes \"%s\": list them ascending", v);
                    nlist++;
                }
                smin = list[0], smax = list[nlist - 1];
            } else if (parse_size(v, &smin) || (colon && parse_size(colon + 1, &smax))) {
                return bad_usage("bad --sizes \"%s\"", v);
            } else if (!colon) {
                smax = smin;
            }
        } else if (!strcmp(a, "--iters")) {
            if (parse_int(v, 1, &iters)) return bad_usage("bad --iters \"%s\" (an integer >= 1)", v);
        } else if (!strcmp(a, "--warmup")) {
            if (parse_int(v, 0, &warmup)) return bad_usage("bad --warmup \"%s\" (an integer >= 0)", v);
        } else if (!strcmp(a, "--rounds")) {
            if (parse_int(v, 1, &rounds)) return bad_usage("bad --rounds \"%s\" (an integer >= 1)", v);
        } else if (!strcmp(a, "--mode")) {
            int m = -1;
            for (int k = 0; k < MODES; k++)
                if (!strcmp(v, mode_name[k])) m = k;
            if (m < 0) return bad_usage("bad --mode \"%s\" (osu, b2b, side or nb)", v);
            mode = (enum mode)m;
        } else if (!strcmp(a, "--nb-tests")) {
            if (parse_int(v, 0, &nb_tests)) return bad_usage("bad --nb-tests \"%s\" (an integer >= 0)", v);
        } else if (!strcmp(a, "--json")) json = v;
        else if (!strcmp(a, "--alloc")) {
            if (strcmp(v, "malloc") && strcmp(v, "mpi") && strcmp(v, "osmp"))
                return bad_usage("bad --alloc \"%s\" (malloc, mpi or osmp)", v);
            alloc = v;
        }
        else if (!strcmp(a, "--check")) do_check = 1;
        else if (!strcmp(a, "--no-bound")) no_bound = 1;
        else if (!strcmp(a, "--quick")) quick = 1;
        else return bad_usage("unknown option \"%s\"", a);
    }
    if (quick) {
        rounds = 5, iters = 50, warmup = 5;
        if (smax > (1u << 20)) smax = 1u << 20;
    }
    if (smax < smin || smax > (256u << 20)) {
        if (rank == 0) fprintf(stderr, "osmp-bench: --sizes must satisfy 0 <= MIN <= MAX <= 256M\n");
        MPI_Finalize();
        return 2;
    }
    if (do_check && mode != MODE_SIDE) return bad_usage("%s", "--check needs --mode side");
    if (nb_tests && mode != MODE_NB) return bad_usage("%s", "--nb-tests needs --mode nb");
    int want[OSMP_COLL_COUNT];
    for (int o = 0; o < OSMP_COLL_COUNT; o++)
        want[o] = !ops_arg && by_default(o);
    if (ops_arg) {
        char *copy = strdup(ops_arg), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            /* The nonblocking names (iallreduce, ...) stand for their operation in nb mode. */
            const char *name = tok;
            for (int o = 0; o < OSMP_COLL_COUNT && tok[0] == 'i'; o++)
                if (!strcmp(tok + 1, osmp_coll_name(o)) && benched(o)) {
                    if (mode != MODE_NB) return bad_usage("\"%s\": a nonblocking collective, timed by --mode nb", tok);
                    name = tok + 1;
                }
            for (int o = 0; o < OSMP_COLL_COUNT; o++)
                if (!strcmp(name, osmp_coll_name(o)) && benched(o)) {
                    want[o] = found = 1;
                    if ((osmp_coll_flags(o) & OSMP_COLL_VECTOR) && smax * (size_t)size > INT_MAX)
                        return bad_usage("%s: its displacements must fit an int (MAX x ranks < 2 GiB)", tok);
                }
            if (!found) return bad_usage("unknown operation \"%s\"", tok);
        }
        free(copy);
    }
    if (mode == MODE_SIDE) {
        struct osmp_team_params p = {.rank = rank, .size = size, .oob_allgather = oob};
        int rc = osmp_team_create(&p, &team);
        if (rc) {
            fprintf(stderr, "osmp-bench: osmp_team_create: %s\n", osmp_status_str(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    size_t cap = smax * (size_t)size + 64;
    sbuf = buf_alloc(cap), rbuf = buf_alloc(cap), cbuf = buf_alloc(cap);
    vcount = malloc(sizeof(int) * (size_t)size), vdispl = malloc(sizeof(int) * (size_t)size);
    zcount = malloc(sizeof(size_t) * (size_t)size), zdispl = malloc(sizeof(size_t) * (size_t)size);
    if (!vcount || !vdispl || !zcount || !zdispl) {
        fprintf(stderr, "osmp-bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < cap / 8; i++) ((double *)sbuf)[i] = (double)((i + (size_t)rank) % 64);
    memset(rbuf, 0, cap);
    memset(cbuf, 0, cap);
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &nr);
    PMPI_Comm_size(node, &ns);
    /* The round trip, before and after, even without the bound: the two say
     * whether the machine stayed the same through the run (bench/summary.py
     * gives their spread). Not oversubscribed without the bound: the
     * ping-pong spins, and a peer without a core of its own answers a time slice
     * later. */
    int line_timed = !no_bound || ns <= sysconf(_SC_NPROCESSORS_ONLN);
    line_rt = line_timed ? measure_line() : 0;
    if (!no_bound) {
        size_t c = smax * (size_t)(size > 1 ? size - 1 : 1);
        copy_setup(c > (64u << 20) ? 64u << 20 : c);
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl) *nl = '\0';
    for (char *c = lib; *c; c++) /* JSON-safe: MPICH's string holds tabs */
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = ' ';
    FILE *js = NULL;
    if (rank == 0) {
        printf("osmp-bench: %d processes, %s; mode %s%s\n", size, lib, mode_name[mode],
               mode == MODE_SIDE ? "" : preloaded ? ", libosmp_mpi loaded (MPI_ calls may run on OSMP)"
                                                  : ", libosmp_mpi not loaded (MPI_ calls run on MPI)");
        if (mode == MODE_NB)
            printf("nonblocking as OSU 7's osu_i<op>: overlap %% = max(0, 100 (1 - (overall - compute) / pure)), "
                   "averages over ranks; %d MPI_Test calls in the compute; blocking = MPI_<op>, OSU timing\n",
                   nb_tests);
        if (!no_bound)
            printf("bound: cache-line round trip %.3f us (one-way %.3f), cross-core copy of hot buffers measured per "
                   "size; median of %d rounds, %d calls each\n",
                   line_rt * 1e6, line_rt * 5e5, rounds, iters);
        if (json && !(js = fopen(json, "w"))) fprintf(stderr, "osmp-bench: cannot write %s\n", json);
        if (js) {
            fprintf(js, "{\"processes\": %d, \"mpi\": \"%s\", \"mode\": \"%s\", \"preloaded\": %d, "
                        "\"line_rt_us\": %.4f, \"latency_us\": %.4f,",
                    size, lib, mode_name[mode], preloaded, line_rt * 1e6, line_rt * 5e5);
            if (mode == MODE_NB) fprintf(js, " \"nb_tests\": %d,", nb_tests);
            fprintf(js, "\n \"results\": [");
        }
    }
    int first = 1, failed = 0, tty = isatty(2);
    /* Per round: va, vx, vn the timed call's (nb: pure) avg, max, min over ranks; wa, wx, wn the other library's
     * (nb: the blocking call's); nb: ya overall, yc compute, yt MPI_Test, yp post, yw MPI_Wait. */
    double *va = malloc(sizeof(double) * (size_t)rounds * 11), *vx = va + rounds, *vn = vx + rounds;
    double *wa = vn + rounds, *wx = wa + rounds, *wn = wx + rounds;
    double *ya = wn + rounds, *yc = ya + rounds, *yt = yc + rounds, *yp = yt + rounds, *yw = yp + rounds;
    double worst = 0;
    size_t worst_bytes = 0;
    int worst_op = 0, nb_rows = 0, nb_above = 0;
    if (mode == MODE_NB) dc_init();
    for (int o = 0; o < OSMP_COLL_COUNT; o++) {
        if (!want[o]) continue;
        char name[40]; /* nb mode: the MPI_I<op> name, iallreduce */
        snprintf(name, sizeof name, "%s%s", mode == MODE_NB ? "i" : "", osmp_coll_name(o));
        if (rank == 0 && !tty) fprintf(stderr, "osmp-bench: %s\n", name); /* progress */
        if (rank == 0 && mode == MODE_NB)
            printf("\n%-22s %10s %10s %10s %10s %9s %10s %9s %10s  (us per call; overlap as OSU)\n", name, "bytes",
                   "pure", "overall", "compute", "overlap %", "blocking", "pure/blk", "bound");
        else if (rank == 0 && mode == MODE_SIDE)
            printf("\n%-22s %10s %10s %10s %7s %10s %10s %10s\n", osmp_coll_name(o), "bytes", "OSMP avg", "MPI avg",
                   "ratio", "OSMP max", "MPI max", "bound us");
        else if (rank == 0)
            printf("\n%-22s %10s %10s %10s %10s %10s  (us per call)\n", osmp_coll_name(o), "bytes",
                   mode == MODE_OSU ? "avg" : "max", mode == MODE_OSU ? "max" : "avg", "min", "bound");
        int li = 0;
        for (size_t bytes = o == OSMP_COLL_BARRIER ? 0 : smin; bytes <= (o == OSMP_COLL_BARRIER ? 0 : smax);
             bytes = nlist ? (++li < nlist ? list[li] : smax + 1) : bytes ? bytes * 2 : 1) {
            if ((osmp_coll_flags(o) & OSMP_COLL_REDUCES) && bytes && bytes < 8) continue;
            if (rank == 0 && tty) fprintf(stderr, "osmp-bench: %s %zu bytes     \r", name, bytes);
            int it = bytes >= (1u << 20) ? (iters / 10 > 5 ? iters / 10 : 5) : iters;
            enum lib mine = mode == MODE_SIDE ? LIB_PMPI : LIB_MPI;
            for (int w = 0; w < warmup; w++) {
                call(mine, o, bytes, rbuf);
                if (mode == MODE_SIDE) call(LIB_OSMP, o, bytes, rbuf);
                if (mode == MODE_NB) {
                    MPI_Request rq;
                    icall(o, bytes, rbuf, &rq);
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
                }
            }
            if (do_check && check(o, bytes)) {
                failed = 1;
                if (rank == 0) printf("%-22s %10zu CHECK FAILED: OSMP and MPI results differ\n", "", bytes);
            }
            for (int r = 0; r < rounds; r++) {
                struct stat3 a, b = {0, 0, 0};
                if (mode == MODE_NB) { /* the blocking call's round and the nonblocking one's, alternating */
                    if (r % 2) b = osu_round(LIB_MPI, o, bytes, it);
                    struct nbstat n = nb_round(o, bytes, it);
                    if (!(r % 2)) b = osu_round(LIB_MPI, o, bytes, it);
                    a = n.pure, ya[r] = n.overall, yc[r] = n.compute, yt[r] = n.tests, yp[r] = n.post, yw[r] = n.wait;
                } else if (mode == MODE_B2B) a = b2b_round(mine, o, bytes, it);
                else if (mode == MODE_OSU) a = osu_round(mine, o, bytes, it);
                else if (r % 2) { /* interleaved, alternating who goes first */
                    b = osu_round(LIB_OSMP, o, bytes, it);
                    a = osu_round(LIB_PMPI, o, bytes, it);
                } else {
                    a = osu_round(LIB_PMPI, o, bytes, it);
                    b = osu_round(LIB_OSMP, o, bytes, it);
                }
                va[r] = a.avg, vx[r] = a.max, vn[r] = a.min, wa[r] = b.avg, wx[r] = b.max, wn[r] = b.min;
            }
            double ma = median(va, rounds) * 1e6, mx = median(vx, rounds) * 1e6, mn = median(vn, rounds) * 1e6;
            double oa = median(wa, rounds) * 1e6, ox = median(wx, rounds) * 1e6;
            double bd = no_bound ? 0 : bound(o, bytes) * 1e6;
            if (rank == 0 && mode == MODE_NB) {
                /* medians over the rounds; the overlap from the medians (reproducible from the printed numbers) */
                double ov = median(ya, rounds) * 1e6, oc = median(yc, rounds) * 1e6, ot = median(yt, rounds) * 1e6;
                double op = median(yp, rounds) * 1e6, ow = median(yw, rounds) * 1e6;
                double pct = overlap_pct(ma, ov, oc), ratio = ma / oa;
                printf("%-22s %10zu %10.3f %10.3f %10.3f %9.1f %10.3f %9.2f %10.3f\n", "", bytes, ma, ov, oc, pct, oa,
                       ratio, bd);
                if (js)
                    fprintf(js, "%s\n  {\"op\": \"%s\", \"bytes\": %zu, \"pure_us\": %.4f, \"overall_us\": %.4f, "
                                "\"compute_us\": %.4f, \"overlap_pct\": %.2f, \"blocking_us\": %.4f, "
                                "\"pure_over_blocking\": %.4f, \"pure_max_us\": %.4f, \"pure_min_us\": %.4f, "
                                "\"blocking_max_us\": %.4f, \"post_us\": %.4f, \"wait_us\": %.4f, \"test_us\": %.4f, "
                                "\"bound_us\": %.4f}",
                            first ? "" : ",", name, bytes, ma, ov, oc, pct, oa, ratio, mx, mn, ox, op, ow, ot, bd);
                first = 0;
                nb_rows++;
                nb_above += ratio > 1.1;
                if (ratio > worst) worst = ratio, worst_op = o, worst_bytes = bytes;
            } else if (rank == 0) {
                if (mode == MODE_SIDE)
                    printf("%-22s %10zu %10.3f %10.3f %7.2f %10.3f %10.3f %10.3f\n", "", bytes, oa, ma, oa / ma, ox, mx, bd);
                else
                    printf("%-22s %10zu %10.3f %10.3f %10.3f %10.3f\n", "", bytes, mode == MODE_OSU ? ma : mx,
                           mode == MODE_OSU ? mx : ma, mn, bd);
                if (js && mode == MODE_SIDE)
                    fprintf(js, "%s\n  {\"op\": \"%s\", \"bytes\": %zu, \"osmp_us\": %.4f, \"mpi_us\": %.4f, "
                                "\"osmp_max_us\": %.4f, \"mpi_max_us\": %.4f, \"bound_us\": %.4f}",
                            first ? "" : ",", osmp_coll_name(o), bytes, oa, ma, ox, mx, bd);
                else if (js)
                    fprintf(js, "%s\n  {\"op\": \"%s\", \"bytes\": %zu, \"avg_us\": %.4f, \"max_us\": %.4f, "
                                "\"min_us\": %.4f, \"bound_us\": %.4f}",
                            first ? "" : ",", osmp_coll_name(o), bytes, ma, mx, mn, bd);
                first = 0;
            }
            if (o == OSMP_COLL_BARRIER) break;
        }
    }
    line_rt_after = line_timed ? measure_line() : 0;
    if (rank == 0) {
        if (tty) fprintf(stderr, "%60s\r", "");
        if (nb_rows)
            printf("\npure / blocking: worst %.2f (i%s, %zu bytes); %d of %d (operation, size) above 1.10\n", worst,
                   osmp_coll_name(worst_op), worst_bytes, nb_above, nb_rows);
        if (line_timed)
            printf("\nstate: cache-line round trip %.3f us before the measurement, %.3f us after\n", line_rt * 1e6,
               line_rt_after * 1e6);
        if (js) {
            fprintf(js, "\n], \"line_rt_after_us\": %.4f}\n", line_rt_after * 1e6);
            fclose(js);
        }
    }
    free(va);
    if (!no_bound) {
        PMPI_Win_free(&cwin);
        free(cpriv);
    }
    PMPI_Comm_free(&node);
    if (team) osmp_team_destroy(team);
    MPI_Finalize();
    return failed;
}
