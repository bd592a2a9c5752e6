/*
 * Spin, then yield, then sleep. Spinning wins when the peer runs on another
 * core and answers within a microsecond; yielding lets an oversubscribed peer
 * (64 participants on 2 cores) run; the futex keeps idle waiters off the CPU.
 * The futex word is the low half of the 64-bit counter (little-endian), so the
 * kernel's compare sees every publication. Sleeps are bounded to a millisecond,
 * which bounds a missed wake-up and lets the caller's check notice a dead peer.
 */
#define _GNU_SOURCE
#include "wait.h"

#include "osmp.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t *low_half(osmp_atomic64_t *ctr)
{
    _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the futex word is the counter's low half");
    return (uint32_t *)(void *)ctr;
}

int osmp__wait_reached(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target,
                       const struct osmp__wait_policy *policy, osmp__wait_check_fn check, void *ctx)
{
    long pauses = policy->pauses > 1 ? policy->pauses : 1;
    for (long i = 0; i < policy->spin; i += pauses) {
        if (osmp__seq_reached(osmp__load_acquire(ctr), target)) return OSMP_OK;
        for (long k = 0; k < pauses; k++) osmp__cpu_relax();
    }
    for (long i = 0; i < policy->yields; i++) {
        if (osmp__seq_reached(osmp__load_acquire(ctr), target)) return OSMP_OK;
        sched_yield();
    }
    for (;;) {
        osmp__fetch_add32(waiters, 1);
        osmp__fence_seq_cst(); /* pairs with the fence in osmp__publish */
        uint64_t seen = osmp__load_acquire(ctr);
        if (osmp__seq_reached(seen, target)) {
            osmp__fetch_sub32(waiters, 1);
            return OSMP_OK;
        }
        struct timespec ts = {0, 1000000};
        syscall(SYS_futex, low_half(ctr), FUTEX_WAIT, (uint32_t)seen, &ts, NULL, 0);
        osmp__fetch_sub32(waiters, 1);
        if (osmp__seq_reached(osmp__load_acquire(ctr), target)) return OSMP_OK;
        int rc = check ? check(ctx) : OSMP_OK;
        /* The peer may have published and then exited: the counter has the last word. */
        if (rc) return osmp__seq_reached(osmp__load_acquire(ctr), target) ? OSMP_OK : rc;
    }
}

void osmp__publish(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t v)
{
    osmp__store_release(ctr, v);
    osmp__fence_seq_cst();
    if (osmp__load32(waiters)) syscall(SYS_futex, low_half(ctr), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int64_t osmp__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
