/*
 * libosmp_mpi: the nonblocking collectives, MPI_Ibarrier .. MPI_Iexscan, on
 * OSMP's requests (osmp_i<op>), handed to the program as MPI generalized
 * requests so that every MPI completion call (MPI_Wait, MPI_Testsome, ...,
 * in arrays mixed with point-to-point requests) completes them.
 *
 * Decisions: the blocking call's (coll.c runs the same bodies with a request),
 * and only on a communicator inside one node: across nodes every MPI_I<op>
 * goes to PMPI_I<op>. A call counts under its collective's name ("allreduce")
 * when it is posted.
 *
 * Completion: an OSMP request advances in OSMP calls (its post, tests, waits,
 * any blocking call on its team); a request here is complete once osmp_test or
 * osmp_wait reaped it: its views close (packed output unpacked), and
 * MPI_Grequest_complete tells MPI. Who reaps:
 *  - Open MPI 4.1 (no extended generalized requests): a callback registered
 *    with opal_progress_register while requests are outstanding tests every
 *    outstanding request of the calling thread. opal_progress runs in every
 *    blocking MPI call and every test, so MPI_Wait on our request, MPI_Recv or
 *    MPI_Waitall over mixed requests all move ours.
 *  - MPICH: MPIX_Grequest_start's poll function tests the request (MPI_Test*,
 *    MPI_Wait, MPI_Waitany/some), its wait function waits for it (MPI_Waitall).
 *    MPICH's MPI_Request_get_status calls neither: it is intercepted to test
 *    this thread's requests first.
 * A request advances only in the thread that posted it (a team is driven by
 * one thread: comm.c gives each communicator its own team under
 * MPI_THREAD_MULTIPLE).
 *
 * Failures: the OSMP status of a failed request (a peer lost) goes, when MPI
 * asks for the request's status (query_fn: MPI_Wait, MPI_Test, ...), to the
 * communicator's error handler as the blocking call's does (osmp__mpi_failed),
 * and back as the request's error code (the status's MPI_ERROR).
 *
 * Persistent collectives (persist.c) are requests of this list too, between
 * their runs as well (inactive: complete): their runs are reaped by the same
 * sweeps, and their end satisfies a carrier receive instead of completing a
 * generalized request.
 *
 * Lifetime: a request here (struct osmp__mpi_nb) holds two references, MPI's
 * (its free_fn: the program waited for it, or freed it) and ours (dropped when
 * it is complete). Every live one is on the `live` list. What it uses stays
 * until it is freed, whatever the program frees after the post (MPI allows
 * MPI_Type_free, MPI_Op_free and MPI_Comm_free right after it): the datatypes
 * its views unpack with are its own copies (osmp__mpi_views_keep), they pack
 * with MPI_COMM_SELF (OSMP__MPI_REQ_COMM), it holds its communicator's state
 * (osmp__mpi_state_hold) and through it the team (comm.c keeps a team while
 * requests run on it; the team's last MPI_Comm_free waits for them:
 * osmp__mpi_nb_settle). A reduction's datatype and operation became OSMP's at
 * the post (predefined ones only: user operations go to MPI), so nothing of
 * them is kept.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/knobs.h"
#include "mpi/osmp_mpi.h"

#define USE_MPI OSMP__MPI_USE_MPI

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct osmp__mpi_nb *live;   /* every request not yet freed (under lock) */
static osmp_atomic64_t outstanding; /* of them, not complete */
static long orphans;                /* of those, freed by the program (MPI_Request_free): reaped by any sweep */

/* A call with nothing to do gets a generalized request complete at once, on this state. */
static char nothing;

/* ---------------------------------------------------------------- progress, both ways */

/*
 * MPI's progress rule, both ways (docs/mpi.md, "Progress"):
 *  - our requests advance while the thread that posted them is inside any MPI
 *    call (issue 45): Open MPI runs a callback registered with
 *    opal_progress_register while requests are outstanding; MPICH 4.3 and
 *    later an asynchronous "thing" (MPIX_Async_start, looked up at run time:
 *    the build's mpi.h may be older) whose poll function its progress calls
 *    while requests are outstanding; with neither (MPICH 4.0 to 4.2) OSMP's
 *    progress thread moves them (OSMP_PROGRESS=auto, osmp_set_progress_driver
 *    says which). MPI hears of the end (MPI_Grequest_complete) in a test or
 *    wait of the request, or in the callback;
 *  - the MPI library progresses while this thread waits inside OSMP (issue
 *    49): OSMP calls poke (osmp_set_wait_poll) once its spin is over and then
 *    at most a millisecond apart: opal_progress; MPIX_Stream_progress where
 *    MPICH has it (4.1 and later); else PMPI_Iprobe on MPI_COMM_WORLD for a
 *    message from myself under a tag of ours, which drives MPICH's engine
 *    (MPID_Progress_test) and changes nothing (a probe receives nothing). Not
 *    on a duplicate of MPI_COMM_SELF: MPICH's ch4 answers a probe on any
 *    one-process communicator from its self queue, without progress. poke
 *    runs only in a thread that may call MPI now: below
 *    MPI_THREAD_SERIALIZED the thread that set the library up (an MPI call's,
 *    the main thread's); never OSMP's progress thread (wait.c); not after
 *    MPI_Finalize began. Our own callback (and MPICH's asynchronous poll)
 *    does nothing inside it: it would take the lock of a team this thread may
 *    be waiting in (request.c's sweep skips a busy team, its osmp_test would
 *    block), and the waiter moves its other teams itself (request.c's hook).
 */
static OSMP_MPI_TLS int in_callback; /* inside our callback, or inside poke */
static int thread_level;              /* MPI's (comm.c's setup) */
static pthread_t mpi_thread;          /* the thread that set up */
static osmp_atomic32_t poke_off;      /* MPI_Finalize is under way */

#if defined(OPEN_MPI)
typedef int (*progress_fn)(void);
static int (*progress_register)(progress_fn), (*progress_unregister)(progress_fn);
static int (*opal_progress_fn)(void);
static int registered; /* under lock */
static pthread_once_t progress_once = PTHREAD_ONCE_INIT;
static int progress_cb(void);

static void progress_find(void)
{
    progress_register = (int (*)(progress_fn))dlsym(RTLD_DEFAULT, "opal_progress_register");
    progress_unregister = (int (*)(progress_fn))dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    opal_progress_fn = (int (*)(void))dlsym(RTLD_DEFAULT, "opal_progress");
}

/* Nonblocking calls run on OSMP only where someone advances them. */
static int usable(void)
{
    pthread_once(&progress_once, progress_find);
    return progress_register && progress_unregister;
}

/* Registered while requests are outstanding (and unregistered outside the callback). */
static void progress_on(void)
{
    pthread_mutex_lock(&lock);
    if (!registered) registered = progress_register(progress_cb) == 0;
    pthread_mutex_unlock(&lock);
}

static void progress_off(int always)
{
    if (in_callback) return;
    pthread_mutex_lock(&lock);
    if (registered && (always || !osmp__load_relaxed(&outstanding))) {
        progress_unregister(progress_cb);
        registered = 0;
    }
    pthread_mutex_unlock(&lock);
}

static int mpi_progress(void)
{
    return opal_progress_fn() > 0;
}
#else
/* MPICH 4.3's asynchronous things (its mpix.h), declared here: the build's may be older. */
typedef struct osmp__mpich_async_thing *async_thing_t;
typedef int(async_poll_t)(async_thing_t);
#define ASYNC_NOPROGRESS 0
#define ASYNC_DONE 1
#define STREAM_NULL 0x3c000000 /* MPIX_STREAM_NULL: MPICH's handles are ints */
static int (*async_start)(async_poll_t *, void *, int);
static int (*stream_progress)(int);
static osmp_atomic32_t async_on; /* a thing is registered (or being) */
static int probe_rank;
#define PROBE_TAG 32749 /* (any tag: a probe receives nothing; one the program is unlikely to leave a message under to itself) */
static int sweep(osmp_team_t team, int wait, int try);

static int usable(void)
{
    return 1;
}

/* MPICH's progress calls it while requests are outstanding: this thread's are tested. */
static int async_poll(async_thing_t thing)
{
    (void)thing;
    if (!osmp__load_relaxed(&outstanding)) { /* done, unless a post came meanwhile (it saw async_on set) */
        osmp__store32(&async_on, 0);
        osmp__fence_seq_cst(); /* (pairs with the post's count, then its look at async_on) */
        if (!osmp__load_relaxed(&outstanding) || !osmp__cas32(&async_on, 0, 1)) return ASYNC_DONE;
    }
    if (in_callback) return ASYNC_NOPROGRESS;
    in_callback = 1;
    sweep(NULL, 0, 1);
    in_callback = 0;
    return ASYNC_NOPROGRESS;
}

/* A thing is registered while requests are outstanding (MPICH 4.3 and later). */
static void progress_on(void)
{
    osmp__fence_seq_cst();
    if (async_start && !osmp__load32(&async_on) && osmp__cas32(&async_on, 0, 1) &&
        async_start(async_poll, NULL, STREAM_NULL) != MPI_SUCCESS)
        osmp__store32(&async_on, 0);
}

static void progress_off(int always)
{
    (void)always; /* (the poll function says it is done) */
}

static int mpi_progress(void)
{
    if (stream_progress) {
        stream_progress(STREAM_NULL);
    } else {
        int flag;
        PMPI_Iprobe(probe_rank, PROBE_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    return 0; /* (MPICH does not say whether anything moved) */
}
#endif

/* osmp_set_wait_poll's function: the MPI library's progress from a thread waiting inside OSMP. */
static int poke(void *arg)
{
    (void)arg;
    if (osmp__load32(&poke_off) || in_callback ||
        (thread_level < MPI_THREAD_SERIALIZED && !pthread_equal(pthread_self(), mpi_thread)))
        return 0;
    in_callback = 1;
    int did = mpi_progress();
    in_callback = 0;
    return did;
}

int osmp__mpi_poke(void)
{
    return poke(NULL);
}

#if !defined(OPEN_MPI)
/* The same at most every POKE_NS of this thread: MPICH's MPI_Wait calls a
 * generalized request's poll function in a loop, and nothing else. */
#define POKE_NS 20000
static OSMP_MPI_TLS struct timespec poked;
static void poke_due(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - poked.tv_sec) * 1000000000L + (now.tv_nsec - poked.tv_nsec) < POKE_NS) return;
    poked = now;
    poke(NULL);
}
#endif

int osmp__mpi_progress_setup(int level, char *say, size_t len)
{
    thread_level = level;
    mpi_thread = pthread_self();
    const char *knob = osmp__knob_str(OSMP_KNOB_PROGRESS);
    int thread = !strcmp(knob, "thread"), none = !strcmp(knob, "none");
#if defined(OPEN_MPI)
    int external = usable();
    const char *by = external ? "Open MPI's progress (a callback, opal_progress_register)" : NULL;
    const char *poll = opal_progress_fn ? "opal_progress" : NULL;
#else
    async_start = (int (*)(async_poll_t *, void *, int))dlsym(RTLD_DEFAULT, "MPIX_Async_start");
    stream_progress = (int (*)(int))dlsym(RTLD_DEFAULT, "MPIX_Stream_progress");
    PMPI_Comm_rank(MPI_COMM_WORLD, &probe_rank);
    int external = async_start != NULL;
    const char *by = external ? "MPICH's progress (MPIX_Async_start)" : NULL;
    const char *poll = stream_progress ? "MPIX_Stream_progress" : "PMPI_Iprobe on MPI_COMM_WORLD";
#endif
    osmp_set_progress_driver(external);
    if (poll) osmp_set_wait_poll(poke, NULL);
    const char *thr = thread || (!none && !external) ? "OSMP's progress thread" : NULL;
    snprintf(say, len, "nonblocking collectives progress in %s%s%s%s; a wait inside OSMP calls %s",
             by ? by : "", by && thr ? " and " : "", thr ? thr : "",
             by || thr ? " (and the MPI calls that test or wait for them)" : "the MPI calls that test or wait for them",
             poll ? poll : "nothing (opal_progress not found)");
    return external;
}

void osmp__mpi_progress_end(void)
{
    osmp__store32(&poke_off, 1);
    osmp_set_wait_poll(NULL, NULL);
}

/* ---------------------------------------------------------------- requests */

struct osmp__mpi_nb *osmp__mpi_nb_new(struct osmp__mpi_comm *s, osmp_coll_t c)
{
    /* (not calloc, nor a whole memset, which GCC turns into one: glibc's
     * calloc skips the thread cache; the views are initialised below) */
    struct osmp__mpi_nb *w = malloc(sizeof(*w));
    if (!w) return NULL;
    memset(w, 0, offsetof(struct osmp__mpi_nb, views));
    w->s = s;
    w->c = c;
    w->refs = 2;
    w->greq = MPI_REQUEST_NULL;
    w->owner = pthread_self();
    w->persistent = osmp__mpi_persist;
    w->carrier = MPI_REQUEST_NULL;
    osmp__mpi_views_init(&w->views);
    w->views.owned = 0;
    osmp__mpi_state_hold(s, w->persistent);
    return w;
}

void osmp__mpi_nb_free(struct osmp__mpi_nb *w)
{
    osmp__mpi_views_release(&w->views);
    osmp__mpi_state_put(w->s, w->persistent);
    free(w);
}

static void unref(struct osmp__mpi_nb *w)
{
    pthread_mutex_lock(&lock);
    int gone = --w->refs == 0;
    if (gone) {
        if (w->prev) w->prev->next = w->next;
        else live = w->next;
        if (w->next) w->next->prev = w->prev;
    }
    pthread_mutex_unlock(&lock);
    if (gone && w->persistent) osmp__mpi_pc_destroy(w);
    else if (gone) osmp__mpi_nb_free(w);
}

/* Take w to advance it (0: complete, or another thread has it); MPICH's poll and wait functions. */
static __attribute__((unused)) int claim(struct osmp__mpi_nb *w)
{
    pthread_mutex_lock(&lock);
    int ok = !w->complete && !w->busy;
    if (ok) w->busy = 1;
    pthread_mutex_unlock(&lock);
    return ok;
}

/* w's OSMP request is reaped with status rc (w claimed): its views close (a
 * persistent one's outputs are unpacked, its views stay), MPI hears of it, our
 * reference goes. */
static void complete(struct osmp__mpi_nb *w, int rc)
{
    w->rc = rc;
    if (w->persistent && rc == OSMP_OK) osmp__mpi_views_unpack(&w->views, OSMP__MPI_REQ_COMM);
    else if (!w->persistent) osmp__mpi_close(&w->views, rc == OSMP_OK, OSMP__MPI_REQ_COMM);
    pthread_mutex_lock(&lock);
    w->complete = 1;
    w->busy = 0;
    if (w->mpi_freed) orphans--;
    osmp__fetch_add(&outstanding, (uint64_t)-1);
    pthread_mutex_unlock(&lock);
    if (w->persistent) osmp__mpi_pc_signal(w); /* (its carrier: persist.c) */
    else PMPI_Grequest_complete(w->greq); /* (may run free_fn: the program freed it already) */
    unref(w);
}

/* Test (or wait for) a claimed request; 1 when it is complete now. */
static int advance(struct osmp__mpi_nb *w, int wait)
{
    int done = 1, rc = wait ? osmp_wait(&w->oreq) : osmp_test(&w->oreq, &done);
    if (!done) {
        pthread_mutex_lock(&lock);
        w->busy = 0;
        pthread_mutex_unlock(&lock);
        return 0;
    }
    complete(w, rc);
    return 1;
}

/* Advance requests (tested, or waited for if `wait`): this thread's, or
 * (team non-NULL) those on team whoever posted them; in posting order. Returns how
 * many completed. try: give up if the lock is busy (the progress callback). */
static int sweep(osmp_team_t team, int wait, int try)
{
    if (try ? pthread_mutex_trylock(&lock) : pthread_mutex_lock(&lock)) return 0;
    pthread_t me = pthread_self();
    struct osmp__mpi_nb *mine = NULL;
    for (struct osmp__mpi_nb *w = live; w; w = w->next)
        if (!w->complete && !w->busy && (team ? w->s->team == team : pthread_equal(w->owner, me))) {
            w->busy = 1;
            w->next_mine = mine; /* (live is newest first: mine is in posting order) */
            mine = w;
        }
    pthread_mutex_unlock(&lock);
    int n = 0;
    for (struct osmp__mpi_nb *w = mine, *next; w; w = next) {
        next = w->next_mine;
        n += advance(w, wait);
    }
    return n;
}

/* Requests the program freed while active have no test or wait of their own (MPICH). */
static void reap_orphans(void)
{
    if (__atomic_load_n(&orphans, __ATOMIC_RELAXED)) sweep(NULL, 0, 0);
}

/* The MPI error code of a complete request; a failure goes to the communicator's
 * error handler (and its line is printed) once. */
static int code_of(struct osmp__mpi_nb *w)
{
    if (w->rc >= 0) return MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    int first = !w->reported;
    w->reported = 1;
    struct osmp__mpi_comm *s = w->s;
    pthread_mutex_unlock(&lock);
    if (first)
        w->code = s ? osmp__mpi_failed(s, w->c, w->rc) : w->rc == OSMP_ERR_NO_MEMORY ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    return w->code;
}

/* ---------------------------------------------------------------- the generalized request's functions */

/* A collective's status, as MPI's own: source and tag 0, nothing received. */
static int query_fn(void *state, MPI_Status *st)
{
    int code = state == &nothing || !((struct osmp__mpi_nb *)state)->complete ? MPI_SUCCESS : code_of(state);
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 0;
    st->MPI_TAG = 0;
    st->MPI_ERROR = code;
    return code;
}

static int free_fn(void *state)
{
    if (state == &nothing) return MPI_SUCCESS;
    struct osmp__mpi_nb *w = state;
    pthread_mutex_lock(&lock);
    w->mpi_freed = 1;
    if (!w->complete) orphans++; /* (MPICH: MPI_Request_free on an active one) */
    pthread_mutex_unlock(&lock);
    unref(w);
    progress_off(0);
    return MPI_SUCCESS;
}

/* A collective cannot be cancelled (MPI 4.0 section 6.12). */
static int cancel_fn(void *state, int complete)
{
    (void)state, (void)complete;
    return MPI_ERR_REQUEST;
}

#if defined(OPEN_MPI)
/* opal_progress's callback: cheap when nothing is outstanding, never re-entered (nor run inside poke). */
static int progress_cb(void)
{
    if (!osmp__load_relaxed(&outstanding) || in_callback) return 0;
    in_callback = 1;
    int n = sweep(NULL, 0, 1);
    in_callback = 0;
    return n;
}

static int start_greq(void *state, MPI_Request *greq)
{
    return PMPI_Grequest_start(query_fn, free_fn, cancel_fn, state, greq);
}
#else
/* MPI_Test*, MPI_Wait, MPI_Waitany, MPI_Waitsome. MPICH's MPI_Wait calls it in
 * a loop and progresses nothing else: a request not done yet pokes MPICH's
 * engine (a peer's send to this process may be what it waits behind). */
static int poll_fn(void *state, MPI_Status *st)
{
    (void)st;
    struct osmp__mpi_nb *w = state;
    if (state != &nothing && claim(w) && !advance(w, 0)) poke_due();
    reap_orphans();
    return MPI_SUCCESS;
}

static int wait_fn(int n, void **states, double timeout, MPI_Status *st)
{
    (void)timeout, (void)st;
    for (int i = 0; i < n; i++) {
        struct osmp__mpi_nb *w = states[i];
        if (states[i] != &nothing && claim(w)) advance(w, 1);
    }
    return MPI_SUCCESS;
}

static int start_greq(void *state, MPI_Request *greq)
{
    return PMPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, state, greq);
}

/* MPICH's MPI_Request_get_status polls no generalized request: test ours first. */
OSMP_MPI_ENTRY(int, MPI_Request_get_status)(MPI_Request req, int *flag, MPI_Status *st)
{
    OSMP_MPI_ENTERED(MPI_Request_get_status);
    if (osmp__load_relaxed(&outstanding)) sweep(NULL, 0, 0);
    return PMPI_Request_get_status(req, flag, st);
}
#endif

int osmp__mpi_nb_post(struct osmp__mpi_comm *s, osmp_coll_t c, struct osmp__mpi_nb *w, int rc, MPI_Request *req)
{
    if (osmp__mpi_persist) return osmp__mpi_pc_made(s, c, w, rc, req);
    *req = MPI_REQUEST_NULL;
    if (rc < 0) {
        if (w) {
            osmp__mpi_close(&w->views, 0, OSMP__MPI_REQ_COMM);
            osmp__mpi_nb_free(w);
        }
        return osmp__mpi_done(s, c, rc); /* (the error handler's answer) */
    }
    osmp__mpi_done(s, c, OSMP_OK);
    if (w && osmp__mpi_views_keep(&w->views, 0) != OSMP_OK) {
        /* No copy of a derived datatype: the call ends here, while the program's datatype is valid (a
         * complete request: the blocking call's behaviour, as when MPI cannot start the request below). */
        osmp__mpi_close(&w->views, osmp_wait(&w->oreq) == OSMP_OK, OSMP__MPI_REQ_COMM);
        osmp__mpi_nb_free(w);
        w = NULL;
    }
    MPI_Request greq;
    int mrc = start_greq(w ? (void *)w : &nothing, &greq);
    if (mrc != MPI_SUCCESS || !w) {
        if (w) { /* (no MPI request to give: it ends here) */
            osmp__mpi_close(&w->views, osmp_wait(&w->oreq) == OSMP_OK, OSMP__MPI_REQ_COMM);
            osmp__mpi_nb_free(w);
        } else if (mrc == MPI_SUCCESS) {
            PMPI_Grequest_complete(greq);
            *req = greq;
        }
        return mrc;
    }
    w->greq = greq;
    pthread_mutex_lock(&lock);
    w->next = live;
    if (live) live->prev = w;
    live = w;
    osmp__fetch_add(&outstanding, 1);
    pthread_mutex_unlock(&lock);
    progress_on();
    reap_orphans();
    *req = greq;
    return MPI_SUCCESS;
}

void osmp__mpi_nb_forget(struct osmp__mpi_comm *s)
{
    if (!__atomic_load_n(&live, __ATOMIC_RELAXED)) return;
    /* Failures not reported yet go to the handler now, while the communicator is there (later ones go to
     * MPI_COMM_WORLD's: osmp__mpi_handler_comm). */
    struct osmp__mpi_nb *failed = NULL;
    pthread_mutex_lock(&lock);
    for (struct osmp__mpi_nb *w = live; w; w = w->next)
        if (w->s == s && w->complete && w->rc < 0 && !w->reported) {
            w->refs++;
            w->next_mine = failed;
            failed = w;
        }
    pthread_mutex_unlock(&lock);
    for (struct osmp__mpi_nb *w = failed, *next; w; w = next) {
        next = w->next_mine;
        code_of(w);
        unref(w);
    }
}

void osmp__mpi_nb_settle(osmp_team_t team)
{
    if (__atomic_load_n(&live, __ATOMIC_RELAXED)) sweep(team, 1, 0); /* (collective: every member is here) */
}

int osmp__mpi_nb_progress(void)
{
    return osmp__load_relaxed(&outstanding) ? sweep(NULL, 0, 0) : 0;
}

void osmp__mpi_nb_keep(struct osmp__mpi_nb *w)
{
    w->refs = 1;
    w->complete = 1;
    pthread_mutex_lock(&lock);
    w->next = live;
    if (live) live->prev = w;
    live = w;
    pthread_mutex_unlock(&lock);
}

void osmp__mpi_nb_started(struct osmp__mpi_nb *w)
{
    pthread_mutex_lock(&lock);
    w->complete = 0;
    w->reported = 0;
    w->rc = OSMP_OK;
    w->busy = 1; /* (its caller posts it, then lets go: osmp__mpi_nb_posted or osmp__mpi_nb_run_done) */
    w->refs++;
    w->owner = pthread_self();
    osmp__fetch_add(&outstanding, 1);
    pthread_mutex_unlock(&lock);
    progress_on();
}

void osmp__mpi_nb_posted(struct osmp__mpi_nb *w)
{
    pthread_mutex_lock(&lock);
    w->busy = 0;
    pthread_mutex_unlock(&lock);
}

void osmp__mpi_nb_run_done(struct osmp__mpi_nb *w, int rc)
{
    complete(w, rc);
}

void osmp__mpi_nb_release(struct osmp__mpi_nb *w)
{
    pthread_mutex_lock(&lock);
    w->mpi_freed = 1;
    if (!w->complete) orphans++;
    pthread_mutex_unlock(&lock);
    unref(w);
    progress_off(0);
}

void osmp__mpi_nb_finalize(void)
{
    for (;;) { /* every rank is here: outstanding requests (freed while active) complete */
        struct osmp__mpi_nb *w = NULL;
        pthread_mutex_lock(&lock);
        for (w = live; w && (w->complete || w->busy); w = w->next) {}
        if (w) w->busy = 1;
        pthread_mutex_unlock(&lock);
        if (!w) break;
        advance(w, 1);
    }
    progress_off(1);
    osmp__mpi_pc_finalize();
}

/* ---------------------------------------------------------------- the MPI_I<op> entry points */

/* On OSMP, where the call is not to MPI anyway: a request to give back, and
 * nonblocking calls that someone can advance (persist.c's too). */
int osmp__mpi_nb_on_osmp(osmp_coll_t c, MPI_Request *req)
{
    if (!req) return 0; /* (MPI raises the error) */
    if (__builtin_expect(usable(), 1)) return 1;
    osmp__mpi_pass(c, R_SETUP);
    return 0;
}

/* MPI_<name>: on OSMP (`body`, coll.c's call with the request), else PMPI_<name> with `args`. */
#define NB_ENTRY(name, c, params, body, args)                                                                \
    OSMP_MPI_ENTRY(int, MPI_##name) params                                                                   \
    {                                                                                                        \
        OSMP_MPI_ENTERED(MPI_##name);                                                                        \
        int rc = osmp__mpi_nb_on_osmp(c, req) ? (body) : USE_MPI;                                                         \
        return rc == USE_MPI ? PMPI_##name args : rc;                                                        \
    }

NB_ENTRY(Ibarrier, OSMP_COLL_BARRIER, (MPI_Comm comm, MPI_Request *req), osmp__mpi_nb_barrier(comm, req),
         (comm, req))
NB_ENTRY(Ibcast, OSMP_COLL_BCAST, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req),
         osmp__mpi_nb_bcast(buf, count, dt, root, comm, req), (buf, count, dt, root, comm, req))

/* reduce, allreduce; reduce_scatter_block, scan, exscan */
#define P_RED (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
#define A_RED (sendbuf, recvbuf, count, dt, op, comm, req)
NB_ENTRY(Ireduce, OSMP_COLL_REDUCE,
         (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
          MPI_Request *req),
         osmp__mpi_nb_reduction(OSMP_COLL_REDUCE, sendbuf, recvbuf, count, dt, op, root, comm, req),
         (sendbuf, recvbuf, count, dt, op, root, comm, req))
NB_ENTRY(Iallreduce, OSMP_COLL_ALLREDUCE, P_RED,
         osmp__mpi_nb_reduction(OSMP_COLL_ALLREDUCE, sendbuf, recvbuf, count, dt, op, 0, comm, req), A_RED)
#define NODE_REDUCTION(name, c)                                                                              \
    NB_ENTRY(name, c, P_RED, osmp__mpi_nb_node_reduction(c, sendbuf, recvbuf, count, dt, op, comm, req), A_RED)
NODE_REDUCTION(Ireduce_scatter_block, OSMP_COLL_REDUCE_SCATTER_BLOCK)
NODE_REDUCTION(Iscan, OSMP_COLL_SCAN)
NODE_REDUCTION(Iexscan, OSMP_COLL_EXSCAN)

/* gather, scatter; allgather, alltoall */
#define P_MOVE(...)                                                                                          \
    (const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt, __VA_ARGS__   \
     MPI_Comm comm, MPI_Request *req)
#define ROOTED(name, c)                                                                                      \
    NB_ENTRY(name, c, P_MOVE(int root, ),                                                                    \
             osmp__mpi_nb_rooted(c, sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, req),             \
             (sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, req))
ROOTED(Igather, OSMP_COLL_GATHER)
ROOTED(Iscatter, OSMP_COLL_SCATTER)
#define EVERYONE(name, c)                                                                                    \
    NB_ENTRY(name, c, P_MOVE(), osmp__mpi_nb_everyone(c, sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req),  \
             (sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req))
EVERYONE(Iallgather, OSMP_COLL_ALLGATHER)
EVERYONE(Ialltoall, OSMP_COLL_ALLTOALL)

/* the vector variants */
NB_ENTRY(Igatherv, OSMP_COLL_GATHERV,
         (const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts, const int *displs,
          MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req),
         osmp__mpi_nb_rooted_v(OSMP_COLL_GATHERV, sendbuf, scount, NULL, NULL, sdt, recvbuf, 0, rcounts, displs, rdt,
                               root, comm, req),
         (sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm, req))
NB_ENTRY(Iscatterv, OSMP_COLL_SCATTERV,
         (const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype sdt, void *recvbuf, int rcount,
          MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req),
         osmp__mpi_nb_rooted_v(OSMP_COLL_SCATTERV, sendbuf, 0, scounts, displs, sdt, recvbuf, rcount, NULL, NULL, rdt,
                               root, comm, req),
         (sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm, req))
NB_ENTRY(Iallgatherv, OSMP_COLL_ALLGATHERV,
         (const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts, const int *displs,
          MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req),
         osmp__mpi_nb_allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, req),
         (sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, req))
NB_ENTRY(Ialltoallv, OSMP_COLL_ALLTOALLV,
         (const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt, void *recvbuf,
          const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req),
         osmp__mpi_nb_alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, req),
         (sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, req))
NB_ENTRY(Ireduce_scatter, OSMP_COLL_REDUCE_SCATTER,
         (const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
          MPI_Request *req),
         osmp__mpi_nb_reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm, req),
         (sendbuf, recvbuf, rcounts, dt, op, comm, req))
