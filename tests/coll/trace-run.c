/*
 * trace-run: one collective call of a given size on the world team, its result
 * checked exactly, for the transfer-trace tests (trace-check.py reads the trace
 * that OSMP_TRACE makes of it). Written against include/osmp.h only.
 *
 *   osmp-run -n N ... -- trace-run OPS BYTES [ROOT]
 *
 * OPS: a comma-separated list of bcast reduce allreduce gather scatter
 * allgather alltoall reduce_scatter_block, or "all"; also allgatherv (odd
 * ranks' blocks BYTES / 2) and alltoallv (blocks between ranks of different
 * parity BYTES / 2); scan and exscan (sums of doubles, as the reductions). ROOT: a rank, or "ends" for
 * roots 0, n-1 and n/2 of each rooted operation in turn. Reductions sum doubles
 * (BYTES / 8 of them) holding small integers, so every order of summation gives
 * the same exact result. One operation at one root is the team's call 1 (call 0
 * is a barrier). Exit status 0 when every result is right.
 *
 * OPS "bits" (not in "all"): an allreduce of doubles whose sums round, and a
 * reduce at root 0 that must give the same bits; rank 0 prints a hash of them,
 * so runs with other chunk sizes, depths or placements show whether the order
 * of combination changed.
 *
 * TRACE_RUN_CALLS=test makes every operation a nonblocking call, osmp_i<op>
 * then osmp_test until done (the barrier before them stays blocking), so that
 * trace-check.py can compare its trace with the blocking calls'.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

static int me, n;

/* TRACE_RUN_CALLS=test: post, then test until done. */
static int nonblocking;
static osmp_request_t req;
static int complete(int rc)
{
    for (int done = 0; !rc && !done;) rc = osmp_test(&req, &done);
    return rc;
}
#define AS_REQUEST(name, ...) (nonblocking ? complete(osmp_i##name(__VA_ARGS__, &req)) : (osmp_##name)(__VA_ARGS__))
#define osmp_bcast(...) AS_REQUEST(bcast, __VA_ARGS__)
#define osmp_reduce(...) AS_REQUEST(reduce, __VA_ARGS__)
#define osmp_allreduce(...) AS_REQUEST(allreduce, __VA_ARGS__)
#define osmp_gather(...) AS_REQUEST(gather, __VA_ARGS__)
#define osmp_scatter(...) AS_REQUEST(scatter, __VA_ARGS__)
#define osmp_allgather(...) AS_REQUEST(allgather, __VA_ARGS__)
#define osmp_reduce_scatter_block(...) AS_REQUEST(reduce_scatter_block, __VA_ARGS__)
#define osmp_alltoall(...) AS_REQUEST(alltoall, __VA_ARGS__)
#define osmp_allgatherv(...) AS_REQUEST(allgatherv, __VA_ARGS__)
#define osmp_alltoallv(...) AS_REQUEST(alltoallv, __VA_ARGS__)
#define osmp_scan(...) AS_REQUEST(scan, __VA_ARGS__)
#define osmp_exscan(...) AS_REQUEST(exscan, __VA_ARGS__)

static void fail(const char *what, size_t at)
{
    fprintf(stderr, "trace-run: rank %d/%d: %s wrong at byte/element %zu\n", me, n, what, at);
    exit(1);
}

/* Byte i of rank r's block b (b: the destination rank where blocks differ). */
static uint8_t byte_of(int r, int b, size_t i)
{
    return (uint8_t)(r * 31 + b * 7 + i * 13 + 1);
}

static uint8_t *in, *out;
static double *din, *dout;

static int run_op(osmp_team_t w, const char *op, size_t bytes, int root)
{
    size_t nn = (size_t)n, cnt = bytes / 8;
    int rc;
    if (!strcmp(op, "bcast")) {
        uint8_t *buf = me == root ? in : out;
        rc = osmp_bcast(w, buf, bytes, OSMP_UINT8, root);
        for (size_t i = 0; !rc && i < bytes; i++)
            if (buf[i] != byte_of(root, 0, i)) fail(op, i);
    } else if (!strcmp(op, "reduce") || !strcmp(op, "allreduce") || !strcmp(op, "reduce_scatter_block")) {
        int scatter = !strcmp(op, "reduce_scatter_block"), all = !strcmp(op, "allreduce");
        memset(dout, 0, cnt * nn * 8);
        rc = scatter ? osmp_reduce_scatter_block(w, din, dout, cnt, OSMP_DOUBLE, OSMP_SUM)
             : all   ? osmp_allreduce(w, din, dout, cnt, OSMP_DOUBLE, OSMP_SUM)
                     : osmp_reduce(w, din, dout, cnt, OSMP_DOUBLE, OSMP_SUM, root);
        double ranks = (double)n * (n + 1) / 2;
        size_t from = scatter ? (size_t)me * cnt : 0;
        for (size_t i = 0; !rc && (all || scatter || me == root) && i < cnt; i++)
            if (dout[i] != ranks * (double)((from + i) % 7 + 1)) fail(op, i);
    } else if (!strcmp(op, "scan") || !strcmp(op, "exscan")) { /* ranks 0 .. me (scan), 0 .. me-1 (exscan) */
        int ex = !strcmp(op, "exscan");
        memset(dout, 0, cnt * 8);
        rc = ex ? osmp_exscan(w, din, dout, cnt, OSMP_DOUBLE, OSMP_SUM)
                : osmp_scan(w, din, dout, cnt, OSMP_DOUBLE, OSMP_SUM);
        double upto = ex ? (double)me * (me + 1) / 2 : (double)(me + 1) * (me + 2) / 2;
        for (size_t i = 0; !rc && (!ex || me > 0) && i < cnt; i++)
            if (dout[i] != upto * (double)(i % 7 + 1)) fail(op, i);
    } else if (!strcmp(op, "gather") || !strcmp(op, "allgather")) {
        int all = !strcmp(op, "allgather");
        memset(out, 0, bytes * nn);
        rc = all ? osmp_allgather(w, in, out, bytes, OSMP_UINT8) : osmp_gather(w, in, out, bytes, OSMP_UINT8, root);
        for (size_t i = 0; !rc && (all || me == root) && i < bytes * nn; i++)
            if (out[i] != byte_of((int)(i / bytes), 0, i % bytes)) fail(op, i);
    } else if (!strcmp(op, "bits")) {
        uint64_t x = 0x9e3779b97f4a7c15u * (uint64_t)(me + 1);
        for (size_t i = 0; i < cnt; i++) { /* both magnitudes, so that every sum rounds */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            din[i] = (double)(x >> 11) / 9007199254740992.0 * (i % 2 ? 1e-3 : 1e3);
        }
        rc = osmp_allreduce(w, din, dout, cnt, OSMP_DOUBLE, OSMP_SUM);
        double *again = dout + cnt;
        if (!rc) rc = osmp_reduce(w, din, me == 0 ? again : NULL, cnt, OSMP_DOUBLE, OSMP_SUM, 0);
        if (!rc && me == 0) {
            if (memcmp(dout, again, cnt * 8)) fail("reduce's bits against allreduce's", 0);
            uint64_t h = 14695981039346656037u;
            for (size_t i = 0; i < cnt * 8; i++) h = (h ^ ((unsigned char *)dout)[i]) * 1099511628211u;
            printf("trace-run: %zu doubles, result hash %016llx\n", cnt, (unsigned long long)h);
        }
    } else if (!strcmp(op, "scatter")) {
        memset(out, 0, bytes);
        rc = osmp_scatter(w, in, out, bytes, OSMP_UINT8, root);
        for (size_t i = 0; !rc && i < bytes; i++)
            if (out[i] != byte_of(root, me, i)) fail(op, i);
    } else if (!strcmp(op, "allgatherv")) { /* odd ranks' blocks half as long: the largest decides the path */
        size_t counts[64], displs[64], at = 0;
        if (n > 64) fail("allgatherv of more than 64 ranks", 0);
        for (int r = 0; r < n; r++)
            counts[r] = bytes >> (r % 2), displs[r] = at, at += counts[r];
        memset(out, 0, bytes * nn);
        rc = osmp_allgatherv(w, in, counts[me], out, counts, displs, OSMP_UINT8);
        for (int r = 0; !rc && r < n; r++)
            for (size_t i = 0; i < counts[r]; i++)
                if (out[displs[r] + i] != byte_of(r, 0, i)) fail(op, displs[r] + i);
    } else if (!strcmp(op, "alltoallv")) { /* rank w's block for q: BYTES, or half that where w + q is odd */
        size_t sc[64], sd[64], rc_[64], rd[64], at = 0, rat = 0;
        if (n > 64) fail("alltoallv of more than 64 ranks", 0);
        for (int r = 0; r < n; r++) {
            sc[r] = bytes >> ((me + r) % 2), sd[r] = at, at += sc[r];
            rc_[r] = bytes >> ((r + me) % 2), rd[r] = rat, rat += rc_[r];
        }
        uint8_t *v = malloc(at + 1); /* (not `in`: the other operations' layout) */
        if (!v) fail("alltoallv's buffer", 0);
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < sc[r]; i++) v[sd[r] + i] = byte_of(me, r, i);
        memset(out, 0, bytes * nn);
        rc = osmp_alltoallv(w, v, sc, sd, out, rc_, rd, OSMP_UINT8);
        for (int r = 0; !rc && r < n; r++)
            for (size_t i = 0; i < rc_[r]; i++)
                if (out[rd[r] + i] != byte_of(r, me, i)) fail(op, rd[r] + i);
        free(v);
    } else if (!strcmp(op, "alltoall")) {
        memset(out, 0, bytes * nn);
        rc = osmp_alltoall(w, in, out, bytes, OSMP_UINT8);
        for (size_t i = 0; !rc && i < bytes * nn; i++)
            if (out[i] != byte_of((int)(i / bytes), me, i % bytes)) fail(op, i);
    } else {
        fprintf(stderr, "trace-run: unknown operation %s\n", op);
        exit(2);
    }
    if (rc) {
        int who = -2, why = 1;
        osmp_team_failure(w, &who, &why);
        fprintf(stderr, "trace-run: rank %d: %s (root %d): %s; the team's failure: rank %d: %s\n", me, op, root,
                osmp_status_str(rc), who, osmp_status_str(why));
        exit(1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: trace-run OPS BYTES [ROOT|ends]\n");
        return 2;
    }
    char ops[512];
    snprintf(ops, sizeof(ops), "%s",
             strcmp(argv[1], "all") ? argv[1]
                                    : "bcast,reduce,allreduce,gather,scatter,allgather,alltoall,reduce_scatter_block");
    size_t bytes = strtoull(argv[2], NULL, 10);
    const char *calls = getenv("TRACE_RUN_CALLS");
    nonblocking = calls && !strcmp(calls, "test");
    int ends = argc > 3 && !strcmp(argv[3], "ends");
    osmp_team_t w;
    int rc = osmp_init(&w);
    if (rc) {
        fprintf(stderr, "trace-run: osmp_init: %s\n", osmp_status_str(rc));
        return 1;
    }
    me = osmp_team_rank(w);
    n = osmp_team_size(w);
    int root = argc > 3 && !ends ? atoi(argv[3]) : 0;
    if (root < 0 || root >= n) {
        fprintf(stderr, "trace-run: root %d out of range\n", root);
        return 2;
    }
    size_t nn = (size_t)n, cnt = bytes / 8;
    in = malloc(bytes * nn + 1);
    out = malloc(bytes * nn + 1);
    din = malloc(cnt * nn * 8 + 8);
    dout = malloc(cnt * (nn + 1) * 8 + 8); /* (bits: a second result) */
    if (!in || !out || !din || !dout) return 1;
    for (int b = 0; b < n; b++)
        for (size_t i = 0; i < bytes; i++) in[(size_t)b * bytes + i] = byte_of(me, b, i);
    for (size_t i = 0; i < cnt * nn; i++) din[i] = (double)((me + 1) * (int)(i % 7 + 1));
    osmp_barrier(w);
    for (char *save = NULL, *op = strtok_r(ops, ",", &save); op; op = strtok_r(NULL, ",", &save)) {
        int rooted = !strcmp(op, "bcast") || !strcmp(op, "reduce") || !strcmp(op, "gather") || !strcmp(op, "scatter");
        int roots[3] = {ends ? 0 : root, n - 1, n / 2};
        for (int k = 0; k < (ends && rooted ? 3 : 1); k++) run_op(w, op, bytes, roots[k]);
    }
    osmp_finalize();
    free(in);
    free(out);
    free(din);
    free(dout);
    return 0;
}
