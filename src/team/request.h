/* Nonblocking and persistent collectives: requests and the team's queue (internal). */
#ifndef OSMP_REQUEST_H
#define OSMP_REQUEST_H

#include "coll/co.h"
#include "team/team.h"

/*
 * A request's life: made (osmp_i<op>: posted at once; osmp_<op>_init:
 * inactive), posted (queued on its team), checking (head of the queue, with
 * OSMP_CHECK_ARGS: its arguments' exchange running), running (head of the
 * queue: its algorithm chosen, its phase taken), done.
 * A persistent request goes back to inactive; any other is freed by its
 * completion, or at its end if the caller freed it before.
 */
enum { OSMP__RQ_INACTIVE, OSMP__RQ_QUEUED, OSMP__RQ_CHECKING, OSMP__RQ_RUNNING, OSMP__RQ_DONE };

#define OSMP__REQUEST_LIVE 0x6f736d702d726571ULL /* "osmp-req" */

struct osmp_request {
    uint64_t magic;
    osmp_team_t handle; /* checked at every start: the team may be gone */
    osmp__team_t team;
    osmp_coll_t c;
    osmp_op_t op;
    int dtype;
    struct osmp__args args; /* as the entry point resolved them */
    struct osmp__args run;  /* this run's copy, with selection's choices */
    /* An input read in place (alltoall(v), reduce_scatter in place): copied
     * into stage when the run starts, as the blocking call copies it. */
    const void *stage_src;
    size_t stage_bytes;
    void *stage;
    int persistent, freed, state, rc;
    uint64_t index;     /* its number among the team's starts (the progress thread's look: a head it saw before) */
    int64_t checked_ns; /* the last liveness check while it waited */
    const struct osmp__alg *alg;
    struct osmp_request *next; /* the team's queue */
    struct osmp__co co;
    /* A part of its schedule (coll/co.h): OSMP_CHECK_ARGS's exchange, then
     * a composition's parts (co.part). */
    struct osmp__part part;
    uint64_t check[4]; /* OSMP_CHECK_ARGS: my hash and its complement, then the team's maxima */
};

/* Entry points (api.c) build the arguments, then: blocking calls with
 * outstanding requests first complete them (osmp__requests_drain, team.h); a post
 * makes a request of them. stage_src/stage_bytes: see above (0: none). */
int osmp__request_post(osmp__team_t t, osmp_team_t h, osmp_coll_t c, const struct osmp__args *a, int dtype,
                       osmp_op_t op, const void *stage_src, size_t stage_bytes, int persistent, osmp_request_t *req);
/* api.c: OSMP_CHECK_ARGS's exchange for a call's arguments: the allreduce's
 * arguments (*a, on buf), then its verdict from buf (OSMP_OK or
 * OSMP_ERR_MISMATCH, the same on every participant). */
void osmp__check_args_part(osmp_coll_t c, size_t count, int dtype, int op, int root, uint64_t buf[4],
                           struct osmp__args *a);
int osmp__check_args_result(const uint64_t buf[4]);

#endif
