/*
 * profile-check: sends known amounts with every kind of point-to-point send,
 * for tests/mpi/profile-check.py to compare with what OSMP_PROFILE wrote.
 * Needs at least 3 ranks. Rank r sends, to (r + 1) % n:
 *   Send 1 B, Bsend 2, Ssend 4, Rsend 8, Isend 16, Ibsend 32, Issend 64, Irsend 128,
 *   Send_init 256 started twice (Start), Ssend_init 1024 started once (Startall),
 *   Sendrecv 2048, Sendrecv_replace 4096                       (13 messages);
 * to (r + 2) % n: one vector datatype of 2 blocks of 3 doubles (48 B, not its extent);
 * to MPI_PROC_NULL: 1 MiB (not counted);
 * in a communicator split by r % 2 with ranks in reverse order: 8192 B to the
 * next rank of that communicator (when it has two or more).
 * Receives are posted by the receivers; nothing else is sent point to point.
 * Collectives: in communicators of two (ranks 2k and 2k + 1), a broadcast of
 * 1000 bytes from 2k (on OSMP, whatever its algorithm, 1000 bytes reach 2k + 1
 * from memory 2k owns, in one call); the barriers move no payload.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n, r;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (n < 3) {
        if (r == 0) fprintf(stderr, "profile-check: needs 3 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int to = (r + 1) % n, from = (r + n - 1) % n;
    static char sbuf[8192], rbuf[8192], rbuf2[8192];
    static char bsend[4 * 8192];
    MPI_Buffer_attach(bsend, sizeof(bsend));
    MPI_Status st, sts[2];
    MPI_Request rq[4];

    MPI_Send(sbuf, 1, MPI_CHAR, to, 1, MPI_COMM_WORLD);
    MPI_Recv(rbuf, 1, MPI_CHAR, from, 1, MPI_COMM_WORLD, &st);
    MPI_Bsend(sbuf, 2, MPI_CHAR, to, 2, MPI_COMM_WORLD);
    MPI_Recv(rbuf, 2, MPI_CHAR, from, 2, MPI_COMM_WORLD, &st);
    MPI_Irecv(rbuf, 4, MPI_CHAR, from, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Ssend(sbuf, 4, MPI_CHAR, to, 3, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &st);
    /* a ready send needs the receive posted first */
    MPI_Irecv(rbuf, 8, MPI_CHAR, from, 4, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(sbuf, 8, MPI_CHAR, to, 4, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &st);

    MPI_Irecv(rbuf, 16, MPI_CHAR, from, 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(sbuf, 16, MPI_CHAR, to, 5, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, sts);
    MPI_Irecv(rbuf, 32, MPI_CHAR, from, 6, MPI_COMM_WORLD, &rq[0]);
    MPI_Ibsend(sbuf, 32, MPI_CHAR, to, 6, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, sts);
    MPI_Irecv(rbuf, 64, MPI_CHAR, from, 7, MPI_COMM_WORLD, &rq[0]);
    MPI_Issend(sbuf, 64, MPI_CHAR, to, 7, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, sts);
    MPI_Irecv(rbuf, 128, MPI_CHAR, from, 8, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irsend(sbuf, 128, MPI_CHAR, to, 8, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, sts);

    /* persistent: counted at each start */
    MPI_Request ps, pr;
    MPI_Send_init(sbuf, 256, MPI_CHAR, to, 9, MPI_COMM_WORLD, &ps);
    MPI_Recv_init(rbuf, 256, MPI_CHAR, from, 9, MPI_COMM_WORLD, &pr);
    for (int k = 0; k < 2; k++) {
        MPI_Start(&pr);
        MPI_Start(&ps);
        MPI_Wait(&ps, &st);
        MPI_Wait(&pr, &st);
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
    MPI_Request both[2];
    MPI_Recv_init(rbuf, 1024, MPI_CHAR, from, 10, MPI_COMM_WORLD, &both[0]);
    MPI_Ssend_init(sbuf, 1024, MPI_CHAR, to, 10, MPI_COMM_WORLD, &both[1]);
    MPI_Startall(2, both);
    MPI_Waitall(2, both, sts);
    MPI_Request_free(&both[0]);
    MPI_Request_free(&both[1]);

    MPI_Sendrecv(sbuf, 2048, MPI_CHAR, to, 11, rbuf, 2048, MPI_CHAR, from, 11, MPI_COMM_WORLD, &st);
    MPI_Sendrecv_replace(rbuf2, 4096, MPI_CHAR, to, 12, from, 12, MPI_COMM_WORLD, &st);

    /* a derived datatype: its size (48 B), not its extent */
    MPI_Datatype vec;
    MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    static double dv[16], dr[16];
    MPI_Irecv(dr, 6, MPI_DOUBLE, (r + n - 2) % n, 13, MPI_COMM_WORLD, &rq[0]);
    MPI_Send(dv, 1, vec, (r + 2) % n, 13, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &st);
    MPI_Type_free(&vec);

    static char big[1 << 20];
    MPI_Send(big, sizeof(big), MPI_CHAR, MPI_PROC_NULL, 14, MPI_COMM_WORLD);

    /* a split communicator, ranks in reverse order: destinations are translated */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &half);
    int hn, hr;
    MPI_Comm_size(half, &hn);
    MPI_Comm_rank(half, &hr);
    if (hn > 1) {
        MPI_Irecv(rbuf, 8192, MPI_CHAR, (hr + hn - 1) % hn, 15, half, &rq[0]);
        MPI_Send(sbuf, 8192, MPI_CHAR, (hr + 1) % hn, 15, half);
        MPI_Wait(&rq[0], &st);
    }
    MPI_Comm_free(&half);
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, r / 2, r, &pair);
    MPI_Bcast(sbuf, 1000, MPI_CHAR, 0, pair);
    MPI_Comm_free(&pair);
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    MPI_Finalize();
    return 0;
}
