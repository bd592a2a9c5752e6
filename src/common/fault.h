/* Fault injection for tests (OSMP_FAULT, internal): make one chosen event of a
 * process fail, as the system would refuse it. */
#ifndef OSMP_FAULT_H
#define OSMP_FAULT_H

#include <stdlib.h>

#include "common/atomic.h"

enum osmp__fault_kind {
    OSMP__FAULT_COPY,  /* a single copy of a collective: as if process_vm_readv refused */
    OSMP__FAULT_ALLOC, /* a memory allocation of team creation or of a collective: as if malloc returned NULL
                        */
    OSMP__FAULT_SEG,   /* creating or attaching a team segment: as if shm_open failed */
    OSMP__FAULT_DECIDE, /* an allocation of a decision the team makes at creation (coll/select.c): also counted
                         * as an allocation (alloc:N), but this kind reaches it without counting the others */
    OSMP__FAULT_KINDS
};

/* 0: OSMP_FAULT not read yet, 1: off, 2: on. */
extern osmp_atomic32_t osmp__fault_state;
int osmp__fault_slow(enum osmp__fault_kind k);

/* Is this event of kind k the one OSMP_FAULT=KIND:N[@R] names: the N-th of its
 * kind in this process (in rank R only: OSMP_RUN_RANK under osmp-run, else
 * the MPI library's rank variable)? Off, an event costs one load. */
static inline int osmp__fault(enum osmp__fault_kind k)
{
    return __builtin_expect(osmp__load32(&osmp__fault_state) != 1, 0) && osmp__fault_slow(k);
}

/* OSMP_FAULT=delay:COLLECTIVE.ALGORITHM:USEC[@R]: every call that runs that
 * algorithm in this process sleeps USEC first (tests of osmp-tune: an
 * algorithm made slow on purpose). Returns USEC and the "coll.alg" name, 0
 * when off. Read at team creation (select.c). */
unsigned osmp__fault_delay(const char **coll_alg);

/* Allocations that OSMP_FAULT=alloc:N can refuse: team creation's and the collectives'. */
static inline void *osmp__malloc(size_t n)
{
    return osmp__fault(OSMP__FAULT_ALLOC) ? NULL : malloc(n);
}
static inline void *osmp__calloc(size_t n, size_t size)
{
    return osmp__fault(OSMP__FAULT_ALLOC) ? NULL : calloc(n, size);
}
/* Allocations of the decisions a team makes at its creation (OSMP_FAULT=decide:N or alloc:N). */
static inline void *osmp__decide_malloc(size_t n)
{
    return osmp__fault(OSMP__FAULT_DECIDE) ? NULL : osmp__malloc(n);
}
static inline void *osmp__decide_calloc(size_t n, size_t size)
{
    return osmp__fault(OSMP__FAULT_DECIDE) ? NULL : osmp__calloc(n, size);
}

#endif
