/*
 * Spin, then yield, then sleep. Spinning wins when the peer runs on another
 * core and answers within a microsecond; yielding lets an oversubscribed peer
 * (64 participants on 2 cores) run; the futex keeps idle waiters off the CPU.
 * The futex word is the low half of the 64-bit counter (little-endian), so the
 * kernel's compare sees every publication.
 */
#define _GNU_SOURCE
#include "wait.h"

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

void osmp__wait_reached(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target,
                        const struct osmp__wait_policy *policy)
{
    for (long i = 0; i < policy->spin; i++) {
        if (osmp__seq_reached(osmp__load_acquire(ctr), target)) return;
        osmp__cpu_relax();
    }
    for (long i = 0; i < policy->yields; i++) {
        if (osmp__seq_reached(osmp__load_acquire(ctr), target)) return;
        sched_yield();
    }
    for (;;) {
        osmp__fetch_add32(waiters, 1);
        osmp__fence_seq_cst(); /* pairs with the fence in osmp__publish */
        uint64_t seen = osmp__load_acquire(ctr);
        if (osmp__seq_reached(seen, target)) {
            osmp__fetch_sub32(waiters, 1);
            return;
        }
        /* A timeout bounds the cost of any missed wake-up to a millisecond. */
        struct timespec ts = {0, 1000000};
        syscall(SYS_futex, low_half(ctr), FUTEX_WAIT, (uint32_t)seen, &ts, NULL, 0);
        osmp__fetch_sub32(waiters, 1);
        if (osmp__seq_reached(osmp__load_acquire(ctr), target)) return;
    }
}

void osmp__publish(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t v)
{
    osmp__store_release(ctr, v);
    osmp__fence_seq_cst();
    if (osmp__load32(waiters)) syscall(SYS_futex, low_half(ctr), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
