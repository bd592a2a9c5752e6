/*
 * coll layer internals: the state algorithms run on, reduction kernels, the
 * algorithm tables of every collective and the selection between them.
 *
 * Layout: src/coll/algs.def lists every collective's algorithms ({name,
 * description, function}, read by selection, by the OSMP_<OP>_ALG knob and by
 * `osmp-topo --algorithms`), src/coll/<op>/<op>_<alg>.c holds one algorithm
 * each. src/coll/select.c decides everything a team decides once: the one
 * selection table (collective x size class x team shape -> algorithm), the
 * single-copy and streaming thresholds and the chunk. src/coll/tree.c builds
 * the trees (from the plan, or the distance-aware MST) and the ring, and runs
 * the pipelined passes up and down the trees that the tree algorithms share.
 * The data path (mailboxes, slots, waiting) is shm/mailbox.h.
 */
#ifndef OSMP_COLL_H
#define OSMP_COLL_H

#include <stddef.h>
#include <stdio.h>

#include "osmp.h"
#include "shm/mailbox.h"
#include "shm/shm.h"
#include "coll/trace.h"
#include "common/knobs.h"
#include "common/util.h"

typedef void (*osmp__reduce_fn)(void *acc, const void *in, size_t n);
/* OSMP_ERR_INVALID_ARG for an unknown dtype/op, OSMP_ERR_TYPE for a pair that is not defined. */
int osmp__reduce_fn_get(osmp_dtype_t dtype, osmp_op_t op, osmp__reduce_fn *fn);
/* The same kernel writing a third array: out[i] = a[i] op b[i] (op.c). */
typedef void (*osmp__reduce_fn3)(void *out, const void *a, const void *b, size_t n);
int osmp__reduce_fns_get(osmp_dtype_t dtype, osmp_op_t op, osmp__reduce_fn *fn, osmp__reduce_fn3 *fn3);
/* 16-bit floating point (op_half.c): the kernels of one instruction set
 * (OSMP__HALF_*; -1: the best this CPU has), every one giving the same bits;
 * fn3 may be NULL. OSMP_ERR_TYPE for an operation other than SUM, PROD, MIN,
 * MAX; OSMP_ERR_INVALID_ARG for an instruction set the CPU lacks. */
enum { OSMP__HALF_SCALAR, OSMP__HALF_AVX2, OSMP__HALF_AVX512, OSMP__HALF_ISAS };
int osmp__half_fns(osmp_dtype_t d, osmp_op_t op, int isa, osmp__reduce_fn *fn, osmp__reduce_fn3 *fn3);
int osmp__half_isa_supported(int isa);
int osmp__half_isa(void); /* the one osmp__reduce_fns_get gives */
float osmp__f16_to_f32(uint16_t h);
uint16_t osmp__f32_to_f16(float f);
/* A team of one folds nothing: make its lone contribution to a logical operation 0 or 1 too. */
void osmp__reduce_alone_logical(void *buf, size_t count, size_t esize, osmp_op_t op, osmp__reduce_fn fn);
static inline void osmp__reduce_alone(void *buf, size_t count, size_t esize, osmp_op_t op, osmp__reduce_fn fn)
{
    if (op == OSMP_LAND || op == OSMP_LOR || op == OSMP_LXOR) osmp__reduce_alone_logical(buf, count, esize, op, fn);
}

/* The base case of a tree algorithm (its radix) says which tree it runs on: 0
 * flat and k > 0 k-ary follow the plan's groups, a k-ary tree inside each;
 * OSMP__RADIX_MST is the distance-aware minimum spanning tree over all ranks
 * (plan/graph.c), which ignores the groups and so crosses no boundary more
 * often than it must. */
#define OSMP__RADIX_MST (-1)
/* The MST and the ring sort all n(n-1)/2 pairs of ranks on every rank (plan/graph.c):
 * larger teams take the plan's flat tree and the rank-order ring instead, all alike. */
#define OSMP__GRAPH_RANKS_MAX 1024

/* One arrangement for one root: every rank's parent and children. Plan's
 * trees: within a group the leader heads a k-ary tree of the members (flat:
 * k = group size). */
struct osmp__tree {
    int parent; /* -1 at the root */
    int nchildren;
    int *children; /* in reduction order: the plan's lower levels first; MST: nearest first */
    /* Subtrees, for the algorithms that move every rank's block along the tree
     * (gather and scatter "hier"): a rank's stream is its own block, then each
     * child's stream in children order, so every subtree is one contiguous run
     * of blocks wherever it travels. */
    int nsub;         /* ranks in my subtree, me included */
    int *sub;         /* those ranks in stream order: sub[0] = me */
    int *child_nsub;  /* [nchildren]: ranks in each child's subtree */
    int nbefore;      /* my earlier siblings */
    int *before_nsub; /* [nbefore]: ranks in each of their subtrees, in order */
};

#define OSMP__MAX_ARRANGEMENTS 16
struct osmp__arrangement {
    int radix;                 /* 0: flat, k > 0: k-ary, OSMP__RADIX_MST */
    const char *hierarchy;     /* the spec its trees follow (OSMP_HIERARCHY_<OP>) */
    struct osmp__tree **trees; /* [root], built on first use */
};

/* A resolved choice: the algorithm and, for tree algorithms, the base case,
 * for blocks of up to max bytes. The choices of one (collective, size class,
 * single copy) form a chain of rising max, the last SIZE_MAX (select.c). */
struct osmp__alg;
struct osmp__choice {
    const struct osmp__alg *alg;
    int radix; /* 0 flat, k > 0 k-ary, OSMP__RADIX_MST */
    size_t max;
    int from;  /* OSMP__FROM_TABLE, OSMP__FROM_KNOB, or > 0: the tune table's line */
};
enum { OSMP__FROM_TABLE = 0, OSMP__FROM_KNOB = -1 };
#define OSMP__MPI_BANDS 8
/* Links of a chain: a forced algorithm (limited by its slot), the tune
 * table's bands, then the selection table's rows (up to three). */
#define OSMP__CHAIN 10

/* Size classes of the selection table, by the bytes of one block. */
enum { OSMP__SIZE_INLINE, OSMP__SIZE_MEDIUM, OSMP__SIZE_LARGE, OSMP__NSIZES };
/* Up to this many bytes a reduction keeps the flat base case and a flat team
 * does not slice: above it, spreading the reduction over more members pays. */
#define OSMP__MEDIUM_MAX 65535
/* Direct reductions beyond the line: at most this many bytes of the others'
 * vectors read by each rank, where n - 1 reads of one hop still beat a tree's
 * two hops (docs/measurements.md); beyond it the next selection row. */
#define OSMP__DIRECT_READ_MAX 16384

/* What the algorithms of one participant run on. The team (team/team.h) embeds
 * it and owns what its pointers point to. */
struct osmp__coll {
    int rank, size;
    struct osmp__mbox mb; /* the data path */
    const int *cores;     /* every rank's core, for trees built from the plan */
    osmp_topo_t topo;
    const char *hierarchy;        /* the spec of the collective running (see op_plan) */
    const struct osmp_plan *plan; /* its plan, root 0 */
    /* OSMP_HIERARCHY_<OP>: a collective's own spec and plan (NULL: the team's).
     * osmp__run puts them in hierarchy and plan while that collective runs, so
     * its algorithms, their trees and its selection row follow them. */
    const char *op_hierarchy[OSMP_COLL_COUNT];
    const struct osmp_plan *op_plan[OSMP_COLL_COUNT];
    const int *peers;             /* every rank but mine, ascending */

    uint64_t step;          /* first step of the next phase; the same on every participant */
    int oversubscribed;     /* more participants than CPUs to run on (team.c): waiters yield at once */
    /* Ring slots and mini lines taken so far (osmp__slots_take), the same on every participant. */
    uint64_t pass_slots[2];
    /* A "done reading" publication this participant owes (osmp__owe): made at
     * the start of its next phase, unless that call's own publication implies it. */
    int owed, owed_dir;
    uint64_t owed_step;
    uint64_t direct_calls; /* direct reductions so far: their line alternates UP, DOWN */
    int single_copy; /* every pair can copy from the other's buffers */
    /* Per collective: blocks from this size are copied once (SIZE_MAX where
     * single copy does not work; select.c). */
    size_t single_copy_min[OSMP_COLL_COUNT];
    size_t own_stream_min; /* an exchange copies my own block with streaming stores from this size (osmp__copy_own) */
    /* Per collective, size class and single copy (0/1): the algorithms to run
     * by block size, resolved at team creation from the selection table and
     * OSMP_<OP>_ALG. */
    struct osmp__choice choice[OSMP_COLL_COUNT][OSMP__NSIZES][2][OSMP__CHAIN];
    struct osmp__arrangement arr[OSMP__MAX_ARRANGEMENTS];
    int narr;
    int *ring; /* the distance-aware ring (plan/graph.c) from rank 0, built on first use */
    size_t *displs; /* [size] block displacements for reduce_scatter's ring (its calls give counts only) */
    struct osmp__trace *trace; /* OSMP_TRACE (coll/trace.h), NULL when off */
    struct osmp__slicing *slicing[2]; /* sliced reductions, built on first use: [0] one group, [1] levels */
    /* Per collective: the tune table's "mpi" bands for this team's size, the
     * first OSMP__MPI_BANDS (osmp-tune's 11 sizes make at most 6; what
     * osmp_team_choice reports; libosmp_mpi passes those calls to MPI). */
    struct osmp__band {
        size_t lo, hi;
        int from;
    } mpi[OSMP_COLL_COUNT][OSMP__MPI_BANDS];
    int nmpi[OSMP_COLL_COUNT];
    /* OSMP_FAULT=delay:COLL.ALG:USEC (tests): this algorithm sleeps that long per call. */
    const struct osmp__alg *slow_alg;
    unsigned slow_us;
};
typedef struct osmp__coll *osmp__coll_t;

/* Every call takes whole phases of steps, whatever its counts: the step numbers
 * of a call never depend on a count that some participant does not know
 * (gatherv, alltoallv), and a phase leaves room for 2^40 steps (one chunk each;
 * a count that would need more is refused: OSMP_ERR_RANGE). */
#define OSMP__PHASE_STEPS (UINT64_C(1) << 40)
static inline uint64_t osmp__phase_only(osmp__coll_t t)
{
    uint64_t base = t->step;
    t->step += OSMP__PHASE_STEPS;
    t->mb.call_base = base;
    return base;
}

/* Owe the publication "step on dir" instead of making it now. A "done reading
 * your line" publication at the end of a call costs a fence that waits for the
 * line to leave the readers' caches; owed, it is made at the start of the next
 * call (osmp__phase), or never, when that call is one whose own publications
 * imply it (the direct reductions: osmp__phase_only). step must exceed
 * every step published on dir so far and stay below the next phase. */
static inline void osmp__owe(osmp__coll_t t, int dir, uint64_t step)
{
    t->owed = 1;
    t->owed_dir = dir;
    t->owed_step = step;
}

/* Fetch my line dir for the next direct call's store, off its critical path.
 * A read prefetch: a prefetch for writing would take the line from a peer
 * that already polls it for the next call. */
static inline void osmp__next_line_prefetch(osmp__coll_t t, int dir)
{
    __builtin_prefetch(osmp__mb_chan(&t->mb, t->rank, dir), 1, 3);
}

/* Make the "done reading" owed (osmp__owe) unless a publication of this call
 * on its counter (bit dir of `published`) implied it. */
static inline void osmp__settle_owed(osmp__coll_t t, unsigned published)
{
    if (__builtin_expect(!t->owed, 1)) return;
    t->owed = 0;
    if (!(published >> t->owed_dir & 1)) osmp__mb_publish(&t->mb, t->owed_dir, t->owed_step);
}

static inline uint64_t osmp__phase(osmp__coll_t t)
{
    osmp__settle_owed(t, 0); /* before this call's first claim or wait: no one waits for it long */
    return osmp__phase_only(t);
}

/* The first of k ring slots for this call: a call starts after the slots of
 * the previous ones (modulo depth), so a participant done with one call may
 * write the next while readers finish (the claims keep it from overwriting
 * what they have not read). k must be the same on every participant (a count
 * all of them know, or a constant). */
static inline uint64_t osmp__slots_take(osmp__coll_t t, uint64_t k)
{
    uint64_t first = t->pass_slots[0];
    t->pass_slots[0] += k;
    return first;
}

/* The same for the mini lines (shm/mailbox.h): the first of k, as a slot name
 * is made from it with osmp__mini_slot. */
static inline uint64_t osmp__minis_take(osmp__coll_t t, uint64_t k)
{
    uint64_t first = t->pass_slots[1];
    t->pass_slots[1] += k;
    return first;
}
static inline int osmp__mini_slot(uint64_t i)
{
    return OSMP__SLOT_MINI((int)(i % OSMP__MINI_SLOTS));
}

/* The trace's reports (coll/trace.h): one branch each when tracing is off. */
static inline void osmp__trace_copy(osmp__coll_t t, int src, int dst, size_t bytes)
{
    if (__builtin_expect(t->trace != NULL, 0)) osmp__trace_copy_(t->trace, src, dst, bytes);
}
static inline void osmp__trace_reduce(osmp__coll_t t, size_t bytes)
{
    if (__builtin_expect(t->trace != NULL, 0)) osmp__trace_reduce_(t->trace, bytes);
}
static inline void osmp__trace_handover(osmp__coll_t t, const char *alg)
{
    if (__builtin_expect(t->trace != NULL, 0)) osmp__trace_handover_(t->trace, alg);
}

/* Write n bytes of a message into my ring slot dst (osmp__mb_fill: streaming
 * stores from OSMP_STREAM_MIN) and tell the trace how. The caller reports the
 * copy itself (osmp__trace_copy), as for any other. */
static inline void osmp__trace_streamed(osmp__coll_t t, size_t streamed)
{
    if (__builtin_expect(t->trace != NULL, 0) && streamed) osmp__trace_stream_(t->trace, streamed);
}
static inline void osmp__stage(osmp__coll_t t, void *dst, const void *src, size_t n)
{
    osmp__trace_streamed(t, osmp__mb_fill(&t->mb, dst, src, n));
}

/* One call's arguments, resolved (no OSMP_IN_PLACE; bcast's buffer is `out`). */
struct osmp__args {
    const void *in;
    void *out;
    size_t count, esize; /* elements of my block, bytes per element */
    /* Vector variants: counts and displacements (elements) of the blocks, one
     * per rank, where this rank knows them (gatherv/scatterv: the root's; NULL
     * elsewhere and for the uniform collectives, whose block r is count
     * elements at r * count). Alltoallv: the send side here, the receive side
     * in counts2/displs2. */
    const size_t *counts, *displs, *counts2, *displs2;
    int vector; /* a vector variant: every rank knows it, not every rank has the arrays */
    size_t vector_bound; /* a vector variant's bytes that every rank knows bound each block (0: none known) */
    osmp__reduce_fn fn;
    osmp__reduce_fn3 fn3; /* fn into a third array (reduce, allreduce, reduce_scatter(_block); NULL elsewhere) */
    int root;
    int radix;       /* the tree base case chosen with the algorithm */
    int single_copy; /* copy blocks once, straight from the source buffer */
    size_t copy_min; /* this call's single_copy_min (osmp__copy_once) */
    size_t staged;   /* bytes the entry point first copied within my memory (in place), for the trace */
};

static inline size_t osmp__count_of(const struct osmp__args *a, int r)
{
    return a->counts ? a->counts[r] : a->count;
}

static inline size_t osmp__displ_of(const struct osmp__args *a, int r)
{
    return a->displs ? a->displs[r] : (size_t)r * a->count;
}

/* The receive side of alltoall(v): rank r's block for me (counts2/displs2). */
static inline size_t osmp__count2_of(const struct osmp__args *a, int r)
{
    return a->counts2 ? a->counts2[r] : a->count;
}

static inline size_t osmp__displ2_of(const struct osmp__args *a, int r)
{
    return a->displs2 ? a->displs2[r] : (size_t)r * a->count;
}

typedef int (*osmp__alg_fn)(osmp__coll_t t, const struct osmp__args *a);
/* The resumable form of an algorithm (coll/co.h): OSMP_OK when done, a
 * negative status on failure, or OSMP__PENDING ("not yet": it waits for the
 * counter in t->mb.pend) after saving its place in co. */
struct osmp__co;
#define OSMP__PENDING 1
typedef int (*osmp__co_fn)(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);

/* One algorithm of a collective (its table ends with a NULL name). */
struct osmp__alg {
    const char *name; /* OSMP_<OP>_ALG=name (name:K where takes_radix) */
    const char *doc;
    osmp__alg_fn run;
    int radix;            /* base case implied by the name (tree algorithms), when not takes_radix */
    int takes_radix;      /* name:K chooses a K-ary base case, 1 <= K <= 64 */
    /* 1: runs only where blocks are copied once; -1: never there (its blocks
     * must ride in the mailbox); elsewhere the table chooses. */
    int needs_single_copy;
    /* The largest block (bytes) it takes on this team, 0 where it cannot run
     * at all; NULL: any. Selection gives larger blocks to the next row. */
    size_t (*max_block)(osmp__coll_t t);
    /* Its resumable form (coll/co.h): a nonblocking call's. */
    osmp__co_fn co;
    int parts; /* a composition: a schedule of other collectives (OSMP__ALG_PARTS in algs.def) */
};

#define OSMP__COLL_TABLE(NAME, name, flags) extern const struct osmp__alg osmp__##name##_algs[];
OSMP_COLL_MAP(OSMP__COLL_TABLE)
#undef OSMP__COLL_TABLE

/* The table of a collective. */
const struct osmp__alg *osmp__algs_of(osmp_coll_t c);
/* Parse an OSMP_<OP>_ALG value ("auto", a name, or name:K) into *choice (alg
 * NULL for auto). OSMP_ERR_KNOB with a reason in err if it names no algorithm. */
int osmp__alg_parse(osmp_coll_t c, const char *value, struct osmp__choice *choice, char *err, size_t err_len);
/* What selection needs besides the team: the forced algorithms and the knobs
 * that set the thresholds, all rank 0's. */
struct osmp__tune;
struct osmp__select_in {
    struct osmp__choice forced[OSMP_COLL_COUNT];       /* OSMP_<OP>_ALG; alg NULL: auto */
    const struct osmp__tune *tune;                     /* the team's tune table (coll/tune.h), or NULL */
    int64_t stream_min;                                /* OSMP_STREAM_MIN: bytes; -1 auto, -2 never */
    uint64_t single_copy_min, single_copy_min_threads; /* OSMP_SINGLE_COPY_MIN(_THREADS) */
    int single_copy_auto;                              /* OSMP_SINGLE_COPY_MIN=auto */
    int one_process;                                   /* every participant a thread of this process */
};
/* Everything a team decides once, from its shape and the knobs: per collective
 * the algorithms by size (t->choice), the single-copy thresholds
 * (t->single_copy_min), streaming into the slots (t->mb.stream_min) and of an
 * exchange's own block (t->own_stream_min). The same on every participant
 * that sees the same topology, plans and tune table (team creation checks
 * it with osmp__select_digest). OSMP_ERR_NO_MEMORY where a decision could not
 * be made (a participant never guesses: team creation fails). */
int osmp__select_init(osmp__coll_t t, const struct osmp__select_in *in);
/* After osmp__select_init with t->single_copy set: not every pair can copy
 * once after all; the same as osmp__select_init with it unset. */
void osmp__select_single_copy_off(osmp__coll_t t);
/* Digests of what osmp__select_init decided, for team creation to compare:
 * the chains of algorithms (*chains), the thresholds and the tune table's
 * "mpi" bands (*limits). */
void osmp__select_digest(osmp__coll_t t, uint64_t *chains, uint64_t *limits);
/* OSMP_CHUNK_SIZE=auto: the chunk of a team of `size` participants. */
size_t osmp__select_chunk(int size);
/* osmp_team_choice (osmp.h): what this team runs for c at `bytes`. */
int osmp__choice_of(osmp__coll_t t, osmp_coll_t c, size_t bytes, struct osmp_choice *out);
/* Every collective's algorithms and the selection table, for osmp-topo --algorithms. */
void osmp__algs_print(FILE *f);

/* Run collective c with the algorithm selected for its size (count * esize
 * bytes per block) on this team. The vector variants' algorithms are chosen
 * for every size alike (selection rows of any size): the counts differ. */
int osmp__run(osmp__coll_t t, osmp_coll_t c, struct osmp__args *a);
/* A nonblocking call of the same: the algorithm for its size (*alg; a's
 * choices filled in as osmp__run does; OSMP_ERR_RANGE as there), then each
 * step: the algorithm's resumable form from where it stopped (co zeroed at
 * the first). Returns OSMP_OK, OSMP__PENDING or the failure (the team's, as
 * osmp__run). A step never blocks. */
int osmp__co_start(osmp__coll_t t, osmp_coll_t c, struct osmp__args *a, const struct osmp__alg **alg);
int osmp__co_resume(osmp__coll_t t, osmp_coll_t c, const struct osmp__args *a, const struct osmp__alg *alg,
                    struct osmp__co *co);

/* A block of this many bytes between two participants is copied once,
 * straight from where it is (both sides decide alike from the block's size). */
static inline int osmp__copy_once(const struct osmp__args *a, size_t bytes)
{
    return bytes >= a->copy_min;
}

/* My own block of an exchange (allgather(v), alltoall(v)) from my input into
 * my output. Once the team's blocks outgrow the last-level cache (select.c:
 * half its size / n^2), with streaming stores: my output's lines go to memory
 * without first being fetched, and do not evict the input blocks the peers
 * are still reading. */
static inline void osmp__copy_own(const osmp__coll_t t, void *dst, const void *src, size_t bytes)
{
    if (bytes >= t->own_stream_min)
        osmp__trace_streamed(t, osmp__stream_copy(dst, src, bytes));
    else
        memcpy(dst, src, bytes);
}

/* Alltoallv's paths (alltoallv/alltoallv_direct.c): a block between two ranks
 * goes the way its size says, which both ends know. The sender's mailbox line
 * has `part` bytes for each receiver, its slot of the call `spart`: up to part
 * bytes in the line; copied once from the sender's buffer where osmp__copy_once
 * says, its address in the line where an address fits the part (teams of up
 * to 7), else in the slot (osmp__once_in_line); up to spart bytes in the slot;
 * else through the slots' rows (alltoall/alltoall_slots.c). */
enum { OSMP__PAIR_NONE, OSMP__PAIR_LINE, OSMP__PAIR_ONCE, OSMP__PAIR_PART, OSMP__PAIR_ROWS };
static inline int osmp__pair_path(const struct osmp__args *a, size_t part, size_t spart, size_t bytes)
{
    if (!bytes) return OSMP__PAIR_NONE;
    if (bytes <= part) return OSMP__PAIR_LINE;
    if (spart >= sizeof(uint64_t) && osmp__copy_once(a, bytes)) return OSMP__PAIR_ONCE;
    return bytes <= spart ? OSMP__PAIR_PART : OSMP__PAIR_ROWS;
}
/* Where a block copied once has its address: the line's part, or the slot's. */
static inline int osmp__once_in_line(size_t part)
{
    return part >= sizeof(uint64_t);
}
/* The two parts' sizes on this team (0: alltoallv direct does not run). */
static inline size_t osmp__pair_part(osmp__coll_t t)
{
    return t->size >= 2 && (size_t)(t->size - 1) <= OSMP_INLINE_MAX ? OSMP_INLINE_MAX / (size_t)(t->size - 1) : 0;
}
static inline size_t osmp__pair_spart(osmp__coll_t t)
{
    return t->size >= 2 ? t->mb.chunk / (size_t)(t->size - 1) : 0;
}
/* Alltoall(v) through the slots from step base + 1 and ring slot first (the
 * first of the n the call took: alltoall_slots.c): with `direct` only the
 * blocks osmp__pair_path sends through the rows, and not my own block; steps
 * stay below base + OSMP__PHASE_STEPS - 2. Bit dir of *published (if not
 * NULL) is set when it publishes on direction dir. */
int osmp__alltoall_rows(osmp__coll_t t, const struct osmp__args *a, uint64_t base, uint64_t first, int direct,
                        unsigned *published);

/* A team is flat when its plan is one group. */
static inline int osmp__flat_team(osmp__coll_t t)
{
    return t->plan->nlevels <= 1;
}

/* Trees (tree.c): the tree of a base case (radix) and root, built on first
 * use; NULL on no memory. The passes over them: coll/tree.h. */
const struct osmp__tree *osmp__tree_get(osmp__coll_t t, int radix, int root);
/* The distance-aware ring: ring[i] is the rank i hops after rank 0 (ring[0] = 0),
 * built on first use; NULL on no memory. */
const int *osmp__ring_get(osmp__coll_t t);
/* Room for one displacement per rank, allocated on first use (before the
 * caller's first step, as the ring); NULL on no memory. */
size_t *osmp__displs_get(osmp__coll_t t);
/* Frees the trees, the ring and the displacements. */
void osmp__trees_free(osmp__coll_t t);

/* Algorithms that other collectives compose (each in its own <op>_<alg>.c). */
int osmp__allreduce_direct(osmp__coll_t t, const struct osmp__args *a);
/* The direct reductions (allreduce/allreduce_direct.c): whether a call whose
 * vector has vector_bytes, of which each rank folds fold_bytes, runs direct on
 * this team; and the run, each rank folding a->count elements from element lo
 * of everyone's vector into a->out. */
static inline int osmp__direct_fits(osmp__coll_t t, size_t vector_bytes, size_t fold_bytes)
{
    return vector_bytes <= OSMP_INLINE_MAX ||
           (vector_bytes <= t->mb.chunk && fold_bytes * (size_t)(t->size - 1) <= OSMP__DIRECT_READ_MAX);
}
int osmp__direct_fold(osmp__coll_t t, const struct osmp__args *a, size_t vector_bytes, size_t lo);
/* The largest block b for which osmp__direct_fits(t, vector * b, fold * b)
 * holds: the limit the direct reductions give selection (max_block). */
static inline size_t osmp__direct_max(osmp__coll_t t, size_t vector, size_t fold)
{
    size_t line = OSMP_INLINE_MAX / vector, slot = t->mb.chunk / vector;
    if (t->size > 1 && OSMP__DIRECT_READ_MAX / (fold * (size_t)(t->size - 1)) < slot)
        slot = OSMP__DIRECT_READ_MAX / (fold * (size_t)(t->size - 1));
    return line > slot ? line : slot;
}

/* The direct exchange (every rank writes one vector, every rank reads from
 * every other's), the protocol of allreduce_direct.c, shared by the direct
 * reductions, allgather and alltoall: call k of the team writes line d = k % 2
 * (UP, then DOWN), or the next ring slot of mailbox d beyond the line, and its
 * "done reading" is owed, made by the next direct call's own publication.
 * Not taken: beyond the line, the next mini line or aligned pair of them (one
 * line latency where the slot takes two, the counter then the slot): the
 * counter must still be published for the "done reading", now a line of its
 * own that the peers fetch apart, which costs more than it saves. */
struct osmp__direct {
    int d, slot;
    uint64_t s;
};
/* Steps 1-2's start: take this call's phase, line and slot (for a vector of
 * `bytes`), then claim them (NULL: a consumer was lost, m->failed says why). */
static inline __attribute__((always_inline)) void osmp__direct_take(osmp__coll_t t, size_t bytes,
                                                                   struct osmp__direct *x)
{
    x->slot = bytes <= OSMP_INLINE_MAX ? OSMP__SLOT_INLINE : osmp__mb_ring(&t->mb, osmp__slots_take(t, 1));
    x->s = osmp__phase_only(t) + 1;
    x->d = (int)(t->direct_calls++ & 1);
}
static inline __attribute__((always_inline)) char *osmp__direct_claim_taken(osmp__coll_t t,
                                                                           const struct osmp__direct *x)
{
    return osmp__mb_claim(&t->mb, x->d, x->slot, t->peers, t->size - 1, 1 - x->d, x->s + 1);
}
static inline __attribute__((always_inline)) char *osmp__direct_claim(osmp__coll_t t, size_t bytes,
                                                                     struct osmp__direct *x)
{
    osmp__direct_take(t, bytes, x);
    return osmp__direct_claim_taken(t, x);
}
/* Step 2's end: my vector is in place. */
static inline __attribute__((always_inline)) void osmp__direct_publish(osmp__coll_t t, const struct osmp__direct *x)
{
    osmp__mb_publish(&t->mb, x->d, x->s);
    t->owed = 0; /* what a previous call owed on line d: s is above it */
}
/* Step 3: rank r's vector, once published (NULL: r was lost). */
static inline __attribute__((always_inline)) const char *osmp__direct_read(osmp__coll_t t, const struct osmp__direct *x,
                                                                          int r)
{
    if (r != t->rank && osmp__mb_wait(&t->mb, r, x->d, x->s)) return NULL;
    return osmp__mb_slot(&t->mb, r, x->d, x->slot);
}
/* Steps 4-5: fetch line 1-d for the next call, owe "done reading" on it. */
static inline __attribute__((always_inline)) void osmp__direct_done(osmp__coll_t t, const struct osmp__direct *x)
{
    osmp__next_line_prefetch(t, 1 - x->d);
    osmp__owe(t, 1 - x->d, x->s + 1);
}
int osmp__allreduce_sliced(osmp__coll_t t, const struct osmp__args *a);
/* The sliced reductions' per-team slicings (allreduce/allreduce_sliced.c). */
void osmp__slicings_free(osmp__coll_t t);
int osmp__scatter_direct(osmp__coll_t t, const struct osmp__args *a);

#endif
