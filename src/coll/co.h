/*
 * Resumable protocols: one body per algorithm, compiled twice (docs/design.md
 * section 11).
 *
 * An algorithm's body takes a constant R and a struct osmp__co. Every variable
 * that lives across a wait is a field of the co, and every wait is an
 * OSMP__AWAIT_* below:
 *   - R = 0, the blocking instantiation: the co is a local of the caller, the
 *     switch folds to its first case (the compiler keeps the fields in
 *     registers) and a wait blocks in place as it always did;
 *   - R = 1, the resumable one: the co lives in the request; a wait whose
 *     counter has not moved saves its place (the line it is on) and returns
 *     OSMP__PENDING; the next call re-enters the switch there (protothreads'
 *     local continuations), the wait polls again, and the protocol goes on.
 * A local declared after the switch's start and used after a wait would be
 * uninitialised on re-entry. -Wjump-misses-init (below, GCC) reports a jump
 * past a local's initialiser, not a local assigned before a wait and read
 * after it: keep every such value in the co.
 *
 * A shared body that waits (tree.c's passes, bcast's modes, the sliced
 * reductions' steps) is a sub-machine with its own saved place (struct
 * osmp__co_sub), entered with OSMP__AWAIT_SUB; sub-machines nest (the sliced
 * reductions' gather inside a level's fold: co->sub2).
 */
#ifndef OSMP_COLL_CO_H
#define OSMP_COLL_CO_H

#include "coll/tree.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic warning "-Wjump-misses-init"
#endif

/* A sub-machine's saved place and the locals that live across its waits. */
struct osmp__co_sub {
    int pc;
    int i, j, pending;
    char *dst[OSMP__MINI_LINES_MAX];
    size_t c, k;
};

struct osmp__part;
struct osmp__co {
    int pc; /* 0: not started; else the line of the wait to resume at */
    /* A composition's part (OSMP__AWAIT_PART): kept beside this co by its
     * owner (the request), since a co cannot hold another. */
    struct osmp__part *part;
    /* What the bodies keep across waits (each algorithm says which it uses). */
    int i, j;
    size_t c, k;
    uint64_t s;
    const char *first;
    const struct osmp__tree *tree;
    struct osmp__direct x;
    struct osmp__pass p;
    struct osmp__co_sub sub;
    struct osmp__co_sub sub2; /* a sub-machine's own (the sliced reductions' gather inside a level's fold) */
    /* The call's place in the team's sequences (coll.h), taken at its start:
     * its phase, its first ring slot, its first mini line. */
    uint64_t base, slots, minis;
    uint64_t at;  /* a buffer's exposed address */
    size_t most;  /* the largest block through the slots */
    int rc;       /* a failure, returned once the steps after it are done */
    int pred, succ; /* the ring's neighbours */
    unsigned bits;  /* what a body learnt of its call (each says what) */
    char *dst;      /* a slot claimed before a wait and filled after it */
    size_t off;     /* a place in a stream (bytes) */
};

/* The body's switch: R = 0 enters at the start, always. */
#define OSMP__CO_BEGIN(R, co)                                                                                  \
    switch ((R) ? (co)->pc : 0) {                                                                              \
    case 0:
#define OSMP__CO_END(R, co) /* (a null statement first: a label may end the body, which C17 needs followed by one) */                                                                                    \
    ;                                                                                                          \
    }                                                                                                          \
    if (R) (co)->pc = 0

/* Wait until `rank` has published step on dir (slot: mini line's own counter).
 * On a lost peer the blocking form returns m->failed; the resumable form
 * learns of it from the sweep (osmp__mb_check_peer). */
#define OSMP__AWAIT_SLOT(R, co, m, rank, dir, slot, step)                                                     \
    do {                                                                                                       \
        if (!(R)) {                                                                                            \
            if (osmp__mb_wait_slot(m, rank, dir, slot, step)) return (m)->failed;                              \
        } else {                                                                                               \
            (co)->pc = __LINE__;                                                                               \
            __attribute__((fallthrough));                                                                      \
        case __LINE__:                                                                                         \
            if (!osmp__mb_poll_slot(m, rank, dir, slot, step)) return OSMP__PENDING;                           \
        }                                                                                                      \
    } while (0)
#define OSMP__AWAIT(R, co, m, rank, dir, step)                                                                \
    do {                                                                                                       \
        if (!(R)) {                                                                                            \
            if (osmp__mb_wait(m, rank, dir, step)) return (m)->failed;                                         \
        } else {                                                                                               \
            (co)->pc = __LINE__;                                                                               \
            __attribute__((fallthrough));                                                                      \
        case __LINE__:                                                                                         \
            if (!osmp__mb_poll(m, rank, dir, step)) return OSMP__PENDING;                                      \
        }                                                                                                      \
    } while (0)
/* Before osmp__mb_claim of (dir, slot): the resumable form waits here until
 * the claim would not wait (the blocking form's claim waits itself). */
#define OSMP__AWAIT_CLAIM(R, co, m, dir, slot)                                                                \
    do {                                                                                                       \
        if (R) {                                                                                               \
            (co)->pc = __LINE__;                                                                               \
            __attribute__((fallthrough));                                                                      \
        case __LINE__:                                                                                         \
            if (!osmp__mb_claim_ready(m, dir, slot)) return OSMP__PENDING;                                     \
        }                                                                                                      \
    } while (0)
/* rc = a sub-machine's call (expr), re-entered until it is done; its
 * failure is the body's. */
#define OSMP__AWAIT_SUB(R, co, rc, expr)                                                                      \
    do {                                                                                                       \
        if (R) {                                                                                               \
            (co)->pc = __LINE__;                                                                               \
            __attribute__((fallthrough));                                                                      \
        case __LINE__:;                                                                                        \
        }                                                                                                      \
        if (((rc) = (expr)) != OSMP_OK) return (rc);                                                           \
    } while (0)

/* osmp__mb_send_minis (shm/mailbox.h) of `bytes` from data to `consumer`
 * (an int), with its claims as waits (the line in co->j); rc: its failure.
 * The blocking form calls it. */
#define OSMP__AWAIT_SEND_MINIS(R, co, rc, m, dir, first, consumer, signal_dir, step, data, bytes)              \
    do {                                                                                                       \
        if (!(R)) {                                                                                            \
            if (((rc) = osmp__mb_send_minis(m, dir, first, consumer, signal_dir, step, data, bytes)))          \
                return (rc);                                                                                   \
        } else {                                                                                               \
            for ((co)->j = 0; (co)->j < osmp__mini_lines(bytes); (co)->j++) {                                  \
                OSMP__AWAIT_CLAIM(R, co, m, dir, osmp__mini_slot((first) + (uint64_t)(co)->j));                \
                int who_ = (consumer);                                                                         \
                char *line_ = osmp__mb_claim(m, dir, osmp__mini_slot((first) + (uint64_t)(co)->j), &who_, 1,   \
                                             signal_dir, step);                                                \
                if (!line_) return (m)->failed;                                                                \
                memcpy(line_, (const char *)(data) + (size_t)(co)->j * OSMP__MINI_DATA,                       \
                       osmp__mini_piece(bytes, (co)->j));                                                      \
            }                                                                                                  \
            osmp__mb_publish_minis(m, dir, first, osmp__mini_lines(bytes), step);                              \
        }                                                                                                      \
    } while (0)
/* osmp__mb_recv_minis of `rank`'s message into out, with its wait as one. */
#define OSMP__AWAIT_RECV_MINIS(R, co, rc, m, rank, dir, first, step, out, bytes)                              \
    do {                                                                                                       \
        if (!(R)) {                                                                                            \
            if (((rc) = osmp__mb_recv_minis(m, rank, dir, first, step, out, bytes))) return (rc);              \
        } else {                                                                                               \
            /* the last line, published last */                                                                \
            OSMP__AWAIT_SLOT(R, co, m, rank, dir,                                                              \
                             osmp__mini_slot((first) + (uint64_t)osmp__mini_lines(bytes) - 1), step);          \
            for (int j_ = 0; j_ < osmp__mini_lines(bytes); j_++)                                               \
                memcpy((char *)(out) + (size_t)j_ * OSMP__MINI_DATA,                                          \
                       osmp__mb_slot(m, rank, dir, osmp__mini_slot((first) + (uint64_t)j_)),                   \
                       osmp__mini_piece(bytes, j_));                                                           \
        }                                                                                                      \
    } while (0)

/* tree.c's passes over co->p, chunk c, as sub-machines in co->sub. */
#define OSMP__AWAIT_UP(R, co, rc, c, in, out, fn)                                                             \
    OSMP__AWAIT_SUB(R, co, rc,                                                                                 \
                    (R) ? osmp__pass_up_co(&(co)->p, &(co)->sub, c, in, out, fn)                              \
                        : osmp__pass_up(&(co)->p, c, in, out, fn))
#define OSMP__AWAIT_DOWN(R, co, rc, c, buf)                                                                   \
    OSMP__AWAIT_SUB(R, co, rc, (R) ? osmp__pass_down_co(&(co)->p, &(co)->sub, c, buf) : osmp__pass_down(&(co)->p, c, buf))

/*
 * Compositions (allgather gather_bcast, ...: OSMP__ALG_PARTS in algs.def) are
 * schedules of parts, as UCC builds a collective from tasks: each part is a
 * collective of its own, run with the algorithm selection gives it for its own
 * size (as osmp__run does), resumable like any call. The part in progress
 * (which collective, its arguments, its algorithm and its co) is the struct
 * below, which the request keeps beside its co (co->part). Compositions nest
 * one level: a collective that has a composition among its algorithms is
 * never a part (OSMP__AWAIT_PART refuses it at compile time), so a part's co
 * never needs a part of its own.
 */
struct osmp__part {
    osmp_coll_t c;
    struct osmp__args a;
    const struct osmp__alg *alg;
    struct osmp__co co;
};
/* The resumable form's part: its algorithm chosen for a (as osmp__run
 * chooses: the trace's nesting is the same) and its co cleared; then each step
 * (osmp__co_resume's statuses). */
int osmp__part_start(osmp__coll_t t, osmp_coll_t c, struct osmp__part *p);
int osmp__part_resume(osmp__coll_t t, struct osmp__part *p);

/* osmp__composed_<op>: how many of collective op's algorithms are compositions. */
#define OSMP__ALGS(op, ...) enum { osmp__composed_##op = 0 __VA_ARGS__ };
#define OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)
#define OSMP__ALG_UPTO(name, run, max_block, radix, takes_radix, needs_single_copy, doc)
#define OSMP__ALG_PARTS(name, run, radix, takes_radix, needs_single_copy, doc) +1
#include "coll/algs.def"
#undef OSMP__ALGS
#undef OSMP__ALG
#undef OSMP__ALG_UPTO
#undef OSMP__ALG_PARTS
/* osmp__coll_<op>: the collective op (a lowercase name) as osmp_coll_t. */
#define OSMP__COLL_OF(NAME, name, flags) enum { osmp__coll_##name = OSMP_COLL_##NAME };
OSMP_COLL_MAP(OSMP__COLL_OF)
#undef OSMP__COLL_OF

/* rc = part `op` (a collective, lowercase) of a composition, on args (a
 * struct osmp__args, evaluated once, at the part's start), with the algorithm
 * selection gives it. The blocking form runs it (osmp__run); the resumable
 * form starts it in co->part and resumes it until it is done. A failure is
 * left to the body (rc). */
#define OSMP__AWAIT_PART(R, co, rc, t, op, args)                                                              \
    do {                                                                                                       \
        _Static_assert(!osmp__composed_##op, #op " has a composition among its algorithms: it cannot be a part"); \
        if (!(R)) {                                                                                            \
            struct osmp__args part_ = args;                                                                    \
            (rc) = osmp__run(t, (osmp_coll_t)osmp__coll_##op, &part_);                                         \
        } else {                                                                                               \
            (co)->part->a = args;                                                                              \
            if (((rc) = osmp__part_start(t, (osmp_coll_t)osmp__coll_##op, (co)->part)) == OSMP_OK) {           \
                (co)->pc = __LINE__;                                                                           \
                __attribute__((fallthrough));                                                                  \
            case __LINE__:                                                                                     \
                if (((rc) = osmp__part_resume(t, (co)->part)) == OSMP__PENDING) return OSMP__PENDING;          \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
/* The same for a part that is not selected: algorithm `name` (a
 * OSMP__COMPILE_TWICE pair, never a composition) itself, on args, its
 * resumable state in co->part. */
#define OSMP__AWAIT_CALL(R, co, rc, t, name, args)                                                            \
    do {                                                                                                       \
        if (!(R)) {                                                                                            \
            struct osmp__args part_ = args;                                                                    \
            (rc) = name(t, &part_);                                                                            \
        } else {                                                                                               \
            (co)->part->a = args;                                                                              \
            memset(&(co)->part->co, 0, sizeof((co)->part->co));                                                \
            (co)->pc = __LINE__;                                                                               \
            __attribute__((fallthrough));                                                                      \
        case __LINE__:                                                                                         \
            if (((rc) = name##_co(t, &(co)->part->a, &(co)->part->co)) == OSMP__PENDING) return OSMP__PENDING; \
        }                                                                                                      \
    } while (0)

/* The two instantiations of body(t, a, co, R): name (blocking, the table's
 * run) and name##_co (resumable, found by algs.c). */
#define OSMP__COMPILE_TWICE(name, body)                                                                       \
    int name(osmp__coll_t t, const struct osmp__args *a);                                                     \
    int name##_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);                           \
    int name(osmp__coll_t t, const struct osmp__args *a)                                                      \
    {                                                                                                          \
        struct osmp__co co;                                                                                    \
        return body(t, a, &co, 0);                                                                             \
    }                                                                                                          \
    int name##_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co)                            \
    {                                                                                                          \
        return body(t, a, co, 1);                                                                              \
    }

/* The start of gather and scatter "hier", kept in the co: the plan's flat
 * tree rooted at a->root and a new phase. 1: go on to the protocol the
 * block's size says; else the call's status (an empty block: nobody waits,
 * every rank's count being the same). */
static inline int osmp__hier_start(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co, int R)
{
    if (R && co->pc) return 1; /* (started already) */
    co->p.scratch = NULL;
    if (!(co->tree = osmp__tree_get(t, 0, a->root))) return OSMP_ERR_NO_MEMORY;
    co->base = osmp__phase(t);
    return a->count && a->esize ? 1 : OSMP_OK;
}

/* The direct scatter's resumable form (alltoall scatters runs it as its parts). */
int osmp__scatter_direct_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);
/* The direct reductions' resumable form (allreduce_direct.c). */
int osmp__direct_fold_co(osmp__coll_t t, const struct osmp__args *a, size_t vector_bytes, size_t lo,
                         struct osmp__co *co);
/* tree.c's passes, as sub-machines (their blocking forms: tree.h). */
int osmp__pass_up_co(const struct osmp__pass *p, struct osmp__co_sub *sub, size_t c, const char *in, char *out,
                     osmp__reduce_fn fn);
int osmp__pass_down_co(const struct osmp__pass *p, struct osmp__co_sub *sub, size_t c, char *buf);
/* osmp__alltoall_rows (coll.h) as a sub-machine (alltoall_slots.c; alltoallv_direct.c runs it too). */
int osmp__alltoall_rows_co(osmp__coll_t t, const struct osmp__args *a, uint64_t base, uint64_t first,
                           int direct, unsigned *published, struct osmp__co_sub *sub);

#endif
