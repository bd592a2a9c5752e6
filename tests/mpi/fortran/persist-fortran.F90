! persist-fortran: persistent collectives from Fortran under MPICH (whose Fortran
! layers reach libosmp_mpi's C MPI_<op>_init: src/mpi/persist.c): an allreduce,
! a bcast from every root, a gather and a barrier, made once and started 20
! times together, each time with other inputs and completed another way
! (MPI_WAITALL with an MPI_IRECV/MPI_ISEND pair among them, MPI_WAIT, MPI_TEST
! loops, MPI_WAITANY, MPI_TESTALL; mpi_f08: the first three, see below), every
! value checked; then MPI_REQUEST_FREE.
! Rank 0 prints "persist-fortran: PASS"; the OSMP_VERBOSE counts (checked by
! the test) show where the runs went.
!   -DOSMP_F08  use mpi_f08;  else include "mpif.h"
program persist_fortran
#if defined(OSMP_F08)
  use mpi_f08
#endif
  implicit none
#if !defined(OSMP_F08)
  include "mpif.h"
#endif
#if defined(OSMP_F08)
#define REQ_T type(MPI_Request)
#define STATUS_T type(MPI_Status)
#define STATUSES_DECL type(MPI_Status) :: sts(NR + 2)
#else
#define REQ_T integer
#define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#define STATUSES_DECL integer :: sts(MPI_STATUS_SIZE, NR + 2)
#endif
  integer, parameter :: NR = 12, ROUNDS = 20
  integer :: ierr, rank, size, k, i, j, idx, nfail, allfail, root, prev, next, mode
  ! (the runs write them behind the compiler's back, between calls that do not name them)
  integer, volatile :: x(3), y(3), b(4, 8), g(8), gin, pin, pout
  REQ_T :: reqs(NR), all(NR + 2)
  STATUSES_DECL
  STATUS_T :: st
  logical :: flag

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (size > 8) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  prev = mod(rank + size - 1, size)
  next = mod(rank + 1, size)
  call MPI_Allreduce_init(x, y, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(1), ierr)
  do root = 0, size - 1
    call MPI_Bcast_init(b(1, root + 1), 4, MPI_INTEGER, root, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(2 + root), ierr)
  end do
  call MPI_Gather_init(gin, 1, MPI_INTEGER, g, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(2 + size), ierr)
  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, reqs(3 + size), ierr)
  do k = 1, ROUNDS
    do i = 1, 3
      x(i) = rank + i + k
      y(i) = -1
    end do
    do root = 0, size - 1
      do i = 1, 4
        b(i, root + 1) = -1
        if (rank == root) b(i, root + 1) = 100 * root + 10 * i + k
      end do
    end do
    gin = rank * 3 + k
    g = -1
    call MPI_Startall(3 + size, reqs, ierr)
    mode = mod(k, 5)
#if defined(OSMP_F08)
    ! MPICH 4.0.2's mpi_f08 MPI_TESTALL fails on persistent requests (MPI_ERR_IN_STATUS, every status
    ! MPI_SUCCESS), its MPI_WAITANY gives 0-based indices: without libosmp_mpi too
    if (mode >= 3) mode = mode - 2
#endif
    select case (mode)
    case (0)
      all(1:3 + size) = reqs(1:3 + size)
      pout = 1000 + rank + k
      call MPI_Irecv(pin, 1, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, all(4 + size), ierr)
      call MPI_Isend(pout, 1, MPI_INTEGER, next, 5, MPI_COMM_WORLD, all(5 + size), ierr)
      call MPI_Waitall(5 + size, all, sts, ierr)
      if (pin /= 1000 + prev + k) call fail('MPI_WAITALL with point-to-point')
    case (1)
      do i = 3 + size, 1, -1
        call MPI_Wait(reqs(i), st, ierr)
      end do
    case (2)
      do i = 1, 3 + size
        flag = .false.
        do while (.not. flag)
          call MPI_Test(reqs(i), flag, st, ierr)
        end do
      end do
    case (3)
      do j = 1, 3 + size
        call MPI_Waitany(3 + size, reqs, idx, st, ierr)
      end do
    case default
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(3 + size, reqs, flag, sts, ierr)
      end do
    end select
    if (ierr /= MPI_SUCCESS) call fail('completion')
    do i = 1, 3
      if (y(i) /= size * (size - 1) / 2 + size * (i + k)) call fail('MPI_ALLREDUCE_INIT')
    end do
    do root = 0, size - 1
      do i = 1, 4
        if (b(i, root + 1) /= 100 * root + 10 * i + k) call fail('MPI_BCAST_INIT')
      end do
    end do
    if (rank == 0) then
      do i = 1, size
        if (g(i) /= (i - 1) * 3 + k) call fail('MPI_GATHER_INIT')
      end do
    end if
  end do
  do i = 1, 3 + size
    call MPI_Request_free(reqs(i), ierr)
    if (reqs(i) /= MPI_REQUEST_NULL) call fail('MPI_REQUEST_FREE')
  end do
  call MPI_Allreduce(nfail, allfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. allfail == 0) write (*, '(a)') 'persist-fortran: PASS'
  call MPI_Finalize(ierr)
  if (allfail /= 0) stop 1
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (*, '(a, i0, a, i0, 2a)') 'persist-fortran: rank ', rank, ' round ', k, ': wrong: ', what
    nfail = nfail + 1
  end subroutine fail
end program persist_fortran
