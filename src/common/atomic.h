/*
 * Every atomic, fence and CPU hint OSMP uses lives here (nowhere else may use
 * <stdatomic.h> or __atomic builtins), so the memory-ordering story can be read
 * in one place:
 *  - a producer fills data, then publishes a counter with a release store;
 *  - a consumer acquire-loads the counter, then reads the data;
 *  - a sleeping waiter registers itself, then re-checks the counter; a producer
 *    publishes, then checks for sleepers (the Dekker pattern: full fences on
 *    both sides, or, where membarrier allows, only a compiler fence on the
 *    producer's side and a barrier on every CPU from the sleeper's; shm/wait.c),
 *    so a wake-up is never lost.
 */
#ifndef OSMP_ATOMIC_H
#define OSMP_ATOMIC_H

#include <stdatomic.h>
#include <stdint.h>

/* One writer per line avoids false sharing between a producer's flag and its
 * neighbour's. The build sets the line size (CMake: the build machine's L1 data
 * line, -DOSMP_CACHE_LINE=N to override; POWER has 128 B, A64FX 256 B); x86 and
 * most ARM server parts move 64-byte lines. common/machine.c checks it against
 * the machine the library runs on. */
#ifndef OSMP_CACHE_LINE
#define OSMP_CACHE_LINE 64
#endif

typedef _Atomic uint64_t osmp_atomic64_t;
typedef _Atomic uint32_t osmp_atomic32_t;
typedef void *_Atomic osmp_atomic_ptr_t;

static inline uint64_t osmp__load_acquire(osmp_atomic64_t *p)
{
    return atomic_load_explicit(p, memory_order_acquire);
}

static inline uint64_t osmp__load_relaxed(osmp_atomic64_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void osmp__store_release(osmp_atomic64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

static inline void osmp__store_relaxed(osmp_atomic64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t osmp__fetch_add(osmp_atomic64_t *p, uint64_t v)
{
    return atomic_fetch_add_explicit(p, v, memory_order_acq_rel);
}

static inline uint32_t osmp__load32(osmp_atomic32_t *p)
{
    return atomic_load_explicit(p, memory_order_seq_cst);
}

static inline uint32_t osmp__load_relaxed32(osmp_atomic32_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

/* Publish a one-time setting (readers load it with osmp__load32). */
static inline void osmp__store32(osmp_atomic32_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

static inline uint32_t osmp__fetch_add32(osmp_atomic32_t *p, uint32_t v)
{
    return atomic_fetch_add_explicit(p, v, memory_order_seq_cst);
}

static inline uint32_t osmp__fetch_sub32(osmp_atomic32_t *p, uint32_t v)
{
    return atomic_fetch_sub_explicit(p, v, memory_order_seq_cst);
}

/* A pointer published for other threads (what it points to is written
 * before the store and read after the load). */
static inline void *osmp__load_ptr(osmp_atomic_ptr_t *p)
{
    return atomic_load_explicit(p, memory_order_acquire);
}

static inline void osmp__store_ptr(osmp_atomic_ptr_t *p, void *v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

/* Store desired if *p holds expected; 1 on success. */
static inline int osmp__cas32(osmp_atomic32_t *p, uint32_t expected, uint32_t desired)
{
    return atomic_compare_exchange_strong_explicit(p, &expected, desired, memory_order_seq_cst,
                                                   memory_order_seq_cst);
}

static inline void osmp__fence_seq_cst(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}

/* Orders the non-temporal stores before it (osmp__stream_copy) before every
 * later store: x86 does not keep them in program order with ordinary stores,
 * so a counter published after them could be seen before their data. */
static inline void osmp__stream_fence(void)
{
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
    __builtin_ia32_sfence();
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Orders the compiler only: the CPU's part comes from another core's membarrier. */
static inline void osmp__compiler_fence(void)
{
    atomic_signal_fence(memory_order_seq_cst);
}

static inline void osmp__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Counters only grow; compare through the signed difference so a counter that
 * wraps past 2^64 still orders correctly against values within 2^63 of it. */
static inline int osmp__seq_reached(uint64_t have, uint64_t want)
{
    return (int64_t)(have - want) >= 0;
}

#endif
