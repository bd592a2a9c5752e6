/*
 * libosmp_mpi: the Fortran point-to-point sends under Open MPI, for
 * OSMP_PROFILE (profile.c).
 *
 * Why: Open MPI's Fortran layer (libmpi_mpifh: ompi_send_f, aliased to
 * mpi_send_ and the other manglings; libmpi_usempif08: mpi_send_f08_, which
 * calls ompi_send_f) calls PMPI_Send directly, past the C MPI_Send of
 * profile.c. MPICH's Fortran layer calls the C MPI_ functions, which count
 * already (defining its sends here would count twice), except its mpi_f08
 * MPI_Start, MPI_Startall and MPI_Request_free (mpi_start_f08_ calls
 * PMPI_Start): those three only, for MPICH. The starts and frees also take the
 * persistent collectives of persist.c to the C calls.
 *
 * Each entry point counts the send when profiling is on (handles converted with
 * MPI_*_f2c; a persistent send's request is remembered after the library made
 * it, its starts counted before they run) and then calls the Open MPI
 * library's own definition of the same symbol (the next one in the lookup
 * order), which does everything else exactly as without libosmp_mpi: buffer
 * sentinels, statuses, error codes. Off, that is one branch and one indirect
 * call per send. The four manglings fortran.c defines, and the mpi_f08 names.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "mpi/osmp_mpi.h"

#include <dlfcn.h>

/* The next definition of `name` (Open MPI's Fortran wrapper), looked up once. */
#define NEXT(name, type)                                                                                     \
    static type next_;                                                                                       \
    if (__builtin_expect(!next_, 0)) next_ = (type)osmp__mpi_next(name);

typedef void (*send_fn)(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*isend_fn)(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                         MPI_Fint *);
typedef void (*start_fn)(MPI_Fint *, MPI_Fint *);
typedef void (*startall_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*sendrecv_fn)(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *, MPI_Fint *,
                            MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*replace_fn)(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *, MPI_Fint *, MPI_Fint *);

#if defined(OPEN_MPI)
static void count(MPI_Fint *n, MPI_Fint *dt, MPI_Fint *dest, MPI_Fint *comm)
{
    osmp__mpi_profile_send((int)*n, MPI_Type_f2c(*dt), (int)*dest, MPI_Comm_f2c(*comm));
}
#endif

#define F_SEND(sym)                                                                                          \
    EXPORT void sym(void *buf, MPI_Fint *n, MPI_Fint *dt, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,      \
                    MPI_Fint *ierr)                                                                          \
    {                                                                                                        \
        NEXT(#sym, send_fn)                                                                                  \
        if (osmp__mpi_profile_on()) count(n, dt, dest, comm);                                                \
        next_(buf, n, dt, dest, tag, comm, ierr);                                                            \
    }
#define F_ISEND(sym)                                                                                         \
    EXPORT void sym(void *buf, MPI_Fint *n, MPI_Fint *dt, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,      \
                    MPI_Fint *req, MPI_Fint *ierr)                                                           \
    {                                                                                                        \
        NEXT(#sym, isend_fn)                                                                                 \
        if (osmp__mpi_profile_on()) count(n, dt, dest, comm);                                                \
        next_(buf, n, dt, dest, tag, comm, req, ierr);                                                       \
    }
#define F_SEND_INIT(sym)                                                                                     \
    EXPORT void sym(void *buf, MPI_Fint *n, MPI_Fint *dt, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm,      \
                    MPI_Fint *req, MPI_Fint *ierr)                                                           \
    {                                                                                                        \
        NEXT(#sym, isend_fn)                                                                                 \
        next_(buf, n, dt, dest, tag, comm, req, ierr);                                                       \
        if (osmp__mpi_profile_on() && (!ierr || *ierr == MPI_SUCCESS))                                       \
            osmp__mpi_profile_send_init(MPI_Request_f2c(*req), (int)*n, MPI_Type_f2c(*dt), (int)*dest,       \
                                        MPI_Comm_f2c(*comm));                                                \
    }
/* A persistent collective of persist.c's among these requests: MPICH's mpi_f08
 * layer makes them through the C _init (a program mixing languages could too),
 * and they are started and freed by the C MPI_Start and MPI_Request_free
 * (profile.c, persist.c), not by the library's wrapper. */
static int ours(const MPI_Fint *reqs, MPI_Fint n)
{
    for (MPI_Fint i = 0; osmp__load_relaxed(&osmp__mpi_pc_live) && i < n; i++)
        if (osmp__mpi_pc_find(MPI_Request_f2c(reqs[i]))) return 1;
    return 0;
}

static void by_c(MPI_Fint *req, MPI_Fint *ierr, int (*c_call)(MPI_Request *))
{
    MPI_Request r = MPI_Request_f2c(*req);
    int rc = c_call(&r);
    *req = MPI_Request_c2f(r);
    if (ierr) *ierr = rc;
}

/* MPI_Start and MPI_Request_free: profile.c hears of the request (`tell`) before the library's call. */
#define F_ONE_REQUEST(sym, tell, c_call)                                                                     \
    EXPORT void sym(MPI_Fint *req, MPI_Fint *ierr)                                                           \
    {                                                                                                        \
        NEXT(#sym, start_fn)                                                                                 \
        if (ours(req, 1)) {                                                                                  \
            by_c(req, ierr, c_call);                                                                         \
            return;                                                                                          \
        }                                                                                                    \
        if (osmp__mpi_profile_on()) tell(MPI_Request_f2c(*req));                                             \
        next_(req, ierr);                                                                                    \
    }
#define F_START(sym) F_ONE_REQUEST(sym, osmp__mpi_profile_start, MPI_Start)
#define F_REQUEST_FREE(sym) F_ONE_REQUEST(sym, osmp__mpi_profile_request_free, MPI_Request_free)
#define F_STARTALL(sym)                                                                                      \
    EXPORT void sym(MPI_Fint *cnt, MPI_Fint *reqs, MPI_Fint *ierr)                                           \
    {                                                                                                        \
        NEXT(#sym, startall_fn)                                                                              \
        if (ours(reqs, *cnt)) { /* one by one, in order */                                                   \
            MPI_Fint rc = MPI_SUCCESS, one;                                                                  \
            for (MPI_Fint i = 0; i < *cnt; i++) {                                                            \
                by_c(&reqs[i], &one, MPI_Start);                                                             \
                if (rc == MPI_SUCCESS) rc = one;                                                             \
            }                                                                                                \
            if (ierr) *ierr = rc;                                                                            \
            return;                                                                                          \
        }                                                                                                    \
        if (osmp__mpi_profile_on())                                                                          \
            for (MPI_Fint i = 0; i < *cnt; i++)                                                              \
                osmp__mpi_profile_start(MPI_Request_f2c(reqs[i]));                                           \
        next_(cnt, reqs, ierr);                                                                              \
    }
#define F_SENDRECV(sym)                                                                                      \
    EXPORT void sym(void *sbuf, MPI_Fint *sn, MPI_Fint *sdt, MPI_Fint *dest, MPI_Fint *stag, void *rbuf,      \
                    MPI_Fint *rn, MPI_Fint *rdt, MPI_Fint *src, MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *st,     \
                    MPI_Fint *ierr)                                                                          \
    {                                                                                                        \
        NEXT(#sym, sendrecv_fn)                                                                              \
        if (osmp__mpi_profile_on()) count(sn, sdt, dest, comm);                                              \
        next_(sbuf, sn, sdt, dest, stag, rbuf, rn, rdt, src, rtag, comm, st, ierr);                          \
    }
#define F_REPLACE(sym)                                                                                       \
    EXPORT void sym(void *buf, MPI_Fint *n, MPI_Fint *dt, MPI_Fint *dest, MPI_Fint *stag, MPI_Fint *src,      \
                    MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *st, MPI_Fint *ierr)                            \
    {                                                                                                        \
        NEXT(#sym, replace_fn)                                                                               \
        if (osmp__mpi_profile_on()) count(n, dt, dest, comm);                                                \
        next_(buf, n, dt, dest, stag, src, rtag, comm, st, ierr);                                            \
    }

#if defined(OPEN_MPI)
/* every mangling: mpif.h / `use mpi` (four), `use mpi_f08` (one) */
#define MANGLED(M, lower, UPPER) M(lower##_) M(lower##__) M(lower) M(UPPER) M(lower##_f08_)
MANGLED(F_SEND, mpi_send, MPI_SEND)
MANGLED(F_SEND, mpi_bsend, MPI_BSEND)
MANGLED(F_SEND, mpi_ssend, MPI_SSEND)
MANGLED(F_SEND, mpi_rsend, MPI_RSEND)
MANGLED(F_ISEND, mpi_isend, MPI_ISEND)
MANGLED(F_ISEND, mpi_ibsend, MPI_IBSEND)
MANGLED(F_ISEND, mpi_issend, MPI_ISSEND)
MANGLED(F_ISEND, mpi_irsend, MPI_IRSEND)
MANGLED(F_SEND_INIT, mpi_send_init, MPI_SEND_INIT)
MANGLED(F_SEND_INIT, mpi_bsend_init, MPI_BSEND_INIT)
MANGLED(F_SEND_INIT, mpi_ssend_init, MPI_SSEND_INIT)
MANGLED(F_SEND_INIT, mpi_rsend_init, MPI_RSEND_INIT)
MANGLED(F_START, mpi_start, MPI_START)
MANGLED(F_STARTALL, mpi_startall, MPI_STARTALL)
MANGLED(F_REQUEST_FREE, mpi_request_free, MPI_REQUEST_FREE)
MANGLED(F_SENDRECV, mpi_sendrecv, MPI_SENDRECV)
MANGLED(F_REPLACE, mpi_sendrecv_replace, MPI_SENDRECV_REPLACE)
#else /* MPICH */
F_START(mpi_start_f08_)
F_STARTALL(mpi_startall_f08_)
F_REQUEST_FREE(mpi_request_free_f08_)
#endif
