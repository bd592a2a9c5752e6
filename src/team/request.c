/*
 * Nonblocking and persistent collectives: the team's queue of requests and
 * their progress (docs/design.md section 11).
 *
 * Requests run in posting order, one at a time per participant: the head of
 * the queue runs, the others wait behind it. Every participant posts in the
 * same order, so every participant runs the same calls in the same order, and
 * each call's steps, slots and "done reading" debts follow the previous
 * call's exactly as for blocking calls; nothing in the data path changes.
 *
 * Progress (sweep) runs the head's resumable form (coll/co.h) until it waits
 * or ends, then the next one's; it never blocks, so a test never waits for
 * another participant. Every algorithm has a resumable form (a composition's
 * is a schedule of resumable parts); OSMP_CHECK_ARGS's exchange is the first
 * part of a request's schedule (step).
 *
 * Who sweeps: every OSMP call on the team before its own work (a blocking
 * call completes the queue first: drain), osmp_test, osmp_wait; and a waiter
 * blocked anywhere in OSMP sweeps, between its polls, every team on which its
 * thread has outstanding requests (the driven list, through shm/wait.h's
 * hook), so a blocking call on one team never stalls a peer that needs this
 * participant's progress on another.
 *
 * The progress thread (OSMP_PROGRESS, below) sweeps every team with
 * outstanding requests (resumable forms only: it never blocks) between the
 * owner's calls, so that a request advances while its owner computes or
 * blocks in another library (MPI's progress rule; issue 45). Whatever touches
 * the queue holds the team's lock (any thread may complete a request, and a
 * blocked thread's hook sweeps the teams it posted on; a blocking call too
 * while requests were posted: t->detour); the progress thread and the hook
 * only try it, and skip a busy team.
 */
#define _GNU_SOURCE
#include "team/request.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fault.h"
#include "common/knobs.h"

/* Teams with outstanding requests (and emptied ones, until their driver's
 * next blocked wait), each with the thread that last posted on it (its
 * driver, whose blocked waits move it: sweep_driven), process-wide under
 * drive_lock so that any thread may take a team off (osmp__wait_others counts
 * them). Lock order: a team's lock, then drive_lock; the other way only by
 * trylock. */
static pthread_mutex_t drive_lock = PTHREAD_MUTEX_INITIALIZER;
static osmp__team_t driven;

static void sweep_driven(void);
static void hook_set(void)
{
    osmp__wait_progress = sweep_driven; /* (before osmp__wait_others first counts a team) */
}

/* Under t's lock. */
static void drive(osmp__team_t t)
{
    static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
    if (t->driven && pthread_equal(t->driver, pthread_self())) return; /* (the usual post: no lock) */
    pthread_once(&hook_once, hook_set);
    pthread_mutex_lock(&drive_lock);
    t->driver = pthread_self();
    if (!t->driven) {
        t->driven = 1;
        t->next_driven = driven;
        driven = t;
        osmp__fetch_add32(&osmp__wait_others, 1);
    }
    pthread_mutex_unlock(&drive_lock);
}

/* When t goes (an emptied team stays on the list until its driver's next
 * blocked wait finds it empty: sweep_driven). */
static void undrive(osmp__team_t t)
{
    pthread_mutex_lock(&drive_lock);
    if (t->driven) {
        for (osmp__team_t *p = &driven; *p; p = &(*p)->next_driven)
            if (*p == t) {
                *p = t->next_driven;
                break;
            }
        t->driven = 0;
        osmp__fetch_sub32(&osmp__wait_others, 1);
    }
    pthread_mutex_unlock(&drive_lock);
}

/* ---------------------------------------------------------------- the progress thread */

/*
 * OSMP_PROGRESS: auto (the default) gives a team the thread unless the
 * caller's runtime advances requests itself whenever their participant blocks
 * in it (osmp_set_progress_driver: libosmp_mpi under Open MPI's progress
 * callback or MPICH's asynchronous hook); thread gives every team the thread;
 * none no team. Teams with requests outstanding are on prog_teams: a post puts
 * its team there, the thread takes it off when it finds the queue empty (not
 * the request's end: a loop of small nonblocking calls then takes the list's
 * lock about once per look of the thread, not twice per call).
 *
 * The thread never spins. After each look at its teams (a sweep of each one
 * it can lock) it sleeps:
 *  - on the counter the head's last poll waited for (m->pend, as complete()
 *    does), counted among its sleepers so that the peer's publication wakes
 *    it, when the head stood where the thread left it at its previous look:
 *    its participant is away (blocked in a send, computing) and the thread is
 *    what moves it. At most 1 ms (a missed wake-up, a peer's death). With
 *    OSMP_PROGRESS=thread from the first look, for overlap with computation;
 *  - else a plain nap of 1 ms: the participant moved the head meanwhile (its
 *    tests, waits), or holds the team (it is inside OSMP on it), or the thread
 *    has several teams. Counted among a counter's sleepers it would make every
 *    publication of a busy peer a system call. Up to 8 ms, doubling, while the
 *    participants hold every team: OSMP calls are moving them.
 * With no team left it lingers 100 ms in 4 ms naps, so that a post in a loop
 * of nonblocking calls finds it awake and needs no system call to reach it
 * (OSMP_PROGRESS=thread: a post wakes it from those naps too), then sleeps
 * until a post signals it. So a process whose requests the thread does not
 * need costs it a wake-up a millisecond at most, and none once idle.
 *
 * It holds a team's lock while it sweeps it; while it may still touch a team
 * without the lock (its counter, during a nap) the team is marked visiting,
 * and osmp__progress_team_fini waits for the mark to go (waking the nap).
 */
static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t prog_cond; /* a post wakes the thread (monotonic clock: progress_start) */
static pthread_cond_t prog_left; /* the thread let go of the teams it visited */
static osmp__team_t prog_teams;
enum { PROG_UNREAD, PROG_NONE, PROG_AUTO, PROG_THREAD };
static int prog_mode;
static int prog_external; /* osmp_set_progress_driver */
static int prog_started;  /* 1 running, 2 could not be started */
static int prog_idle;     /* 1: in a timed nap, 2: asleep until a post signals */
static osmp__team_t prog_napping_on; /* the team whose counter the thread sleeps on */
static osmp_atomic64_t *prog_napping_ctr;
static int prog_fini_waiting;

#define PROG_NAP_NS 1000000L
#define PROG_BUSY_NAP_MAX_NS 8000000L
#define PROG_LINGER_NS 4000000L
#define PROG_LINGERS 25
#define PROG_LOOK 8 /* teams swept per look (the others at the next: the list turns) */

static void *progress_main(void *arg);

static void progress_read(void)
{
    const char *v = osmp__knob_str(OSMP_KNOB_PROGRESS);
    prog_mode = !strcmp(v, "thread") ? PROG_THREAD : !strcmp(v, "none") ? PROG_NONE : PROG_AUTO;
    if (strcmp(v, "thread") && strcmp(v, "none") && strcmp(v, "auto"))
        osmp__knob_bad(OSMP_KNOB_PROGRESS, "not auto, thread or none");
}

static pthread_once_t progress_once = PTHREAD_ONCE_INIT;

int osmp_set_progress_driver(int external)
{
    pthread_mutex_lock(&prog_lock);
    prog_external = external != 0;
    pthread_mutex_unlock(&prog_lock);
    return OSMP_OK;
}

void osmp__progress_team_init(osmp__team_t t)
{
    pthread_once(&progress_once, progress_read);
    pthread_mutex_lock(&prog_lock);
    t->progress = prog_mode == PROG_THREAD || (prog_mode == PROG_AUTO && !prog_external);
    pthread_mutex_unlock(&prog_lock);
    t->prog.eager = prog_mode == PROG_THREAD;
    pthread_mutex_init(&t->lock, NULL);
    t->detour = 0;
}

/* Under prog_lock. */
static void progress_start(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&prog_cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&prog_left, NULL);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    const char *cpu = osmp__knob_str(OSMP_KNOB_PROGRESS_CPU);
    if (*cpu) {
        char *end;
        long c = strtol(cpu, &end, 10);
        cpu_set_t set;
        CPU_ZERO(&set);
        if (*end || c < 0 || c >= CPU_SETSIZE)
            osmp__knob_bad(OSMP_KNOB_PROGRESS_CPU, "not a CPU number");
        else {
            CPU_SET((int)c, &set);
            pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
        }
    }
    prog_started = pthread_create(&th, &attr, progress_main, NULL) == 0 ? 1 : 2;
    pthread_attr_destroy(&attr);
}

/* Under t's lock: t has requests outstanding now. */
static void prog_register(osmp__team_t t)
{
    if (!t->progress || t->on_progress) return;
    pthread_mutex_lock(&prog_lock);
    if (!prog_started) progress_start();
    if (prog_started == 1) {
        t->on_progress = 1;
        t->prog.seen = 0;
        t->next_progress = prog_teams;
        prog_teams = t;
        if (prog_idle == 2 || (prog_idle == 1 && t->prog.eager)) pthread_cond_signal(&prog_cond);
    }
    pthread_mutex_unlock(&prog_lock);
}

/* Under prog_lock. */
static void prog_unlink(osmp__team_t t)
{
    for (osmp__team_t *p = &prog_teams; *p; p = &(*p)->next_progress)
        if (*p == t) {
            *p = t->next_progress;
            break;
        }
    t->on_progress = 0;
}

void osmp__progress_team_fini(osmp__team_t t)
{
    undrive(t);
    pthread_mutex_lock(&prog_lock);
    if (t->on_progress) prog_unlink(t);
    while (t->prog.visiting) { /* (its counter is still mapped: the segment goes after this) */
        if (prog_napping_on == t) osmp__wake(prog_napping_ctr);
        prog_fini_waiting++;
        pthread_cond_wait(&prog_left, &prog_lock);
        prog_fini_waiting--;
    }
    pthread_mutex_unlock(&prog_lock);
    pthread_mutex_destroy(&t->lock);
}

static void request_destroy(struct osmp_request *r)
{
    r->magic = 0;
    free(r->stage);
    free(r);
}

/* A request's state is read without the team's lock (is_done, is_active):
 * the progress thread may move it. */
static void set_state(struct osmp_request *r, int state)
{
    __atomic_store_n(&r->state, state, __ATOMIC_RELEASE);
}

/* The head is done (rc: its status): out of the queue, its caller told. */
static void finish(osmp__team_t t, struct osmp_request *r, int rc)
{
    t->head = r->next;
    if (!t->head) t->tail = NULL;
    r->next = NULL;
    if (r->state == OSMP__RQ_RUNNING) {
        if (!rc && r->run.fn && t->coll.size == 1 && r->c != OSMP_COLL_SCAN && r->c != OSMP_COLL_EXSCAN)
            osmp__reduce_alone(r->run.out, osmp__count_of(&r->run, 0), r->run.esize, r->op, r->run.fn);
        if (t->coll.trace) osmp__trace_end_(t->coll.trace);
    }
    free(r->co.p.scratch); /* (what the call or its part owns, when it failed half way) */
    r->co.p.scratch = NULL;
    free(r->part.co.p.scratch);
    r->part.co.p.scratch = NULL;
    if (!r->persistent) {
        free(r->stage);
        r->stage = NULL;
    }
    r->rc = rc;
    int freed = r->freed;
    __atomic_store_n(&r->state, OSMP__RQ_DONE, __ATOMIC_RELEASE); /* (its caller may test it unlocked) */
    if (freed) request_destroy(r);
}

/* Start the head: its arguments for this run, the in-place copy, the trace
 * and the algorithm (its phase is taken by the algorithm's first step). */
static int start(osmp__team_t t, struct osmp_request *r)
{
    r->run = r->args;
    if (r->stage_bytes) {
        if (!r->stage && !(r->stage = osmp__malloc(r->stage_bytes))) return osmp__mb_fail(&t->coll.mb, OSMP_ERR_NO_MEMORY);
        r->run.in = memcpy(r->stage, r->stage_src, r->stage_bytes);
        r->run.staged = r->stage_bytes;
    }
    set_state(r, OSMP__RQ_RUNNING);
    if (t->coll.trace) {
        osmp__trace_begin_(t->coll.trace, r->c);
        osmp__trace_copy_(t->coll.trace, t->coll.rank, t->coll.rank, r->run.staged);
    }
    int rc = osmp__co_start(&t->coll, r->c, &r->run, &r->alg);
    if (rc) return rc;
    if (t->coll.trace) osmp__trace_resumable_(t->coll.trace);
    memset(&r->co, 0, sizeof(r->co));
    r->co.part = &r->part; /* (a composition's) */
    return OSMP_OK;
}

/* OSMP_CHECK_ARGS's exchange, the first part of the head's schedule (before
 * its start, outside its trace, as a blocking call's check: api.c): an
 * allreduce of the arguments' hash, in r->part. */
static int check_start(osmp__team_t t, struct osmp_request *r)
{
    _Static_assert(!osmp__composed_allreduce, "the check's allreduce is a part: no composition among its algorithms");
    const struct osmp__args *a = &r->args;
    osmp__check_args_part(r->c, a->vector ? 0 : a->count, r->dtype, (int)r->op, a->root, r->check, &r->part.a);
    return osmp__part_start(&t->coll, OSMP_COLL_ALLREDUCE, &r->part);
}

/* Every nap's worth of a stalled head: is the peer it waits for alive? */
#define CHECK_NS 1000000

/* The head r cannot move on until participant `rank` publishes (what its
 * last unmet poll waited for): every CHECK_NS, is it alive? OSMP_OK (wait
 * on), or the team's failure. A test (MPI_Test polling a generalized request)
 * must notice a peer that died before posting as a wait would. */
static int stalled(osmp__team_t t, struct osmp_request *r, int rank)
{
    int64_t now = osmp__now_ns();
    if (now - r->checked_ns < CHECK_NS) return t->coll.mb.failed;
    r->checked_ns = now;
    return osmp__mb_check_peer(&t->coll.mb, rank < t->coll.size ? rank : t->coll.mb.rank);
}

/* The head's schedule, from where it stopped: OSMP_CHECK_ARGS's exchange
 * (where on), then the call. OSMP_OK once done, OSMP__PENDING, or its
 * failure; never blocks. */
static int step(osmp__team_t t, struct osmp_request *r)
{
    int rc;
    if (r->state == OSMP__RQ_QUEUED) {
        if (t->check_args) {
            if ((rc = check_start(t, r))) return rc;
            set_state(r, OSMP__RQ_CHECKING);
        } else if ((rc = start(t, r))) {
            return rc;
        }
    }
    if (r->state == OSMP__RQ_CHECKING) {
        if ((rc = osmp__part_resume(&t->coll, &r->part)) != OSMP_OK) return rc;
        if ((rc = osmp__check_args_result(r->check))) return rc;
        if (!r->args.count && !r->args.vector) return OSMP_OK; /* checked: nothing more to do */
        if ((rc = start(t, r))) return rc;
    }
    return osmp__co_resume(&t->coll, r->c, &r->run, r->alg, &r->co);
}

/* Advance t's queue as far as it goes. */
static void sweep(osmp__team_t t)
{
    if (t->busy) return; /* (a waiter inside this team's own run) */
    t->busy = 1;
    while (t->head) {
        struct osmp_request *r = t->head;
        int rc = t->coll.mb.failed;
        if (!rc) rc = step(t, r);
        if (rc == OSMP__PENDING && !(rc = stalled(t, r, t->coll.mb.pend.rank))) break;
        finish(t, r, rc); /* (a failure ends the queue's others with the team's status in turn) */
    }
    t->busy = 0;
}

/* shm/wait.h's hook: a blocked waiter moves the other teams it drives, those
 * whose lock it gets (not one it holds itself: a wait inside its sweep), and
 * takes emptied ones off the list. Locked under drive_lock, so that none goes
 * meanwhile (a team leaves the list under drive_lock); swept after, so that
 * drive_lock is not held through a sweep (which may wait, and re-enter here). */
#define DRIVEN_MAX 8
static void sweep_driven(void)
{
    osmp__team_t mine[DRIVEN_MAX];
    int n = 0;
    pthread_t self = pthread_self();
    if (pthread_mutex_trylock(&drive_lock)) return;
    for (osmp__team_t *p = &driven, t; (t = *p) && n < DRIVEN_MAX;) {
        if (!pthread_equal(t->driver, self) || pthread_mutex_trylock(&t->lock)) {
            p = &t->next_driven;
            continue;
        }
        if (t->head) {
            mine[n++] = t;
            p = &t->next_driven;
            continue;
        }
        *p = t->next_driven; /* emptied: off the list */
        t->driven = 0;
        osmp__fetch_sub32(&osmp__wait_others, 1);
        pthread_mutex_unlock(&t->lock);
    }
    pthread_mutex_unlock(&drive_lock);
    for (int i = 0; i < n; i++) {
        sweep(mine[i]);
        pthread_mutex_unlock(&mine[i]->lock);
    }
}

/* Where a team's head stands: the thread's look (team.h: t->prog), and what a nap waits for. */
struct prog_pend {
    osmp_atomic64_t *ctr;
    osmp_atomic32_t *waiters;
    uint64_t step;
};

static int prog_same(osmp__team_t t)
{
    return t->prog.seen && t->prog.head == t->head && t->prog.index == t->head->index &&
           t->prog.ctr == t->coll.mb.pend.ctr && t->prog.step == t->coll.mb.pend.step;
}

static void prog_note(osmp__team_t t)
{
    t->prog.head = t->head;
    t->prog.index = t->head->index;
    t->prog.ctr = t->coll.mb.pend.ctr;
    t->prog.step = t->coll.mb.pend.step;
    t->prog.seen = 1;
}

/* A nap of ns on prog_cond (a post may cut it short), under prog_lock. */
static void prog_timed_nap(long ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += ns;
    ts.tv_sec += ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    prog_idle = 1;
    pthread_cond_timedwait(&prog_cond, &prog_lock, &ts);
    prog_idle = 0;
}

/* The progress thread (see the top of this part). */
static void *progress_main(void *arg)
{
    (void)arg;
    osmp__wait_never_poll(); /* (it never calls the MPI library: MPI_THREAD_SINGLE programs) */
    long busy_nap = PROG_NAP_NS;
    int lingers = 0;
    pthread_mutex_lock(&prog_lock);
    for (;;) {
        if (!prog_teams) {
            if (lingers++ < PROG_LINGERS) {
                prog_timed_nap(PROG_LINGER_NS);
                continue;
            }
            prog_idle = 2;
            while (!prog_teams) pthread_cond_wait(&prog_cond, &prog_lock);
            prog_idle = 0;
        }
        lingers = 0;
        osmp__team_t got[PROG_LOOK];
        int n = 0, held = 0;
        for (osmp__team_t x = prog_teams; x && n < PROG_LOOK; x = x->next_progress) {
            if (pthread_mutex_trylock(&x->lock)) {
                held++;
                continue;
            }
            x->prog.visiting = 1;
            got[n++] = x;
        }
        if (prog_teams->next_progress) { /* the list turns: the first goes last */
            osmp__team_t first = prog_teams, *end = &prog_teams->next_progress;
            prog_teams = first->next_progress;
            while (*end) end = &(*end)->next_progress;
            *end = first;
            first->next_progress = NULL;
        }
        pthread_mutex_unlock(&prog_lock);

        int nap_on = -1, moved = 0;
        struct prog_pend pend = {NULL, NULL, 0};
        for (int i = 0; i < n; i++) {
            osmp__team_t t = got[i];
            if (t->head) {
                int away = t->prog.seen ? prog_same(t) : t->prog.eager;
                sweep(t);
                moved |= !t->head || !prog_same(t);
                if (t->head) prog_note(t);
                if (t->head && away && nap_on < 0 && t->coll.mb.pend.ctr) {
                    nap_on = i;
                    pend = (struct prog_pend){t->coll.mb.pend.ctr, t->coll.mb.pend.waiters, t->coll.mb.pend.step};
                }
            }
            if (!t->head) { /* its requests are over (whoever ended them): off the list, until its next post */
                pthread_mutex_lock(&prog_lock);
                if (t->on_progress) prog_unlink(t);
                pthread_mutex_unlock(&prog_lock);
            }
            pthread_mutex_unlock(&t->lock);
        }

        /* Asleep on the head's counter, when it is the one team and nobody else moves it. */
        int napped = 0, due = 0;
        if (nap_on >= 0 && n == 1 && !held) {
            pthread_mutex_lock(&prog_lock);
            prog_napping_on = got[nap_on];
            prog_napping_ctr = pend.ctr;
            pthread_mutex_unlock(&prog_lock);
            due = osmp__wait_nap(pend.ctr, pend.waiters, pend.step, PROG_NAP_NS);
            napped = !due;
        }
        pthread_mutex_lock(&prog_lock);
        prog_napping_on = NULL;
        for (int i = 0; i < n; i++) got[i]->prog.visiting = 0;
        if (prog_fini_waiting) pthread_cond_broadcast(&prog_left);
        if (napped || (due && moved)) continue; /* (due and not moved: what it polled is stale, a held head) */
        long nap = PROG_NAP_NS;
        if (!n && held) {
            nap = busy_nap;
            busy_nap = busy_nap * 2 < PROG_BUSY_NAP_MAX_NS ? busy_nap * 2 : PROG_BUSY_NAP_MAX_NS;
        } else {
            busy_nap = PROG_NAP_NS;
        }
        prog_timed_nap(nap);
    }
    return NULL;
}

/* Run t's queue until r (NULL: every request) is done. */
static void complete(osmp__team_t t, struct osmp_request *r)
{
    for (;;) {
        sweep(t);
        if (r ? r->state == OSMP__RQ_DONE : !t->head) return;
        if (t->busy) abort(); /* a wait inside a sweep of this team: impossible by construction */
        /* The head waits for the counter the last poll saw unmet. */
        osmp__mb_wait_pend(&t->coll.mb); /* (a failure shows in the next sweep) */
    }
}

int osmp__requests_drain(osmp__team_t t)
{
    complete(t, NULL);
    return OSMP_OK;
}

int osmp__request_post(osmp__team_t t, osmp_team_t h, osmp_coll_t c, const struct osmp__args *a, int dtype,
                       osmp_op_t op, const void *stage_src, size_t stage_bytes, int persistent, osmp_request_t *req)
{
    /* (malloc, not calloc, nor a whole memset, which GCC turns into one:
     * glibc's calloc skips the thread cache, which made it most of a small
     * post's instructions; the co is cleared at each start) */
    struct osmp_request *r = osmp__malloc(sizeof(*r));
    if (!r) return OSMP_ERR_NO_MEMORY;
    memset(r, 0, offsetof(struct osmp_request, co));
    r->magic = OSMP__REQUEST_LIVE;
    r->handle = h;
    r->team = t;
    r->c = c;
    r->dtype = dtype;
    r->op = op;
    r->args = *a;
    r->stage_src = stage_src;
    r->stage_bytes = stage_bytes;
    r->persistent = persistent;
    set_state(r, OSMP__RQ_INACTIVE);
    *req = r;
    if (persistent) return OSMP_OK;
    return osmp_start(req);
}

/* The request behind *req, or NULL for OSMP_REQUEST_NULL; rc: why it cannot be used. */
static struct osmp_request *request_of(osmp_request_t *req, int *rc)
{
    *rc = OSMP_OK;
    if (!req) {
        *rc = OSMP_ERR_INVALID_ARG;
        return NULL;
    }
    if (*req && (*req)->magic != OSMP__REQUEST_LIVE) *rc = OSMP_ERR_INVALID_ARG;
    return *rc ? NULL : *req;
}

int osmp_start(osmp_request_t *req)
{
    int rc;
    struct osmp_request *r = request_of(req, &rc);
    if (!r) return rc ? rc : OSMP_ERR_INVALID_ARG;
    if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != OSMP__RQ_INACTIVE) return OSMP_ERR_INVALID_ARG; /* active (MPI: erroneous) */
    osmp__team_t t;
    if ((rc = osmp__team_of(r->handle, &t))) return rc;
    if (t != r->team) return OSMP_ERR_BAD_TEAM;
    osmp__team_lock(t);
    r->checked_ns = osmp__now_ns();
    r->index = ++t->starts;
    r->rc = OSMP_OK;
    r->next = NULL;
    r->co.p.scratch = NULL; /* (finish frees them, even when the request ends before it starts) */
    r->part.co.p.scratch = NULL;
    /* Zero counts do nothing and take no step, as the blocking call (api.c:
     * call), but for OSMP_CHECK_ARGS's exchange (sweep). */
    if (!r->args.count && !r->args.vector && !t->check_args) {
        set_state(r, OSMP__RQ_DONE);
        osmp__team_unlock(t);
        return OSMP_OK;
    }
    set_state(r, OSMP__RQ_QUEUED);
    if (t->tail)
        t->tail->next = r;
    else
        t->head = r;
    t->tail = r;
    t->detour = 1;
    drive(t);
    prog_register(t);
    sweep(t); /* the first steps now: a root's data is out before the caller computes */
    osmp__team_unlock(t);
    return OSMP_OK;
}

int osmp_startall(int n, osmp_request_t *reqs)
{
    if (n < 0 || (n && !reqs)) return OSMP_ERR_INVALID_ARG;
    for (int i = 0; i < n; i++) {
        int rc = osmp_start(&reqs[i]);
        if (rc) return rc;
    }
    return OSMP_OK;
}

/* A completed request's end for its caller: its status; freed unless persistent. */
static int reap(osmp_request_t *req)
{
    struct osmp_request *r = *req;
    int rc = r->rc;
    if (r->persistent) {
        set_state(r, OSMP__RQ_INACTIVE);
        r->rc = OSMP_OK;
    } else {
        request_destroy(r);
        *req = OSMP_REQUEST_NULL;
    }
    return rc;
}

static int is_done(const struct osmp_request *r)
{
    int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE); /* (the progress thread may end it) */
    return st == OSMP__RQ_DONE || st == OSMP__RQ_INACTIVE;
}

/* Posted and not reaped yet (NULL: no). */
static int is_active(const struct osmp_request *r)
{
    return r && __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != OSMP__RQ_INACTIVE;
}

/* Sweep r's team (locked) unless r is done; whether it is now. */
static int advance(struct osmp_request *r)
{
    if (is_done(r)) return 1;
    osmp__team_t t = r->team; /* (alive: r is not done, and only its owner destroys it) */
    osmp__team_lock(t);
    sweep(t);
    osmp__team_unlock(t);
    return is_done(r);
}

int osmp_test(osmp_request_t *req, int *done)
{
    int rc;
    struct osmp_request *r = request_of(req, &rc);
    if (rc || !done) return rc ? rc : OSMP_ERR_INVALID_ARG;
    *done = 1;
    if (!r) return OSMP_OK;
    if (!advance(r)) {
        *done = 0;
        /* More participants than CPUs: a caller's test loop would hold the
         * CPU a peer needs to get where this request waits. */
        if (r->team->coll.oversubscribed) sched_yield();
        return OSMP_OK;
    }
    return reap(req);
}

int osmp_wait(osmp_request_t *req)
{
    int rc;
    struct osmp_request *r = request_of(req, &rc);
    if (rc || !r) return rc;
    if (!is_done(r)) {
        osmp__team_t t = r->team;
        osmp__team_lock(t);
        complete(t, r);
        osmp__team_unlock(t);
    }
    return reap(req);
}

int osmp_waitall(int n, osmp_request_t *reqs)
{
    if (n < 0 || (n && !reqs)) return OSMP_ERR_INVALID_ARG;
    int first = OSMP_OK;
    for (int i = 0; i < n; i++) { /* (in posting order or not: a wait completes the earlier ones too) */
        int rc = osmp_wait(&reqs[i]);
        if (rc && !first) first = rc;
    }
    return first;
}

int osmp_testall(int n, osmp_request_t *reqs, int *done)
{
    if (n < 0 || (n && !reqs) || !done) return OSMP_ERR_INVALID_ARG;
    int rc, all = 1;
    for (int i = 0; i < n; i++) {
        struct osmp_request *r = request_of(&reqs[i], &rc);
        if (rc) return rc;
        all &= !r || advance(r);
    }
    *done = all;
    if (!all) return OSMP_OK;
    return osmp_waitall(n, reqs);
}

int osmp_waitany(int n, osmp_request_t *reqs, int *index)
{
    if (n < 0 || (n && !reqs) || !index) return OSMP_ERR_INVALID_ARG;
    *index = -1;
    int rc, active = 0;
    for (int i = 0; i < n; i++) {
        struct osmp_request *r = request_of(&reqs[i], &rc);
        if (rc) return rc;
        active |= is_active(r);
    }
    if (!active) return OSMP_OK;
    for (int naps = 0;;) {
        for (int i = 0; i < n; i++) {
            struct osmp_request *r = reqs[i];
            if (!is_active(r)) continue;
            if (advance(r)) {
                *index = i;
                return reap(&reqs[i]);
            }
        }
        /* None done. All on one team: sleep on what its head waits for (a
         * wait would); on several, nap and poll them all again. */
        osmp__team_t one = NULL;
        for (int i = 0; i < n; i++) {
            struct osmp_request *r = reqs[i];
            if (!is_active(r)) continue;
            if (one && r->team != one) {
                one = NULL;
                break;
            }
            one = r->team;
        }
        if (!one) {
            if (++naps > 64) { /* (yields first: a peer on this core may need it) */
                struct timespec nap = {0, 50000};
                nanosleep(&nap, NULL);
            } else {
                sched_yield();
            }
            continue;
        }
        osmp__team_lock(one);
        sweep(one);
        int any = 0;
        for (int i = 0; i < n && !any; i++)
            any = is_active(reqs[i]) && is_done(reqs[i]);
        if (!any && one->head) osmp__mb_wait_pend(&one->coll.mb);
        osmp__team_unlock(one);
    }
}

int osmp_request_free(osmp_request_t *req)
{
    int rc;
    struct osmp_request *r = request_of(req, &rc);
    if (rc || !r) return rc;
    *req = OSMP_REQUEST_NULL;
    if (is_done(r)) {
        request_destroy(r);
        return OSMP_OK;
    }
    osmp__team_t t = r->team;
    osmp__team_lock(t);
    int active = !is_done(r);
    if (active) r->freed = 1; /* finish frees it */
    osmp__team_unlock(t);
    if (!active) request_destroy(r);
    return OSMP_OK;
}
