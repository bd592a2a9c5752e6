/* Nonblocking and persistent collectives: requests and the team's queue (internal). */
#ifndef OSMP_REQUEST_H
#define OSMP_REQUEST_H

#include "coll/co.h"
#include "team/team.h"

/*
 * A request's life: made (osmp_i<op>: posted at once; osmp_<op>_init:
 * inactive), posted (queued on its team: its index among the team's posts),
 * running (head of the queue: its algorithm chosen, its phase taken), done.
 * A persistent request goes back to inactive; any other is freed by its
 * completion, or at its end if the caller freed it before.
 */
enum { OSMP__RQ_INACTIVE, OSMP__RQ_QUEUED, OSMP__RQ_RUNNING, OSMP__RQ_DONE };

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
    int gated;      /* runs its blocking form: only once every participant posted it (unless waited for) */
    uint64_t index; /* the team's posts up to this one (struct osmp__team.posted) */
    int gate_rank;  /* ranks below it are known to have posted index */
    int64_t checked_ns; /* the last liveness check while it waited */
    const struct osmp__alg *alg;
    struct osmp_request *next; /* the team's queue */
    struct osmp__co co;
};

/* Entry points (api.c) build the arguments, then: blocking calls with
 * outstanding requests first complete them (osmp__requests_drain, team.h); a post
 * makes a request of them. stage_src/stage_bytes: see above (0: none). */
int osmp__request_post(osmp__team_t t, osmp_team_t h, osmp_coll_t c, const struct osmp__args *a, int dtype,
                       osmp_op_t op, const void *stage_src, size_t stage_bytes, int persistent, osmp_request_t *req);
/* api.c: OSMP_CHECK_ARGS's exchange for a call's arguments. */
int osmp__check_args_now(osmp__team_t t, osmp_coll_t c, size_t count, int dtype, int op, int root);

#endif
