/*
 * Spin, then yield, then sleep. Spinning wins when the peer runs on another
 * core and answers within a microsecond; yielding lets an oversubscribed peer
 * (64 participants on 2 cores) run; the futex keeps idle waiters off the CPU.
 * The futex word is the low half of the 64-bit counter (little-endian), so the
 * kernel's compare sees every publication. Sleeps are bounded to a millisecond,
 * which bounds a missed wake-up and lets the caller's check notice a dead peer.
 *
 * A publisher stores its counter and then reads the waiters count; a sleeper
 * counts itself and then reads the counter (Dekker): one of the two must see
 * the other's store. A fence after the publisher's store costs it the time its
 * line takes to leave the readers' caches (a cross-socket round trip on a far
 * pair), on every publication. Where the kernel lets this process register for
 * membarrier's global expedited command, the publisher issues no fence and a
 * sleeper, before its last look at the counter, makes every running thread of
 * every registered process execute one (asymmetric fences, as liburcu's
 * sys_membarrier flavour): either that barrier comes before the publisher's
 * load of the waiters count, which then sees the sleeper, or after it, and the
 * store it drained is what the sleeper then reads. Only sleeping pays the system call.
 */
#define _GNU_SOURCE
#include "wait.h"

#include "osmp.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* 1: this process is registered, its publications issue no fence (wait.h
 * osmp__publish). Cleared in a forked child (the registration belongs to the
 * parent's memory map). */
osmp_atomic32_t osmp__wait_registered;
/* Naps that lasted their whole millisecond: no publication woke the sleeper. */
static osmp_atomic32_t naps_out;

void (*osmp__wait_progress)(void);
osmp_atomic32_t osmp__wait_others;

unsigned osmp__wait_naps_out(void)
{
    return osmp__load32(&naps_out);
}

/* Does this kernel run MEMBARRIER_CMD_GLOBAL_EXPEDITED: 2 yes, 1 no, 0 not asked yet. */
static osmp_atomic32_t global_expedited;

static void forked_child(void)
{
    osmp__store32(&osmp__wait_registered, 0);
}

static void register_once(void)
{
    pthread_atfork(NULL, NULL, forked_child);
}

int osmp__wait_setup(int fence_always)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_once);
    if (fence_always || osmp__load32(&osmp__wait_registered)) return osmp__load32(&osmp__wait_registered);
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0)
        osmp__store32(&osmp__wait_registered, 1);
    return osmp__load32(&osmp__wait_registered);
}

/* The sleeper's half (see the top): a fence of its own, then one on every CPU
 * that runs a registered process. Any process of the team may be registered,
 * whether or not this one is. */
static void sleeper_fence(void)
{
    osmp__fence_seq_cst();
    uint32_t ge = osmp__load32(&global_expedited);
    if (!ge) {
        long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        ge = cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ? 2 : 1;
        osmp__store32(&global_expedited, ge);
    }
    if (ge == 2) syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
}

static uint32_t *low_half(osmp_atomic64_t *ctr)
{
    _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the futex word is the counter's low half");
    return (uint32_t *)(void *)ctr;
}

int osmp__wait_reached(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target,
                       const struct osmp__wait_policy *policy, osmp__wait_check_fn check, void *ctx,
                       uint64_t *reached)
{
    uint64_t v;
    long pauses = policy->pauses > 1 ? policy->pauses : 1;
    for (long i = 0; i < policy->spin; i += pauses) {
        if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        for (long k = 0; k < pauses; k++) osmp__cpu_relax();
    }
    for (long i = 0; i < policy->yields; i++) {
        if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        if (__builtin_expect(osmp__load32(&osmp__wait_others) != 0, 0)) osmp__wait_progress();
        sched_yield();
    }
    for (;;) {
        if (__builtin_expect(osmp__load32(&osmp__wait_others) != 0, 0)) {
            osmp__wait_progress();
            if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        }
        osmp__fetch_add32(waiters, 1);
        sleeper_fence(); /* pairs with osmp__publish */
        v = osmp__load_acquire(ctr);
        if (osmp__seq_reached(v, target)) {
            osmp__fetch_sub32(waiters, 1);
            goto done;
        }
        struct timespec ts = {0, 1000000};
        if (syscall(SYS_futex, low_half(ctr), FUTEX_WAIT, (uint32_t)v, &ts, NULL, 0) && errno == ETIMEDOUT)
            osmp__fetch_add32(&naps_out, 1);
        osmp__fetch_sub32(waiters, 1);
        if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        int rc = check ? check(ctx) : OSMP_OK;
        /* The peer may have published and then exited: the counter has the last word. */
        if (rc && !osmp__seq_reached(v = osmp__load_acquire(ctr), target)) return rc;
        if (rc) goto done;
    }
done:
    if (reached) *reached = v;
    return OSMP_OK;
}

void osmp__wake(osmp_atomic64_t *ctr)
{
    syscall(SYS_futex, low_half(ctr), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int64_t osmp__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
