/*
 * nb-check: the nonblocking collectives libosmp_mpi runs on OSMP (MPI_Ibarrier
 * .. MPI_Iexscan), every value checked exactly.
 *
 *   mpirun -n N [-x LD_PRELOAD=libosmp_mpi.so] nb-check [--expect-osmp] [--die R]
 *
 * Batches of requests (each collective, every root, MPI_INT, MPI_DOUBLE and
 * other predefined types, counts 0 (NULL buffers), 1, 7 and 1000, MPI_IN_PLACE
 * where MPI allows it, on the world and a reversed duplicate) stay outstanding
 * together, 40 and more at a time, and complete in turn by MPI_Waitall, MPI_Wait
 * in reverse order, MPI_Waitany, MPI_Waitsome, MPI_Testall, MPI_Testany,
 * MPI_Testsome, MPI_Test and MPI_Request_get_status loops; some batches hold
 * MPI_Isend/MPI_Irecv requests too, some run blocking collectives while they
 * are outstanding. Statuses must be what MPI gives for its own collectives
 * (source and tag where MPI sets them, MPI_ERROR after MPI_Waitall, no element). Then: MPI_Request_free
 * on an active request (its result is there after later calls), MPI_Cancel
 * refused, calls that go to MPI (a user-defined operation) beside them, a
 * communicator freed while a request on it is outstanding.
 *
 * --expect-osmp: the library is loaded, and each call above ran on OSMP or went
 * to MPI exactly as it should (osmp_mpi_stat before and after): with
 * OSMP_MPI_PSEUDO_NODES > 1 every nonblocking one goes to MPI.
 * --die R: every rank posts 8 nonblocking collectives; rank R kills itself
 * (SIGKILL) after posting half of them; the others' MPI_Waitall (under
 * MPI_ERRORS_RETURN) must return an error within 10 s; they print it
 * ("returned an error") and exit 3.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#define REQ_PROG "nb-check"
#include "req-common.h"

/* ---------------------------------------------------------------- values */

/* Small integers: exact in every type, sums of 4 ranks below 128. */
static double X(int r, long i)
{
    return (r + 1) * 3 + i % 5;
}
static double Z(int from, int to, long i)
{
    return from * 4 + to + i % 3;
}

/* ---------------------------------------------------------------- requests and their checks */

#define MAXOPS 512
struct op {
    char what[96];
    const struct ty *t;
    void *got;     /* checked: n elements of t against want */
    double *want;
    long n;
    void *mem[4]; /* freed after the check */
    int p2p;
};
static struct op ops[MAXOPS];
static MPI_Request reqs[MAXOPS];
static int nops;

static struct op *new_op(const struct ty *t, int coll, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static struct op *new_op(const struct ty *t, int coll, const char *fmt, ...)
{
    if (nops == MAXOPS) FAIL("too many requests in a batch");
    struct op *o = &ops[nops];
    memset(o, 0, sizeof(*o));
    o->t = t;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->what, sizeof(o->what), fmt, ap);
    va_end(ap);
    if (coll >= 0) (multinode ? want_mpi : want_osmp)[coll]++; /* (nonblocking calls run on OSMP inside one node) */
    reqs[nops] = MPI_REQUEST_NULL;
    return o;
}

/* A buffer of n elements (NULL for none, as a zero count allows), kept with the op. */
static void *buf(struct op *o, const struct ty *t, long n)
{
    void *b = n ? calloc((size_t)n, (size_t)t->size) : NULL;
    for (int i = 0; i < 4; i++)
        if (!o->mem[i]) {
            o->mem[i] = b;
            break;
        }
    return b;
}

static double *wants(struct op *o, long n)
{
    o->n = n;
    o->want = n ? malloc(sizeof(double) * (size_t)n) : NULL;
    return o->want;
}

static void posted(int rc)
{
    if (rc != MPI_SUCCESS) FAIL("%s: post returned %d", ops[nops].what, rc);
    nops++;
}

static void check_op(struct op *o)
{
    for (long i = 0; i < o->n; i++) {
        double g = get(o->t, o->got, i);
        if (g != o->want[i]) FAIL("%s: element %ld is %g, not %g", o->what, i, g, o->want[i]);
    }
    for (int i = 0; i < 4; i++)
        free(o->mem[i]);
    free(o->want);
}

/* ---------------------------------------------------------------- posting */

static double reduce_of(MPI_Op op, double a, double b)
{
    return op == MPI_MAX ? (a > b ? a : b) : a + b;
}

/* X reduced over ranks lo..hi-1 at element i. */
static double X_over(MPI_Op op, int lo, int hi, long i)
{
    double v = X(lo, i);
    for (int r = lo + 1; r < hi; r++)
        v = reduce_of(op, v, X(r, i));
    return v;
}

static void post_reductions(const struct ctx *c, const struct ty *t, long n, MPI_Op op)
{
    const char *on = op == MPI_MAX ? "MAX" : "SUM";
    int me = c->rank, sz = c->size;
    for (int ip = 0; ip < 2; ip++) {
        /* allreduce */
        struct op *o = new_op(t, ALLREDUCE, "%s: MPI_Iallreduce %s %s n %ld%s", c->name, t->name, on, n, ip ? " in place" : "");
        void *s = buf(o, t, n), *r = buf(o, t, n);
        double *w = wants(o, n);
        for (long i = 0; i < n; i++) {
            put(t, ip ? r : s, i, X(me, i));
            w[i] = X_over(op, 0, sz, i);
        }
        o->got = r;
        posted(MPI_Iallreduce(ip ? MPI_IN_PLACE : s, r, (int)n, t->t, op, c->comm, &reqs[nops]));
        /* reduce to every root */
        for (int root = 0; root < sz; root++) {
            o = new_op(t, REDUCE, "%s: MPI_Ireduce %s %s n %ld root %d%s", c->name, t->name, on, n, root, ip ? " in place" : "");
            int inpl = ip && me == root;
            s = buf(o, t, n);
            r = me == root ? buf(o, t, n) : NULL;
            w = wants(o, me == root ? n : 0);
            for (long i = 0; i < n; i++) {
                put(t, inpl ? r : s, i, X(me, i));
                if (me == root) w[i] = X_over(op, 0, sz, i);
            }
            o->got = r;
            posted(MPI_Ireduce(inpl ? MPI_IN_PLACE : s, r, (int)n, t->t, op, root, c->comm, &reqs[nops]));
        }
        /* scan, exscan */
        for (int ex = 0; ex < 2; ex++) {
            o = new_op(t, ex ? EXSCAN : SCAN, "%s: MPI_I%sscan %s %s n %ld%s", c->name, ex ? "ex" : "", t->name, on, n,
                       ip ? " in place" : "");
            s = buf(o, t, n);
            r = buf(o, t, n);
            w = wants(o, ex && me == 0 ? 0 : n); /* (exscan leaves rank 0's undefined) */
            for (long i = 0; i < n; i++) {
                put(t, ip ? r : s, i, X(me, i));
                if (!(ex && me == 0)) w[i] = X_over(op, 0, ex ? me : me + 1, i);
            }
            o->got = r;
            posted(ex ? MPI_Iexscan(ip ? MPI_IN_PLACE : s, r, (int)n, t->t, op, c->comm, &reqs[nops])
                      : MPI_Iscan(ip ? MPI_IN_PLACE : s, r, (int)n, t->t, op, c->comm, &reqs[nops]));
        }
        /* reduce_scatter_block: block b of rank r's input is X(r, b n + i) */
        o = new_op(t, RSB, "%s: MPI_Ireduce_scatter_block %s %s n %ld%s", c->name, t->name, on, n, ip ? " in place" : "");
        s = buf(o, t, n * sz);
        r = buf(o, t, ip ? n * sz : n);
        w = wants(o, n);
        for (long i = 0; i < n * sz; i++)
            put(t, ip ? r : s, i, X(me, i));
        for (long i = 0; i < n; i++)
            w[i] = X_over(op, 0, sz, me * n + i);
        o->got = r;
        posted(MPI_Ireduce_scatter_block(ip ? MPI_IN_PLACE : s, r, (int)n, t->t, op, c->comm, &reqs[nops]));
        /* reduce_scatter: rank b gets (b % 2) + n / 2 elements (n 0: none) */
        o = new_op(t, REDUCE_SCATTER, "%s: MPI_Ireduce_scatter %s %s n %ld%s", c->name, t->name, on, n, ip ? " in place" : "");
        int *rc = malloc(sizeof(int) * (size_t)sz);
        o->mem[3] = rc;
        long total = 0, first = 0;
        for (int b = 0; b < sz; b++) {
            rc[b] = n ? (int)(b % 2 + n / 2) : 0;
            if (b < me) first += rc[b];
            total += rc[b];
        }
        s = buf(o, t, total);
        r = buf(o, t, ip ? total : rc[me]);
        w = wants(o, rc[me]);
        for (long i = 0; i < total; i++)
            put(t, ip ? r : s, i, X(me, i));
        for (long i = 0; i < rc[me]; i++)
            w[i] = X_over(op, 0, sz, first + i);
        o->got = r;
        posted(MPI_Ireduce_scatter(ip ? MPI_IN_PLACE : s, r, rc, t->t, op, c->comm, &reqs[nops]));
    }
}

static void post_movement(const struct ctx *c, const struct ty *t, long n)
{
    int me = c->rank, sz = c->size;
    for (int root = 0; root < sz; root++) {
        struct op *o = new_op(t, BCAST, "%s: MPI_Ibcast %s n %ld root %d", c->name, t->name, n, root);
        void *b = buf(o, t, n);
        double *w = wants(o, n);
        for (long i = 0; i < n; i++) {
            put(t, b, i, me == root ? X(root, i) : -1);
            w[i] = X(root, i);
        }
        o->got = b;
        posted(MPI_Ibcast(b, (int)n, t->t, root, c->comm, &reqs[nops]));
        for (int ip = 0; ip < 2; ip++) {
            int inpl = ip && me == root;
            /* gather: block r is X(r, .) */
            o = new_op(t, GATHER, "%s: MPI_Igather %s n %ld root %d%s", c->name, t->name, n, root, ip ? " in place" : "");
            void *s = buf(o, t, n), *r = me == root ? buf(o, t, n * sz) : NULL;
            w = wants(o, me == root ? n * sz : 0);
            for (long i = 0; i < n; i++) put(t, s, i, X(me, i));
            for (long i = 0; me == root && i < n * sz; i++) w[i] = X((int)(i / n), i % n);
            if (inpl)
                for (long i = 0; i < n; i++) put(t, r, me * n + i, X(me, i));
            o->got = r;
            posted(MPI_Igather(inpl ? MPI_IN_PLACE : s, (int)n, t->t, r, (int)n, t->t, root, c->comm, &reqs[nops]));
            /* scatter: the root's block r is X(r, .) */
            o = new_op(t, SCATTER, "%s: MPI_Iscatter %s n %ld root %d%s", c->name, t->name, n, root, ip ? " in place" : "");
            s = me == root ? buf(o, t, n * sz) : NULL;
            r = buf(o, t, n);
            w = wants(o, inpl ? 0 : n);
            for (long i = 0; me == root && i < n * sz; i++) put(t, s, i, X((int)(i / n), i % n));
            for (long i = 0; !inpl && i < n; i++) w[i] = X(me, i);
            o->got = r;
            posted(MPI_Iscatter(s, (int)n, t->t, inpl ? MPI_IN_PLACE : r, (int)n, t->t, root, c->comm, &reqs[nops]));
            /* gatherv, scatterv */
            o = new_op(t, GATHERV, "%s: MPI_Igatherv %s n %ld root %d%s", c->name, t->name, n, root, ip ? " in place" : "");
            int *cnt = malloc(sizeof(int) * (size_t)sz), *dis = malloc(sizeof(int) * (size_t)sz);
            o->mem[2] = cnt;
            o->mem[3] = dis;
            long all = vlayout(sz, n, cnt, dis);
            s = buf(o, t, cnt[me]);
            r = me == root ? buf(o, t, all) : NULL;
            w = wants(o, me == root ? all : 0);
            for (long i = 0; i < cnt[me]; i++) put(t, s, i, X(me, i));
            for (int q = 0; me == root && q < sz; q++)
                for (long i = 0; i < cnt[q]; i++) w[dis[q] + i] = X(q, i);
            if (inpl)
                for (long i = 0; i < cnt[me]; i++) put(t, r, dis[me] + i, X(me, i));
            o->got = r;
            posted(MPI_Igatherv(inpl ? MPI_IN_PLACE : s, cnt[me], t->t, r, cnt, dis, t->t, root, c->comm, &reqs[nops]));
            o = new_op(t, SCATTERV, "%s: MPI_Iscatterv %s n %ld root %d%s", c->name, t->name, n, root, ip ? " in place" : "");
            cnt = malloc(sizeof(int) * (size_t)sz);
            dis = malloc(sizeof(int) * (size_t)sz);
            o->mem[2] = cnt;
            o->mem[3] = dis;
            all = vlayout(sz, n, cnt, dis);
            s = me == root ? buf(o, t, all) : NULL;
            r = buf(o, t, cnt[me]);
            w = wants(o, inpl ? 0 : cnt[me]);
            for (int q = 0; me == root && q < sz; q++)
                for (long i = 0; i < cnt[q]; i++) put(t, s, dis[q] + i, X(q, i));
            for (long i = 0; !inpl && i < cnt[me]; i++) w[i] = X(me, i);
            o->got = r;
            posted(MPI_Iscatterv(s, cnt, dis, t->t, inpl ? MPI_IN_PLACE : r, cnt[me], t->t, root, c->comm, &reqs[nops]));
        }
    }
    for (int ip = 0; ip < 2; ip++) {
        const char *ips = ip ? " in place" : "";
        /* allgather */
        struct op *o = new_op(t, ALLGATHER, "%s: MPI_Iallgather %s n %ld%s", c->name, t->name, n, ips);
        void *s = buf(o, t, n), *r = buf(o, t, n * sz);
        double *w = wants(o, n * sz);
        for (long i = 0; i < n; i++) put(t, ip ? r : s, ip ? me * n + i : i, X(me, i));
        for (long i = 0; i < n * sz; i++) w[i] = X((int)(i / n), i % n);
        o->got = r;
        posted(MPI_Iallgather(ip ? MPI_IN_PLACE : s, (int)n, t->t, r, (int)n, t->t, c->comm, &reqs[nops]));
        /* allgatherv */
        o = new_op(t, ALLGATHERV, "%s: MPI_Iallgatherv %s n %ld%s", c->name, t->name, n, ips);
        int *cnt = malloc(sizeof(int) * (size_t)sz), *dis = malloc(sizeof(int) * (size_t)sz);
        o->mem[2] = cnt;
        o->mem[3] = dis;
        long all = vlayout(sz, n, cnt, dis);
        s = buf(o, t, cnt[me]);
        r = buf(o, t, all);
        w = wants(o, all);
        for (long i = 0; i < cnt[me]; i++) put(t, ip ? r : s, ip ? dis[me] + i : i, X(me, i));
        for (int q = 0; q < sz; q++)
            for (long i = 0; i < cnt[q]; i++) w[dis[q] + i] = X(q, i);
        o->got = r;
        posted(MPI_Iallgatherv(ip ? MPI_IN_PLACE : s, cnt[me], t->t, r, cnt, dis, t->t, c->comm, &reqs[nops]));
        /* alltoall: from rank f to rank d, Z(f, d, .) */
        o = new_op(t, ALLTOALL, "%s: MPI_Ialltoall %s n %ld%s", c->name, t->name, n, ips);
        s = buf(o, t, n * sz);
        r = buf(o, t, n * sz);
        w = wants(o, n * sz);
        for (long i = 0; i < n * sz; i++) {
            put(t, ip ? r : s, i, Z(me, (int)(i / n), i % n));
            w[i] = Z((int)(i / n), me, i % n);
        }
        o->got = r;
        posted(MPI_Ialltoall(ip ? MPI_IN_PLACE : s, (int)n, t->t, r, (int)n, t->t, c->comm, &reqs[nops]));
        /* alltoallv */
        o = new_op(t, ALLTOALLV, "%s: MPI_Ialltoallv %s n %ld%s", c->name, t->name, n, ips);
        int *sc = malloc(sizeof(int) * 4 * (size_t)sz), *sd = sc + sz, *rc = sc + 2 * sz, *rd = sc + 3 * sz;
        o->mem[3] = sc;
        long st, rt;
        alltoallv_layout(me, sz, n, sc, &st, &rt);
        s = buf(o, t, st);
        r = buf(o, t, rt);
        w = wants(o, rt);
        for (int d = 0; d < sz; d++)
            for (long i = 0; i < sc[d]; i++) put(t, ip ? r : s, (ip ? rd[d] : sd[d]) + i, Z(me, d, i));
        for (int f = 0; f < sz; f++)
            for (long i = 0; i < rc[f]; i++) w[rd[f] + i] = Z(f, me, i);
        o->got = r;
        posted(MPI_Ialltoallv(ip ? MPI_IN_PLACE : s, sc, sd, t->t, r, rc, rd, t->t, c->comm, &reqs[nops]));
    }
    new_op(t, BARRIER, "%s: MPI_Ibarrier", c->name);
    posted(MPI_Ibarrier(c->comm, &reqs[nops]));
}

/* Point-to-point beside them: a ring, one int each way. */
static int p2p_in, p2p_out;
static void post_p2p(const struct ctx *c)
{
    struct op *o = new_op(&types[0], -1, "%s: MPI_Irecv", c->name);
    o->p2p = 1;
    p2p_in = -1;
    o->got = &p2p_in;
    wants(o, 1)[0] = 1000 + (c->rank + c->size - 1) % c->size;
    posted(MPI_Irecv(&p2p_in, 1, MPI_INT, (c->rank + c->size - 1) % c->size, 7, c->comm, &reqs[nops]));
    o = new_op(&types[0], -1, "%s: MPI_Isend", c->name);
    o->p2p = 1;
    p2p_out = 1000 + c->rank;
    posted(MPI_Isend(&p2p_out, 1, MPI_INT, (c->rank + 1) % c->size, 7, c->comm, &reqs[nops]));
}

/* ---------------------------------------------------------------- completion */

static MPI_Status ref_status;   /* MPI's own MPI_Ibarrier's, after MPI_Wait */
static int ref_sets;            /* MPI sets its source and tag (Open MPI leaves whatever its request held) */
static int ref_waitall_error; /* MPI_Waitall sets MPI_ERROR of its own collectives */
static void check_status(int i, const MPI_Status *st, int multi)
{
    if (ops[i].p2p || !loaded || multinode) return; /* (MPI's own nonblocking collectives leave an internal message's status) */
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if ((ref_sets && (st->MPI_SOURCE != ref_status.MPI_SOURCE || st->MPI_TAG != ref_status.MPI_TAG)) || count != 0)
        FAIL("%s: status source %d tag %d count %d, MPI's own collectives give %d %d 0", ops[i].what, st->MPI_SOURCE,
             st->MPI_TAG, count, ref_status.MPI_SOURCE, ref_status.MPI_TAG);
    if (multi && ref_waitall_error && st->MPI_ERROR != MPI_SUCCESS)
        FAIL("%s: status MPI_ERROR %d after MPI_Waitall", ops[i].what, st->MPI_ERROR);
    int cancelled = 1;
    MPI_Test_cancelled(st, &cancelled);
    if (cancelled) FAIL("%s: status says cancelled", ops[i].what);
}

static MPI_Status sts[MAXOPS];

static void complete_all(int mode)
{
    complete(mode, nops, reqs, sts, 0, check_status);
    for (int i = 0; i < nops; i++) {
        if (reqs[i] != MPI_REQUEST_NULL) FAIL("%s: %s left its request", mode_names[mode], ops[i].what);
        check_op(&ops[i]);
    }
    nops = 0;
}

/* ---------------------------------------------------------------- the checks */

static void batches(const struct ctx *c, int *mode)
{
    static const long counts[] = {0, 1, 7, 1000};
    for (int ti = 0; ti < 6; ti++)
        for (int ci = 0; ci < 4; ci++) {
            const struct ty *t = &types[ti];
            long n = counts[ci];
            if (n == 1000 && ti > 1) continue; /* the large count with MPI_INT and MPI_DOUBLE */
            post_reductions(c, t, n, ti % 2 && n ? MPI_MAX : MPI_SUM);
            post_movement(c, t, n);
            if (*mode % 3 == 0) post_p2p(c);
            if (*mode % 4 == 1) { /* blocking collectives while they are outstanding */
                int x = c->rank + 1, sum = 0, b = c->rank ? -1 : 99;
                MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c->comm);
                MPI_Bcast(&b, 1, MPI_INT, 0, c->comm);
                MPI_Barrier(c->comm);
                want_osmp[ALLREDUCE]++, want_osmp[BCAST]++, want_osmp[BARRIER]++;
                if (sum != c->size * (c->size + 1) / 2 || b != 99)
                    FAIL("%s: blocking calls among outstanding requests gave %d, %d", c->name, sum, b);
            }
            if (nops < 16) FAIL("only %d requests outstanding", nops);
            complete_all(*mode % NMODES);
            ++*mode;
        }
}

/* A derived datatype moved on OSMP (packed around the call, the root with a
 * vector type and the others with ints); a user-defined operation goes to MPI. */
static void derived(const struct ctx *c)
{
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Op user;
    MPI_Op_create(user_sum, 1, &user);
    int b[8], four[4], in[4], out[4] = {0};
    for (int i = 0; i < 8; i++) b[i] = c->rank == 0 ? 100 + i : -1;
    for (int i = 0; i < 4; i++) four[i] = -1, in[i] = c->rank + i;
    MPI_Request r[3];
    if (c->rank == 0) MPI_Ibcast(b, 1, vec, 0, c->comm, &r[0]);
    else MPI_Ibcast(four, 4, MPI_INT, 0, c->comm, &r[0]);
    MPI_Iallreduce(in, out, 4, MPI_INT, user, c->comm, &r[1]);
    MPI_Ibarrier(c->comm, &r[2]);
    (multinode ? want_mpi : want_osmp)[BCAST]++, want_mpi[ALLREDUCE]++, (multinode ? want_mpi : want_osmp)[BARRIER]++;
    MPI_Status st[3];
    if (MPI_Waitall(3, r, st) != MPI_SUCCESS) FAIL("%s: MPI_Waitall of a derived type's calls", c->name);
    for (int i = 0; i < 4; i++) {
        int want = i * c->size + c->size * (c->size - 1) / 2;
        if (c->rank && four[i] != 100 + 2 * i) FAIL("%s: MPI_Ibcast of a vector type: element %d is %d", c->name, i, four[i]);
        if (out[i] != want) FAIL("%s: MPI_Iallreduce with a user-defined operation: element %d is %d, not %d", c->name, i, out[i], want);
    }
    MPI_Type_free(&vec);
    MPI_Op_free(&user);
}

/* MPI_Request_free on an active request: later calls complete it. MPI_Cancel refused. */
static int freed_out[64];
static void free_and_cancel(const struct ctx *c)
{
    int x = c->rank + 1;
    MPI_Request r;
    int ours = loaded && !multinode; /* (on MPI's own requests, MPI 4.0 section 6.12 calls both erroneous) */
    if (ours) {
        MPI_Iallreduce(&x, freed_out, 1, MPI_INT, MPI_SUM, c->comm, &r);
        want_osmp[ALLREDUCE]++;
        if (MPI_Request_free(&r) != MPI_SUCCESS || r != MPI_REQUEST_NULL) FAIL("MPI_Request_free on an active request");
    }
    MPI_Errhandler old;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Ibarrier(c->comm, &r);
    (multinode ? want_mpi : want_osmp)[BARRIER]++;
    int rc = ours ? MPI_Cancel(&r) : MPI_ERR_REQUEST;
    if (rc == MPI_SUCCESS) FAIL("MPI_Cancel of a nonblocking collective succeeded");
    MPI_Status st;
    if (MPI_Wait(&r, &st) != MPI_SUCCESS) FAIL("MPI_Wait after a refused MPI_Cancel");
    int cancelled = 1;
    MPI_Test_cancelled(&st, &cancelled);
    if (cancelled) FAIL("the barrier was cancelled");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, old);
    if (old != MPI_ERRORS_ARE_FATAL && old != MPI_ERRORS_RETURN) MPI_Errhandler_free(&old);
    /* the freed allreduce came before the barrier: on OSMP, completing the barrier completed it */
    if (ours && freed_out[0] != c->size * (c->size + 1) / 2)
        FAIL("%s: the freed MPI_Iallreduce gave %d", c->name, freed_out[0]);
}

static void die(int victim)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static double in[8][4096], out[8][4096 * 8];
    MPI_Request r[8];
    for (int k = 0; k < 8; k++) {
        if (world_rank == victim && k == 4) raise(SIGKILL);
        for (int i = 0; i < 4096; i++) in[k][i] = k + i;
        switch (k % 4) {
        case 0: MPI_Iallreduce(in[k], out[k], 4096, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[k]); break;
        case 1: MPI_Ibcast(in[k], 4096, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r[k]); break;
        case 2: MPI_Iallgather(in[k], 1024, MPI_DOUBLE, out[k], 1024, MPI_DOUBLE, MPI_COMM_WORLD, &r[k]); break;
        default: MPI_Igather(in[k], 512, MPI_DOUBLE, out[k], 512, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r[k]); break;
        }
    }
    double t0 = MPI_Wtime();
    MPI_Status st[8];
    int rc = MPI_Waitall(8, r, st);
    double took = MPI_Wtime() - t0;
    for (int k = 0; k < 8; k++) /* (a failed request may stay: Open MPI keeps it) */
        if (r[k] != MPI_REQUEST_NULL) MPI_Request_free(&r[k]);
    if (rc == MPI_SUCCESS) FAIL("MPI_Waitall succeeded although rank %d died", victim);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    printf("nb-check: rank %d: MPI_Waitall returned an error after %.2f s: %s\n", world_rank, took, msg);
    fflush(stdout);
    if (took > 10) FAIL("the error took %.1f s", took);
    sleep(1); /* (the others report too before the launcher ends the job for this exit status) */
    _exit(3);
}

int main(int argc, char **argv)
{
    int expect = 0, victim = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-osmp")) expect = 1;
        else if (!strcmp(argv[i], "--die") && i + 1 < argc) victim = atoi(argv[++i]);
    }
    MPI_Init(&argc, &argv);
    find_osmp(expect);
    if (victim >= 0) die(victim);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* MPI's own statuses of a collective, to compare ours with */
    MPI_Request r[2];
    MPI_Status st[2];
    memset(st, 0x5a, sizeof(st));
    MPI_Status again;
    memset(&again, 0xa5, sizeof(again));
    PMPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    PMPI_Wait(&r[0], &ref_status);
    PMPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    PMPI_Wait(&r[0], &again);
    ref_sets = ref_status.MPI_SOURCE == again.MPI_SOURCE && ref_status.MPI_TAG == again.MPI_TAG &&
               ref_status.MPI_SOURCE >= MPI_PROC_NULL && ref_status.MPI_SOURCE < size && ref_status.MPI_TAG >= MPI_ANY_TAG;
    PMPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    PMPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
    PMPI_Waitall(2, r, st);
    ref_waitall_error = st[0].MPI_ERROR == MPI_SUCCESS && st[1].MPI_ERROR == MPI_SUCCESS;

    count_from_here();
    int mode = 0;
    struct ctx world = {MPI_COMM_WORLD, "world", world_rank, size};
    batches(&world, &mode);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &rev); /* reversed order */
    struct ctx reversed = {rev, "reversed", 0, size};
    MPI_Comm_rank(rev, &reversed.rank);
    batches(&reversed, &mode);
    derived(&world);
    free_and_cancel(&reversed);
    /* A communicator freed with a request outstanding: the request completes as usual (on OSMP only: Open MPI
     * 4.1.4's own request then crashes in MPI_Wait). */
    int one = 1, all = 0;
    MPI_Request late = MPI_REQUEST_NULL;
    if (loaded && !multinode) {
        MPI_Iallreduce(&one, &all, 1, MPI_INT, MPI_SUM, rev, &late);
        want_osmp[ALLREDUCE]++;
    }
    MPI_Comm_free(&rev);
    if (MPI_Wait(&late, MPI_STATUS_IGNORE) != MPI_SUCCESS || (loaded && !multinode && all != size))
        FAIL("MPI_Iallreduce on a communicator freed before the wait gave %d", all);
    if (expect) check_counts();
    long calls = 0;
    for (int k = 0; k < NCOLL; k++) calls += want_osmp[k] + want_mpi[k];
    MPI_Finalize();
    if (world_rank == 0)
        printf("nb-check: all checks passed (%d ranks, %ld collectives, %d batches%s)\n", size, calls, mode,
               stat_fn ? ", OSMP loaded" : "");
    return 0;
}
