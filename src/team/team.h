/* The public team handle and its checks (internal). */
#ifndef OSMP_TEAM_H
#define OSMP_TEAM_H

#include <pthread.h>
#include <sys/types.h>

#include "coll/coll.h"

struct osmp__thread_rv; /* in-process rendezvous of osmp_team_create_threads */

/* A team as one participant holds it: what its algorithms run on (coll), and
 * what the team owns for them. The public handle (struct osmp_team) points here. */
struct osmp__team {
    struct osmp__coll coll; /* rank, size, mailboxes, algorithm state */
    int check_args;         /* OSMP_CHECK_ARGS: exchange a checksum of the arguments first */
    pid_t *pids;
    int watching;         /* the other processes' pids are watched (liveness.c) */
    unsigned char *local; /* local[r]: rank r lives in this process */
    int *cores;
    int *peers;
    char hierarchy[128];
    struct osmp_plan *plan; /* root 0 */
    /* OSMP_HIERARCHY_<OP>: the collectives that plan with a spec of their own. */
    char *op_hierarchy[OSMP_COLL_COUNT];
    struct osmp_plan *op_plan[OSMP_COLL_COUNT];
    size_t seg_size;
    int seg_private; /* a team of one keeps its region in private memory */

    /* Outstanding nonblocking collectives (team/request.c), in posting order;
     * the head is the one running. */
    struct osmp_request *head, *tail;
    int busy;        /* its queue is being advanced (a wait inside it must not re-enter) */
    uint64_t starts; /* requests started on it (struct osmp_request index) */
    int driven;      /* on the list of teams with outstanding requests (request.c) */
    pthread_t driver; /* the thread that last posted on it: its blocked waits move it */
    struct osmp__team *next_driven;
    /* The progress thread advances its requests too (OSMP_PROGRESS, request.c).
     * Whatever touches the queue holds lock (a driver's blocked wait or the
     * progress thread only tries it). */
    int progress;
    /* A blocking call must take the long way (api.c): requests were posted
     * since the last blocking call. Written only by the team's callers (its
     * posts, and the blocking call that finds the queue empty): one load of
     * their own on the usual call. */
    int detour;
    int on_progress; /* on the progress thread's list */
    struct osmp__team *next_progress;
    /* The progress thread's last look at the queue (request.c), under lock:
     * the head then and what it waited for (did anyone else move it since?).
     * visiting: the thread may still use the team (under the thread's list lock). */
    struct {
        const void *head, *ctr;
        uint64_t index, step;
        int seen, eager, visiting;
    } prog;
    pthread_mutex_t lock;

    struct osmp__thread_rv *thread_rv; /* created on the first osmp_team_create_threads */
    void *thread_rv_lock;              /* pthread_mutex_t, creation path only */
};
typedef struct osmp__team *osmp__team_t;

/* Complete the team's outstanding nonblocking collectives (team/request.c):
 * before a blocking call, and before the team goes. */
int osmp__requests_drain(osmp__team_t t);
/* OSMP_PROGRESS for a new team (request.c): t->progress and its lock. */
void osmp__progress_team_init(osmp__team_t t);
void osmp__progress_team_fini(osmp__team_t t);
static inline void osmp__team_lock(osmp__team_t t)
{
    pthread_mutex_lock(&t->lock);
}
static inline void osmp__team_unlock(osmp__team_t t)
{
    pthread_mutex_unlock(&t->lock);
}

#define OSMP__TEAM_LIVE 0x6f736d702d6c6976ULL /* "osmp-liv" */
#define OSMP__TEAM_DEAD 0x6f736d702d646561ULL /* "osmp-dea" */

/* What osmp_team_t points to. A destroyed handle keeps only this (its team is
 * freed) with magic DEAD, so that a later call through a copy of it is an
 * error instead of a use after free; the last OSMP__DEAD_KEPT destroyed handles
 * are kept (about 40 KiB), older ones freed, so memory does not grow with the
 * number of teams a long run creates. */
#define OSMP__DEAD_KEPT 1024
struct osmp_team {
    uint64_t magic;
    osmp__team_t impl;
    pid_t pid;       /* the process that joined; a forked child is not a participant */
    int thread;      /* joined as one thread participant: only that thread may call */
    pthread_t owner; /* that thread */
};

/* getpid() of this process, kept current across fork without a system call. */
extern pid_t osmp__self_pid;

/* The team behind a live handle of the calling participant, failed or not
 * (queries and destroy), or why the handle cannot be used. */
static inline int osmp__team_of_handle(osmp_team_t h, osmp__team_t *t)
{
    if (!h) return OSMP_ERR_INVALID_ARG;
    if (h->magic != OSMP__TEAM_LIVE) return OSMP_ERR_BAD_TEAM;
    if (h->pid != osmp__self_pid || (h->thread && !pthread_equal(h->owner, pthread_self())))
        return OSMP_ERR_NOT_MEMBER;
    *t = h->impl;
    return OSMP_OK;
}

/* The same, for collectives: a team that lost a participant is not usable. */
static inline int osmp__team_of(osmp_team_t h, osmp__team_t *t)
{
    int rc = osmp__team_of_handle(h, t);
    return rc ? rc : (*t)->coll.mb.failed;
}

#endif
