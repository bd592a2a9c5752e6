/* Waiting on a counter in shared memory: spin, then yield, then sleep on a futex. */
#ifndef OSMP_WAIT_H
#define OSMP_WAIT_H

#include "common/atomic.h"

struct osmp__wait_policy {
    long spin;   /* polls before yielding (pauses, when a poll is followed by more than one) */
    long yields; /* sched_yield calls before sleeping */
    long pauses; /* CPU pauses after each poll while spinning; 0 or 1: one */
};

/* Asked about once per millisecond while a waiter sleeps: OSMP_OK to go on
 * waiting, or the status to give up with (a dead peer, a deadline passed). */
typedef int (*osmp__wait_check_fn)(void *ctx);

/* Block until *ctr reaches target (osmp__seq_reached). A sleeper announces itself
 * in *waiters, which the writer of ctr checks after publishing (osmp__publish).
 * Returns OSMP_OK, or the first non-OK answer of check (NULL: never asked) if
 * the counter has still not reached target after that answer. With OSMP_OK,
 * *reached (may be NULL) gets the value that satisfied the wait, acquired (the
 * writer may be several steps beyond target). */
int osmp__wait_reached(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target,
                       const struct osmp__wait_policy *policy, osmp__wait_check_fn check, void *ctx,
                       uint64_t *reached);

/* Once per process before its first team: register for the asymmetric fences
 * of wait.c unless fence_always (OSMP_PUBLISH_FENCE=always) or the kernel
 * refuses. Returns 1 when this process's publications issue no fence. */
int osmp__wait_setup(int fence_always);

/* Naps of this process that no publication cut short (tests: a wake-up that
 * never comes shows here, not as a hang). */
unsigned osmp__wait_naps_out(void);

/* Other work a blocked waiter does between its polls once it yields or
 * sleeps (team/request.c: the calling thread's outstanding requests on other
 * teams, which a peer may need before it can publish what this wait expects).
 * Called only while osmp__wait_others (the process's teams with outstanding
 * requests) is non-zero. */
extern void (*osmp__wait_progress)(void);
extern osmp_atomic32_t osmp__wait_others;

/* One sleep of at most ns nanoseconds on ctr, as a waiter's (counted in
 * *waiters, so a publication wakes it; the same fences): 1 at once when ctr
 * has reached target already, else 0 after the nap (woken, or timed out).
 * The progress thread's sleep (team/request.c). */
int osmp__wait_nap(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target, int64_t ns);

/* The calling thread never calls the runtime's poll function
 * (osmp_set_wait_poll): OSMP's progress thread, which must not call an MPI
 * library (MPI_THREAD_SINGLE programs allow no second thread in it). */
void osmp__wait_never_poll(void);

/* Wake every sleeper on ctr (osmp__publish). */
void osmp__wake(osmp_atomic64_t *ctr);
extern osmp_atomic32_t osmp__wait_registered; /* (wait.c) */

/* Store v into *ctr with release semantics and wake sleepers, if any. Inline:
 * every message of a small call ends with one, and the call costs more than
 * the store (wait.c's fences: without one where this process is registered for
 * asymmetric fences, else a full fence between the store and the look for
 * sleepers). */
static inline void osmp__publish(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t v)
{
    osmp__store_release(ctr, v);
    if (osmp__load_relaxed32(&osmp__wait_registered)) osmp__compiler_fence();
    else osmp__fence_seq_cst();
    if (__builtin_expect(osmp__load32(waiters) != 0, 0)) osmp__wake(ctr);
}

/* Monotonic clock in nanoseconds, for deadlines. */
int64_t osmp__now_ns(void);

#endif
