/*
 * Shared by nb-check.c (MPI_I<coll>) and persist-check.c (MPI_<coll>_init), each of which includes it once after
 * defining REQ_PROG, the name its messages start with. Both check the same collectives with the same types and
 * count them with osmp_mpi_stat, and both complete their requests in the same nine ways; what differs (how a request
 * is made, what is left of it after it completes, which statuses can be compared) stays in each program.
 */
#ifndef OSMP_REQ_COMMON_H
#define OSMP_REQ_COMMON_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REQ_PROG
#error "define REQ_PROG (the program's name, for its messages) before including req-common.h"
#endif

static int world_rank, loaded, multinode; /* libosmp_mpi loaded and not disabled; OSMP_MPI_PSEUDO_NODES > 1 */

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, REQ_PROG ": rank %d: ", world_rank);                                                 \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                                        \
    } while (0)

/* ---------------------------------------------------------------- datatypes */

enum kind { K_INT, K_DOUBLE, K_LLONG, K_FLOAT, K_U8, K_SHORT };
struct ty {
    MPI_Datatype t;
    const char *name;
    enum kind kind;
    int size;
};
static struct ty types[6];

static void put(const struct ty *t, void *b, long i, double v)
{
    switch (t->kind) {
    case K_INT: ((int *)b)[i] = (int)v; break;
    case K_DOUBLE: ((double *)b)[i] = v; break;
    case K_LLONG: ((long long *)b)[i] = (long long)v; break;
    case K_FLOAT: ((float *)b)[i] = (float)v; break;
    case K_U8: ((uint8_t *)b)[i] = (uint8_t)v; break;
    case K_SHORT: ((short *)b)[i] = (short)v; break;
    }
}

static double get(const struct ty *t, const void *b, long i)
{
    switch (t->kind) {
    case K_INT: return ((const int *)b)[i];
    case K_DOUBLE: return ((const double *)b)[i];
    case K_LLONG: return (double)((const long long *)b)[i];
    case K_FLOAT: return ((const float *)b)[i];
    case K_U8: return ((const uint8_t *)b)[i];
    default: return ((const short *)b)[i];
    }
}

/* ---------------------------------------------------------------- collectives and where they ran */

/* The collectives in OSMP's order (osmp_mpi_stat's names). */
enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, ALLGATHER, SCATTER, RSB, ALLTOALL, GATHERV, SCATTERV, ALLGATHERV,
       ALLTOALLV, REDUCE_SCATTER, SCAN, EXSCAN, NCOLL };
static const char *const coll_names[NCOLL] = {"barrier",  "bcast",     "reduce",     "allreduce",
                                              "gather",   "allgather", "scatter",    "reduce_scatter_block",
                                              "alltoall", "gatherv",   "scatterv",   "allgatherv",
                                              "alltoallv", "reduce_scatter", "scan", "exscan"};
static long want_osmp[NCOLL], want_mpi[NCOLL]; /* calls made, by where they must run */

static int (*stat_fn)(const char *, long *, long *);
static long osmp0[NCOLL], mpi0[NCOLL];

/* After MPI_Init: whether libosmp_mpi is there (with `expect`, it must be) and runs collectives across nodes. */
static void find_osmp(int expect)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    stat_fn = (int (*)(const char *, long *, long *))dlsym(RTLD_DEFAULT, "osmp_mpi_stat");
    const char *dis = getenv("OSMP_MPI_DISABLE");
    loaded = stat_fn && !(dis && strcmp(dis, "1") == 0);
    const char *pn = getenv("OSMP_MPI_PSEUDO_NODES");
    multinode = loaded && pn && atoi(pn) > 1;
    if (expect && !stat_fn) FAIL("libosmp_mpi is not loaded");
    struct ty t[6] = {{MPI_INT, "MPI_INT", K_INT, sizeof(int)},
                      {MPI_DOUBLE, "MPI_DOUBLE", K_DOUBLE, sizeof(double)},
                      {MPI_LONG_LONG, "MPI_LONG_LONG", K_LLONG, sizeof(long long)},
                      {MPI_FLOAT, "MPI_FLOAT", K_FLOAT, sizeof(float)},
                      {MPI_UINT8_T, "MPI_UINT8_T", K_U8, 1},
                      {MPI_SHORT, "MPI_SHORT", K_SHORT, sizeof(short)}};
    memcpy(types, t, sizeof(t));
}

/* osmp_mpi_stat's counts before the checks: the calls made after must add exactly want_osmp and want_mpi. */
static void count_from_here(void)
{
    for (int k = 0; stat_fn && k < NCOLL; k++) stat_fn(coll_names[k], &osmp0[k], &mpi0[k]);
}

static void check_counts(void)
{
    for (int k = 0; k < NCOLL; k++) {
        long acc, mpi;
        stat_fn(coll_names[k], &acc, &mpi);
        if (acc - osmp0[k] != want_osmp[k] || mpi - mpi0[k] != want_mpi[k])
            FAIL("%s: %ld calls on OSMP and %ld to MPI, not %ld and %ld", coll_names[k], acc - osmp0[k],
                 mpi - mpi0[k], want_osmp[k], want_mpi[k]);
    }
}

struct ctx {
    MPI_Comm comm;
    const char *name;
    int rank, size;
};

/* Counts and displacements of the v-variants: block r has (r % 2) + n / 2 elements (n 0: none), laid out in
 * reverse rank order. */
static long vlayout(int sz, long n, int *cnt, int *dis)
{
    long at = 0;
    for (int r = sz - 1; r >= 0; r--) {
        cnt[r] = n ? (int)(r % 2 + n / 2) : 0;
        dis[r] = (int)at;
        at += cnt[r];
    }
    return at;
}

/* The alltoallv layout, in c[4 sz] as send counts, send displacements, receive counts, receive displacements: rank f
 * sends rank d ((f + d) % 3 + n / 4) elements (n 0: none), the blocks sent in rank order, the ones received in
 * reverse. The totals sent and received go to *st and *rt. */
static void alltoallv_layout(int me, int sz, long n, int *c, long *st, long *rt)
{
    int *sc = c, *sd = c + sz, *rc = c + 2 * sz, *rd = c + 3 * sz;
    *st = *rt = 0;
    for (int d = 0; d < sz; d++) {
        sc[d] = rc[d] = n ? (int)((me + d) % 3 + n / 4) : 0;
        sd[d] = (int)*st;
        *st += sc[d];
    }
    for (int f = sz - 1; f >= 0; f--) {
        rd[f] = (int)*rt;
        *rt += rc[f];
    }
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* ---------------------------------------------------------------- completion */

static const char *const mode_names[] = {"MPI_Waitall", "MPI_Wait in reverse order", "MPI_Waitany", "MPI_Testsome",
                                         "MPI_Testall", "MPI_Testany", "MPI_Waitsome", "MPI_Test",
                                         "MPI_Request_get_status"};
enum { NMODES = 9 };

/* Completes reqs[0..n) the way mode_names[mode] says, each status checked as it comes by check_status (request index,
 * status, whether MPI_Waitall gave it). A completed nonblocking request must be MPI_REQUEST_NULL at once; a
 * persistent one stays, for the caller to check that it is unchanged. */
static void complete(int mode, int n, MPI_Request *reqs, MPI_Status *sts, int persistent,
                     void (*check_status)(int, const MPI_Status *, int))
{
    int left = n, outcount, flag, rc = MPI_SUCCESS;
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    memset(sts, 0x5a, sizeof(MPI_Status) * (size_t)n);
    switch (mode) {
    case 0:
        rc = MPI_Waitall(n, reqs, sts);
        for (int i = 0; i < n; i++) check_status(i, &sts[i], 1);
        break;
    case 1:
        for (int i = n - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
            rc = MPI_Wait(&reqs[i], &sts[i]);
            check_status(i, &sts[i], 0);
        }
        break;
    case 2:
        while (left && rc == MPI_SUCCESS) {
            int k;
            MPI_Status st;
            rc = MPI_Waitany(n, reqs, &k, &st);
            if (k == MPI_UNDEFINED || (!persistent && reqs[k] != MPI_REQUEST_NULL))
                FAIL("MPI_Waitany gave index %d with %d left", k, left);
            check_status(k, &st, 0);
            left--;
        }
        break;
    case 3:
    case 6:
        while (left && rc == MPI_SUCCESS) {
            rc = mode == 3 ? MPI_Testsome(n, reqs, &outcount, idx, sts) : MPI_Waitsome(n, reqs, &outcount, idx, sts);
            if (outcount == MPI_UNDEFINED || (mode == 6 && outcount == 0))
                FAIL("%s: outcount %d", mode_names[mode], outcount);
            for (int j = 0; j < outcount; j++) check_status(idx[j], &sts[j], 0);
            left -= outcount;
        }
        break;
    case 4:
        for (flag = 0; !flag && rc == MPI_SUCCESS;) rc = MPI_Testall(n, reqs, &flag, sts);
        for (int i = 0; i < n; i++) check_status(i, &sts[i], 0);
        break;
    case 5:
        while (left && rc == MPI_SUCCESS) {
            int k = MPI_UNDEFINED;
            MPI_Status st;
            rc = MPI_Testany(n, reqs, &k, &flag, &st);
            if (flag && k == MPI_UNDEFINED) FAIL("MPI_Testany: no active request with %d left", left);
            if (flag) check_status(k, &st, 0), left--;
        }
        break;
    case 7:
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            for (flag = 0; !flag && rc == MPI_SUCCESS;) {
                rc = MPI_Test(&reqs[i], &flag, &sts[i]);
                if (flag) check_status(i, &sts[i], 0);
            }
        break;
    default:
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            for (flag = 0; !flag && rc == MPI_SUCCESS;) rc = MPI_Request_get_status(reqs[i], &flag, &sts[i]);
            if (reqs[i] == MPI_REQUEST_NULL) FAIL("MPI_Request_get_status freed the request");
            check_status(i, &sts[i], 0);
            rc = MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        }
        break;
    }
    free(idx);
    if (rc != MPI_SUCCESS) FAIL("%s returned %d", mode_names[mode], rc);
}

#endif
