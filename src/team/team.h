/* The public team handle and its checks (internal). */
#ifndef OSMP_TEAM_H
#define OSMP_TEAM_H

#include <pthread.h>
#include <sys/types.h>

#include "coll/coll.h"

#define OSMP__TEAM_LIVE 0x6f736d702d6c6976ULL /* "osmp-liv" */
#define OSMP__TEAM_DEAD 0x6f736d702d646561ULL /* "osmp-dea" */

/* What osmp_team_t points to. A destroyed handle keeps only this (its team is
 * freed) with magic DEAD, so that a later call through a copy of it is an
 * error instead of a use after free: 48 bytes per destroyed team, kept
 * reachable on a list. */
struct osmp_team {
    uint64_t magic;
    osmp__team_t impl;
    pid_t pid;       /* the process that joined; a forked child is not a participant */
    int thread;      /* joined as one thread participant: only that thread may call */
    pthread_t owner; /* that thread */
    struct osmp_team *next_dead;
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
    return rc ? rc : (*t)->failed;
}

#endif
