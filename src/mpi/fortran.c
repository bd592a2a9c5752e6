/*
 * libosmp_mpi: the Fortran entry points of the collectives (mpif.h, `use mpi`,
 * and Open MPI's `use mpi_f08`), so that Fortran programs reach the
 * interposed C calls of coll.c.
 *
 * Why: Open MPI's Fortran layer (libmpi_mpifh: ompi_allreduce_f, aliased to
 * mpi_allreduce_ and the other manglings; libmpi_usempif08: mpi_allreduce_f08_,
 * which calls ompi_allreduce_f) calls PMPI_Allreduce directly, past any C
 * interposer. MPICH's Fortran layer (libmpichfort) calls the C MPI_ functions,
 * so it reached us already; defining the symbols here replaces its wrappers
 * with ones that translate exactly as it does (below).
 *
 * Each entry point converts the handles (MPI_*_f2c), the Fortran sentinels
 * MPI_IN_PLACE and MPI_BOTTOM to the C ones, calls the C MPI_ function and
 * stores the code in ierr (when present: an f08 ierror is optional). The C
 * call binds to libosmp_mpi's own MPI_Allreduce (linked -Bsymbolic-functions),
 * wherever the MPI library sits in the link order; every C function called
 * here is libosmp_mpi's (coll.c, and comm.c's MPI_Finalize).
 *
 * Which arguments may be a sentinel is copied from both libraries' wrappers
 * (their disassembly agrees): every buffer may be MPI_BOTTOM; the send buffer
 * may be MPI_IN_PLACE, except in scatter and scatterv where the receive buffer
 * may; bcast's buffer only MPI_BOTTOM.
 *
 * Sentinels: what the program passes is the address of a Fortran variable.
 *  - Open MPI: the common blocks /mpi_fortran_in_place/ and /mpi_fortran_bottom/
 *    (mpif-sentinels.h; mpi_f08 declares the same). Defined (as BSS) by libmpi,
 *    libmpi_usempi_ignore_tkr and libmpi_usempif08, and by the program itself
 *    (a common symbol with mpif.h or `use mpi`, a copy relocation with
 *    `use mpi_f08`); the dynamic linker gives every reference the first
 *    definition, the program's, so &mpi_fortran_in_place_ here is the address
 *    the program passes, as it is in ompi_allreduce_f (which compares with
 *    exactly that GOT entry). The other manglings are checked too where some
 *    library defines them (none here).
 *  - MPICH: the common block /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, ... whose
 *    addresses mpirinitf_ (libmpichfort, run once by the first Fortran wrapper
 *    while MPIR_F_NeedInit is set) stores in MPIR_F_MPI_BOTTOM and
 *    MPIR_F_MPI_IN_PLACE; its wrappers compare with those, and so do we.
 * All these symbols are weak references: a C program without a Fortran layer
 * loads fine (they are NULL, and a NULL address is never taken for a sentinel).
 *
 * MPICH's mpi_f08 collectives with buffers (mpi_allreduce_f08ts_ ...) are not
 * defined here: they pass buffers as TS 29113 descriptors and call the C MPI_
 * functions themselves, so they reach coll.c already. Its mpi_barrier_f08_ and
 * mpi_finalize_f08_ call PMPI_Barrier and PMPI_Finalize, so those two are.
 *
 * The nonblocking collectives (MPI_IBARRIER .. MPI_IEXSCAN) are defined the
 * same way, with MPICH's mpi_ibarrier_f08_ (which calls PMPI_Ibarrier); their
 * request is the Fortran handle of the C one (MPI_Request_c2f), which the
 * Fortran MPI_WAIT and the rest complete through the C completion calls.
 *
 * MPI_FINALIZE is defined too: Open MPI's calls PMPI_Finalize directly, which
 * would skip comm.c's MPI_Finalize (the world's OSMP state goes first, and the
 * OSMP_VERBOSE counts). With OSMP_VERBOSE=1 it first prints how many calls
 * each Fortran entry point here took.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/atomic.h"
#include "common/knobs.h"
#include "mpi/osmp_mpi.h"

#define EXPORT __attribute__((visibility("default")))
#define WEAK __attribute__((weak))

/* ---------------------------------------------------------------- sentinels */

#if defined(OPEN_MPI)
extern char mpi_fortran_in_place_ WEAK, mpi_fortran_in_place__ WEAK, mpi_fortran_in_place WEAK,
    MPI_FORTRAN_IN_PLACE WEAK;
extern char mpi_fortran_bottom_ WEAK, mpi_fortran_bottom__ WEAK, mpi_fortran_bottom WEAK, MPI_FORTRAN_BOTTOM WEAK;

static void f_init(void)
{
}

static int is_f_in_place(const void *p)
{
    return p && (p == &mpi_fortran_in_place_ || p == &mpi_fortran_in_place__ || p == &mpi_fortran_in_place ||
                 p == &MPI_FORTRAN_IN_PLACE);
}

static int is_f_bottom(const void *p)
{
    return p && (p == &mpi_fortran_bottom_ || p == &mpi_fortran_bottom__ || p == &mpi_fortran_bottom ||
                 p == &MPI_FORTRAN_BOTTOM);
}
#elif defined(MPICH)
extern void *MPIR_F_MPI_BOTTOM WEAK, *MPIR_F_MPI_IN_PLACE WEAK;
extern int MPIR_F_NeedInit WEAK;
extern void mpirinitf_(void) WEAK;

/* As every MPICH wrapper does first (racy there too; it only stores addresses). */
static void f_init(void)
{
    if (&MPIR_F_NeedInit && MPIR_F_NeedInit && mpirinitf_) {
        mpirinitf_();
        MPIR_F_NeedInit = 0;
    }
}

static int is_f_in_place(const void *p)
{
    return p && &MPIR_F_MPI_IN_PLACE && p == MPIR_F_MPI_IN_PLACE;
}

static int is_f_bottom(const void *p)
{
    return p && &MPIR_F_MPI_BOTTOM && p == MPIR_F_MPI_BOTTOM;
}
#else
#error "fortran.c knows the Fortran sentinels of Open MPI and MPICH only"
#endif

/* A buffer argument: MPI_BOTTOM, or (where the call allows it) MPI_IN_PLACE. */
static void *buf_c(void *p, int in_place_allowed)
{
    if (is_f_bottom(p)) return MPI_BOTTOM;
    if (in_place_allowed && is_f_in_place(p)) return MPI_IN_PLACE;
    return p;
}

/* ---------------------------------------------------------------- counts */

/* Per collective of OSMP_COLL_MAP (osmp.h), the calls each Fortran entry point took. */
static osmp_atomic64_t entered[OSMP_COLL_COUNT];

static void enter(osmp_coll_t c)
{
    osmp__fetch_add(&entered[c], 1);
    f_init();
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) *ierr = (MPI_Fint)rc;
}

static int comm_size(MPI_Comm comm)
{
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return n;
}

static int comm_rank(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

/* A vector call's count and displacement arrays a0..a3 (NULL: none) as C ints
 * c[0..3]: each array itself where MPI_Fint is int (Open MPI and MPICH here),
 * else a copy of the entries MPI reads on this rank: every rank's, or
 * (root_only: gatherv, scatterv) the root's. rc: 0 or MPI_ERR_NO_MEM;
 * ints_close frees the copies in either case. */
struct ints {
    int rc;
    int *c[4], *copy[4];
};

static inline struct ints ints_open(MPI_Comm comm, int root_only, int root, const MPI_Fint *a0,
                                    const MPI_Fint *a1, const MPI_Fint *a2, const MPI_Fint *a3)
{
    const MPI_Fint *a[4] = {a0, a1, a2, a3};
    struct ints x = {0, {NULL}, {NULL}};
    int n = sizeof(MPI_Fint) == sizeof(int) || (root_only && comm_rank(comm) != root) ? 0 : comm_size(comm);
    for (int i = 0; i < 4; i++) {
        x.c[i] = (int *)(uintptr_t)a[i];
        if (sizeof(MPI_Fint) == sizeof(int) || !a[i] || n <= 0 || x.rc) continue;
        if (!(x.copy[i] = malloc(sizeof(int) * (size_t)n))) {
            x.rc = MPI_ERR_NO_MEM;
            continue;
        }
        for (int j = 0; j < n; j++)
            x.copy[i][j] = (int)a[i][j];
        x.c[i] = x.copy[i];
    }
    return x;
}

static inline void ints_close(struct ints *x)
{
    for (int i = 0; i < 4; i++)
        free(x->copy[i]);
}

/* ---------------------------------------------------------------- the calls */

/* Each implementation gets the Fortran names: MPI_X, mpi_x, mpi_x_, mpi_x__, and
 * under Open MPI mpi_x_f08_ (same arguments: f08 handles are a one-integer
 * derived type passed by reference, buffers are plain addresses, ierror may
 * be absent, i.e. NULL). The PMPI_ names stay the MPI library's. */
#define ALIAS(name, impl, params) EXPORT void name params __attribute__((alias(#impl)));
#define F08_NAME(lower, impl, params) ALIAS(lower##_f08_, impl, params)
#if defined(OPEN_MPI)
#define OMPI_F08_NAME F08_NAME
#else
#define OMPI_F08_NAME(lower, impl, params)
#endif
#define FORTRAN_NAMES(UPPER, lower, impl, params)                                                             \
    ALIAS(UPPER, impl, params)                                                                                \
    ALIAS(lower, impl, params)                                                                                \
    ALIAS(lower##_, impl, params)                                                                             \
    ALIAS(lower##__, impl, params)                                                                            \
    OMPI_F08_NAME(lower, impl, params)

typedef MPI_Fint fint; /* handles, counts and roots, passed by reference */

/* The C arguments of a call from its Fortran ones (the nonblocking calls add
 * their request): which buffers may be MPI_IN_PLACE, as the comment above says. */
#define A_BCAST buf_c(buf, 0), (int)*count, MPI_Type_f2c(*dt), (int)*root, MPI_Comm_f2c(*comm)
#define A_REDUCE                                                                                              \
    buf_c(sbuf, 1), buf_c(rbuf, 0), (int)*count, MPI_Type_f2c(*dt), MPI_Op_f2c(*op), (int)*root, MPI_Comm_f2c(*comm)
/* (allreduce, scan, exscan) */
#define A_ALLREDUCE buf_c(sbuf, 1), buf_c(rbuf, 0), (int)*count, MPI_Type_f2c(*dt), MPI_Op_f2c(*op), MPI_Comm_f2c(*comm)
#define A_GATHER                                                                                              \
    buf_c(sbuf, 1), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 0), (int)*rcount, MPI_Type_f2c(*rdt), (int)*root,  \
        MPI_Comm_f2c(*comm)
#define A_SCATTER                                                                                             \
    buf_c(sbuf, 0), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 1), (int)*rcount, MPI_Type_f2c(*rdt), (int)*root,  \
        MPI_Comm_f2c(*comm)
/* (allgather, alltoall) */
#define A_ALLGATHER                                                                                           \
    buf_c(sbuf, 1), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 0), (int)*rcount, MPI_Type_f2c(*rdt),              \
        MPI_Comm_f2c(*comm)
#define A_RSB buf_c(sbuf, 1), buf_c(rbuf, 0), (int)*rcount, MPI_Type_f2c(*dt), MPI_Op_f2c(*op), MPI_Comm_f2c(*comm)

#define P_BARRIER (fint * comm, fint * ierr)
static void f_barrier P_BARRIER
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_barrier_);
    enter(OSMP_COLL_BARRIER);
    set_ierr(ierr, MPI_Barrier(MPI_Comm_f2c(*comm)));
}
FORTRAN_NAMES(MPI_BARRIER, mpi_barrier, f_barrier, P_BARRIER)
#if defined(MPICH) /* MPICH's mpi_barrier_f08_ calls PMPI_Barrier */
F08_NAME(mpi_barrier, f_barrier, P_BARRIER)
#endif

#define P_BCAST (void *buf, fint *count, fint *dt, fint *root, fint *comm, fint *ierr)
static void f_bcast P_BCAST
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_bcast_);
    enter(OSMP_COLL_BCAST);
    set_ierr(ierr, MPI_Bcast(A_BCAST));
}
FORTRAN_NAMES(MPI_BCAST, mpi_bcast, f_bcast, P_BCAST)

#define P_REDUCE (void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *root, fint *comm, fint *ierr)
static void f_reduce P_REDUCE
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_reduce_);
    enter(OSMP_COLL_REDUCE);
    set_ierr(ierr, MPI_Reduce(A_REDUCE));
}
FORTRAN_NAMES(MPI_REDUCE, mpi_reduce, f_reduce, P_REDUCE)

#define P_ALLREDUCE (void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *comm, fint *ierr)
static void f_allreduce P_ALLREDUCE
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_allreduce_);
    enter(OSMP_COLL_ALLREDUCE);
    set_ierr(ierr, MPI_Allreduce(A_ALLREDUCE));
}
FORTRAN_NAMES(MPI_ALLREDUCE, mpi_allreduce, f_allreduce, P_ALLREDUCE)

#define P_GATHER                                                                                              \
    (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm, fint *ierr)
static void f_gather P_GATHER
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_gather_);
    enter(OSMP_COLL_GATHER);
    set_ierr(ierr, MPI_Gather(A_GATHER));
}
FORTRAN_NAMES(MPI_GATHER, mpi_gather, f_gather, P_GATHER)

#define P_ALLGATHER (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *ierr)
static void f_allgather P_ALLGATHER
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_allgather_);
    enter(OSMP_COLL_ALLGATHER);
    set_ierr(ierr, MPI_Allgather(A_ALLGATHER));
}
FORTRAN_NAMES(MPI_ALLGATHER, mpi_allgather, f_allgather, P_ALLGATHER)

#define P_SCATTER P_GATHER
static void f_scatter P_SCATTER
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_scatter_);
    enter(OSMP_COLL_SCATTER);
    set_ierr(ierr, MPI_Scatter(A_SCATTER));
}
FORTRAN_NAMES(MPI_SCATTER, mpi_scatter, f_scatter, P_SCATTER)

#define P_RSB (void *sbuf, void *rbuf, fint *rcount, fint *dt, fint *op, fint *comm, fint *ierr)
static void f_reduce_scatter_block P_RSB
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_reduce_scatter_block_);
    enter(OSMP_COLL_REDUCE_SCATTER_BLOCK);
    set_ierr(ierr, MPI_Reduce_scatter_block(A_RSB));
}
FORTRAN_NAMES(MPI_REDUCE_SCATTER_BLOCK, mpi_reduce_scatter_block, f_reduce_scatter_block, P_RSB)

#define P_ALLTOALL P_ALLGATHER
static void f_alltoall P_ALLTOALL
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_alltoall_);
    enter(OSMP_COLL_ALLTOALL);
    set_ierr(ierr, MPI_Alltoall(A_ALLGATHER));
}
FORTRAN_NAMES(MPI_ALLTOALL, mpi_alltoall, f_alltoall, P_ALLTOALL)

/* ---- the vector calls and scans. Count arrays are read where MPI reads them
 * (the root's only in gatherv and scatterv). */

#define P_GATHERV                                                                                             \
    (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt, fint *root,       \
     fint *comm, fint *ierr)
static void f_gatherv P_GATHERV
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_gatherv_);
    enter(OSMP_COLL_GATHERV);
    MPI_Comm c = MPI_Comm_f2c(*comm);
    struct ints v = ints_open(c, 1, (int)*root, rcounts, displs, NULL, NULL);
    set_ierr(ierr, v.rc ? v.rc
                        : MPI_Gatherv(buf_c(sbuf, 1), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 0),
                                      v.c[0], v.c[1], MPI_Type_f2c(*rdt), (int)*root, c));
    ints_close(&v);
}
FORTRAN_NAMES(MPI_GATHERV, mpi_gatherv, f_gatherv, P_GATHERV)

#define P_SCATTERV                                                                                            \
    (void *sbuf, fint *scounts, fint *displs, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root,       \
     fint *comm, fint *ierr)
static void f_scatterv P_SCATTERV
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_scatterv_);
    enter(OSMP_COLL_SCATTERV);
    MPI_Comm c = MPI_Comm_f2c(*comm);
    struct ints v = ints_open(c, 1, (int)*root, scounts, displs, NULL, NULL);
    set_ierr(ierr, v.rc ? v.rc
                        : MPI_Scatterv(buf_c(sbuf, 0), v.c[0], v.c[1], MPI_Type_f2c(*sdt), buf_c(rbuf, 1),
                                       (int)*rcount, MPI_Type_f2c(*rdt), (int)*root, c));
    ints_close(&v);
}
FORTRAN_NAMES(MPI_SCATTERV, mpi_scatterv, f_scatterv, P_SCATTERV)

#define P_ALLGATHERV                                                                                          \
    (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt, fint *comm,       \
     fint *ierr)
static void f_allgatherv P_ALLGATHERV
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_allgatherv_);
    enter(OSMP_COLL_ALLGATHERV);
    MPI_Comm c = MPI_Comm_f2c(*comm);
    struct ints v = ints_open(c, 0, 0, rcounts, displs, NULL, NULL);
    set_ierr(ierr, v.rc ? v.rc
                        : MPI_Allgatherv(buf_c(sbuf, 1), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 0),
                                         v.c[0], v.c[1], MPI_Type_f2c(*rdt), c));
    ints_close(&v);
}
FORTRAN_NAMES(MPI_ALLGATHERV, mpi_allgatherv, f_allgatherv, P_ALLGATHERV)

#define P_ALLTOALLV                                                                                           \
    (void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts, fint *rdispls, fint *rdt,  \
     fint *comm, fint *ierr)
static void f_alltoallv P_ALLTOALLV
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_alltoallv_);
    enter(OSMP_COLL_ALLTOALLV);
    MPI_Comm c = MPI_Comm_f2c(*comm);
    struct ints v = ints_open(c, 0, 0, scounts, sdispls, rcounts, rdispls);
    set_ierr(ierr, v.rc ? v.rc
                        : MPI_Alltoallv(buf_c(sbuf, 1), v.c[0], v.c[1], MPI_Type_f2c(*sdt), buf_c(rbuf, 0),
                                        v.c[2], v.c[3], MPI_Type_f2c(*rdt), c));
    ints_close(&v);
}
FORTRAN_NAMES(MPI_ALLTOALLV, mpi_alltoallv, f_alltoallv, P_ALLTOALLV)

#define P_REDUCE_SCATTER (void *sbuf, void *rbuf, fint *rcounts, fint *dt, fint *op, fint *comm, fint *ierr)
static void f_reduce_scatter P_REDUCE_SCATTER
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_reduce_scatter_);
    enter(OSMP_COLL_REDUCE_SCATTER);
    MPI_Comm c = MPI_Comm_f2c(*comm);
    struct ints v = ints_open(c, 0, 0, rcounts, NULL, NULL, NULL);
    set_ierr(ierr, v.rc ? v.rc
                        : MPI_Reduce_scatter(buf_c(sbuf, 1), buf_c(rbuf, 0), v.c[0], MPI_Type_f2c(*dt),
                                             MPI_Op_f2c(*op), c));
    ints_close(&v);
}
FORTRAN_NAMES(MPI_REDUCE_SCATTER, mpi_reduce_scatter, f_reduce_scatter, P_REDUCE_SCATTER)

#define P_SCAN P_ALLREDUCE
static void f_scan P_SCAN
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_scan_);
    enter(OSMP_COLL_SCAN);
    set_ierr(ierr, MPI_Scan(A_ALLREDUCE));
}
FORTRAN_NAMES(MPI_SCAN, mpi_scan, f_scan, P_SCAN)

static void f_exscan P_SCAN
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_exscan_);
    enter(OSMP_COLL_EXSCAN);
    set_ierr(ierr, MPI_Exscan(A_ALLREDUCE));
}
FORTRAN_NAMES(MPI_EXSCAN, mpi_exscan, f_exscan, P_SCAN)

/* ---------------------------------------------------------------- the nonblocking calls
 * The blocking call's arguments and a request (the Fortran handle of the C
 * one: MPI_Request_c2f), counted under the same collective. The count and
 * displacement arrays of the v-variants are the program's own (MPI reads them
 * until the request completes, so they cannot be copies made here). */

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "the nonblocking v-variants pass Fortran integer arrays as C ints");

#define NONBLOCKING(UPPER, lower, coll, params, call)                                                         \
    static void f_##lower params                                                                             \
    {                                                                                                        \
        OSMP_MPI_FORWARD_IF_FOREIGN(lower##_);                                                               \
        enter(coll);                                                                                         \
        MPI_Request r_ = MPI_REQUEST_NULL;                                                                   \
        set_ierr(ierr, call);                                                                                \
        *req = MPI_Request_c2f(r_);                                                                          \
    }                                                                                                        \
    FORTRAN_NAMES(UPPER, lower, f_##lower, params)

#define I_ (const int *) /* a Fortran integer array (MPI_Fint is int) */

#define P_IBARRIER (fint * comm, fint * req, fint * ierr)
NONBLOCKING(MPI_IBARRIER, mpi_ibarrier, OSMP_COLL_BARRIER, P_IBARRIER, MPI_Ibarrier(MPI_Comm_f2c(*comm), &r_))
#if defined(MPICH) /* MPICH's mpi_ibarrier_f08_ calls PMPI_Ibarrier */
F08_NAME(mpi_ibarrier, f_mpi_ibarrier, P_IBARRIER)
#endif
NONBLOCKING(MPI_IBCAST, mpi_ibcast, OSMP_COLL_BCAST,
            (void *buf, fint *count, fint *dt, fint *root, fint *comm, fint *req, fint *ierr),
            MPI_Ibcast(A_BCAST, &r_))
NONBLOCKING(MPI_IREDUCE, mpi_ireduce, OSMP_COLL_REDUCE,
            (void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *root, fint *comm, fint *req, fint *ierr),
            MPI_Ireduce(A_REDUCE, &r_))
#define P_IALLREDUCE (void *sbuf, void *rbuf, fint *count, fint *dt, fint *op, fint *comm, fint *req, fint *ierr)
NONBLOCKING(MPI_IALLREDUCE, mpi_iallreduce, OSMP_COLL_ALLREDUCE, P_IALLREDUCE, MPI_Iallreduce(A_ALLREDUCE, &r_))
NONBLOCKING(MPI_ISCAN, mpi_iscan, OSMP_COLL_SCAN, P_IALLREDUCE, MPI_Iscan(A_ALLREDUCE, &r_))
NONBLOCKING(MPI_IEXSCAN, mpi_iexscan, OSMP_COLL_EXSCAN, P_IALLREDUCE, MPI_Iexscan(A_ALLREDUCE, &r_))
#define P_IGATHER                                                                                             \
    (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root, fint *comm, fint *req,      \
     fint *ierr)
NONBLOCKING(MPI_IGATHER, mpi_igather, OSMP_COLL_GATHER, P_IGATHER, MPI_Igather(A_GATHER, &r_))
NONBLOCKING(MPI_ISCATTER, mpi_iscatter, OSMP_COLL_SCATTER, P_IGATHER, MPI_Iscatter(A_SCATTER, &r_))
#define P_IALLGATHER                                                                                          \
    (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *comm, fint *req, fint *ierr)
NONBLOCKING(MPI_IALLGATHER, mpi_iallgather, OSMP_COLL_ALLGATHER, P_IALLGATHER, MPI_Iallgather(A_ALLGATHER, &r_))
NONBLOCKING(MPI_IALLTOALL, mpi_ialltoall, OSMP_COLL_ALLTOALL, P_IALLGATHER, MPI_Ialltoall(A_ALLGATHER, &r_))
NONBLOCKING(MPI_IREDUCE_SCATTER_BLOCK, mpi_ireduce_scatter_block, OSMP_COLL_REDUCE_SCATTER_BLOCK,
            (void *sbuf, void *rbuf, fint *rcount, fint *dt, fint *op, fint *comm, fint *req, fint *ierr),
            MPI_Ireduce_scatter_block(A_RSB, &r_))
NONBLOCKING(MPI_IGATHERV, mpi_igatherv, OSMP_COLL_GATHERV,
            (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt, fint *root,
             fint *comm, fint *req, fint *ierr),
            MPI_Igatherv(buf_c(sbuf, 1), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 0), I_ rcounts, I_ displs,
                         MPI_Type_f2c(*rdt), (int)*root, MPI_Comm_f2c(*comm), &r_))
NONBLOCKING(MPI_ISCATTERV, mpi_iscatterv, OSMP_COLL_SCATTERV,
            (void *sbuf, fint *scounts, fint *displs, fint *sdt, void *rbuf, fint *rcount, fint *rdt, fint *root,
             fint *comm, fint *req, fint *ierr),
            MPI_Iscatterv(buf_c(sbuf, 0), I_ scounts, I_ displs, MPI_Type_f2c(*sdt), buf_c(rbuf, 1), (int)*rcount,
                          MPI_Type_f2c(*rdt), (int)*root, MPI_Comm_f2c(*comm), &r_))
NONBLOCKING(MPI_IALLGATHERV, mpi_iallgatherv, OSMP_COLL_ALLGATHERV,
            (void *sbuf, fint *scount, fint *sdt, void *rbuf, fint *rcounts, fint *displs, fint *rdt, fint *comm,
             fint *req, fint *ierr),
            MPI_Iallgatherv(buf_c(sbuf, 1), (int)*scount, MPI_Type_f2c(*sdt), buf_c(rbuf, 0), I_ rcounts, I_ displs,
                            MPI_Type_f2c(*rdt), MPI_Comm_f2c(*comm), &r_))
NONBLOCKING(MPI_IALLTOALLV, mpi_ialltoallv, OSMP_COLL_ALLTOALLV,
            (void *sbuf, fint *scounts, fint *sdispls, fint *sdt, void *rbuf, fint *rcounts, fint *rdispls, fint *rdt,
             fint *comm, fint *req, fint *ierr),
            MPI_Ialltoallv(buf_c(sbuf, 1), I_ scounts, I_ sdispls, MPI_Type_f2c(*sdt), buf_c(rbuf, 0), I_ rcounts,
                           I_ rdispls, MPI_Type_f2c(*rdt), MPI_Comm_f2c(*comm), &r_))
NONBLOCKING(MPI_IREDUCE_SCATTER, mpi_ireduce_scatter, OSMP_COLL_REDUCE_SCATTER,
            (void *sbuf, void *rbuf, fint *rcounts, fint *dt, fint *op, fint *comm, fint *req, fint *ierr),
            MPI_Ireduce_scatter(buf_c(sbuf, 1), buf_c(rbuf, 0), I_ rcounts, MPI_Type_f2c(*dt), MPI_Op_f2c(*op),
                                MPI_Comm_f2c(*comm), &r_))

/* ---------------------------------------------------------------- finalize */

#define P_FINALIZE (fint * ierr)
static void f_finalize P_FINALIZE
{
    OSMP_MPI_FORWARD_IF_FOREIGN(mpi_finalize_);
    f_init();
    if (atoi(osmp__knob_str(OSMP_KNOB_VERBOSE)) > 0) {
        int rank = comm_rank(MPI_COMM_WORLD);
        for (int c = 0; c < OSMP_COLL_COUNT; c++) {
            long n = (long)osmp__load_relaxed(&entered[c]);
            if (n) fprintf(stderr, "osmp-mpi: rank %d: Fortran %-20s %ld calls\n", rank, osmp_coll_name(c), n);
        }
    }
    set_ierr(ierr, MPI_Finalize());
}
FORTRAN_NAMES(MPI_FINALIZE, mpi_finalize, f_finalize, P_FINALIZE)
#if defined(MPICH) /* MPICH's mpi_finalize_f08_ calls PMPI_Finalize */
F08_NAME(mpi_finalize, f_finalize, P_FINALIZE)
#endif
