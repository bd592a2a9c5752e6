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
 *    is collective), cached in an attribute, and destroyed by the attribute's
 *    delete callback at MPI_Comm_free and MPI_Finalize.
 * A communicator that spans several nodes (or pseudo-nodes, OSMP_MPI_PSEUDO_NODES)
 * runs hierarchically: OSMP inside each node, the MPI library between node
 * leaders (local rank 0). Alltoall and reduce_scatter_block on such
 * communicators go to MPI for now.
 *
 * Files, by concern: comm.c (communicator state, statistics, knobs,
 * MPI_Finalize), types.c (datatypes, operations, contiguous views), hier.c (the
 * compositions across nodes), coll.c (the MPI_ entry points).
 */
#ifndef OSMP_MPI_INTERNAL_H
#define OSMP_MPI_INTERNAL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

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
    osmp_team_t team;             /* of the local part; shared with other communicators if `shared` */
    struct shared_team *shared;   /* comm.c */
    int capped;                   /* no team: OSMP_MPI_MAX_TEAMS reached */
    MPI_Comm comm; /* the user's communicator, for its error handler (MPI_COMM_NULL: an intercommunicator) */
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

/* 1 when the tune table (OSMP_TUNE_FILE or the built-in one) sends call c on
 * a communicator of `size` ranks with `bytes` (osmp-bench's size: see tune.c)
 * to MPI. Loads the table at the first call. */
int osmp__mpi_tuned_slow(osmp_coll_t c, long bytes, int size);
/* A program calls one operation at one size over and over: the band of sizes
 * around this thread's last answer per operation (for that communicator size)
 * gives the same answer inline. size 0: nothing cached. */
struct osmp__mpi_band {
    int size, to_mpi;
    long lo, hi;
};
extern OSMP_MPI_TLS struct osmp__mpi_band osmp__mpi_band[OSMP_COLL_COUNT];
static inline int osmp__mpi_tuned_to_mpi(osmp_coll_t c, long bytes, int size)
{
    const struct osmp__mpi_band *b = &osmp__mpi_band[c];
    return b->size == size && bytes >= b->lo && bytes <= b->hi ? b->to_mpi : osmp__mpi_tuned_slow(c, bytes, size);
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
