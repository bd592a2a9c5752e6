/* coll layer internals: reduction kernels, the team's data path, algorithms. */
#ifndef OSMP_COLL_H
#define OSMP_COLL_H

#include <stddef.h>
#include <sys/types.h>

#include "common/atomic.h"
#include "osmp.h"
#include "shm/shm.h"
#include "shm/wait.h"

typedef struct osmp__team *osmp__team_t;

typedef void (*osmp__reduce_fn)(void *acc, const void *in, size_t n);
/* OSMP_ERR_INVALID_ARG for an unknown dtype/op, OSMP_ERR_TYPE for a pair that is not defined. */
int osmp__reduce_fn_get(osmp_dtype_t dtype, osmp_op_t op, osmp__reduce_fn *fn);
/* A team of one folds nothing: make its lone contribution to a logical operation 0 or 1 too. */
void osmp__reduce_alone_logical(void *buf, size_t count, size_t esize, osmp_op_t op, osmp__reduce_fn fn);
static inline void osmp__reduce_alone(void *buf, size_t count, size_t esize, osmp_op_t op, osmp__reduce_fn fn)
{
    if (op == OSMP_LAND || op == OSMP_LOR || op == OSMP_LXOR) osmp__reduce_alone_logical(buf, count, esize, op, fn);
}

/* One direction of a participant's mailbox: a cache line its owner writes. */
#define OSMP_INLINE_MAX 40
struct osmp__chan {
    osmp_atomic64_t seq;     /* last step published in this direction */
    osmp_atomic32_t waiters; /* readers asleep on seq */
    uint32_t pad;
    uint64_t addr; /* buffer exposed for single copy in the published step */
    char inline_data[OSMP_INLINE_MAX];
} __attribute__((aligned(OSMP_CACHE_LINE)));
_Static_assert(sizeof(struct osmp__chan) == OSMP_CACHE_LINE, "one line per direction");

enum { OSMP__UP = 0, OSMP__DOWN = 1 };

/* Team-wide state, in rank 0's region (it outlives any participant: every
 * participant maps the whole segment). */
struct osmp__shared {
    osmp_atomic32_t lost; /* 0, or 1 + the rank whose loss someone noticed first */
} __attribute__((aligned(OSMP_CACHE_LINE)));

/* A participant's region of the team segment, first touched by its owner. The
 * rings (depth slots of chunk bytes per direction) follow the header. */
struct osmp__region {
    struct osmp__chan chan[2];
    struct osmp__shared shared; /* used in rank 0's region only */
};

/* One base-case arrangement of the plan for one root: every rank's parent and
 * children. Within a group the leader heads a k-ary tree of the members (flat:
 * k = group size). */
struct osmp__tree {
    int parent; /* -1 at the root */
    int nchildren;
    int *children; /* in reduction order: lower levels first */
};

/* Who must have consumed a slot before its owner writes it again. */
struct osmp__slot_rec {
    int written;  /* the slot has content whose consumers must be waited for */
    uint64_t seq; /* step the consumers publish when done with the last write */
    const int *consumers;
    int nconsumers;
    int one; /* storage when there is a single consumer */
    int dir; /* the consumers signal on their own counter of this direction */
};

enum osmp__coll_op { OSMP__OP_BARRIER, OSMP__OP_BCAST, OSMP__OP_REDUCE, OSMP__OP_ALLREDUCE, OSMP__OP_COUNT };

#define OSMP__MAX_ARRANGEMENTS 6
#define OSMP__MAX_DEPTH 64

struct osmp__arrangement {
    int radix;                /* 0: flat */
    struct osmp__tree **trees; /* [root], built on first use */
};

struct osmp__thread_rv; /* in-process rendezvous of osmp_team_create_threads */

/* The team as the algorithms see it. The public handle (struct osmp_team, api.c)
 * points here; it stays valid after destroy to recognize a stale handle. */
struct osmp__team {
    int rank, size;
    int failed; /* OSMP_ERR_PEER_LOST once any wait gave up: the steps no longer agree */
    int check_args; /* OSMP_CHECK_ARGS: exchange a checksum of the arguments first */
    pid_t *pids;
    int watching;          /* the other processes' pids are watched (liveness.c) */
    unsigned char *local; /* local[r]: rank r lives in this process */
    int *cores;
    osmp_topo_t topo; /* process-wide, not owned */
    char hierarchy[128];
    struct osmp_plan *plan; /* root 0 */

    void *seg;
    size_t seg_size, region_size;
    int seg_private; /* a team of one keeps its region in private memory */
    size_t chunk;    /* bytes per ring slot */
    int depth;       /* slots per direction */
    int single_copy; /* every pair can copy from the other's buffers */
    size_t single_copy_min;
    struct osmp__wait_policy wait;

    uint64_t step; /* steps used so far; the same on every participant */
    struct osmp__slot_rec rec[2][OSMP__MAX_DEPTH + 1]; /* [dir][slot], last = inline */

    int radix_of[OSMP__OP_COUNT]; /* base case per operation: 0 flat, k > 0 k-ary, -1 auto, OSMP__ALG_DIRECT */
    int *peers;                   /* every rank but mine, ascending */
    struct osmp__arrangement arr[OSMP__MAX_ARRANGEMENTS];
    int narr;

    struct osmp__thread_rv *thread_rv; /* created on the first osmp_team_create_threads */
    void *thread_rv_lock;              /* pthread_mutex_t, creation path only */
};

static inline struct osmp__region *osmp__region(osmp__team_t t, int rank)
{
    return (struct osmp__region *)((char *)t->seg + (size_t)rank * t->region_size);
}

static inline char *osmp__ring(osmp__team_t t, int rank, int dir, uint64_t step)
{
    return (char *)osmp__region(t, rank) + sizeof(struct osmp__region) +
           ((size_t)dir * (size_t)t->depth + (size_t)(step % (uint64_t)t->depth)) * t->chunk;
}

/* The tree for an operation and root (built on first use). NULL on no memory. */
const struct osmp__tree *osmp__tree_get(osmp__team_t t, enum osmp__coll_op op, size_t bytes, int root);

/* Tree algorithms (tree.c). `in`/`out` are resolved (no OSMP_IN_PLACE). */
int osmp__tree_bcast(osmp__team_t t, void *buf, size_t count, size_t esize, int root);
int osmp__tree_reduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize, osmp__reduce_fn fn,
                      int root, int all);
int osmp__tree_barrier(osmp__team_t t);

/* Algorithms for a team that forms one group (flat.c): every rank reads every
 * other rank's mailbox, no leader. */
#define OSMP__ALG_DIRECT (-2)
int osmp__flat_team(osmp__team_t t);
int osmp__direct_allreduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize,
                           osmp__reduce_fn fn);
int osmp__sliced_allreduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize,
                           osmp__reduce_fn fn);
int osmp__direct_barrier(osmp__team_t t);

/* The choice between tree and flat algorithms (select.c). */
int osmp__allreduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize, osmp__reduce_fn fn);
int osmp__barrier(osmp__team_t t);

/* Flat algorithms through the root or pairwise (direct.c). */
int osmp__gather(osmp__team_t t, const void *in, void *out, size_t bytes, int root);
int osmp__scatter(osmp__team_t t, const void *in, void *out, size_t bytes, int root);
int osmp__alltoall(osmp__team_t t, const void *in, void *out, size_t bytes);

/* Data-path helpers (tree.c). */
/* Wait until `rank` has published `step` in direction dir. OSMP_ERR_PEER_LOST
 * if it died (or another participant gave up on the team) first; the team is
 * then marked failed. */
int osmp__wait_peer(osmp__team_t t, int rank, int dir, uint64_t step);
void osmp__publish_own(osmp__team_t t, int dir, uint64_t step);
/* Claim my slot for `step` (ring slot, or the inline area if `inline_slot`),
 * waiting until the consumers of its previous content are done. The new
 * content's consumers will say they are done by publishing signal_step on their
 * own counter of direction signal_dir. NULL when a consumer was lost. */
char *osmp__claim(osmp__team_t t, int dir, uint64_t step, int inline_slot, const int *consumers, int n,
                  int signal_dir, uint64_t signal_step);

#endif
