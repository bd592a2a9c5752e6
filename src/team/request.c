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
 * or ends, then the next one's; it never blocks. An algorithm without a
 * resumable form runs its blocking form, to its end, when a wait asks for it,
 * or when a test does once every participant has posted it (each publishes
 * its number of posts in its region's posted line): a test then blocks only
 * until peers that are past their post reach it, never on a peer that has not
 * posted (a test must not wait for another participant's progress).
 *
 * Who sweeps: every OSMP call on the team before its own work (a blocking
 * call completes the queue first: drain), osmp_test, osmp_wait; and a waiter
 * blocked anywhere in OSMP sweeps, between its polls, every team on which its
 * thread has outstanding requests (the driven list, through shm/wait.h's
 * hook), so a blocking call on one team never stalls a peer that needs this
 * participant's progress on another.
 */
#include "team/request.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"

/* Teams of this thread with outstanding requests (osmp__wait_others counts them). */
static __thread osmp__team_t driven;

static void drive(osmp__team_t t)
{
    if (t->driven) return;
    t->driven = 1;
    t->next_driven = driven;
    driven = t;
    osmp__wait_others++;
}

static void undrive(osmp__team_t t)
{
    if (!t->driven) return;
    for (osmp__team_t *p = &driven; *p; p = &(*p)->next_driven)
        if (*p == t) {
            *p = t->next_driven;
            break;
        }
    t->driven = 0;
    osmp__wait_others--;
}

static void request_destroy(struct osmp_request *r)
{
    r->magic = 0;
    free(r->stage);
    free(r);
}

/* Has every participant posted request r? Ranks below r->gate_rank are known to. */
static int all_posted(osmp__team_t t, struct osmp_request *r)
{
    struct osmp__mbox *m = &t->coll.mb;
    for (; r->gate_rank < t->coll.size; r->gate_rank++)
        if (!osmp__seq_reached(osmp__load_acquire(&osmp__mb_region(m, r->gate_rank)->posted.seq), r->index))
            return 0;
    return 1;
}

/* The head is done (rc: its status): out of the queue, its caller told. */
static void finish(osmp__team_t t, struct osmp_request *r, int rc)
{
    t->head = r->next;
    if (!t->head) {
        t->tail = NULL;
        undrive(t);
    }
    r->next = NULL;
    if (r->state == OSMP__RQ_RUNNING) {
        if (!rc && r->run.fn && t->coll.size == 1 && r->c != OSMP_COLL_SCAN && r->c != OSMP_COLL_EXSCAN)
            osmp__reduce_alone(r->run.out, osmp__count_of(&r->run, 0), r->run.esize, r->op, r->run.fn);
        if (t->coll.trace) osmp__trace_end_(t->coll.trace);
    }
    free(r->co.p.scratch); /* (reduce's, when it failed half way) */
    r->co.p.scratch = NULL;
    if (!r->persistent) {
        free(r->stage);
        r->stage = NULL;
    }
    r->rc = rc;
    r->state = OSMP__RQ_DONE;
    if (r->freed) request_destroy(r);
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
    r->state = OSMP__RQ_RUNNING;
    if (t->coll.trace) {
        osmp__trace_begin_(t->coll.trace, r->c);
        osmp__trace_copy_(t->coll.trace, t->coll.rank, t->coll.rank, r->run.staged);
    }
    int rc = osmp__co_start(&t->coll, r->c, &r->run, &r->alg);
    if (rc) return rc;
    r->gated |= r->alg->co == NULL;
    if (t->coll.trace && !r->gated) osmp__trace_resumable_(t->coll.trace);
    memset(&r->co, 0, sizeof(r->co));
    return OSMP_OK;
}

/* Every nap's worth of a stalled head: is the peer it waits for alive? */
#define CHECK_NS 1000000

/* How far a sweep may go with a gated head (one without a resumable form):
 * a post leaves it, a test or a blocked waiter's hook runs it once every
 * participant has posted it, a wait runs it at once. */
enum { GATED_NO, GATED_POSTED, GATED_ANY };

/* Advance t's queue as far as it goes. */
static void sweep(osmp__team_t t, int gated)
{
    if (t->busy) return; /* (a waiter inside this team's own run) */
    t->busy = 1;
    while (t->head) {
        struct osmp_request *r = t->head;
        int rc = t->coll.mb.failed;
        if (!rc && r->state == OSMP__RQ_QUEUED) {
            if (t->check_args) { /* an allreduce of its own, before the call, as a blocking call's */
                r->gated = 1;
                if (gated == GATED_NO || (gated == GATED_POSTED && !all_posted(t, r))) break;
                const struct osmp__args *a = &r->args;
                rc = osmp__check_args_now(t, r->c, a->vector ? 0 : a->count, r->dtype, (int)r->op, a->root);
            }
            if (!rc) rc = start(t, r);
        }
        if (!rc) {
            if (r->gated && (gated == GATED_NO || (gated == GATED_POSTED && !all_posted(t, r)))) break;
            rc = osmp__co_resume(&t->coll, r->c, &r->run, r->alg, &r->co);
            if (rc == OSMP__PENDING) {
                int64_t now = osmp__now_ns();
                if (now - r->checked_ns < CHECK_NS) break;
                r->checked_ns = now;
                if (!(rc = osmp__mb_check_pend(&t->coll.mb))) break;
            }
        }
        finish(t, r, rc); /* (a failure ends the queue's others with the team's status in turn) */
    }
    t->busy = 0;
}

/* shm/wait.h's hook: a blocked waiter moves its thread's other teams. */
static void sweep_driven(void)
{
    for (osmp__team_t t = driven, next; t; t = next) {
        next = t->next_driven; /* (a sweep that empties t takes it off the list) */
        sweep(t, GATED_POSTED);
    }
}

/* Run t's queue until r (NULL: every request) is done. */
static void complete(osmp__team_t t, struct osmp_request *r)
{
    for (;;) {
        sweep(t, GATED_ANY);
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

int osmp__request_post(osmp__team_t t, osmp_team_t h, osmp_coll_t c, const struct osmp__args *a, osmp_op_t op,
                       const void *stage_src, size_t stage_bytes, int persistent, osmp_request_t *req)
{
    struct osmp_request *r = osmp__calloc(1, sizeof(*r));
    if (!r) return OSMP_ERR_NO_MEMORY;
    r->magic = OSMP__REQUEST_LIVE;
    r->handle = h;
    r->team = t;
    r->c = c;
    r->op = op;
    r->args = *a;
    r->stage_src = stage_src;
    r->stage_bytes = stage_bytes;
    r->persistent = persistent;
    r->state = OSMP__RQ_INACTIVE;
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
    if (r->state != OSMP__RQ_INACTIVE) return OSMP_ERR_INVALID_ARG; /* active (MPI: erroneous) */
    osmp__team_t t;
    if ((rc = osmp__team_of(r->handle, &t))) return rc;
    if (t != r->team) return OSMP_ERR_BAD_TEAM;
    /* Its number among the team's posts, for every participant to see. */
    r->index = ++t->posted;
    osmp__store_release(&osmp__mb_region(&t->coll.mb, t->coll.rank)->posted.seq, t->posted);
    r->gate_rank = 0;
    r->gated = 0;
    r->checked_ns = osmp__now_ns();
    r->rc = OSMP_OK;
    r->next = NULL;
    /* Zero counts do nothing and take no step, as the blocking call (api.c: call). */
    if (!r->args.count && !r->args.vector) {
        r->state = OSMP__RQ_DONE;
        return OSMP_OK;
    }
    r->state = OSMP__RQ_QUEUED;
    if (t->tail)
        t->tail->next = r;
    else
        t->head = r;
    t->tail = r;
    osmp__wait_progress = sweep_driven;
    drive(t);
    sweep(t, GATED_NO); /* the first steps now: a root's data is out before the caller computes */
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
        r->state = OSMP__RQ_INACTIVE;
        r->rc = OSMP_OK;
    } else {
        request_destroy(r);
        *req = OSMP_REQUEST_NULL;
    }
    return rc;
}

static int is_done(const struct osmp_request *r)
{
    return r->state == OSMP__RQ_DONE || r->state == OSMP__RQ_INACTIVE;
}

int osmp_test(osmp_request_t *req, int *done)
{
    int rc;
    struct osmp_request *r = request_of(req, &rc);
    if (rc || !done) return rc ? rc : OSMP_ERR_INVALID_ARG;
    *done = 1;
    if (!r) return OSMP_OK;
    if (!is_done(r)) sweep(r->team, GATED_POSTED);
    if (!is_done(r)) {
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
    if (!is_done(r)) complete(r->team, r);
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
        if (r && !is_done(r)) sweep(r->team, GATED_POSTED);
        all &= !r || is_done(r);
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
        active |= r && r->state != OSMP__RQ_INACTIVE;
    }
    if (!active) return OSMP_OK;
    for (;;) {
        for (int i = 0; i < n; i++) {
            struct osmp_request *r = reqs[i];
            if (!r || r->state == OSMP__RQ_INACTIVE) continue;
            if (!is_done(r)) sweep(r->team, GATED_POSTED);
            if (is_done(r)) {
                *index = i;
                return reap(&reqs[i]);
            }
        }
        /* None done: block on the first active one's team until its head moves. */
        for (int i = 0; i < n; i++) {
            struct osmp_request *r = reqs[i];
            if (!r || r->state == OSMP__RQ_INACTIVE) continue;
            sweep(r->team, GATED_ANY); /* (its gated head may block here: a wait may) */
            if (!is_done(r) && r->team->head) osmp__mb_wait_pend(&r->team->coll.mb);
            break;
        }
    }
}

int osmp_request_free(osmp_request_t *req)
{
    int rc;
    struct osmp_request *r = request_of(req, &rc);
    if (rc || !r) return rc;
    *req = OSMP_REQUEST_NULL;
    if (r->state == OSMP__RQ_QUEUED || r->state == OSMP__RQ_RUNNING)
        r->freed = 1; /* finish frees it */
    else
        request_destroy(r);
    return OSMP_OK;
}
