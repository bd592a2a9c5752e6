/*
 * progress-check: MPI's progress rule with libosmp_mpi, in both directions
 * (issues 45 and 49), every value checked exactly.
 *
 *   mpirun -n N [-x LD_PRELOAD=libosmp_mpi.so] progress-check CASE [--expect-osmp]
 *          [--limit SECONDS] [--bytes B] [--thread single|funneled|serialized|multiple]
 *
 * Ranks pair up, sender 2k and receiver 2k + 1 (an odd last rank only joins
 * the collectives); B bytes (default 8 MiB, a rendezvous message in both
 * libraries) go from each sender to its receiver. CASE:
 *   recv        the receiver posts MPI_Irecv and enters MPI_Barrier; the
 *               sender sends with a blocking MPI_Send, and only then enters
 *               MPI_Barrier. While the receiver waits inside OSMP's barrier,
 *               its MPI library must progress, or the send never completes.
 *   isend       the sender posts MPI_Isend, enters MPI_Barrier, then waits
 *               for the send; the receiver receives with a blocking MPI_Recv,
 *               then enters MPI_Barrier.
 *   colls       recv's program with each intercepted blocking collective in
 *               place of the barrier, in turn (root 0, a sender), 4 ints a rank.
 *   nb          recv's program with MPI_Iallreduce and its completion in place
 *               of the barrier: MPI_Wait, MPI_Waitall, MPI_Waitany,
 *               MPI_Waitsome, an MPI_Test loop; and (MPI 4) MPI_Allreduce_init,
 *               MPI_Start and MPI_Wait.
 *   rma-alloc   the receiver is in MPI_Barrier; the sender locks the
 *   rma-create  receiver's window (shared lock), puts B bytes, flushes, unlocks
 *               and then enters MPI_Barrier. The window comes from
 *               MPI_Win_allocate, or from MPI_Win_create over malloc'd memory.
 *   iallgather  issue 45's program: every rank posts MPI_Iallgather of 4 ints;
 *               rank 0 completes it with an MPI_Test loop and then receives B
 *               bytes from every other rank in turn (MPI_Recv); the others send
 *               B bytes to rank 0 with a blocking MPI_Send and then MPI_Wait.
 *               Each rank's part of the allgather must advance while that rank
 *               is blocked in MPI_Send (direction A of the rule).
 *   iallgather-wait  the same, the others blocked in MPI_Wait on an MPI_Isend;
 *   iallgather-coll  the others blocked in MPI_Barrier on another
 *               communicator (rank 0 joins it after its test loop; no message);
 *   pallgather  the same as iallgather with a persistent allgather
 *               (MPI_Allgather_init, or Open MPI's MPIX_Allgather_init),
 *               started by MPI_Start.
 * Each rank gives up after --limit seconds (default 60) with a line naming the
 * step it was in ("no progress"), and exits 2: a hang fails by this test's own
 * timeout. --expect-osmp: libosmp_mpi is loaded and every collective above ran
 * on OSMP (osmp_mpi_stat, exact counts).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PC_ALLGATHER_INIT MPIX_Allgather_init
#endif
#elif MPI_VERSION >= 4
#define PC_ALLGATHER_INIT MPI_Allgather_init
#endif
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size, expect_osmp, limit = 60;
static long bytes = 8L << 20;
static const char *kase = "";
static const char *volatile step = "start";

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, "progress-check: rank %d: %s: ", rank, kase);                                        \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                                        \
    } while (0)
#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_);                                          \
    } while (0)

/* The rank's own timeout: a hang ends here, saying where, not in the suite's. */
static void on_alarm(int sig)
{
    (void)sig;
    char line[256];
    int n = snprintf(line, sizeof(line), "progress-check: rank %d: %s: no progress in %d s (in %s)\n", rank, kase,
                     limit, step);
    if (write(2, line, (size_t)n) < 0) {}
    _exit(2);
}

/* ---------------------------------------------------------------- where the collectives ran */

static const char *const names[] = {"barrier", "bcast", "reduce", "allreduce", "gather", "allgather",
                                    "scatter", "reduce_scatter_block", "alltoall", "gatherv", "scatterv",
                                    "allgatherv", "alltoallv", "reduce_scatter", "scan", "exscan"};
enum { NCOLL = sizeof(names) / sizeof(names[0]) };
enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, ALLGATHER, SCATTER, RSB, ALLTOALL, GATHERV, SCATTERV, ALLGATHERV,
       ALLTOALLV, REDUCE_SCATTER, SCAN, EXSCAN };
static int (*stat_fn)(const char *, long *, long *);
static long count0[NCOLL], want[NCOLL];

static void counted_from_here(void)
{
    for (int k = 0; stat_fn && k < NCOLL; k++) {
        long mpi;
        stat_fn(names[k], &count0[k], &mpi);
        want[k] = 0;
    }
}

static void check_counted(void)
{
    for (int k = 0; expect_osmp && k < NCOLL; k++) {
        long on, mpi;
        stat_fn(names[k], &on, &mpi);
        if (on - count0[k] != want[k]) FAIL("%s: %ld calls ran on OSMP, not %ld", names[k], on - count0[k], want[k]);
    }
}

/* ---------------------------------------------------------------- the message between a pair */

static int role(void) /* 0 sender, 1 receiver, -1 neither */
{
    return rank % 2 == 0 ? (rank + 1 < size ? 0 : -1) : 1;
}
static int peer(void)
{
    return rank % 2 == 0 ? rank + 1 : rank - 1;
}

static uint32_t word(int sender, long i, int round)
{
    return (uint32_t)(i * 2654435761u) ^ (uint32_t)(sender * 7919 + round * 104729);
}

static void fill(uint32_t *b, int sender, int round)
{
    for (long i = 0; i < bytes / 4; i++) b[i] = word(sender, i, round);
}

static void check_msg(const uint32_t *b, int sender, int round, const char *what)
{
    for (long i = 0; i < bytes / 4; i++)
        if (b[i] != word(sender, i, round))
            FAIL("%s: word %ld from rank %d is %#x, not %#x", what, i, sender, b[i], word(sender, i, round));
}

/* ---------------------------------------------------------------- the collectives, 4 ints a rank */

#define K 4
static int in(int r, int i)
{
    return r * 10 + i + 1;
}

/* Run collective c on the world (root 0) and check its result. */
static void collective(int c)
{
    int n = size, *s = malloc(sizeof(int) * K * (size_t)n), *r = malloc(sizeof(int) * K * (size_t)n);
    int *cnt = malloc(sizeof(int) * (size_t)n), *dis = malloc(sizeof(int) * (size_t)n);
    if (!s || !r || !cnt || !dis) FAIL("out of memory");
    for (int i = 0; i < K * n; i++) s[i] = in(rank, i), r[i] = -1;
    for (int p = 0; p < n; p++) cnt[p] = K, dis[p] = K * p;
    want[c]++;
    step = names[c];
    switch (c) {
    case BARRIER: CHECK(MPI_Barrier(MPI_COMM_WORLD)); break;
    case BCAST:
        if (rank) memcpy(s, r, sizeof(int) * K);
        CHECK(MPI_Bcast(s, K, MPI_INT, 0, MPI_COMM_WORLD));
        for (int i = 0; i < K; i++)
            if (s[i] != in(0, i)) FAIL("bcast: element %d is %d", i, s[i]);
        break;
    case REDUCE:
    case ALLREDUCE:
    case SCAN:
    case EXSCAN: {
        if (c == REDUCE) CHECK(MPI_Reduce(s, r, K, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
        if (c == ALLREDUCE) CHECK(MPI_Allreduce(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (c == SCAN) CHECK(MPI_Scan(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (c == EXSCAN) CHECK(MPI_Exscan(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        int upto = c == SCAN ? rank + 1 : c == EXSCAN ? rank : n;
        if ((c == REDUCE && rank) || (c == EXSCAN && !rank)) break;
        for (int i = 0; i < K; i++) {
            int w = 0;
            for (int p = 0; p < upto; p++) w += in(p, i);
            if (r[i] != w) FAIL("%s: element %d is %d, not %d", names[c], i, r[i], w);
        }
        break;
    }
    case GATHER:
    case GATHERV:
    case ALLGATHER:
    case ALLGATHERV:
        if (c == GATHER) CHECK(MPI_Gather(s, K, MPI_INT, r, K, MPI_INT, 0, MPI_COMM_WORLD));
        if (c == GATHERV) CHECK(MPI_Gatherv(s, K, MPI_INT, r, cnt, dis, MPI_INT, 0, MPI_COMM_WORLD));
        if (c == ALLGATHER) CHECK(MPI_Allgather(s, K, MPI_INT, r, K, MPI_INT, MPI_COMM_WORLD));
        if (c == ALLGATHERV) CHECK(MPI_Allgatherv(s, K, MPI_INT, r, cnt, dis, MPI_INT, MPI_COMM_WORLD));
        if ((c == GATHER || c == GATHERV) && rank) break;
        for (int p = 0; p < n; p++)
            for (int i = 0; i < K; i++)
                if (r[K * p + i] != in(p, i)) FAIL("%s: block %d element %d is %d", names[c], p, i, r[K * p + i]);
        break;
    case SCATTER:
    case SCATTERV:
        if (c == SCATTER) CHECK(MPI_Scatter(s, K, MPI_INT, r, K, MPI_INT, 0, MPI_COMM_WORLD));
        else CHECK(MPI_Scatterv(s, cnt, dis, MPI_INT, r, K, MPI_INT, 0, MPI_COMM_WORLD));
        for (int i = 0; i < K; i++)
            if (r[i] != in(0, K * rank + i)) FAIL("%s: element %d is %d", names[c], i, r[i]);
        break;
    case RSB:
    case REDUCE_SCATTER:
        if (c == RSB) CHECK(MPI_Reduce_scatter_block(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        else CHECK(MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < K; i++) {
            int w = 0;
            for (int p = 0; p < n; p++) w += in(p, K * rank + i);
            if (r[i] != w) FAIL("%s: element %d is %d, not %d", names[c], i, r[i], w);
        }
        break;
    case ALLTOALL:
    case ALLTOALLV:
        if (c == ALLTOALL) CHECK(MPI_Alltoall(s, K, MPI_INT, r, K, MPI_INT, MPI_COMM_WORLD));
        else CHECK(MPI_Alltoallv(s, cnt, dis, MPI_INT, r, cnt, dis, MPI_INT, MPI_COMM_WORLD));
        for (int p = 0; p < n; p++)
            for (int i = 0; i < K; i++)
                if (r[K * p + i] != in(p, K * rank + i))
                    FAIL("%s: block %d element %d is %d", names[c], p, i, r[K * p + i]);
        break;
    }
    free(s);
    free(r);
    free(cnt);
    free(dis);
}

/* ---------------------------------------------------------------- the cases */

static uint32_t *msg;

/* The receiver waits in `wait_here` (a collective, or an OSMP request's
 * completion) while its sender's blocking send needs its MPI library. */
static void recv_then(int round, void (*wait_here)(int), int arg)
{
    MPI_Request rq = MPI_REQUEST_NULL;
    int who = role();
    if (who == 1) {
        memset(msg, 0, (size_t)bytes);
        CHECK(MPI_Irecv(msg, (int)(bytes / 4), MPI_UINT32_T, peer(), round, MPI_COMM_WORLD, &rq));
    }
    if (who == 0) {
        fill(msg, rank, round);
        step = "MPI_Send";
        CHECK(MPI_Send(msg, (int)(bytes / 4), MPI_UINT32_T, peer(), round, MPI_COMM_WORLD));
    }
    wait_here(arg);
    if (who == 1) {
        step = "MPI_Wait (the receive)";
        CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        check_msg(msg, peer(), round, "the message");
    }
}

static void case_isend(void)
{
    MPI_Request rq = MPI_REQUEST_NULL;
    int who = role();
    if (who == 0) {
        fill(msg, rank, 1);
        CHECK(MPI_Isend(msg, (int)(bytes / 4), MPI_UINT32_T, peer(), 1, MPI_COMM_WORLD, &rq));
    }
    if (who == 1) {
        memset(msg, 0, (size_t)bytes);
        step = "MPI_Recv";
        CHECK(MPI_Recv(msg, (int)(bytes / 4), MPI_UINT32_T, peer(), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_msg(msg, peer(), 1, "the message");
    }
    collective(BARRIER);
    if (who == 0) {
        step = "MPI_Wait (the send)";
        CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

/* MPI_Iallreduce completed in one of several ways (mode), in place of the barrier. */
static const char *const modes[] = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "an MPI_Test loop",
                                    "persistent: MPI_Start, MPI_Wait"};
static void iallreduce(int mode)
{
    int s[K], r[K], flag = 0, idx = -1, out = 0;
    MPI_Status st[1]; /* (not MPI_STATUSES_IGNORE: GCC takes MPICH's array parameter for a size) */
    for (int i = 0; i < K; i++) s[i] = in(rank, i) + mode, r[i] = -1;
    MPI_Request rq;
    if (mode == 5) {
#if MPI_VERSION >= 4
        CHECK(MPI_Allreduce_init(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
        CHECK(MPI_Start(&rq));
#endif
    } else {
        CHECK(MPI_Iallreduce(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    }
    want[ALLREDUCE]++;
    step = modes[mode];
    switch (mode) {
    case 0:
    case 5: CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); break;
    case 1: CHECK(MPI_Waitall(1, &rq, st)); break;
    case 2: CHECK(MPI_Waitany(1, &rq, &idx, MPI_STATUS_IGNORE)); break;
    case 3: CHECK(MPI_Waitsome(1, &rq, &out, &idx, st)); break;
    case 4:
        while (!flag) CHECK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        break;
    }
    if (mode == 5) CHECK(MPI_Request_free(&rq));
    for (int i = 0; i < K; i++) {
        int w = 0;
        for (int p = 0; p < size; p++) w += in(p, i) + mode;
        if (r[i] != w) FAIL("MPI_Iallreduce completed by %s: element %d is %d, not %d", modes[mode], i, r[i], w);
    }
}

static void case_rma(int allocate)
{
    uint32_t *base = NULL;
    MPI_Win win;
    step = allocate ? "MPI_Win_allocate" : "MPI_Win_create";
    if (allocate) {
        CHECK(MPI_Win_allocate((MPI_Aint)bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    } else {
        base = malloc((size_t)bytes);
        if (!base) FAIL("out of memory");
        CHECK(MPI_Win_create(base, (MPI_Aint)bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    memset(base, 0, (size_t)bytes);
    collective(BARRIER); /* every window is ready */
    int who = role();
    if (who == 0) {
        usleep(20000); /* (the target is in its barrier by then) */
        fill(msg, rank, 3);
        step = "MPI_Win_lock, MPI_Put, MPI_Win_flush, MPI_Win_unlock";
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, peer(), 0, win));
        CHECK(MPI_Put(msg, (int)(bytes / 4), MPI_UINT32_T, peer(), 0, (int)(bytes / 4), MPI_UINT32_T, win));
        CHECK(MPI_Win_flush(peer(), win));
        CHECK(MPI_Win_unlock(peer(), win));
    }
    collective(BARRIER);
    if (who == 1) {
        step = "reading the window";
        CHECK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)); /* (the window's public copy in my view) */
        check_msg(base, peer(), 3, "the window");
        CHECK(MPI_Win_unlock(rank, win));
    }
    step = "MPI_Win_free";
    CHECK(MPI_Win_free(&win));
    if (!allocate) free(base);
}

/* others: how the other ranks block while rank 0 tests: 0 in MPI_Send, 1 in MPI_Wait on their MPI_Isend,
 * 2 in MPI_Barrier on another communicator (rank 0 joins it after its test loop; no message). */
static void case_iallgather(int persistent, int others)
{
    int s[K], *r = malloc(sizeof(int) * K * (size_t)size), flag = 0;
    if (!r) FAIL("out of memory");
    MPI_Comm other = MPI_COMM_NULL;
    if (others == 2) { /* (ranks in reverse order: a team of its own, not the world's) */
        CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &other));
        collective(BARRIER); /* (its team is made on its first collective, below: every rank there first) */
        step = "the other communicator's first barrier";
        CHECK(MPI_Barrier(other));
        want[BARRIER]++;
    }
    for (int i = 0; i < K; i++) s[i] = in(rank, i);
    MPI_Request rq;
    if (persistent) {
#if defined(PC_ALLGATHER_INIT)
        CHECK(PC_ALLGATHER_INIT(s, K, MPI_INT, r, K, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
        CHECK(MPI_Start(&rq));
#endif
    } else {
        CHECK(MPI_Iallgather(s, K, MPI_INT, r, K, MPI_INT, MPI_COMM_WORLD, &rq));
    }
    want[ALLGATHER]++;
    if (rank == 0) {
        step = "MPI_Test loop (the allgather)";
        while (!flag) CHECK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        if (others == 2) {
            step = "MPI_Barrier on the other communicator";
            CHECK(MPI_Barrier(other));
            want[BARRIER]++;
        }
        for (int p = 1; others != 2 && p < size; p++) {
            memset(msg, 0, (size_t)bytes);
            step = "MPI_Recv";
            CHECK(MPI_Recv(msg, (int)(bytes / 4), MPI_UINT32_T, p, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check_msg(msg, p, 4, "a message");
        }
    } else {
        fill(msg, rank, 4);
        MPI_Request sent;
        if (others == 0) {
            step = "MPI_Send";
            CHECK(MPI_Send(msg, (int)(bytes / 4), MPI_UINT32_T, 0, 4, MPI_COMM_WORLD));
        } else if (others == 1) {
            CHECK(MPI_Isend(msg, (int)(bytes / 4), MPI_UINT32_T, 0, 4, MPI_COMM_WORLD, &sent));
            step = "MPI_Wait (the send)";
            CHECK(MPI_Wait(&sent, MPI_STATUS_IGNORE));
        } else {
            step = "MPI_Barrier on the other communicator";
            CHECK(MPI_Barrier(other));
            want[BARRIER]++;
        }
        step = "MPI_Wait (the allgather)";
        CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    if (persistent) CHECK(MPI_Request_free(&rq));
    if (other != MPI_COMM_NULL) CHECK(MPI_Comm_free(&other));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < K; i++)
            if (r[K * p + i] != in(p, i)) FAIL("MPI_Iallgather: block %d element %d is %d", p, i, r[K * p + i]);
    free(r);
}

static void in_collective(int c)
{
    collective(c);
}

int main(int argc, char **argv)
{
    int level = MPI_THREAD_SINGLE, provided;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-osmp")) expect_osmp = 1;
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) bytes = atol(argv[++i]) / 4 * 4;
        else if (!strcmp(argv[i], "--thread") && i + 1 < argc) {
            const char *l = argv[++i];
            level = !strcmp(l, "multiple") ? MPI_THREAD_MULTIPLE : !strcmp(l, "serialized") ? MPI_THREAD_SERIALIZED
                    : !strcmp(l, "funneled")   ? MPI_THREAD_FUNNELED
                                               : MPI_THREAD_SINGLE;
        } else if (argv[i][0] != '-') kase = argv[i];
        else {
            fprintf(stderr, "usage: progress-check CASE [--expect-osmp] [--limit S] [--bytes B] [--thread LEVEL]\n");
            return 2;
        }
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)limit);
    MPI_Init_thread(&argc, &argv, level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    stat_fn = (int (*)(const char *, long *, long *))dlsym(RTLD_DEFAULT, "osmp_mpi_stat");
    if (expect_osmp && !stat_fn) FAIL("libosmp_mpi is not loaded");
    if (size < 2) FAIL("needs 2 ranks or more");
    msg = malloc((size_t)bytes);
    if (!msg) FAIL("out of memory");
    collective(BARRIER); /* the world's team is made here, not inside the cases */
    counted_from_here();
    double t0 = MPI_Wtime();
    if (!strcmp(kase, "recv")) {
        recv_then(1, in_collective, BARRIER);
    } else if (!strcmp(kase, "isend")) {
        case_isend();
    } else if (!strcmp(kase, "colls")) {
        for (int c = 0; c < NCOLL; c++) recv_then(100 + c, in_collective, c);
    } else if (!strcmp(kase, "nb")) {
        int nmodes = MPI_VERSION >= 4 ? 6 : 5;
        for (int m = 0; m < nmodes; m++) recv_then(200 + m, iallreduce, m);
    } else if (!strcmp(kase, "rma-alloc") || !strcmp(kase, "rma-create")) {
        case_rma(!strcmp(kase, "rma-alloc"));
    } else if (!strcmp(kase, "iallgather")) {
        case_iallgather(0, 0);
    } else if (!strcmp(kase, "iallgather-wait")) {
        case_iallgather(0, 1);
    } else if (!strcmp(kase, "iallgather-coll")) {
        case_iallgather(0, 2);
    } else if (!strcmp(kase, "pallgather")) {
#if defined(PC_ALLGATHER_INIT)
        case_iallgather(1, 0);
#else
        FAIL("this MPI library has no persistent collectives");
#endif
    } else {
        FAIL("no such case (recv, isend, colls, nb, rma-alloc, rma-create, iallgather, iallgather-wait, "
             "iallgather-coll, pallgather)");
    }
    check_counted();
    step = "the last barrier";
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("progress-check: %s passed at %d ranks in %.2f s\n", kase, size, MPI_Wtime() - t0);
    free(msg);
    MPI_Finalize();
    return 0;
}
