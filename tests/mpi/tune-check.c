/*
 * The tune table's "mpi" rules (src/mpi/tune.c) decide where each call runs.
 * With tests/mpi/tune-force.txt (through tune-run.sh), asserts call by call (osmp_mpi_stat
 * before and after) that exactly the calls its rules name went to MPI and the
 * others ran on OSMP, at the band edges; with --all-osmp (OSMP_TUNE_FILE=none)
 * that every call ran on OSMP; with --any, only that the calls give the right
 * results.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures, mode; /* 0: tune-force.txt, 1: all on OSMP, 2: anything */
static int (*stat)(const char *, long *, long *);

#define FAIL(...)                                                                                             \
    do {                                                                                                      \
        fprintf(stderr, "tune-check: rank %d: ", rank);                                                      \
        fprintf(stderr, __VA_ARGS__);                                                                         \
        fprintf(stderr, "\n");                                                                                \
        failures++;                                                                                           \
    } while (0)

static long before_acc, before_thr;

static void before(const char *op)
{
    stat(op, &before_acc, &before_thr);
}

/* One call of op just ran: it went to MPI if to_mpi (under tune-force.txt). */
static void after(const char *op, long bytes, int to_mpi)
{
    long acc, thr;
    stat(op, &acc, &thr);
    if (mode == 1) to_mpi = 0;
    if (mode == 2) return;
    if (acc - before_acc != !to_mpi || thr - before_thr != to_mpi)
        FAIL("%s of %ld bytes on %d ranks: %ld on OSMP, %ld to MPI; expected %s", op, bytes, size, acc - before_acc,
             thr - before_thr, to_mpi ? "MPI" : "OSMP");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mode = argc > 1 && !strcmp(argv[1], "--all-osmp") ? 1 : argc > 1 && !strcmp(argv[1], "--any") ? 2 : 0;
    *(void **)&stat = dlsym(RTLD_DEFAULT, "osmp_mpi_stat");
    if (!stat) {
        fprintf(stderr, "tune-check: libosmp_mpi is not loaded\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm w = MPI_COMM_WORLD;
    static double d[1 << 14], dr[1 << 14];
    static int in[1 << 14], ir[1 << 14];
    static char buf[1 << 17], big[1 << 20];
    for (int i = 0; i < 1 << 14; i++) d[i] = rank + 1, in[i] = rank + 1;
    /* allreduce * 0 1K mpi: by bytes, whatever the datatype. Up the sizes, then
     * down: libosmp_mpi keeps the band of its last answer, whose edges must be
     * the rules' from either side. */
    struct { int count; MPI_Datatype dt; int to_mpi; } ar[] = {
        {1, MPI_DOUBLE, 1}, {128, MPI_DOUBLE, 1}, {129, MPI_DOUBLE, 0}, {256, MPI_INT, 1}, {257, MPI_INT, 0},
        {129, MPI_DOUBLE, 0}, {128, MPI_DOUBLE, 1}, {129, MPI_DOUBLE, 0}, {1, MPI_DOUBLE, 1}};
    for (size_t k = 0; k < sizeof(ar) / sizeof(ar[0]); k++) {
        int esz = ar[k].dt == MPI_DOUBLE ? 8 : 4;
        before("allreduce");
        MPI_Allreduce(ar[k].dt == MPI_DOUBLE ? (void *)d : (void *)in, ar[k].dt == MPI_DOUBLE ? (void *)dr : (void *)ir,
                      ar[k].count, ar[k].dt, MPI_SUM, w);
        after("allreduce", (long)ar[k].count * esz, ar[k].to_mpi);
        double got = ar[k].dt == MPI_DOUBLE ? dr[ar[k].count - 1] : ir[ar[k].count - 1];
        if (got != size * (size + 1) / 2.0) FAIL("allreduce gave %g", got);
    }
    /* bcast 2 64K max mpi: only on teams of 2 ranks */
    long bc[] = {65535, 65536, 1 << 20, 65535, 1 << 20};
    for (size_t k = 0; k < sizeof(bc) / sizeof(bc[0]); k++) {
        char *b = bc[k] > (long)sizeof(buf) ? big : buf;
        memset(b, rank == 0 ? 7 : 0, (size_t)bc[k]);
        before("bcast");
        MPI_Bcast(b, (int)bc[k], MPI_BYTE, 0, w);
        after("bcast", bc[k], bc[k] >= 65536 && size <= 2);
        if (b[bc[k] - 1] != 7) FAIL("bcast of %ld bytes gave %d", bc[k], b[bc[k] - 1]);
    }
    /* alltoall * 16 16 mpi: one rank's block per destination */
    static const int blks[] = {8, 16, 24, 32, 24, 16};
    for (size_t k = 0; k < sizeof(blks) / sizeof(blks[0]); k++) {
        int blk = blks[k];
        for (int i = 0; i < blk * size; i++) buf[i] = (char)(rank * 16 + i / blk);
        before("alltoall");
        MPI_Alltoall(buf, blk, MPI_BYTE, big, blk, MPI_BYTE, w);
        after("alltoall", blk, blk == 16);
        for (int r = 0; r < size; r++)
            if (big[r * blk] != (char)(r * 16 + rank)) FAIL("alltoall of %d bytes: block %d wrong", blk, r);
    }
    /* barrier * 0 max mpi */
    before("barrier");
    MPI_Barrier(w);
    after("barrier", 0, 1);
    /* no rule for gather: OSMP */
    before("gather");
    MPI_Gather(in, 4, MPI_INT, ir, 4, MPI_INT, 0, w);
    after("gather", 16, 0);
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, w);
    if (rank == 0) printf("tune-check: %s\n", all ? "FAILED" : "ok");
    MPI_Finalize();
    return all != 0;
}
