! profile-fortran: known point-to-point sends from Fortran, for OSMP_PROFILE
! (tests/mpi/profile-check.py --fortran compares the matrix). Under Open MPI the
! Fortran layer calls PMPI_ directly; src/mpi/fortran_p2p.c counts them.
! Needs 3 ranks or more. Rank r sends, to mod(r + 1, n), INTEGER data:
!   MPI_Send 8 B, MPI_Ssend 16, MPI_Isend 32, MPI_Send_init 64 started twice,
!   MPI_Ssend_init 128 started once with MPI_Startall, MPI_Sendrecv 256,
!   MPI_Sendrecv_replace 512 (8 messages, 1080 B);
! in a communicator split by parity with ranks reversed: MPI_Send 1024 B to the
! next rank there. One source, two programs: -DOSMP_F08 (use mpi_f08) or mpif.h.
program profile_fortran
#if defined(OSMP_F08)
  use mpi_f08
#endif
  implicit none
#if !defined(OSMP_F08)
  include "mpif.h"
#endif
#if defined(OSMP_F08)
#define COMM_T type(MPI_Comm)
#define REQ_T type(MPI_Request)
#else
#define COMM_T integer
#define REQ_T integer
#endif
  integer :: ierr, n, r, to, from, k, hn, hr
  integer :: sbuf(256), rbuf(256)
  COMM_T :: half
  REQ_T :: rq(2), ps, pr

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  if (n < 3) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  to = mod(r + 1, n)
  from = mod(r + n - 1, n)
  sbuf = r

  call MPI_Send(sbuf, 2, MPI_INTEGER, to, 1, MPI_COMM_WORLD, ierr)
  call MPI_Recv(rbuf, 2, MPI_INTEGER, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Irecv(rbuf, 4, MPI_INTEGER, from, 2, MPI_COMM_WORLD, rq(1), ierr)
  call MPI_Ssend(sbuf, 4, MPI_INTEGER, to, 2, MPI_COMM_WORLD, ierr)
  call MPI_Wait(rq(1), MPI_STATUS_IGNORE, ierr)
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, from, 3, MPI_COMM_WORLD, rq(1), ierr)
  call MPI_Isend(sbuf, 8, MPI_INTEGER, to, 3, MPI_COMM_WORLD, rq(2), ierr)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)

  call MPI_Send_init(sbuf, 16, MPI_INTEGER, to, 4, MPI_COMM_WORLD, ps, ierr)
  call MPI_Recv_init(rbuf, 16, MPI_INTEGER, from, 4, MPI_COMM_WORLD, pr, ierr)
  do k = 1, 2
    call MPI_Start(pr, ierr)
    call MPI_Start(ps, ierr)
    call MPI_Wait(ps, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(pr, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Request_free(ps, ierr)
  call MPI_Request_free(pr, ierr)
  call MPI_Recv_init(rbuf, 32, MPI_INTEGER, from, 5, MPI_COMM_WORLD, rq(1), ierr)
  call MPI_Ssend_init(sbuf, 32, MPI_INTEGER, to, 5, MPI_COMM_WORLD, rq(2), ierr)
  call MPI_Startall(2, rq, ierr)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  call MPI_Request_free(rq(1), ierr)
  call MPI_Request_free(rq(2), ierr)

  call MPI_Sendrecv(sbuf, 64, MPI_INTEGER, to, 6, rbuf, 64, MPI_INTEGER, from, 6, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv_replace(rbuf, 128, MPI_INTEGER, to, 7, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)

  call MPI_Comm_split(MPI_COMM_WORLD, mod(r, 2), -r, half, ierr)
  call MPI_Comm_size(half, hn, ierr)
  call MPI_Comm_rank(half, hr, ierr)
  if (hn > 1) then
    call MPI_Irecv(rbuf, 256, MPI_INTEGER, mod(hr + hn - 1, hn), 8, half, rq(1), ierr)
    call MPI_Send(sbuf, 256, MPI_INTEGER, mod(hr + 1, hn), 8, half, ierr)
    call MPI_Wait(rq(1), MPI_STATUS_IGNORE, ierr)
  end if
  call MPI_Comm_free(half, ierr)
  call MPI_Finalize(ierr)
end program profile_fortran
