/* Waiting on a counter in shared memory: spin, then yield, then sleep on a futex. */
#ifndef OSMP_WAIT_H
#define OSMP_WAIT_H

#include "common/atomic.h"

struct osmp__wait_policy {
    long spin;   /* polls before yielding */
    long yields; /* sched_yield calls before sleeping */
};

/* Block until *ctr reaches target (osmp__seq_reached). A sleeper announces itself
 * in *waiters, which the writer of ctr checks after publishing (osmp__publish). */
void osmp__wait_reached(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target,
                        const struct osmp__wait_policy *policy);

/* Store v into *ctr with release semantics and wake sleepers, if any. */
void osmp__publish(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t v);

#endif
