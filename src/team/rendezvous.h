/* A shared-memory allgather for bootstrapping: osmp-run's processes and the
 * threads of osmp_team_create_threads meet here before a team exists. */
#ifndef OSMP_RENDEZVOUS_H
#define OSMP_RENDEZVOUS_H

#include <stddef.h>

#include "common/atomic.h"
#include "shm/wait.h"

struct osmp__rv {
    osmp_atomic64_t arrived;
    osmp_atomic64_t gen;
    osmp_atomic32_t waiters;
    osmp_atomic32_t lost; /* 1 + the rank that died, written by the supervisor (osmp-run) */
    osmp_atomic32_t said; /* a timed-out rank has named the missing ones (once for all) */
    uint32_t size;
    uint32_t maxlen;
    char data[]; /* size * maxlen, then size counters: the allgathers each rank has entered (who never came) */
};

/* The largest record a team's bootstrap exchanges (team.c asserts its own fit). */
#define OSMP__RV_RECORD_MAX 1024

size_t osmp__rv_bytes(int size, size_t maxlen);
void osmp__rv_init(struct osmp__rv *rv, int size, size_t maxlen);
/* OSMP_OK; OSMP_ERR_PEER_LOST once the supervisor has marked a participant
 * lost; OSMP_ERR_TIMEOUT past deadline (osmp__now_ns; 0: none). After a failure
 * the rendezvous is not usable again. */
int osmp__rv_barrier(struct osmp__rv *rv, const struct osmp__wait_policy *wait, int64_t deadline);
/* Everyone passes len <= maxlen bytes and receives size * len in rank order.
 * A rank that times out names the ranks that never entered this allgather
 * (one line, from the first to time out). */
int osmp__rv_allgather(struct osmp__rv *rv, int rank, const void *send, void *recv, size_t len,
                       const struct osmp__wait_policy *wait, int64_t deadline);

#endif
