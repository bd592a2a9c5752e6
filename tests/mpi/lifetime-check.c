/*
 * lifetime-check: MPI objects freed while requests use them (MPI allows it: "freeing a datatype does not affect
 * any other datatype built from it, nor pending communication using it"; the same for operations and
 * communicators). Every value checked exactly, the holes of derived datatypes included.
 *
 *   mpirun -n N [-x LD_PRELOAD=libosmp_mpi.so] lifetime-check [--expect-osmp]
 *
 * Batches of the sixteen collectives (every family libosmp_mpi serves) on one communicator, moving data with one
 * datatype and reducing with one operation; right after the posts (MPI_I<op>) or the _inits (persistent), the
 * batch's objects are freed, then the requests complete (nonblocking: MPI_Waitall) or run three rounds with new
 * inputs each (persistent: MPI_Startall, MPI_Waitall) and are freed. Objects freed per batch:
 *   - a derived datatype (a vector type with holes, a contiguous type), moved on OSMP (packed at the post or at
 *     each start, unpacked at the end); a user-defined operation, whose reductions go to MPI;
 *   - a duplicate of MPI_COMM_WORLD (it shares the world's team) with everything on OSMP;
 *   - a split in reversed order (a team of its own, which MPI_Comm_free would destroy) with a derived datatype
 *     too: all three kinds at once.
 * Then the team of a communicator freed before its persistent requests: the requests run on it and it stays (its
 * members agree, whatever order each frees its requests and the communicator in; osmp_mpi_stat's "teams" counts
 * it), a later communicator over the same processes takes it up (no new team), and when that one is freed with no
 * persistent request left anywhere the team goes. Ranks free their last requests one after the other around
 * point-to-point messages: a barrier inside MPI_Request_free would hang there.
 *
 * --expect-osmp: the library is loaded, and each call went where it must (osmp_mpi_stat before and after: on OSMP
 * a count per post or per start; to MPI, with OSMP_MPI_PSEUDO_NODES > 1 or a user operation, a count per post or
 * per _init). Objects are freed before the wait only where OSMP runs the calls (Open MPI 4.1.4's own nonblocking
 * collectives crash in MPI_Wait once their communicator is freed); datatypes and operations always.
 */
#define _GNU_SOURCE
#define REQ_PROG "lifetime-check"
#include "req-common.h"

#if defined(OPEN_MPI)
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#else
#define INIT(name) MPI_##name##_init
#endif

/* ---------------------------------------------------------------- datatypes as ints */

#define HOLE (-1)   /* every output int before a run: holes must keep it */
#define MAXDATA 3
/* How elements of a datatype lie in ints: `ext` ints per element, data at offsets off[0..nd). */
struct lay {
    const char *name;
    int ext, nd, off[MAXDATA];
};
static const struct lay L_INT = {"MPI_INT", 1, 1, {0}};
static const struct lay L_VECTOR = {"a vector type (2 blocks of 1 int, stride 2)", 3, 2, {0, 2}};
static const struct lay L_CONTIG = {"a contiguous type of 3 ints", 3, 3, {0, 1, 2}};

static MPI_Datatype make_type(const struct lay *l)
{
    MPI_Datatype t = MPI_INT;
    if (l == &L_VECTOR) MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    if (l == &L_CONTIG) MPI_Type_contiguous(3, MPI_INT, &t);
    if (t != MPI_INT) MPI_Type_commit(&t);
    return t;
}

/* Element i of a buffer holds value x: its data ints are 4 x + j. */
static void put_elem(const struct lay *l, int *b, long i, int x)
{
    for (int j = 0; j < l->nd; j++) b[i * l->ext + l->off[j]] = 4 * x + j;
}

/* ---------------------------------------------------------------- values */

static int X(int r, long i, int k)
{
    return 1000 * (r + 1) + 10 * (int)i + k;
}
static int Z(int from, int to, long i, int k)
{
    return 10000 * (from + 1) + 1000 * to + 10 * (int)i + k;
}

/* ---------------------------------------------------------------- the requests */

struct op {
    int coll, root, mpi; /* mpi: goes to MPI */
    const struct lay *l; /* the data's layout: the batch's datatype for data movement, MPI_INT for reductions */
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int rank, size;
    long n;              /* elements per block */
    int *s, *r;          /* buffers */
    long slen, rlen;     /* in elements */
    int *cnt, *dis;      /* v-variants; alltoallv: sc sd rc rd in one */
    char what[160];
};

static int *ints(const struct lay *l, long elems)
{
    return calloc((size_t)(elems ? elems : 1) * (size_t)l->ext, sizeof(int));
}

static long total_of(const int *cnt, int sz)
{
    long t = 0;
    for (int r = 0; r < sz; r++) t += cnt[r];
    return t;
}

static int reduction(int coll)
{
    return coll == ALLREDUCE || coll == REDUCE || coll == RSB || coll == REDUCE_SCATTER || coll == SCAN ||
           coll == EXSCAN;
}

/* Lengths of o's buffers (its layout allocated). */
static void lengths(struct op *o)
{
    int me = o->rank, sz = o->size, at_root = me == o->root;
    long n = o->n;
    o->slen = o->rlen = 0;
    switch (o->coll) {
    case ALLREDUCE: case SCAN: case EXSCAN: o->slen = o->rlen = n; break;
    case REDUCE: o->slen = n, o->rlen = at_root ? n : 0; break;
    case RSB: o->slen = n * sz, o->rlen = n; break;
    case REDUCE_SCATTER:
        o->cnt = malloc(sizeof(int) * (size_t)sz);
        for (int b = 0; b < sz; b++) o->cnt[b] = (int)(b % 2 + n / 2);
        o->slen = total_of(o->cnt, sz), o->rlen = o->cnt[me];
        break;
    case BCAST: o->rlen = n; break;
    case GATHER: o->slen = n, o->rlen = at_root ? n * sz : 0; break;
    case SCATTER: o->slen = at_root ? n * sz : 0, o->rlen = n; break;
    case ALLGATHER: o->slen = n, o->rlen = n * sz; break;
    case ALLTOALL: o->slen = o->rlen = n * sz; break;
    case GATHERV: case SCATTERV: case ALLGATHERV: {
        o->cnt = malloc(sizeof(int) * 2 * (size_t)sz), o->dis = o->cnt + sz;
        long at = vlayout(sz, n, o->cnt, o->dis), mine = o->cnt[me];
        if (o->coll == GATHERV) o->slen = mine, o->rlen = at_root ? at : 0;
        else if (o->coll == SCATTERV) o->slen = at_root ? at : 0, o->rlen = mine;
        else o->slen = mine, o->rlen = at;
        break;
    }
    case ALLTOALLV:
        o->cnt = malloc(sizeof(int) * 4 * (size_t)sz);
        alltoallv_layout(me, sz, n, o->cnt, &o->slen, &o->rlen);
        break;
    }
}

/* Post o (nonblocking), or make its persistent request. */
static void post(struct op *o, int persistent, MPI_Request *req)
{
    int root = o->root, rc = MPI_ERR_OTHER;
    int *sc = o->cnt, *sd = o->cnt ? o->cnt + o->size : NULL;
    MPI_Datatype dt = o->dt;
    MPI_Comm comm = o->comm;
    MPI_Info info = MPI_INFO_NULL;
    int n = (int)o->n;
#define CALL(name, iname, ...) (persistent ? INIT(name)(__VA_ARGS__, info, req) : MPI_##iname(__VA_ARGS__, req))
    switch (o->coll) {
    case BARRIER: rc = persistent ? INIT(Barrier)(comm, info, req) : MPI_Ibarrier(comm, req); break;
    case BCAST: rc = CALL(Bcast, Ibcast, o->r, n, dt, root, comm); break;
    case REDUCE: rc = CALL(Reduce, Ireduce, o->s, o->r, n, dt, o->op, root, comm); break;
    case ALLREDUCE: rc = CALL(Allreduce, Iallreduce, o->s, o->r, n, dt, o->op, comm); break;
    case RSB: rc = CALL(Reduce_scatter_block, Ireduce_scatter_block, o->s, o->r, n, dt, o->op, comm); break;
    case REDUCE_SCATTER: rc = CALL(Reduce_scatter, Ireduce_scatter, o->s, o->r, o->cnt, dt, o->op, comm); break;
    case SCAN: rc = CALL(Scan, Iscan, o->s, o->r, n, dt, o->op, comm); break;
    case EXSCAN: rc = CALL(Exscan, Iexscan, o->s, o->r, n, dt, o->op, comm); break;
    case GATHER: rc = CALL(Gather, Igather, o->s, n, dt, o->r, n, dt, root, comm); break;
    case SCATTER: rc = CALL(Scatter, Iscatter, o->s, n, dt, o->r, n, dt, root, comm); break;
    case ALLGATHER: rc = CALL(Allgather, Iallgather, o->s, n, dt, o->r, n, dt, comm); break;
    case ALLTOALL: rc = CALL(Alltoall, Ialltoall, o->s, n, dt, o->r, n, dt, comm); break;
    case GATHERV: rc = CALL(Gatherv, Igatherv, o->s, sc[o->rank], dt, o->r, sc, sd, dt, root, comm); break;
    case SCATTERV: rc = CALL(Scatterv, Iscatterv, o->s, sc, sd, dt, o->r, sc[o->rank], dt, root, comm); break;
    case ALLGATHERV: rc = CALL(Allgatherv, Iallgatherv, o->s, sc[o->rank], dt, o->r, sc, sd, dt, comm); break;
    case ALLTOALLV:
        rc = CALL(Alltoallv, Ialltoallv, o->s, sc, sd, dt, o->r, o->cnt + 2 * o->size, o->cnt + 3 * o->size, dt, comm);
        break;
    }
#undef CALL
    if (rc != MPI_SUCCESS || *req == MPI_REQUEST_NULL) FAIL("%s: the post returned %d", o->what, rc);
}

/* Round k's inputs; every output int HOLE. */
static void fill(struct op *o, int k)
{
    const struct lay *l = o->l;
    int me = o->rank, sz = o->size, at_root = me == o->root;
    long n = o->n;
    for (long i = 0; i < o->rlen * l->ext; i++) o->r[i] = HOLE;
    for (long i = 0; i < o->slen * l->ext; i++) o->s[i] = -2; /* (the input's holes: never to be seen anywhere) */
    switch (o->coll) {
    case BCAST:
        for (long i = 0; at_root && i < n; i++) put_elem(l, o->r, i, X(me, i, k));
        break;
    case SCATTER:
        for (long i = 0; at_root && i < n * sz; i++) put_elem(l, o->s, i, X((int)(i / n), i % n, k));
        break;
    case SCATTERV:
        for (int q = 0; at_root && q < sz; q++)
            for (long i = 0; i < o->cnt[q]; i++) put_elem(l, o->s, o->dis[q] + i, X(q, i, k));
        break;
    case ALLTOALL:
        for (long i = 0; i < n * sz; i++) put_elem(l, o->s, i, Z(me, (int)(i / n), i % n, k));
        break;
    case ALLTOALLV:
        for (int d = 0; d < sz; d++)
            for (long i = 0; i < o->cnt[d]; i++) put_elem(l, o->s, o->cnt[sz + d] + i, Z(me, d, i, k));
        break;
    default: /* every rank's own block */
        for (long i = 0; i < o->slen; i++) put_elem(l, o->s, i, X(me, i, k));
        break;
    }
}

static int X_sum(int lo, int hi, long i, int k)
{
    int v = 0;
    for (int r = lo; r < hi; r++) v += X(r, i, k);
    return v;
}

/* The output o must hold after round k, element by element (want: value, or INT32_MIN for none: all HOLE). */
static void check(const struct op *o, int k)
{
    const struct lay *l = o->l;
    int me = o->rank, sz = o->size;
    long n = o->n;
    long first = 0;
    if (o->coll == REDUCE_SCATTER)
        for (int b = 0; b < me; b++) first += o->cnt[b];
    for (long e = 0; e < o->rlen; e++) {
        long want = INT32_MIN; /* the value of element e, or none */
        int q;
        switch (o->coll) {
        case ALLREDUCE: case REDUCE: want = X_sum(0, sz, e, k); break;
        case SCAN: want = X_sum(0, me + 1, e, k); break;
        case EXSCAN: want = me ? X_sum(0, me, e, k) : INT32_MIN; break;
        case RSB: want = X_sum(0, sz, me * n + e, k); break;
        case REDUCE_SCATTER: want = X_sum(0, sz, first + e, k); break;
        case BCAST: want = X(o->root, e, k); break;
        case SCATTER: case SCATTERV: want = X(me, e, k); break;
        case GATHER: case ALLGATHER: want = X((int)(e / n), e % n, k); break;
        case ALLTOALL: want = Z((int)(e / n), me, e % n, k); break;
        case GATHERV: case ALLGATHERV:
            for (q = 0; q < sz && !(e >= o->dis[q] && e < o->dis[q] + o->cnt[q]); q++) {}
            want = X(q, e - o->dis[q], k);
            break;
        case ALLTOALLV: {
            int *rc = o->cnt + 2 * sz, *rd = o->cnt + 3 * sz;
            for (q = 0; q < sz && !(e >= rd[q] && e < rd[q] + rc[q]); q++) {}
            want = Z(q, me, e - rd[q], k);
            break;
        }
        }
        if (o->coll == EXSCAN && !me) continue; /* (rank 0's is undefined) */
        for (int i = 0, j = 0; i < l->ext; i++) {
            int data = j < l->nd && l->off[j] == i;
            long w = data ? 4 * want + j : HOLE;
            int got = o->r[e * l->ext + i];
            if (got != w)
                FAIL("%s: round %d: element %ld, int %d is %d, not %ld%s", o->what, k, e, i, got, w,
                     data ? "" : " (a hole of the datatype)");
            j += data;
        }
    }
}

/* ---------------------------------------------------------------- batches */

enum { C_WORLD, C_DUP, C_SPLIT };
static const char *const comm_names[] = {"the world", "a duplicate of the world", "a reversed split"};

struct batch {
    int comm;             /* C_* */
    const struct lay *l;  /* data movement's datatype */
    int user_op;          /* reductions with a user-defined operation (to MPI), else MPI_SUM (on OSMP) */
};

#define NOPS NCOLL
static struct op ops[NOPS];
static MPI_Request reqs[NOPS];
static int mode; /* how the next completion completes (req-common.h's nine ways, in turn) */

static void status_ok(int i, const MPI_Status *st, int from_waitall)
{
    int cancelled = 1;
    MPI_Test_cancelled(st, &cancelled);
    if (cancelled || (from_waitall && st->MPI_ERROR != MPI_SUCCESS)) FAIL("%s: a bad status", ops[i].what);
}

/* Every collective of the batch posted (or made persistent); then the batch's objects freed; then completed (or
 * run `rounds` times, then freed). Returns nothing: every failure ends the job. */
static void run(const struct batch *b, int persistent, int rounds)
{
    int size, on_osmp = loaded && !multinode;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm = MPI_COMM_WORLD;
    if (b->comm == C_DUP) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (b->comm == C_SPLIT) MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &comm);
    int me;
    MPI_Comm_rank(comm, &me);
    MPI_Datatype dt = make_type(b->l);
    /* A user-defined operation goes to MPI, whose own persistent collectives do not survive its MPI_Op_free
     * (Open MPI 4.1.4: a NULL function called in NBC_Progress; MPICH 4.0.2: wrong sums): persistent batches
     * reduce with MPI_SUM. */
    int user_op = b->user_op && !persistent;
    MPI_Op user = MPI_OP_NULL;
    if (user_op) MPI_Op_create(user_sum, 1, &user);
    /* the objects freed before the requests end; a communicator only where OSMP runs the calls (see the top) */
    int free_comm = b->comm != C_WORLD && on_osmp, free_dt = dt != MPI_INT, free_op = user_op;
    char freed[96];
    snprintf(freed, sizeof(freed), "%s%s%s", free_comm ? " communicator" : "", free_dt ? " datatype" : "",
             free_op ? " operation" : "");
    for (int c = 0; c < NCOLL; c++) {
        struct op *o = &ops[c];
        memset(o, 0, sizeof(*o));
        o->coll = c;
        o->comm = comm;
        o->rank = me;
        o->size = size;
        o->root = 1 % size;
        o->n = 5;
        int red = reduction(c);
        o->l = red ? &L_INT : b->l;
        o->dt = red ? MPI_INT : dt;
        o->op = user_op ? user : MPI_SUM;
        o->mpi = !on_osmp || (red && user_op);
        lengths(o);
        o->s = ints(o->l, o->slen);
        o->r = ints(o->l, o->rlen);
        snprintf(o->what, sizeof(o->what), "%s %s on %s (%s%s), freed:%s", persistent ? "persistent" : "nonblocking",
                 coll_names[c], comm_names[b->comm], red ? "MPI_INT" : b->l->name,
                 red ? (user_op ? ", a user-defined operation" : ", MPI_SUM") : "", freed);
        fill(o, 0);
        post(o, persistent, &reqs[c]);
        if (!persistent || o->mpi) (o->mpi ? want_mpi : want_osmp)[c]++; /* (a count per post, or per _init) */
    }
    if (free_dt) MPI_Type_free(&dt);
    if (free_op) MPI_Op_free(&user);
    if (free_comm) MPI_Comm_free(&comm);
    /* other objects take the freed ones' memory and handles, so that a request still reading those reads these */
    MPI_Datatype junk_t[4];
    MPI_Op junk_op[4];
    for (int i = 0; i < 4; i++) {
        MPI_Type_contiguous(7 + i, MPI_DOUBLE, &junk_t[i]);
        MPI_Type_commit(&junk_t[i]);
        MPI_Op_create(user_sum, 0, &junk_op[i]);
    }
    MPI_Comm junk_c;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &junk_c);
    MPI_Status sts[NOPS];
    if (!persistent) {
        complete(mode++ % NMODES, NOPS, reqs, sts, 0, status_ok);
        for (int c = 0; c < NCOLL; c++) check(&ops[c], 0);
    }
    for (int k = 1; persistent && k <= rounds; k++) {
        for (int c = 0; c < NCOLL; c++) fill(&ops[c], k);
        if (MPI_Startall(NOPS, reqs) != MPI_SUCCESS) FAIL("MPI_Startall of a batch, round %d, freed:%s", k, freed);
        complete(mode++ % NMODES, NOPS, reqs, sts, 1, status_ok);
        for (int c = 0; c < NCOLL; c++) {
            check(&ops[c], k);
            if (!ops[c].mpi) want_osmp[c]++;
        }
    }
    for (int c = 0; persistent && c < NCOLL; c++)
        if (MPI_Request_free(&reqs[c]) != MPI_SUCCESS || reqs[c] != MPI_REQUEST_NULL)
            FAIL("%s: MPI_Request_free", ops[c].what);
    for (int i = 0; i < 4; i++) MPI_Type_free(&junk_t[i]), MPI_Op_free(&junk_op[i]);
    MPI_Comm_free(&junk_c);
    if (!free_dt && dt != MPI_INT) MPI_Type_free(&dt);
    if (!free_op && user != MPI_OP_NULL) MPI_Op_free(&user);
    if (!free_comm && comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    for (int c = 0; c < NCOLL; c++) free(ops[c].s), free(ops[c].r), free(ops[c].cnt);
}

/* ---------------------------------------------------------------- a team that outlives its communicator */

static void teams(long *live, long *created)
{
    if (stat_fn("teams", live, created)) FAIL("osmp_mpi_stat(\"teams\") failed");
}

/* The ranks one after the other, around messages: rank r acts after rank r - 1 sent it a token, then sends
 * rank r + 1 one. A barrier inside `act` (a local call) would hang: rank r + 1 is in MPI_Recv. */
static void in_turn(void (*act)(void *), void *arg)
{
    int size, token = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (world_rank > 0) MPI_Recv(&token, 1, MPI_INT, world_rank - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    act(arg);
    if (world_rank + 1 < size) MPI_Send(&token, 1, MPI_INT, world_rank + 1, 77, MPI_COMM_WORLD);
}

static void free_request(void *r)
{
    if (r && MPI_Request_free(r) != MPI_SUCCESS) FAIL("MPI_Request_free of a persistent allreduce");
}

static MPI_Comm reversed(void)
{
    int size;
    MPI_Comm c;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &c);
    return c;
}

/* A persistent allreduce on c, started `runs` times (c may be freed already). */
static void allreduce_runs(MPI_Request *r, int *in, int *out, int runs, const char *what)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 0; k < runs; k++) {
        in[0] = world_rank + k, out[0] = -1;
        MPI_Start(r);
        MPI_Wait(r, MPI_STATUS_IGNORE);
        want_osmp[ALLREDUCE]++;
        if (out[0] != size * (size - 1) / 2 + size * k) FAIL("%s: run %d gave %d", what, k, out[0]);
    }
}

static void parked(void)
{
    long live0, made0, live, made;
    int in[1], out[1];
    MPI_Request r;
    /* (the batches' reversed split left its team parked: a communicator over the same processes takes it up, and
     * freed with no persistent request left, it goes) */
    MPI_Comm c = reversed();
    MPI_Barrier(c);
    want_osmp[BARRIER]++;
    teams(&live0, &made0);
    MPI_Comm_free(&c);
    teams(&live, &made);
    if (live != live0 - 1 || made != made0) FAIL("the batches' parked team: %ld teams, %ld made (not 1 less, 0 more)", live - live0, made - made0);
    live0 = live;
    /* 1. freed right after the _init on every rank: the requests run on, the team stays after them */
    c = reversed();
    INIT(Allreduce)(in, out, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r);
    teams(&live, &made);
    if (live != live0 + 1 || made != made0 + 1) FAIL("a reversed split: %ld teams, %ld made (not 1 more each)", live - live0, made - made0);
    MPI_Comm_free(&c);
    allreduce_runs(&r, in, out, 4, "a persistent allreduce whose communicator is freed");
    in_turn(free_request, &r);
    teams(&live, &made);
    if (live != live0 + 1) FAIL("the team of a communicator freed before its persistent requests: %ld teams, not %ld", live, live0 + 1);
    /* 2. a communicator over the same processes takes it up; freed with no persistent request left, it goes */
    c = reversed();
    MPI_Allreduce(MPI_IN_PLACE, in, 1, MPI_INT, MPI_SUM, c); /* (its team is made at its first collective) */
    want_osmp[ALLREDUCE]++;
    teams(&live, &made);
    if (live != live0 + 1 || made != made0 + 1) FAIL("a later reversed split: %ld teams, %ld made, not the parked one", live - live0, made - made0);
    MPI_Comm_free(&c);
    teams(&live, &made);
    if (live != live0) FAIL("a parked team's last communicator freed: %ld teams, not %ld", live, live0);
    /* 3. each rank frees the request and the communicator in its own order: rank 0 the request first, the others
     * the communicator first (they agree in MPI_Comm_free that one of them still needs the team) */
    c = reversed();
    INIT(Allreduce)(in, out, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r);
    allreduce_runs(&r, in, out, 2, "a persistent allreduce, freed in two orders");
    if (world_rank == 0) MPI_Request_free(&r);
    MPI_Comm_free(&c);
    in_turn(free_request, world_rank ? &r : NULL);
    teams(&live, &made);
    if (live != live0 + 1 || made != made0 + 2) FAIL("freed in two orders: %ld teams, %ld made (not 1 and 2 more)", live - live0, made - made0);
    c = reversed();
    MPI_Barrier(c);
    want_osmp[BARRIER]++;
    teams(&live, &made);
    if (live != live0 + 1 || made != made0 + 2) FAIL("a reversed split after them: %ld teams, %ld made (not 1 and 2 more)", live - live0, made - made0);
    MPI_Comm_free(&c);
    teams(&live, &made);
    if (live != live0) FAIL("the last communicator freed: %ld teams, not %ld", live, live0);
}

int main(int argc, char **argv)
{
    int expect = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--expect-osmp")) expect = 1;
    MPI_Init(&argc, &argv);
    find_osmp(expect);
    (void)get, (void)put; /* (req-common.h's, for the other programs) */
    count_from_here();
    const struct batch batches[] = {
        {C_WORLD, &L_VECTOR, 1}, /* a datatype (vector) and an operation */
        {C_WORLD, &L_CONTIG, 1}, /* a datatype (contiguous) and an operation */
        {C_DUP, &L_INT, 0},      /* a communicator that shares the world's team */
        {C_SPLIT, &L_VECTOR, 0}, /* a communicator with a team of its own, and a datatype */
    };
    for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
        run(&batches[i], 0, 0);
        /* (the MPI libraries' own persistent collectives fail without any object freed: see persist-check.c) */
        if (loaded && !multinode) run(&batches[i], 1, 3);
    }
    if (loaded && !multinode) parked();
    if (expect) check_counts();
    MPI_Finalize();
    if (world_rank == 0) printf("lifetime-check: all checks passed%s\n", stat_fn ? " (OSMP loaded)" : "");
    return 0;
}
