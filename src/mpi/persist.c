/*
 * libosmp_mpi: the persistent collectives, MPI_Barrier_init .. MPI_Exscan_init
 * (MPI 4; MPICH 4) or MPIX_Barrier_init .. MPIX_Exscan_init (Open MPI 4.1's
 * pcollreq extension), on OSMP's persistent requests (osmp_<op>_init).
 *
 * The program's handle must be a request MPI itself knows as persistent: MPI_Start
 * may run it any number of times, every completion call (in arrays mixed with
 * point-to-point requests) must leave it inactive, not free it, and only
 * MPI_Request_free frees it. A generalized request (nb.c) is complete once and
 * for all, so the handle here is a carrier: a persistent zero-byte receive
 * from self (PMPI_Recv_init on a private duplicate of MPI_COMM_SELF, a tag of
 * its own per request) that MPI completes, inactivates and frees as any
 * persistent receive. What it carries: the end of each run of the OSMP request,
 * told by a zero-byte send to self from whoever reaps that run. MPI_Start,
 * MPI_Startall and MPI_Request_free (profile.c's entry points) look the handle
 * up in a table (only while such requests exist: one load otherwise); for ours,
 * MPI_Start posts the carrier's receive first, then the OSMP run.
 *
 * Reaping is nb.c's: a persistent request is one of its requests (struct
 * osmp__mpi_nb, persistent) that stays on its list between runs, inactive, so
 * the progress that advances MPI_I<op> requests advances these runs too:
 *  - Open MPI: the opal_progress callback, in every MPI call that progresses
 *    (MPI_Wait on the carrier, MPI_Waitall over mixed requests, MPI_Recv ...);
 *  - MPICH polls only the generalized requests a completion call is given, and
 *    a carrier is not one: MPI_Wait, MPI_Test and their -all, -any and -some
 *    forms are intercepted, and while runs are active they test this thread's
 *    requests (osmp__mpi_nb_progress) and then the MPI library's answer
 *    (waits loop over the PMPI test; MPI_Waitall first progresses until the
 *    array's runs are over); with none active they are the PMPI call.
 *    MPI_Request_get_status is nb.c's already.
 * The send is made from that progress path (inside Open MPI's progress too, as
 * its own nonblocking collectives post sends there); it matches the receive
 * posted at MPI_Start, which is what MPI_Wait and the rest see complete.
 *
 * What MPI sees, and why it is right:
 *  - status: count 0, not cancelled, MPI_ERROR MPI_SUCCESS; source 0 and the
 *    carrier's tag (MPI 4.0 section 6.12 leaves a collective's source and tag
 *    undefined; MPICH's own persistent collectives give internal values too);
 *  - a run that failed on OSMP (a lost peer): the communicator's error handler
 *    is called when it is reaped (as for the blocking call); under MPICH the
 *    carrier then receives one byte instead of none, so the completion call
 *    returns an error (MPI_ERR_TRUNCATE, in the status's MPI_ERROR under
 *    MPI_Waitall) whatever the handler did. Not under Open MPI 4.1, which
 *    frees a persistent request that completes in error (the program's handle
 *    would become MPI_REQUEST_NULL): there the handler is all;
 *  - MPI_Cancel: refused (MPI_ERR_REQUEST, through the communicator's error
 *    handler), as MPI refuses it for collectives: cancelling the carrier would
 *    leave OSMP's run going;
 *  - MPI_Request_free of an active one: MPI frees the carrier once its receive
 *    completes, the run completes in later calls (nb.c's orphans);
 *  - a communicator, datatype or operation freed while persistent requests on
 *    it remain: they run on, as MPI says. A request holds its communicator's
 *    state and, through it, the team (comm.c: the team's last MPI_Comm_free
 *    keeps it, on every member, while any member still has such a request), its
 *    packed views their own copies of derived datatypes (made at the _init:
 *    types.c's osmp__mpi_views_keep), packed with MPI_COMM_SELF; a reduction's
 *    datatype and operation are OSMP's since the _init.
 *
 * Decisions: the nonblocking call's (coll.c's bodies, with osmp__mpi_persist set
 * so that they make the request persistent), taken once at the _init: inside
 * one node on OSMP, else (intercommunicators, several nodes, user operations,
 * types OSMP cannot view, the tune table) PMPI_<op>_init. Packed views (derived
 * datatypes) stay open from the _init to the free: each start packs, each run's
 * end unpacks (types.c). OSMP_VERBOSE counts a persistent collective on OSMP at
 * each start (each run is a call), and one passed to MPI once, at its _init
 * (its starts are MPI's).
 *
 * Fortran: MPICH's mpif.h layer calls the C names; its mpi_f08 layer's _init
 * calls reach the C _init here, but its MPI_START, MPI_STARTALL and
 * MPI_REQUEST_FREE call PMPI_ (fortran_p2p.c routes those of ours here) and so
 * do its completion calls (defined below for MPICH: while runs are active
 * they progress, the waits as loops over MPICH's own mpi_f08 tests). Open MPI's Fortran layers
 * call PMPIX_<op>_init, so Fortran programs get Open MPI's own requests there.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/osmp_mpi.h"
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#define USE_MPI OSMP__MPI_USE_MPI

#if defined(OPEN_MPI) ? defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) : MPI_VERSION >= 4
#define HAVE_PERSISTENT_COLLECTIVES 1
#endif

OSMP_MPI_TLS int osmp__mpi_persist;
osmp_atomic64_t osmp__mpi_pc_live; /* persistent requests on OSMP not freed */
static osmp_atomic64_t active;     /* of them, with a run not reaped (MPICH: the completion calls progress) */

/* ---------------------------------------------------------------- carriers: communicator, tags, table */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm carriers = MPI_COMM_NULL; /* a duplicate of MPI_COMM_SELF, errors returned */
static int carriers_failed;

/* Tags 1 .. 32767 (the bound every MPI allows), handed out round robin so that
 * a freed one comes back as late as possible. Under lock. */
#define NTAGS 32768
static unsigned char tag_used[NTAGS / 8];
static int tag_next = 1;

static int take_tag(void)
{
    for (int i = 0; i < NTAGS - 1; i++) {
        int t = tag_next;
        tag_next = tag_next == NTAGS - 1 ? 1 : tag_next + 1;
        if (!(tag_used[t / 8] >> (t % 8) & 1)) {
            tag_used[t / 8] |= (unsigned char)(1u << (t % 8));
            return t;
        }
    }
    return -1;
}

/* Handle -> request, chained in buckets. Under lock. */
#define NBUCKETS 256
struct entry {
    MPI_Request req;
    struct osmp__mpi_nb *w;
    struct entry *next;
};
static struct entry *table[NBUCKETS];

static unsigned bucket(MPI_Request r)
{
    uintptr_t k = 0;
    memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k)); /* (MPICH: an int; Open MPI: a pointer) */
    k ^= k >> 16;
    k ^= k >> 8;
    return (unsigned)(k % NBUCKETS);
}

struct osmp__mpi_nb *osmp__mpi_pc_find(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL) return NULL;
    struct osmp__mpi_nb *w = NULL;
    pthread_mutex_lock(&lock);
    for (struct entry *e = table[bucket(req)]; e && !w; e = e->next)
        if (e->req == req) w = e->w;
    pthread_mutex_unlock(&lock);
    return w;
}

/* The carriers' communicator, made at the first _init (every rank makes its own: no collective). */
static int carriers_ready(void)
{
    pthread_mutex_lock(&lock);
    if (carriers == MPI_COMM_NULL && !carriers_failed) {
        carriers_failed = PMPI_Comm_dup(MPI_COMM_SELF, &carriers) != MPI_SUCCESS ||
                          PMPI_Comm_set_errhandler(carriers, MPI_ERRORS_RETURN) != MPI_SUCCESS;
    }
    int ok = !carriers_failed;
    pthread_mutex_unlock(&lock);
    return ok;
}

void osmp__mpi_pc_finalize(void)
{
    pthread_mutex_lock(&lock);
    if (carriers != MPI_COMM_NULL) PMPI_Comm_free(&carriers);
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- requests */

int osmp__mpi_pc_made(struct osmp__mpi_comm *s, osmp_coll_t c, struct osmp__mpi_nb *w, int rc, MPI_Request *req)
{
    *req = MPI_REQUEST_NULL;
    osmp__mpi_state_made_persistent(s);
    if (rc >= 0 && !w) { /* nothing to do: each start completes at once */
        w = osmp__mpi_nb_new(s, c);
        if (!w) rc = OSMP_ERR_NO_MEMORY;
    }
    if (rc >= 0 && osmp__mpi_views_keep(&w->views, 1) != OSMP_OK) rc = OSMP_ERR_NO_MEMORY;
    struct entry *e = rc >= 0 ? malloc(sizeof(*e)) : NULL;
    if (rc >= 0 && !e) rc = OSMP_ERR_NO_MEMORY;
    if (rc >= 0) {
        pthread_mutex_lock(&lock);
        w->tag = take_tag();
        pthread_mutex_unlock(&lock);
        if (w->tag < 0) rc = OSMP_ERR_NO_MEMORY; /* (32767 persistent collectives alive in this process) */
    }
    if (rc >= 0 && PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, w->tag, carriers, &w->carrier) != MPI_SUCCESS)
        rc = OSMP_ERR_NO_MEMORY;
    if (rc < 0) {
        free(e);
        if (w) {
            w->refs = 0;
            osmp__mpi_pc_destroy(w);
        }
        return osmp__mpi_done(s, c, rc); /* (counted, and the error handler's answer) */
    }
    e->req = w->carrier;
    e->w = w;
    pthread_mutex_lock(&lock);
    unsigned b = bucket(w->carrier);
    e->next = table[b];
    table[b] = e;
    pthread_mutex_unlock(&lock);
    osmp__fetch_add(&osmp__mpi_pc_live, 1);
    osmp__mpi_nb_keep(w);
    *req = w->carrier;
    return MPI_SUCCESS;
}

void osmp__mpi_pc_destroy(struct osmp__mpi_nb *w)
{
    if (w->oreq) osmp_request_free(&w->oreq);
    osmp__mpi_close(&w->views, 0, OSMP__MPI_REQ_COMM);
    if (w->tag > 0) {
        pthread_mutex_lock(&lock);
        tag_used[w->tag / 8] &= (unsigned char)~(1u << (w->tag % 8));
        pthread_mutex_unlock(&lock);
    }
    osmp__mpi_nb_free(w); /* (its state, and with it the team's hold, last) */
}

void osmp__mpi_pc_signal(struct osmp__mpi_nb *w)
{
    static const char one = 0; /* a failed run's byte (the carrier's receive takes none: truncated) */
    if (w->rc < 0 && w->s) osmp__mpi_failed(w->s, w->c, w->rc);
    w->reported = 1; /* (nb.c's osmp__mpi_nb_forget reports the unreported ones: not twice) */
#if defined(OPEN_MPI)
    int bytes = 0; /* (Open MPI frees a persistent request that completes in error: the handle would go) */
#else
    int bytes = w->rc < 0;
#endif
    MPI_Request sent;
    if (PMPI_Isend(&one, bytes, MPI_BYTE, 0, w->tag, carriers, &sent) == MPI_SUCCESS) PMPI_Request_free(&sent);
    osmp__fetch_add(&active, (uint64_t)-1);
}

int osmp__mpi_pc_start(struct osmp__mpi_nb *w, MPI_Request *req)
{
    int rc = PMPI_Start(req); /* the carrier's receive first: the run's end may come at once */
    if (rc != MPI_SUCCESS) return rc;
    osmp__mpi_views_refresh(&w->views, OSMP__MPI_REQ_COMM);
    osmp__fetch_add(&active, 1);
    osmp__mpi_nb_started(w);
    int orc = w->oreq ? osmp_start(&w->oreq) : OSMP_OK;
    osmp__mpi_done(w->s, w->c, OSMP_OK); /* (counted: a failure goes to the handler at the run's end) */
    if (orc < 0 || !w->oreq) osmp__mpi_nb_run_done(w, orc);
    else osmp__mpi_nb_posted(w);
    return MPI_SUCCESS;
}

int osmp__mpi_pc_free(struct osmp__mpi_nb *w, MPI_Request *req)
{
    pthread_mutex_lock(&lock);
    for (struct entry **p = &table[bucket(*req)]; *p; p = &(*p)->next)
        if ((*p)->w == w) {
            struct entry *e = *p;
            *p = e->next;
            free(e);
            break;
        }
    pthread_mutex_unlock(&lock);
    osmp__fetch_add(&osmp__mpi_pc_live, (uint64_t)-1);
    int rc = PMPI_Request_free(req); /* (an active carrier: MPI frees it once the run's end has come) */
    osmp__mpi_nb_release(w);
    return rc;
}

/* A collective cannot be cancelled (MPI 4.0 section 6.12); the carrier could. */
OSMP_MPI_ENTRY(int, MPI_Cancel)(MPI_Request *req)
{
    OSMP_MPI_ENTERED(MPI_Cancel);
    struct osmp__mpi_nb *w = req && osmp__load_relaxed(&osmp__mpi_pc_live) ? osmp__mpi_pc_find(*req) : NULL;
    if (!w) return PMPI_Cancel(req);
    PMPI_Comm_call_errhandler(osmp__mpi_handler_comm(w->s), MPI_ERR_REQUEST);
    return MPI_ERR_REQUEST;
}

/* ---------------------------------------------------------------- MPICH: completion calls progress the runs */

#if !defined(OPEN_MPI)
static inline int running(void)
{
    return osmp__load_relaxed(&active) != 0;
}

/* MPI_<wait>: the PMPI call, or while runs are active a loop of progress and
 * the PMPI test `test` until `done`. */
#define WAIT_ENTRY(name, params, args, test, done)                                                           \
    OSMP_MPI_ENTRY(int, MPI_##name) params                                                                   \
    {                                                                                                        \
        OSMP_MPI_ENTERED(MPI_##name);                                                                        \
        if (!running()) return PMPI_##name args;                                                             \
        for (;;) {                                                                                           \
            osmp__mpi_nb_progress();                                                                         \
            int rc_ = (test);                                                                                \
            if (rc_ != MPI_SUCCESS || (done)) return rc_;                                                    \
        }                                                                                                    \
    }
#define TEST_ENTRY(name, params, args)                                                                       \
    OSMP_MPI_ENTRY(int, MPI_##name) params                                                                   \
    {                                                                                                        \
        OSMP_MPI_ENTERED(MPI_##name);                                                                        \
        if (running()) osmp__mpi_nb_progress();                                                              \
        return PMPI_##name args;                                                                             \
    }

static OSMP_MPI_TLS int flag_; /* (the waits' test flag) */
WAIT_ENTRY(Wait, (MPI_Request *req, MPI_Status *st), (req, st), PMPI_Test(req, &flag_, st), flag_)

/* MPI_Waitall: this thread's runs progress until none of the array's is left,
 * MPICH's engine kept going meanwhile (a peer's rendezvous send to one of the
 * array's receives may be what its run waits behind), then MPICH's own
 * MPI_Waitall. Not a loop over PMPI_Testall: MPICH 4.0.2's fails (MPI_ERR_PENDING
 * in a status) on arrays holding its own persistent collectives. */
static int ours_running(int n, const MPI_Request reqs[])
{
    for (int i = 0; i < n; i++) {
        struct osmp__mpi_nb *w = osmp__mpi_pc_find(reqs[i]);
        if (w && !__atomic_load_n(&w->complete, __ATOMIC_ACQUIRE)) return 1;
    }
    return 0;
}

OSMP_MPI_ENTRY(int, MPI_Waitall)(int n, MPI_Request reqs[], MPI_Status sts[])
{
    OSMP_MPI_ENTERED(MPI_Waitall);
    while (running() && reqs && ours_running(n, reqs)) {
        osmp__mpi_nb_progress();
        osmp__mpi_poke(); /* (MPICH's progress: nb.c) */
    }
    return PMPI_Waitall(n, reqs, sts);
}
WAIT_ENTRY(Waitany, (int n, MPI_Request reqs[], int *index, MPI_Status *st), (n, reqs, index, st),
           PMPI_Testany(n, reqs, index, &flag_, st), flag_)
WAIT_ENTRY(Waitsome, (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[]),
           (n, reqs, outcount, indices, sts), PMPI_Testsome(n, reqs, outcount, indices, sts), *outcount != 0)
TEST_ENTRY(Test, (MPI_Request *req, int *flag, MPI_Status *st), (req, flag, st))
TEST_ENTRY(Testall, (int n, MPI_Request reqs[], int *flag, MPI_Status sts[]), (n, reqs, flag, sts))
TEST_ENTRY(Testany, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st), (n, reqs, index, flag, st))
TEST_ENTRY(Testsome, (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status sts[]),
           (n, reqs, outcount, indices, sts))

/* MPICH's mpi_f08 completion calls call PMPI_Wait and the rest: while runs are
 * active, the waits loop over its own mpi_f08 tests and the tests progress
 * first (arguments passed through as they are: handles, statuses and their
 * MPI_STATUS_IGNORE are that layer's business). An f08 LOGICAL is a default
 * integer, nonzero when true; ierror is optional. */
typedef void (*f_wait_fn)(MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_test_fn)(MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_waitall_fn)(MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_testall_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_waitany_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_testany_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_some_fn)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*f_get_status_fn)(MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
#define NEXT(name, type)                                                                                     \
    static type name##_next;                                                                                 \
    if (__builtin_expect(!name##_next, 0)) name##_next = (type)osmp__mpi_next(#name);
#define F_WAIT(name, wtype, params, args, test, ttype, call, done)                                           \
    EXPORT void name params                                                                                  \
    {                                                                                                        \
        NEXT(name, wtype)                                                                                    \
        NEXT(test, ttype)                                                                                    \
        if (!running()) {                                                                                    \
            name##_next args;                                                                                \
            return;                                                                                          \
        }                                                                                                    \
        MPI_Fint flag = 0, e = MPI_SUCCESS;                                                                  \
        (void)flag; /* (the -some forms have none) */                                                        \
        do {                                                                                                 \
            osmp__mpi_nb_progress();                                                                         \
            test##_next call;                                                                                \
        } while (e == MPI_SUCCESS && !(done));                                                               \
        if (ierr) *ierr = e;                                                                                 \
    }
#define F_TEST(name, type, params, args)                                                                     \
    EXPORT void name params                                                                                  \
    {                                                                                                        \
        NEXT(name, type)                                                                                     \
        if (running()) osmp__mpi_nb_progress();                                                              \
        name##_next args;                                                                                    \
    }
F_WAIT(mpi_wait_f08_, f_wait_fn, (MPI_Fint *req, void *st, MPI_Fint *ierr), (req, st, ierr), mpi_test_f08_,
       f_test_fn, (req, &flag, st, &e), flag)
/* (as MPI_Waitall: MPICH 4.0.2's mpi_f08 MPI_Testall fails on any persistent request, its own too) */
EXPORT void mpi_waitall_f08_(MPI_Fint *n, MPI_Fint *reqs, void *sts, MPI_Fint *ierr)
{
    NEXT(mpi_waitall_f08_, f_waitall_fn)
    for (;;) {
        int left = 0;
        for (MPI_Fint i = 0; running() && !left && i < *n; i++) {
            struct osmp__mpi_nb *w = osmp__mpi_pc_find(MPI_Request_f2c(reqs[i]));
            left = w && !__atomic_load_n(&w->complete, __ATOMIC_ACQUIRE);
        }
        if (!left) break;
        osmp__mpi_nb_progress();
        osmp__mpi_poke();
    }
    mpi_waitall_f08__next(n, reqs, sts, ierr);
}
F_WAIT(mpi_waitany_f08_, f_waitany_fn, (MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, void *st, MPI_Fint *ierr),
       (n, reqs, index, st, ierr), mpi_testany_f08_, f_testany_fn, (n, reqs, index, &flag, st, &e), flag)
F_WAIT(mpi_waitsome_f08_, f_some_fn,
       (MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices, void *sts, MPI_Fint *ierr),
       (n, reqs, outcount, indices, sts, ierr), mpi_testsome_f08_, f_some_fn, (n, reqs, outcount, indices, sts, &e),
       *outcount != 0)
F_TEST(mpi_test_f08_, f_test_fn, (MPI_Fint *req, MPI_Fint *flag, void *st, MPI_Fint *ierr), (req, flag, st, ierr))
F_TEST(mpi_testall_f08_, f_testall_fn, (MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, void *sts, MPI_Fint *ierr),
       (n, reqs, flag, sts, ierr))
F_TEST(mpi_testany_f08_, f_testany_fn,
       (MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag, void *st, MPI_Fint *ierr),
       (n, reqs, index, flag, st, ierr))
F_TEST(mpi_testsome_f08_, f_some_fn,
       (MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices, void *sts, MPI_Fint *ierr),
       (n, reqs, outcount, indices, sts, ierr))
F_TEST(mpi_request_get_status_f08_, f_get_status_fn, (MPI_Fint *req, MPI_Fint *flag, void *st, MPI_Fint *ierr),
       (req, flag, st, ierr))
#endif

/* ---------------------------------------------------------------- the _init entry points */

#if defined(HAVE_PERSISTENT_COLLECTIVES)
#if defined(OPEN_MPI)
#define PC_NAME(name) MPIX_##name##_init
#define PC_PMPI(name) PMPIX_##name##_init
#else
#define PC_NAME(name) MPI_##name##_init
#define PC_PMPI(name) PMPI_##name##_init
#endif
#define PC_ENTRY_OF(fn) OSMP_MPI_ENTRY(int, fn)
#define PC_ENTERED(fn) OSMP_MPI_ENTERED(fn)

/* On OSMP: `body` (coll.c's call, the request made persistent); else PMPI_<name>_init with `args`. */
#define PC_ENTRY(name, c, params, body, args)                                                                \
    PC_ENTRY_OF(PC_NAME(name)) params                                                                        \
    {                                                                                                        \
        PC_ENTERED(PC_NAME(name));                                                                           \
        int rc = USE_MPI;                                                                                    \
        if (osmp__mpi_nb_on_osmp(c, req) && carriers_ready()) {                                              \
            osmp__mpi_persist = 1;                                                                           \
            rc = (body);                                                                                     \
            osmp__mpi_persist = 0;                                                                           \
        }                                                                                                    \
        return rc == USE_MPI ? PC_PMPI(name) args : rc;                                                      \
    }

PC_ENTRY(Barrier, OSMP_COLL_BARRIER, (MPI_Comm comm, MPI_Info info, MPI_Request *req), osmp__mpi_nb_barrier(comm, req),
         (comm, info, req))
PC_ENTRY(Bcast, OSMP_COLL_BCAST,
         (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_bcast(buf, count, dt, root, comm, req), (buf, count, dt, root, comm, info, req))

#define P_RED                                                                                                \
    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info,     \
     MPI_Request *req)
#define A_RED (sendbuf, recvbuf, count, dt, op, comm, info, req)
PC_ENTRY(Reduce, OSMP_COLL_REDUCE,
         (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
          MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_reduction(OSMP_COLL_REDUCE, sendbuf, recvbuf, count, dt, op, root, comm, req),
         (sendbuf, recvbuf, count, dt, op, root, comm, info, req))
PC_ENTRY(Allreduce, OSMP_COLL_ALLREDUCE, P_RED,
         osmp__mpi_nb_reduction(OSMP_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, 0, comm, req), A_RED)
#define NODE_REDUCTION(name, c)                                                                              \
    PC_ENTRY(name, c, P_RED, osmp__mpi_nb_node_reduction(c, sendbuf, recvbuf, count, dt, op, comm, req), A_RED)
NODE_REDUCTION(Reduce_scatter_block, OSMP_COLL_REDUCE_SCATTER_BLOCK)
NODE_REDUCTION(Scan, OSMP_COLL_SCAN)
NODE_REDUCTION(Exscan, OSMP_COLL_EXSCAN)

#define P_MOVE(...)                                                                                          \
    (const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt, __VA_ARGS__   \
     MPI_Comm comm, MPI_Info info, MPI_Request *req)
#define ROOTED(name, c)                                                                                      \
    PC_ENTRY(name, c, P_MOVE(int root, ),                                                                    \
             osmp__mpi_nb_rooted(c, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, req),             \
             (sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, info, req))
ROOTED(Gather, OSMP_COLL_GATHER)
ROOTED(Scatter, OSMP_COLL_SCATTER)
#define EVERYONE(name, c)                                                                                    \
    PC_ENTRY(name, c, P_MOVE(), osmp__mpi_nb_everyone(c, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req),  \
             (sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, info, req))
EVERYONE(Allgather, OSMP_COLL_ALLGATHER)
EVERYONE(Alltoall, OSMP_COLL_ALLTOALL)

PC_ENTRY(Gatherv, OSMP_COLL_GATHERV,
         (const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts, const int *displs,
          MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_rooted_v(OSMP_COLL_GATHERV, sendbuf, scount, NULL, NULL, sdt, recvbuf, 0, rcounts, displs, rdt,
                               root, comm, req),
         (sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm, info, req))
PC_ENTRY(Scatterv, OSMP_COLL_SCATTERV,
         (const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype sdt, void *recvbuf, int rcount,
          MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_rooted_v(OSMP_COLL_SCATTERV, sendbuf, 0, scounts, displs, sdt, recvbuf, rcount, NULL, NULL, rdt,
                               root, comm, req),
         (sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm, info, req))
PC_ENTRY(Allgatherv, OSMP_COLL_ALLGATHERV,
         (const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts, const int *displs,
          MPI_Datatype rdt, MPI_Comm comm, MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, req),
         (sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, info, req))
PC_ENTRY(Alltoallv, OSMP_COLL_ALLTOALLV,
         (const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt, void *recvbuf,
          const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm, MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, req),
         (sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, info, req))
PC_ENTRY(Reduce_scatter, OSMP_COLL_REDUCE_SCATTER,
         (const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
          MPI_Info info, MPI_Request *req),
         osmp__mpi_nb_reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm, req),
         (sendbuf, recvbuf, rcounts, dt, op, comm, info, req))
#endif
