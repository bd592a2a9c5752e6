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
 *
 * A runtime under OSMP (an MPI library) may need the waiting thread itself to
 * progress: a peer blocked in a send to this process, or in an RMA epoch on
 * its memory, waits for this process's library, and may be what the counter
 * waits for (docs/design.md section 5, "Waiting"). Once its spin is over, a
 * waiter calls the runtime's poll function (osmp_set_wait_poll) at once, then
 * at growing intervals, 50 us doubling up to 1 ms (50 us again after a call
 * that did work), and never naps past its next call. The first call comes
 * when the spin ends because a peer that needs this process is likely waiting
 * for it already; the intervals grow because a long wait is one for a peer
 * that computes, where a call costs a wake-up (a few microseconds of the
 * core) and finds nothing: at 1 ms a long wait wakes no more often than the
 * naps below always did. A waiter that yields (a team with more participants
 * than CPUs) calls it between its yields, but cuts a nap short only after a
 * call that did work: there a wake-up takes the core a peer needs (8
 * processes on 2 cores: 8-byte allreduce and barrier 1.6 and 2.0 times
 * slower with every nap cut short, docs/measurements.md section 18).
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
/* Naps that lasted their whole millisecond: no publication woke the sleeper
 * (naps cut short for the runtime's poll are not counted). */
static osmp_atomic32_t naps_out;

void (*osmp__wait_progress)(void);
osmp_atomic32_t osmp__wait_others;

/* ---- the runtime's poll function (osmp_set_wait_poll) */

struct poll_hook {
    osmp_poll_fn fn;
    void *arg;
};
/* The hook in force (NULL: none), one of a few slots used in turn, so that a
 * waiter that loaded the previous one still reads a whole pair. */
static osmp_atomic_ptr_t poll_now;
static struct poll_hook poll_slots[4];
static osmp_atomic32_t poll_next;
static __thread int poll_inside; /* this thread is inside fn: a wait there does not call it again */
static __thread int poll_never;  /* the progress thread */

#define POLL_GAP_MIN_NS 50000
#define NAP_NS 1000000 /* a sleeper's longest nap, and the polls' longest interval */

int osmp_set_wait_poll(osmp_poll_fn fn, void *arg)
{
    struct poll_hook *h = NULL;
    if (fn) {
        h = &poll_slots[osmp__fetch_add32(&poll_next, 1) % 4];
        h->fn = fn;
        h->arg = arg;
    }
    osmp__store_ptr(&poll_now, h);
    return OSMP_OK;
}

void osmp__wait_never_poll(void)
{
    poll_never = 1;
}

/* A waiter's polls: when the next is due, and the interval after it. */
struct poller {
    const struct poll_hook *h; /* NULL: none for this wait */
    int64_t next, gap;
};

/* spun: the waiter spun first (its first call is due at once), else it is one
 * that yields at once (an oversubscribed team: its first call comes after the
 * shortest interval, so that the many short waits there pay none). */
static void poller_begin(struct poller *p, int spun)
{
    p->h = osmp__load_ptr(&poll_now);
    if (p->h && (poll_never || poll_inside)) p->h = NULL;
    p->next = p->h && !spun ? osmp__now_ns() + POLL_GAP_MIN_NS : 0;
    p->gap = POLL_GAP_MIN_NS;
}

/* Call the runtime if its time has come (1: called). now: the clock, read by the caller. */
static int poller_run(struct poller *p, int64_t now)
{
    if (now < p->next) return 0;
    poll_inside = 1;
    int did = p->h->fn(p->h->arg);
    poll_inside = 0;
    p->gap = did ? POLL_GAP_MIN_NS : p->gap * 2 < NAP_NS ? p->gap * 2 : NAP_NS;
    p->next = osmp__now_ns() + p->gap;
    return 1;
}

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
    struct poller poll;
    poller_begin(&poll, policy->spin > 0);
    for (long i = 0; i < policy->yields; i++) {
        if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        if (__builtin_expect(osmp__load32(&osmp__wait_others) != 0, 0)) osmp__wait_progress();
        /* (a yield or the runtime's call, not both: Open MPI's progress yields
         * by itself when it finds nothing on an oversubscribed node, and two
         * yields between looks at the counter doubled the time of small calls
         * there) */
        if (poll.h && poller_run(&poll, osmp__now_ns())) continue;
        sched_yield();
    }
    int64_t checked = poll.h ? osmp__now_ns() : 0;
    for (;;) {
        if (__builtin_expect(osmp__load32(&osmp__wait_others) != 0, 0)) {
            osmp__wait_progress();
            if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        }
        long nap = NAP_NS;
        if (poll.h) { /* (the runtime's turn, then a nap no longer than to its next one) */
            int64_t now = osmp__now_ns();
            poller_run(&poll, now);
            if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
            now = osmp__now_ns();
            if (poll.next - now < nap && (!policy->yields || poll.gap == POLL_GAP_MIN_NS))
                nap = poll.next - now > 0 ? (long)(poll.next - now) : 1;
        }
        osmp__fetch_add32(waiters, 1);
        sleeper_fence(); /* pairs with osmp__publish */
        v = osmp__load_acquire(ctr);
        if (osmp__seq_reached(v, target)) {
            osmp__fetch_sub32(waiters, 1);
            goto done;
        }
        struct timespec ts = {0, nap};
        if (syscall(SYS_futex, low_half(ctr), FUTEX_WAIT, (uint32_t)v, &ts, NULL, 0) && errno == ETIMEDOUT &&
            nap == NAP_NS)
            osmp__fetch_add32(&naps_out, 1);
        osmp__fetch_sub32(waiters, 1);
        if (osmp__seq_reached(v = osmp__load_acquire(ctr), target)) goto done;
        if (poll.h) { /* (short naps: the check stays about once a millisecond, as peer_check expects) */
            int64_t now = osmp__now_ns();
            if (now - checked < NAP_NS) continue;
            checked = now;
        }
        int rc = check ? check(ctx) : OSMP_OK;
        /* The peer may have published and then exited: the counter has the last word. */
        if (rc && !osmp__seq_reached(v = osmp__load_acquire(ctr), target)) return rc;
        if (rc) goto done;
    }
done:
    if (reached) *reached = v;
    return OSMP_OK;
}

int osmp__wait_nap(osmp_atomic64_t *ctr, osmp_atomic32_t *waiters, uint64_t target, int64_t ns)
{
    osmp__fetch_add32(waiters, 1);
    sleeper_fence(); /* pairs with osmp__publish */
    uint64_t v = osmp__load_acquire(ctr);
    int reached = osmp__seq_reached(v, target);
    if (!reached) {
        struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
        syscall(SYS_futex, low_half(ctr), FUTEX_WAIT, (uint32_t)v, &ts, NULL, 0);
    }
    osmp__fetch_sub32(waiters, 1);
    return reached;
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
