/*
 * progress-rule: MPI's progress rule with a nonblocking collective outstanding
 * (issue 45's program). Every rank posts MPI_Iallgather of 4 ints; rank 0
 * completes it with an MPI_Test loop and then receives BYTES (4 MiB) from every
 * other rank; the others send those bytes with a blocking MPI_Send and only then
 * call MPI_Wait. MPI says this completes: rank 0's MPI_Test loop must end
 * while the others are inside MPI_Send, and their sends complete once rank 0
 * receives. Results are checked exactly.
 *
 *   mpirun -n N [LD_PRELOAD=libosmp_mpi...] progress-rule [--expect-osmp] [BYTES]
 *
 * --expect-osmp: the allgather ran on OSMP (osmp_mpi_stat). Each rank gives up
 * after GIVE_UP_S seconds in any phase and fails, naming the phase (a hang is a
 * failure, not a timeout).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GIVE_UP_S 60.0

static int me, n;

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        fprintf(stderr, "progress-rule: rank %d/%d: ", me, n);                                               \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    int expect = 0;
    long bytes = 4L << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-osmp")) expect = 1;
        else bytes = atol(argv[i]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int (*stat)(const char *, long *, long *) =
        (int (*)(const char *, long *, long *))dlsym(RTLD_DEFAULT, "osmp_mpi_stat");
    if (expect && !stat) FAIL("libosmp_mpi is not loaded");
    long osmp0 = 0, mpi0 = 0;
    if (stat) stat("allgather", &osmp0, &mpi0);

    int in[4], *out = malloc(sizeof(int) * 4 * (size_t)n);
    char *buf = malloc((size_t)bytes);
    if (!out || !buf) FAIL("out of memory");
    for (int i = 0; i < 4; i++) in[i] = me * 10 + i;
    MPI_Request req;
    MPI_Iallgather(in, 4, MPI_INT, out, 4, MPI_INT, MPI_COMM_WORLD, &req);
    double t0 = MPI_Wtime();
    if (me == 0) {
        for (int done = 0; !done;) {
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (MPI_Wtime() - t0 > GIVE_UP_S) FAIL("MPI_Test loop not done after %.0f s", GIVE_UP_S);
        }
        for (int r = 1; r < n; r++) {
            MPI_Recv(buf, (int)bytes, MPI_CHAR, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < bytes; i += 4096)
                if (buf[i] != (char)(r + i / 4096)) FAIL("byte %ld from rank %d wrong", i, r);
        }
    } else {
        for (long i = 0; i < bytes; i++) buf[i] = (char)(me + i / 4096);
        MPI_Send(buf, (int)bytes, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int r = 0; r < n; r++)
        for (int i = 0; i < 4; i++)
            if (out[r * 4 + i] != r * 10 + i) FAIL("allgather: element %d of rank %d's block is %d", i, r, out[r * 4 + i]);
    if (stat) {
        long o, m;
        stat("allgather", &o, &m);
        if (expect && o - osmp0 != 1) FAIL("the allgather did not run on OSMP (%ld on OSMP, %ld on MPI)", o - osmp0, m - mpi0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("progress-rule: %d ranks, %ld bytes each: done in %.2f s\n", n, bytes, MPI_Wtime() - t0);
    free(out);
    free(buf);
    MPI_Finalize();
    return 0;
}
