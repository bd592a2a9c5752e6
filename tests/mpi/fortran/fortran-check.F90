! fortran-check: the 16 collectives libosmp_mpi gives Fortran entry points
! (src/mpi/fortran.c), called from Fortran and checked against values computed
! here, with MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION and MPI_INTEGER8, in
! their plain and MPI_IN_PLACE forms, on MPI_COMM_WORLD and on a communicator
! of reversed rank order; plus a bcast of MPI_LOGICAL and buffers given as
! MPI_BOTTOM with absolute addresses. Values are small integers, so the real
! sums are exact and every comparison is equality.
!
! One source, three programs (the preprocessor picks the binding):
!   -DOSMP_F08      use mpi_f08
!   -DOSMP_USE_MPI  use mpi
!   (neither)       include "mpif.h"
! Rank 0 prints "fortran-check: PASS ..." when every rank passed every check;
! otherwise each failure is printed and the program ends with status 1.
! Works at 1 to 8 ranks.
!
! MPI_BOTTOM with a datatype of absolute addresses: libosmp_mpi packs such data
! itself (MPICH 4.0.2's MPI_Pack refuses MPI_BOTTOM, pmodels/mpich#6410; it
! rebases the datatype, src/mpi/types.c), so these checks run under both MPIs.
program fortran_check
#if defined(OSMP_F08)
  use mpi_f08
#elif defined(OSMP_USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(OSMP_F08) && !defined(OSMP_USE_MPI)
  include "mpif.h"
#endif
#if defined(OSMP_F08)
#define COMM_T type(MPI_Comm)
#define DTYPE_T type(MPI_Datatype)
#define BINDING "use mpi_f08"
#elif defined(OSMP_USE_MPI)
#define COMM_T integer
#define DTYPE_T integer
#define BINDING "use mpi"
#else
#define COMM_T integer
#define DTYPE_T integer
#define BINDING "mpif.h"
#endif
  integer, parameter :: NB = 4, NMAX = 128
  integer :: ierr, p, r, wr, wp, icomm, nfail, nchecks, allfail, maxchecks
  COMM_T :: world, split, comm
  character(len=24) :: cname

  nfail = 0
  nchecks = 0
  call MPI_Init(ierr)
  world = MPI_COMM_WORLD
  call MPI_Comm_rank(world, wr, ierr)
  call MPI_Comm_size(world, wp, ierr)
  if (wp > 8) then
    if (wr == 0) write (*, '(a)') 'fortran-check: at most 8 ranks'
    call MPI_Abort(world, 2, ierr)
  end if
  call MPI_Comm_split(world, 0, -wr, split, ierr)
  do icomm = 1, 2
    if (icomm == 1) then
      comm = world
      cname = 'MPI_COMM_WORLD'
    else
      comm = split
      cname = 'reversed split'
    end if
    call MPI_Comm_rank(comm, r, ierr)
    call MPI_Comm_size(comm, p, ierr)
    call run_common()
    call run_integer()
    call run_real()
    call run_double()
    call run_integer8()
  end do
  call MPI_Comm_free(split, ierr)
  call MPI_Allreduce(nfail, allfail, 1, MPI_INTEGER, MPI_SUM, world, ierr)
  call MPI_Allreduce(nchecks, maxchecks, 1, MPI_INTEGER, MPI_MAX, world, ierr)
  if (wr == 0) then
    if (allfail == 0) then
      write (*, '(a,i0,a,i0,a,a)') 'fortran-check: PASS: ', maxchecks, ' checks on each of ', wp, ' ranks, ', BINDING
    else
      write (*, '(a,i0,a,a)') 'fortran-check: FAIL: ', allfail, ' failed checks, ', BINDING
    end if
  end if
  call MPI_Finalize(ierr)
  if (allfail /= 0) error stop 1

contains

  integer function val(rk, i)
    integer, intent(in) :: rk, i
    val = 1000 * rk + i
  end function val

  ! the sum of val(rk, i) over ranks lo .. hi
  integer function vsum(i, lo, hi)
    integer, intent(in) :: i, lo, hi
    integer :: rk
    vsum = 0
    do rk = lo, hi
      vsum = vsum + val(rk, i)
    end do
  end function vsum

  subroutine expect(what, ok, rc)
    character(len=*), intent(in) :: what
    logical, intent(in) :: ok
    integer, intent(in) :: rc
    nchecks = nchecks + 1
    if (.not. ok .or. rc /= MPI_SUCCESS) then
      nfail = nfail + 1
      write (*, '(a,i0,a,a,a,a,a,i0)') 'fortran-check: rank ', wr, ': FAILED ', trim(what), ' on ', trim(cname), &
        ', ierr ', rc
    end if
  end subroutine expect

  ! Barrier, a bcast of LOGICAL, and MPI_BOTTOM (with a datatype holding the
  ! absolute address of abuf) as the buffer of a bcast, as the send buffer of
  ! an allgather and an allgatherv, and as the receive buffer of a scatter and
  ! a scatterv.
  subroutine run_common()
    logical :: lb(7), le(7)
    integer, volatile :: abuf(8)
    integer :: ib(8 * 8), cnt(0:7), dsp(0:7), i, j, root
    integer(kind=MPI_ADDRESS_KIND) :: addr(1)
    DTYPE_T :: abs_t

    call MPI_Barrier(comm, ierr)
    call expect('barrier', .true., ierr)

    root = mod(1, p)
    le = [(mod(i, 3) == 0, i = 0, 6)]
    lb = .false.
    if (r == root) lb = le
    call MPI_Bcast(lb, 7, MPI_LOGICAL, root, comm, ierr)
    call expect('bcast MPI_LOGICAL', all(lb .eqv. le), ierr)

    call MPI_Get_address(abuf, addr(1), ierr)
    call MPI_Type_create_hindexed(1, [8], addr, MPI_INTEGER, abs_t, ierr)
    call MPI_Type_commit(abs_t, ierr)
    abuf = -1
    if (r == root) abuf = [(val(root, i), i = 1, 8)]
    call MPI_Bcast(MPI_BOTTOM, 1, abs_t, root, comm, ierr)
    call expect('bcast MPI_BOTTOM', all(abuf == [(val(root, i), i = 1, 8)]), ierr)

    cnt(0:p - 1) = 8
    dsp(0:p - 1) = [(8 * j, j = 0, p - 1)]
    abuf = [(val(r, i), i = 1, 8)]
    ib = -1
    call MPI_Allgather(MPI_BOTTOM, 1, abs_t, ib, 8, MPI_INTEGER, comm, ierr)
    call expect('allgather from MPI_BOTTOM', all([((ib(8 * j + i) == val(j, i), i = 1, 8), j = 0, p - 1)]), ierr)
    ib = -1
    call MPI_Allgatherv(MPI_BOTTOM, 1, abs_t, ib, cnt, dsp, MPI_INTEGER, comm, ierr)
    call expect('allgatherv from MPI_BOTTOM', all([((ib(8 * j + i) == val(j, i), i = 1, 8), j = 0, p - 1)]), ierr)

    root = p - 1
    if (r == root) ib(1:8 * p) = [((val(j, i), i = 1, 8), j = 0, p - 1)]
    abuf = -1
    call MPI_Scatter(ib, 8, MPI_INTEGER, MPI_BOTTOM, 1, abs_t, root, comm, ierr)
    call expect('scatter into MPI_BOTTOM', all(abuf == [(val(r, i), i = 1, 8)]), ierr)
    abuf = -1
    call MPI_Scatterv(ib, cnt, dsp, MPI_INTEGER, MPI_BOTTOM, 1, abs_t, root, comm, ierr)
    call expect('scatterv into MPI_BOTTOM', all(abuf == [(val(r, i), i = 1, 8)]), ierr)
    call MPI_Type_free(abs_t, ierr)
  end subroutine run_common

  subroutine run_integer()
#define T_TYPE integer
#define T_MPI MPI_INTEGER
#define T_NAME 'MPI_INTEGER'
#include "colls.inc"
#undef T_TYPE
#undef T_MPI
#undef T_NAME
  end subroutine run_integer

  subroutine run_real()
#define T_TYPE real
#define T_MPI MPI_REAL
#define T_NAME 'MPI_REAL'
#include "colls.inc"
#undef T_TYPE
#undef T_MPI
#undef T_NAME
  end subroutine run_real

  subroutine run_double()
#define T_TYPE double precision
#define T_MPI MPI_DOUBLE_PRECISION
#define T_NAME 'MPI_DOUBLE_PRECISION'
#include "colls.inc"
#undef T_TYPE
#undef T_MPI
#undef T_NAME
  end subroutine run_double

  subroutine run_integer8()
#define T_TYPE integer(kind=8)
#define T_MPI MPI_INTEGER8
#define T_NAME 'MPI_INTEGER8'
#include "colls.inc"
#undef T_TYPE
#undef T_MPI
#undef T_NAME
  end subroutine run_integer8

end program fortran_check
