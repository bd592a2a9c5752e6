/*
 * libosmp_mpi internals: OSMP under unmodified MPI programs, through the PMPI
 * profiling interface (link with -losmp_mpi, or LD_PRELOAD it).
 *
 * Each intercepted collective either runs on OSMP or goes to the PMPI_ call
 * unchanged; OSMP never answers what it cannot answer exactly:
 *  - reductions: predefined datatypes that map to an OSMP type (integers of
 *    8..64 bits, float, double); every rank passes the same datatype and
 *    operation, so every rank takes the same decision;
 *  - data movement (bcast, gather, scatter, allgather, alltoall): any datatype.
 *    Ranks may describe the same bytes with different datatypes, so a rank
 *    cannot fall back alone: a datatype that is not plain (predefined, no lower
 *    bound, no holes, extent = size) is packed into a contiguous buffer
 *    (PMPI_Pack) and unpacked after the call;
 *  - operations: MPI_SUM .. MPI_BXOR on a type that allows them; MAXLOC, MINLOC,
 *    user-defined and every pair MPI itself rejects go to MPI (which raises);
 *  - communicators: intracommunicators. The OSMP state of a communicator is built
 *    on its first intercepted collective (all ranks make that call, so creation
 *    is collective), cached in an attribute, and let go by the attribute's
 *    delete callback at MPI_Comm_free and MPI_Finalize (requests still using it
 *    keep it, and its team, until they are freed: comm.c).
 * A communicator that spans several nodes (or pseudo-nodes, OSMP_MPI_PSEUDO_NODES)
 * runs hierarchically: OSMP inside each node, the MPI library between node
 * leaders (local rank 0). Alltoall and reduce_scatter_block on such
 * communicators go to MPI for now.
 *
 * Files, by concern: comm.c (communicator state, statistics, knobs,
 * MPI_Finalize), types.c (datatypes, operations, contiguous views), hier.c (the
 * compositions across nodes), coll.c (the MPI_ entry points of the collectives,
 * and the bodies nb.c shares), nb.c (the nonblocking MPI_I ones: generalized
 * requests and their progress), persist.c (the persistent MPI_<op>_init ones:
 * their carrier requests, MPI_Start and the rest).
 */
#ifndef OSMP_MPI_INTERNAL_H
#define OSMP_MPI_INTERNAL_H

#include <mpi.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/atomic.h"
#include "osmp.h"

#define EXPORT __attribute__((visibility("default")))
/* Thread-local caches of the per-call path: the initial-exec model reads them
 * with one load instead of a call to __tls_get_addr. The library is preloaded
 * or linked, so it is in the static TLS block; dlopen also works while glibc's
 * surplus static TLS has room for these few bytes. */
#define OSMP_MPI_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* ---------------------------------------------------------------- comm.c */

/* Why a call goes to MPI (OSMP_VERBOSE prints each once). */
enum osmp__mpi_reason {
    R_DISABLED,
    R_DTYPE,
    R_OP,
    R_INTER,
    R_MULTINODE,
    R_SETUP,
    R_COUNT_LIMIT,
    R_LONE_LOGICAL,
    R_FOREIGN,
    R_TEAMS,
    R_TUNED,
    R_NREASONS
};

/* OSMP's state of one communicator. */
struct osmp__mpi_comm {
    int ok;             /* OSMP runs this communicator */
    int multinode;      /* local != comm */
    int size, rank;
    MPI_Comm local;     /* ranks on my (pseudo-)node, ordered by rank in comm; comm itself on one node */
    MPI_Comm leaders;   /* local rank 0 of every node, or MPI_COMM_NULL */
    int local_rank, local_size;
    int *node_of;       /* node index (rank in leaders) of every comm rank */
    int *local_rank_of; /* local rank of every comm rank */
    int nnodes;
    int *node_bytes, *node_displ; /* per node, in blocks until scaled: see hier.c */
    int *node_first;              /* index of a node's first block in node-major order */
    osmp_team_t team;             /* of the local part, maybe shared with other communicators; NULL once gone */
    struct team_rec *rec;         /* the team's record (comm.c) */
    int capped;                   /* no team: OSMP_MPI_MAX_TEAMS reached */
    MPI_Comm comm; /* the user's communicator, for its error handler (MPI_COMM_NULL: an intercommunicator, or freed) */
    /* The communicator's reference (until MPI_Comm_free) and one per request on it (nb.c, persist.c): a request
     * posted before MPI_Comm_free runs on after it, and reports through this state. */
    osmp_atomic32_t refs;
    osmp_atomic64_t on_osmp[OSMP_COLL_COUNT]; /* written by the one thread using comm, read by osmp_mpi_stat */
    struct osmp__mpi_comm *next, *prev;       /* the registry of live states */
};

/* Once per process, at the first intercepted call (after MPI_Init): the
 * running library's check, knobs, the datatype table, the attribute key. Then
 * osmp__mpi_ready is 1, or 2 in a program of the other MPI library. */
extern osmp_atomic32_t osmp__mpi_ready;
uint32_t osmp__mpi_setup_slow(void);
static inline uint32_t osmp__mpi_setup(void)
{
    uint32_t r = osmp__load32(&osmp__mpi_ready);
    return __builtin_expect(r != 0, 1) ? r : osmp__mpi_setup_slow();
}
/* The OSMP state of a communicator, NULL when call c goes to MPI. */
struct osmp__mpi_comm *osmp__mpi_state(MPI_Comm comm, osmp_coll_t c);
/* Count a call that goes to MPI; print its reason once. Returns 0 (use PMPI). */
int osmp__mpi_pass(osmp_coll_t c, enum osmp__mpi_reason r);
/* Count a call that ran on OSMP; an OSMP failure goes to the communicator's error handler. */
int osmp__mpi_failed(struct osmp__mpi_comm *s, osmp_coll_t c, int rc);
/* Where an error on s is raised: its communicator, or once the program freed it (requests outlive it)
 * MPI_COMM_WORLD, where both MPI libraries raise a generalized request's errors. */
static inline MPI_Comm osmp__mpi_handler_comm(const struct osmp__mpi_comm *s)
{
    return s->comm != MPI_COMM_NULL ? s->comm : MPI_COMM_WORLD;
}
/* A request on s is made (persistent: an MPI_<op>_init's) / goes: it holds s, and s's team stays for it. */
void osmp__mpi_state_hold(struct osmp__mpi_comm *s, int persistent);
void osmp__mpi_state_put(struct osmp__mpi_comm *s, int persistent);
/* An MPI_<op>_init on s runs on OSMP (counted on every member alike, its post failing or not: comm.c's teams). */
void osmp__mpi_state_made_persistent(struct osmp__mpi_comm *s);
static inline int osmp__mpi_done(struct osmp__mpi_comm *s, osmp_coll_t c, int rc)
{
    osmp__store_relaxed(&s->on_osmp[c], osmp__load_relaxed(&s->on_osmp[c]) + 1); /* one writer per comm */
    return __builtin_expect(rc >= 0, 1) ? rc : osmp__mpi_failed(s, c, rc);
}

/* 1 when the program runs the other MPI library than this build's (checked
 * once, by the running library's version string). */
static inline int osmp__mpi_foreign(void)
{
    return osmp__mpi_setup() == 2;
}
/* The running library's own definition of an MPI_ function (the next one after
 * this library in the lookup order). */
void *osmp__mpi_next(const char *name);

typedef void (*osmp__mpi_fn)(void);
/* First thing in every exported MPI_ function: in a program of the other MPI
 * library, our handle types mean nothing (MPICH's are 32-bit ints, Open MPI's
 * pointers, so arguments would even be cut), so the call goes on, argument
 * registers untouched, to that library's own definition. */
#define OSMP_MPI_FORWARD_IF_FOREIGN(name)                                                                    \
    do {                                                                                                     \
        if (__builtin_expect(osmp__mpi_foreign(), 0)) {                                                      \
            void *args_ = __builtin_apply_args();                                                            \
            __builtin_return(__builtin_apply((osmp__mpi_fn)osmp__mpi_next(#name), args_, 64));                \
        }                                                                                                    \
    } while (0)

/*
 * The intercepted collectives' definitions: OSMP_MPI_ENTRY(int, MPI_X)(params)
 * { OSMP_MPI_ENTERED(MPI_X); body }. OSMP_MPI_FORWARD_IF_FOREIGN's
 * __builtin_apply_args makes its function store every argument register (six
 * general, eight vector) on entry, on every call: 20-odd stores that, behind a
 * call's stores into lines its peer has read (a slot, a counter), fill the store
 * queue. On x86-64 the exported symbol is therefore a gate of two instructions
 * and the body is osmp__mpi_impl_MPI_X (declared with the type mpi.h gives
 * MPI_X; OSMP_MPI_ENTERED is nothing): once the library is set up as the
 * running one (osmp__mpi_ready 1) the gate jumps to the body, else to
 * osmp__mpi_fwd_MPI_X, which sets up and, argument registers and stack
 * untouched, calls the other library's MPI_X or the body. Elsewhere (or with
 * OSMP_MPI_PORTABLE_GATE defined) the body is MPI_X itself and
 * OSMP_MPI_ENTERED is OSMP_MPI_FORWARD_IF_FOREIGN.
 */
#if defined(__x86_64__) && defined(__ELF__) && !defined(OSMP_MPI_PORTABLE_GATE)
#if defined(__CET__) && (__CET__ & 1)
#define OSMP__MPI_ENDBR "endbr64\n\t" /* built for indirect branch tracking: a call through the PLT lands here */
#else
#define OSMP__MPI_ENDBR ""
#endif
#define OSMP_MPI_ENTRY(ret, name)                                                                            \
    __typeof__(name) osmp__mpi_impl_##name __attribute__((used, visibility("hidden")));                       \
    __attribute__((used, noinline, visibility("hidden"))) void osmp__mpi_fwd_##name(void)                     \
    {                                                                                                        \
        void *args_ = __builtin_apply_args();                                                                \
        osmp__mpi_fn fn_ = osmp__mpi_foreign() ? (osmp__mpi_fn)osmp__mpi_next(#name)                          \
                                               : (osmp__mpi_fn)osmp__mpi_impl_##name;                        \
        __builtin_return(__builtin_apply(fn_, args_, 64));                                                   \
    }                                                                                                        \
    __asm__(".pushsection .text\n\t.globl " #name "\n\t.type " #name ", @function\n\t.p2align 4\n" #name    \
            ":\n\t" OSMP__MPI_ENDBR "cmpl $1, osmp__mpi_ready(%rip)\n\tjne osmp__mpi_fwd_" #name                \
            "\n\tjmp osmp__mpi_impl_" #name "\n\t.size " #name ", .-" #name "\n\t.popsection");                  \
    ret osmp__mpi_impl_##name
#define OSMP_MPI_ENTERED(name) ((void)0)
#else
#define OSMP_MPI_ENTRY(ret, name) EXPORT ret name
#define OSMP_MPI_ENTERED(name) OSMP_MPI_FORWARD_IF_FOREIGN(name)
#endif

static inline const void *osmp__mpi_in_place(const void *buf)
{
    return buf == MPI_IN_PLACE ? OSMP_IN_PLACE : buf;
}

/* ---------------------------------------------------------------- tune.c */

/* 1 when the team's tune table (osmp_team_choice) gives call c with `bytes`
 * (a rank's block, or count x datatype size: what osmp-tune calls the size)
 * to MPI. */
int osmp__mpi_tuned_slow(osmp_coll_t c, long bytes, osmp_team_t team);
/* A program calls one operation at one size over and over: the band of sizes
 * around this thread's last answer per operation (for that team) gives the
 * same answer inline. team NULL: nothing cached. */
struct osmp__mpi_band {
    osmp_team_t team;
    uint32_t destroyed; /* osmp__mpi_teams_destroyed then: a later team may have the same handle */
    int to_mpi;
    long lo, hi;
};
extern OSMP_MPI_TLS struct osmp__mpi_band osmp__mpi_band[OSMP_COLL_COUNT];
extern osmp_atomic32_t osmp__mpi_teams_destroyed; /* comm.c counts them */
static inline int osmp__mpi_tuned_to_mpi(osmp_coll_t c, long bytes, osmp_team_t team)
{
    const struct osmp__mpi_band *b = &osmp__mpi_band[c];
    return b->team == team && b->destroyed == osmp__load_relaxed32(&osmp__mpi_teams_destroyed) && bytes >= b->lo &&
                   bytes <= b->hi
               ? b->to_mpi
               : osmp__mpi_tuned_slow(c, bytes, team);
}

/* ---------------------------------------------------------------- profile.c, map.c */

/* OSMP_PROFILE: gather the rows and write the files (rank 0); collective over
 * MPI_COMM_WORLD, called first in MPI_Finalize. Nothing when off. */
void osmp__mpi_profile_finalize(void);
/* OSMP_PROFILE: have the team about to be created over `local` count the bytes
 * its collectives copy between members (OSMP_TEAM_PARAM_TRAFFIC). Nothing when off. */
void osmp__mpi_profile_team(struct osmp_team_params *p, MPI_Comm local);
/* For the Fortran sends (fortran_p2p.c): 1 when OSMP_PROFILE counts (a branch
 * when off); count a send; a persistent send's request, its starts, its free. */
int osmp__mpi_profile_on(void);
void osmp__mpi_profile_send(int count, MPI_Datatype dt, int dest, MPI_Comm comm);
void osmp__mpi_profile_send_init(MPI_Request req, int count, MPI_Datatype dt, int dest, MPI_Comm comm);
void osmp__mpi_profile_start(MPI_Request req);
void osmp__mpi_profile_request_free(MPI_Request req);

/* ---------------------------------------------------------------- types.c */

void osmp__mpi_types_init(void);
/* Size of a datatype that moves as plain bytes (predefined, contiguous), or -1.
 * A call asks about its datatypes three or four times (bytes, views) and a
 * program moves one or two types over and over: the thread's last predefined
 * one is answered inline (only predefined handles: a freed derived type's
 * handle may come back for another type). */
extern OSMP_MPI_TLS MPI_Datatype osmp__mpi_last_dt;
extern OSMP_MPI_TLS int osmp__mpi_last_size; /* 0: none yet */
int osmp__mpi_plain_size_slow(MPI_Datatype dt);
static inline int osmp__mpi_plain_size(MPI_Datatype dt)
{
    return osmp__mpi_last_size && dt == osmp__mpi_last_dt ? osmp__mpi_last_size : osmp__mpi_plain_size_slow(dt);
}
/* The OSMP datatype of a predefined MPI datatype that reduces on OSMP, and the
 * operations MPI defines on it (a bit per osmp_op_t); -1 if none. */
int osmp__mpi_dtype(MPI_Datatype dt, osmp_dtype_t *out, unsigned *ops);
/* The OSMP operation of op; -1 if MPI must answer (user op, MAXLOC, a pair MPI does not define). */
int osmp__mpi_op(MPI_Op op, unsigned ops, osmp_op_t *out);
/* Bytes of count elements of dt, -1 if MPI would reject them. */
long osmp__mpi_bytes_slow(MPI_Datatype dt, int count);
static inline long osmp__mpi_bytes(MPI_Datatype dt, int count)
{
    int size = osmp__mpi_plain_size(dt);
    return size > 0 && count >= 0 ? (long)size * count : osmp__mpi_bytes_slow(dt, count);
}
/* A contiguous view of count elements of dt at buf, in *v: buf itself for a
 * plain datatype or no bytes at all (a NULL buffer with a zero count is valid
 * MPI); else a buffer of its own, packed from buf if `pack` (types.c). OSMP_OK
 * or OSMP_ERR_NO_MEMORY. */
int osmp__mpi_view_packed(const void *buf, int count, MPI_Datatype dt, long bytes, int pack, MPI_Comm comm, void **v);
static inline int osmp__mpi_view(const void *buf, int count, MPI_Datatype dt, long bytes, int pack, MPI_Comm comm,
                                 void **v)
{
    *v = (void *)(uintptr_t)buf;
    if (bytes == 0 || osmp__mpi_plain_size(dt) > 0) return OSMP_OK;
    return osmp__mpi_view_packed(buf, count, dt, bytes, pack, comm, v);
}
/* Unpack a view into buf (if `unpack`) and free it; nothing for a view that is buf itself. */
void osmp__mpi_unview_packed(void *v, void *buf, int count, MPI_Datatype dt, long bytes, int unpack, MPI_Comm comm);
static inline void osmp__mpi_unview(void *v, void *buf, int count, MPI_Datatype dt, long bytes, int unpack,
                                    MPI_Comm comm)
{
    if (v != buf && v) osmp__mpi_unview_packed(v, buf, count, dt, bytes, unpack, comm);
}

/* The vector side of a v-variant: n blocks of counts[r] elements of dt at
 * buf + displs[r] * extent, as OSMP byte counts bc and displacements bd over a
 * contiguous view v: the buffer itself for a plain datatype with displacements
 * >= 0, else a packed copy (blocks end to end). */
#define OSMP__MPI_VIEW_INLINE 32 /* ranks whose byte counts and offsets a view holds in itself (no malloc) */
struct osmp__mpi_vview {
    const void *buf;
    const int *counts, *displs;
    MPI_Datatype dt;
    MPI_Aint extent;
    size_t *bc, *bd;
    void *v;
    size_t packed; /* bytes of the packed copy */
    size_t inline_bc[2 * OSMP__MPI_VIEW_INLINE];
};
/* A view of these blocks, not open yet (its inline room left as it is: no
 * memset of it per call, as an initializer would make). */
static inline void osmp__mpi_vinit(struct osmp__mpi_vview *x, const void *buf, const int *counts, const int *displs,
                                   MPI_Datatype dt)
{
    x->buf = buf;
    x->counts = counts;
    x->displs = displs;
    x->dt = dt;
    x->extent = 0;
    x->bc = x->bd = NULL;
    x->v = NULL;
    x->packed = 0;
}
/* The blocks' byte counts (elements of `size` bytes) and their offsets where
 * they lie (for a type whose extent is its size); bit 0 set if a count is
 * negative, bit 1 if a displacement is (both cases for types.c). */
static inline int osmp__mpi_vfill(struct osmp__mpi_vview *x, int n, int size)
{
    int bad = 0;
    for (int r = 0; r < n; r++) {
        bad |= (x->counts[r] < 0) | (x->displs[r] < 0) << 1;
        x->bc[r] = (size_t)x->counts[r] * (size_t)size;
        x->bd[r] = (size_t)x->displs[r] * (size_t)size;
    }
    return bad;
}
/* Fill the byte counts and the view, packing the blocks into it if `pack`.
 * OSMP_OK or a negative status; close it in any case. Inline, without a call,
 * for the common case (a plain datatype, displacements >= 0, up to
 * OSMP__MPI_VIEW_INLINE ranks: the view is the buffer itself); else types.c. */
int osmp__mpi_vopen_slow(struct osmp__mpi_vview *x, int n, int pack, MPI_Comm comm);
static inline int osmp__mpi_vopen(struct osmp__mpi_vview *x, int n, int pack, MPI_Comm comm)
{
    int size = osmp__mpi_plain_size(x->dt);
    if (size > 0 && n <= OSMP__MPI_VIEW_INLINE) {
        x->bc = x->inline_bc;
        x->bd = x->inline_bc + n;
        x->extent = size; /* a plain type's extent is its size */
        if (!osmp__mpi_vfill(x, n, size)) {
            x->v = (void *)(uintptr_t)x->buf; /* the blocks where they are */
            return OSMP_OK;
        }
    }
    return osmp__mpi_vopen_slow(x, n, pack, comm);
}
/* Unpack the blocks into the user's buffer (if `unpack`) and free the view. */
void osmp__mpi_vclose_slow(struct osmp__mpi_vview *x, int n, int unpack, MPI_Comm comm);
static inline void osmp__mpi_vclose(struct osmp__mpi_vview *x, int n, int unpack, MPI_Comm comm)
{
    if (x->v != x->buf || x->bc != x->inline_bc) osmp__mpi_vclose_slow(x, n, unpack, comm);
}

/* ---------------------------------------------------------------- decisions and views (coll.c, nb.c) */

/* Data movement runs on OSMP inside one node (s: the communicator's state, or
 * NULL when it goes to MPI anyway); the views hold nblocks blocks of `block`
 * bytes (block < 0: a datatype of no size), which must fit an int. The tune
 * table's bytes are one block, as osmp-bench counts them (bcast: the message). */
static inline __attribute__((always_inline)) struct osmp__mpi_comm *
osmp__mpi_movement_ok(struct osmp__mpi_comm *s, osmp_coll_t c, long block, int nblocks)
{
    if (!s) return NULL;
    long total;
    if (block < 0 || __builtin_mul_overflow(block, (long)nblocks, &total) || total > INT_MAX)
        return (void)osmp__mpi_pass(c, block < 0 ? R_DTYPE : R_COUNT_LIMIT), NULL;
    if (s->multinode && c == OSMP_COLL_ALLTOALL) return (void)osmp__mpi_pass(c, R_MULTINODE), NULL;
    if (osmp__mpi_tuned_to_mpi(c, block, s->team)) return (void)osmp__mpi_pass(c, R_TUNED), NULL;
    return s;
}

/* A reduction's state: its datatype and operation map to OSMP's, and the tune table agrees. */
static inline __attribute__((always_inline)) struct osmp__mpi_comm *
osmp__mpi_reduction_state(MPI_Comm comm, MPI_Datatype dt, MPI_Op op, int count, osmp_coll_t c, osmp_dtype_t *odt,
                          osmp_op_t *oop)
{
    unsigned ops;
    /* Nothing to reduce (the caller returns at once; IMB starts at 0 bytes): no lookups. */
    if (!count && dt != MPI_DATATYPE_NULL && op != MPI_OP_NULL) return osmp__mpi_state(comm, c);
    if (count < 0 || osmp__mpi_dtype(dt, odt, &ops)) return (void)osmp__mpi_pass(c, R_DTYPE), NULL;
    if (osmp__mpi_op(op, ops, oop)) return (void)osmp__mpi_pass(c, R_OP), NULL;
    struct osmp__mpi_comm *s = osmp__mpi_state(comm, c);
    if (s && s->size == 1 && (*oop == OSMP_LAND || *oop == OSMP_LOR || *oop == OSMP_LXOR))
        return (void)osmp__mpi_pass(c, R_LONE_LOGICAL), NULL;
    if (s && osmp__mpi_tuned_to_mpi(c, (long)count * (long)osmp_dtype_size(*odt), s->team))
        return (void)osmp__mpi_pass(c, R_TUNED), NULL;
    return s;
}

/* Calls that run inside a node only (the v-variants, reduce_scatter, scan,
 * exscan; every nonblocking call, `local`): across nodes they go to MPI. */
static inline __attribute__((always_inline)) struct osmp__mpi_comm *
osmp__mpi_node_only(struct osmp__mpi_comm *s, osmp_coll_t c, int local)
{
    if (s && local && s->multinode) return (void)osmp__mpi_pass(c, R_MULTINODE), NULL;
    return s;
}

/* 0 when every one of the n counts is 0 (a negative one, an error, is not). */
static inline int osmp__mpi_any_count(const int *counts, int n)
{
    int any = 0;
    for (int r = 0; r < n; r++)
        any |= counts[r];
    return any;
}

/* One side of a data-movement call (or a v-variant's own block), as a
 * contiguous view. A side with bytes < 0 is absent on this rank (not the root,
 * or in place): its view stays NULL. */
struct osmp__mpi_side {
    const void *buf;
    int count;
    MPI_Datatype dt;
    long bytes;
    void *v;
};

/* What a call's end closes: side[0] is input (its view is packed when it is
 * opened and only freed), side[1] output (unpacked into the user's buffer when
 * the call succeeded); the nvec vector views (v-variants: counts n), closed in
 * any case, unpacked on success where vec_unpack says so; reduce_scatter's
 * byte counts (counts: few, or allocated). A blocking call closes them at its
 * end, a nonblocking one at its completion (nb.c). */
struct osmp__mpi_views {
    struct osmp__mpi_side side[2];
    int nvec, n;
    int vec_unpack[2];
    unsigned owned; /* requests only: a bit per view (side[0], side[1], vec[0], vec[1]) whose dt is our duplicate */
    size_t *counts;
    size_t few[OSMP__MPI_VIEW_INLINE];
    struct osmp__mpi_vview vec[2];
};

/* Nothing open yet. */
static inline __attribute__((always_inline)) void osmp__mpi_views_init(struct osmp__mpi_views *x)
{
    x->side[0].v = x->side[1].v = NULL;
    x->nvec = 0;
    x->counts = x->few;
}

/* Views of both sides; the receive side is packed too where it holds input (in place). */
static inline __attribute__((always_inline)) int osmp__mpi_open_views(struct osmp__mpi_side *in,
                                                                      struct osmp__mpi_side *out, int pack_out,
                                                                      MPI_Comm comm)
{
    int rc = in->bytes < 0 ? OSMP_OK : osmp__mpi_view(in->buf, in->count, in->dt, in->bytes, 1, comm, &in->v);
    if (!rc && out->bytes >= 0) rc = osmp__mpi_view(out->buf, out->count, out->dt, out->bytes, pack_out, comm, &out->v);
    return rc;
}

static inline __attribute__((always_inline)) void osmp__mpi_close(struct osmp__mpi_views *x, int ok, MPI_Comm comm)
{
    struct osmp__mpi_side *in = &x->side[0], *out = &x->side[1];
    osmp__mpi_unview(in->v, (void *)(uintptr_t)in->buf, in->count, in->dt, in->bytes, 0, comm);
    osmp__mpi_unview(out->v, (void *)(uintptr_t)out->buf, out->count, out->dt, out->bytes, ok, comm);
    for (int i = 0; i < x->nvec; i++)
        osmp__mpi_vclose(&x->vec[i], x->n, ok && x->vec_unpack[i], comm);
    if (x->counts != x->few) free(x->counts);
}

/* A persistent request's views stay open from its _init to its free (persist.c): each start packs the user's
 * buffers into every packed view (the inputs, and outputs that hold input in place; packing an output's view
 * that OSMP then overwrites costs time, nothing else), each successful run's end unpacks the outputs. */
void osmp__mpi_views_refresh(struct osmp__mpi_views *x, MPI_Comm comm);
void osmp__mpi_views_unpack(struct osmp__mpi_views *x, MPI_Comm comm);
/* A request's views read their datatypes after its post returned (outputs unpacked at its end; a persistent
 * one's packed views at every start and end), when the program may have freed them (MPI_Type_free right after
 * MPI_I<op> is legal): each such view of a derived datatype gets a duplicate of its own (all: every packed view,
 * else the ones unpacked at the end). OSMP_OK or OSMP_ERR_NO_MEMORY (the duplicates made so far are owned).
 * _release frees the duplicates, after the views are closed. */
int osmp__mpi_views_keep(struct osmp__mpi_views *x, int all);
void osmp__mpi_views_release(struct osmp__mpi_views *x);
/* The communicator a request's views pack and unpack with, after its post: MPI_Pack's communicator only names
 * the data representation, the same for every communicator inside a node, and the program may free the
 * request's own communicator before the request ends (MPI_COMM_SELF it cannot free). */
#define OSMP__MPI_REQ_COMM MPI_COMM_SELF

/* ---------------------------------------------------------------- nb.c */

/* A nonblocking collective on OSMP: its OSMP request, returned to the program
 * as an MPI generalized request (greq), and the views its completion closes. */
struct osmp__mpi_nb {
    osmp_request_t oreq;        /* OSMP_REQUEST_NULL once reaped (or for a call with nothing to do) */
    MPI_Request greq;
    struct osmp__mpi_comm *s;   /* held (osmp__mpi_state_hold) until w is freed: it outlives MPI_Comm_free */
    osmp_coll_t c;
    int rc;                     /* the OSMP status, once complete */
    int code, reported;         /* the MPI error code, once the failure went to the error handler */
    int complete;               /* reaped, its generalized request completed (or about to be) */
    int busy;                   /* a thread tests or waits for it */
    int mpi_freed;              /* MPI called free_fn */
    int refs;                   /* MPI's (free_fn) and ours (completion) */
    pthread_t owner;            /* the posting thread: the one that advances it */
    struct osmp__mpi_nb *next, *prev, *next_mine;
    struct osmp__mpi_views views;
    /* persistent (persist.c): oreq is an osmp_<op>_init request that each MPI_Start runs; the struct outlives
     * its runs (refs: the program's, until MPI_Request_free; ours while a run is active) */
    int persistent;
    int tag;                    /* of its carrier (persist.c) */
    MPI_Request carrier;        /* the program's handle */
};
/* A request of call c on s, or NULL (no memory). */
struct osmp__mpi_nb *osmp__mpi_nb_new(struct osmp__mpi_comm *s, osmp_coll_t c);
/* w's memory goes, with what it holds (its views closed already): its datatype duplicates, its state. */
void osmp__mpi_nb_free(struct osmp__mpi_nb *w);
/* The end of a nonblocking call on OSMP: rc is its post's status (w: NULL
 * when nothing was posted: no memory (rc < 0), or nothing to do (a request
 * complete at once)). Counts the call; *req gets the generalized request, or
 * MPI_REQUEST_NULL and an error code (the error handler's) when rc < 0. */
int osmp__mpi_nb_post(struct osmp__mpi_comm *s, osmp_coll_t c, struct osmp__mpi_nb *w, int rc, MPI_Request *req);
/* s's communicator goes (comm.c's free_state, MPI_Comm_free or MPI_Finalize): the failures of its complete
 * requests not reported yet go to its error handler while it is there. Its requests hold s and run on. */
void osmp__mpi_nb_forget(struct osmp__mpi_comm *s);
/* The team goes (its last communicator is freed: every member is there): every request still running on it,
 * from any communicator, ends first (waited for). */
void osmp__mpi_nb_settle(osmp_team_t team);
/* MPI_Finalize: every request still outstanding (freed while active) completes;
 * Open MPI's progress callback goes. */
void osmp__mpi_nb_finalize(void);

/* Set while a persistent collective's _init runs a body (persist.c): the body's request is an osmp_<op>_init
 * one (osmp__mpi_nb_new marks it), and its end is osmp__mpi_pc_made's, not osmp__mpi_nb_post's. */
extern OSMP_MPI_TLS int osmp__mpi_persist;
/* 1 when a nonblocking (or persistent) call with this request pointer may run on OSMP: someone advances it. */
int osmp__mpi_nb_on_osmp(osmp_coll_t c, MPI_Request *req);
/* Advance this thread's outstanding requests (tested); how many completed. */
int osmp__mpi_nb_progress(void);
/* Progress both ways (nb.c): at setup (comm.c; level: MPI's thread level), who advances our requests and what
 * a wait inside OSMP calls, told to OSMP, and a line for OSMP_VERBOSE (say); returns 1 where the MPI library's
 * own progress advances our requests. osmp__mpi_poke: the MPI library's progress, once, where this thread may
 * call it (1: it did something). osmp__mpi_progress_end: MPI_Finalize begins, no more of it. */
int osmp__mpi_progress_setup(int level, char *say, size_t len);
int osmp__mpi_poke(void);
void osmp__mpi_progress_end(void);
/* nb.c's side of a persistent request w: kept (on the list of live requests, inactive, the program's reference
 * only); started (active, held by the caller while it posts the run); then posted (the sweeps advance it as the
 * others) or over at once with status rc (nothing to do, or the post failed). */
void osmp__mpi_nb_keep(struct osmp__mpi_nb *w);
void osmp__mpi_nb_started(struct osmp__mpi_nb *w);
void osmp__mpi_nb_posted(struct osmp__mpi_nb *w);
void osmp__mpi_nb_run_done(struct osmp__mpi_nb *w, int rc);
/* The program's reference goes (MPI_Request_free); the request is freed now, or when its run completes. */
void osmp__mpi_nb_release(struct osmp__mpi_nb *w);
/* persist.c: the end of a persistent collective's _init on OSMP (arguments as osmp__mpi_nb_post's); a run's
 * end told to the program (its carrier satisfied, a failure to the error handler); a request's last reference
 * gone (its OSMP request, views and tag freed, and w). */
int osmp__mpi_pc_made(struct osmp__mpi_comm *s, osmp_coll_t c, struct osmp__mpi_nb *w, int rc, MPI_Request *req);
void osmp__mpi_pc_signal(struct osmp__mpi_nb *w);
void osmp__mpi_pc_destroy(struct osmp__mpi_nb *w);
/* profile.c's MPI_Start, MPI_Startall and MPI_Request_free ask first: any persistent collective on OSMP alive
 * (one load), and is this handle one (its request, or NULL). */
extern osmp_atomic64_t osmp__mpi_pc_live;
struct osmp__mpi_nb *osmp__mpi_pc_find(MPI_Request req);
int osmp__mpi_pc_start(struct osmp__mpi_nb *w, MPI_Request *req);
int osmp__mpi_pc_free(struct osmp__mpi_nb *w, MPI_Request *req);
/* MPI_Finalize: the carriers' communicator goes. */
void osmp__mpi_pc_finalize(void);

/* The end of a call on OSMP: blocking (req NULL): counted, and rc to the
 * program; nonblocking: see osmp__mpi_nb_post. */
static inline __attribute__((always_inline)) int osmp__mpi_end(struct osmp__mpi_comm *s, osmp_coll_t c, int rc,
                                                               struct osmp__mpi_nb *w, MPI_Request *req)
{
    return req ? osmp__mpi_nb_post(s, c, w, rc, req) : osmp__mpi_done(s, c, rc);
}

/* The entry points of coll.c for nb.c's: each runs call c on OSMP as a
 * request (*req), or returns OSMP__MPI_USE_MPI for the PMPI_I<op> call.
 * Arguments as the MPI_I<op> function's. */
#define OSMP__MPI_USE_MPI (-1)
int osmp__mpi_nb_barrier(MPI_Comm comm, MPI_Request *req);
int osmp__mpi_nb_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req);
/* allreduce, reduce (root: the reduce's) */
int osmp__mpi_nb_reduction(osmp_coll_t c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                           int root, MPI_Comm comm, MPI_Request *req);
/* gather, scatter */
int osmp__mpi_nb_rooted(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req);
/* allgather, alltoall */
int osmp__mpi_nb_everyone(osmp_coll_t c, const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf,
                          int rcount, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req);
/* reduce_scatter_block, scan, exscan */
int osmp__mpi_nb_node_reduction(osmp_coll_t c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                                MPI_Op op, MPI_Comm comm, MPI_Request *req);
/* gatherv, scatterv */
int osmp__mpi_nb_rooted_v(osmp_coll_t c, const void *sendbuf, int scount, const int *scounts, const int *sdispls,
                          MPI_Datatype sdt, void *recvbuf, int rcount, const int *rcounts, const int *rdispls,
                          MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *req);
int osmp__mpi_nb_allgatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                            const int *displs, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *req);
int osmp__mpi_nb_alltoallv(const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt,
                           void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm,
                           MPI_Request *req);
int osmp__mpi_nb_reduce_scatter(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
                                MPI_Comm comm, MPI_Request *req);

/* ---------------------------------------------------------------- hier.c */

/* Collectives on a communicator that spans several (pseudo-)nodes: OSMP inside
 * each node, the MPI library between the node leaders. Buffers are contiguous
 * views; `in` NULL means in place. OSMP status or an MPI error code. */
int osmp__mpi_hier_barrier(struct osmp__mpi_comm *s);
int osmp__mpi_hier_bcast(struct osmp__mpi_comm *s, void *buf, size_t bytes, int root);
int osmp__mpi_hier_allreduce(struct osmp__mpi_comm *s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                             MPI_Op op, osmp_dtype_t odt, osmp_op_t oop);
int osmp__mpi_hier_reduce(struct osmp__mpi_comm *s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, osmp_dtype_t odt, osmp_op_t oop, int root);
int osmp__mpi_hier_gather(struct osmp__mpi_comm *s, const void *in, void *out, size_t block, int root);
int osmp__mpi_hier_allgather(struct osmp__mpi_comm *s, const void *in, void *out, size_t block);
int osmp__mpi_hier_scatter(struct osmp__mpi_comm *s, const void *in, void *out, size_t block, int root);

#endif
