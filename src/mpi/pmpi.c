/*
 * libosmp_mpi: OSMP under unmodified MPI programs, through the PMPI profiling
 * interface (link with -losmp_mpi, or LD_PRELOAD it).
 *
 * Each intercepted collective either runs on OSMP or goes to the PMPI_ call
 * unchanged; OSMP never answers what it cannot answer exactly:
 *  - reductions: predefined datatypes that map to an OSMP type (integers of
 *    8..64 bits, float, double); every rank passes the same datatype and
 *    operation, so every rank takes the same decision;
 *  - data movement (bcast, gather, scatter, allgather, alltoall): any datatype.
 *    Ranks may describe the same bytes with different datatypes, so a rank
 *    cannot fall back alone: a derived or non-contiguous datatype is packed
 *    into a contiguous buffer (PMPI_Pack) and unpacked after the call;
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
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/atomic.h"
#include "common/knobs.h"
#include "osmp.h"

#define EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- statistics */

enum call { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_ALLGATHER, C_SCATTER, C_RSB, C_ALLTOALL, C_COUNT };
static const char *const call_names[C_COUNT] = {"barrier", "bcast",   "reduce", "allreduce", "gather",
                                                "allgather", "scatter", "reduce_scatter_block", "alltoall"};
static osmp_atomic64_t accelerated[C_COUNT], passed[C_COUNT];

enum reason {
    R_DISABLED, R_DTYPE, R_OP, R_INTER, R_MULTINODE, R_SETUP, R_COUNT_LIMIT, R_LONE_LOGICAL, R_NREASONS
};
static const char *const reason_text[R_NREASONS] = {
    "disabled by OSMP_MPI_DISABLE",
    "datatype is derived, non-contiguous or not an OSMP type",
    "operation is user-defined, MAXLOC/MINLOC or not defined on the datatype",
    "intercommunicator",
    "operation not hierarchical yet on a communicator spanning several nodes",
    "OSMP could not set up this communicator",
    "count does not fit",
    "a logical operation on a communicator of one: MPI returns the value as is, OSMP as 0 or 1",
};
static osmp_atomic64_t reason_seen[R_NREASONS];

static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT; /* keyval, knobs and the datatype table */
static void create_keyval(void);

static int verbose = -1;
static unsigned disabled_mask; /* bit per call */

static void read_knobs(void)
{
    verbose = atoi(osmp__knob_str(OSMP_KNOB_VERBOSE)) > 0;
    const char *d = osmp__knob_str(OSMP_KNOB_MPI_DISABLE);
    if (strcmp(d, "1") == 0) {
        disabled_mask = ~0u;
    } else if (strcmp(d, "0") != 0) {
        for (int c = 0; c < C_COUNT; c++) {
            const char *p = strstr(d, call_names[c]);
            size_t len = strlen(call_names[c]);
            /* whole words only: "reduce" must not match inside "allreduce" */
            while (p && ((p != d && p[-1] != ',') || (p[len] && p[len] != ','))) p = strstr(p + 1, call_names[c]);
            if (p) disabled_mask |= 1u << c;
        }
    }
}

static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;

/* Count a call that goes to MPI; print its reason once. Returns 0 (use PMPI). */
static int pass(enum call c, enum reason r)
{
    osmp__fetch_add(&passed[c], 1);
    if (verbose && osmp__fetch_add(&reason_seen[r], 1) == 0) {
        int rank = -1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "osmp-mpi: rank %d: %s goes to MPI: %s\n", rank, call_names[c], reason_text[r]);
    }
    return 0;
}

/* ---------------------------------------------------------------- types */

/* Predefined datatypes OSMP knows, filled once after MPI_Init: handles are
 * compared directly, so the common case makes no MPI call. */
static struct {
    MPI_Datatype dt;
    int size;
    int odt; /* osmp_dtype_t, or -1 for types that only move (bytes, chars) */
} known[32];
static int nknown;

#define BY_SIZE (-2) /* an integer type: the OSMP type follows its size and signedness */
#define MOVE_ONLY (-1)

static void add_known(MPI_Datatype dt, int odt, int is_signed)
{
    int size;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS) return;
    if (odt == BY_SIZE)
        odt = (is_signed ? (int)OSMP_INT8 : (int)OSMP_UINT8) + (size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3);
    known[nknown].dt = dt;
    known[nknown].size = size;
    known[nknown].odt = odt;
    nknown++;
}

static void fill_known(void)
{
    add_known(MPI_DOUBLE, OSMP_DOUBLE, 0); /* most frequent first */
    add_known(MPI_INT, BY_SIZE, 1);
    add_known(MPI_FLOAT, OSMP_FLOAT, 0);
    add_known(MPI_LONG, BY_SIZE, 1);
    add_known(MPI_BYTE, MOVE_ONLY, 0);
    add_known(MPI_CHAR, MOVE_ONLY, 0);
    add_known(MPI_UNSIGNED_CHAR, BY_SIZE, 0);
    add_known(MPI_SIGNED_CHAR, BY_SIZE, 1);
    add_known(MPI_SHORT, BY_SIZE, 1);
    add_known(MPI_UNSIGNED_SHORT, BY_SIZE, 0);
    add_known(MPI_UNSIGNED, BY_SIZE, 0);
    add_known(MPI_UNSIGNED_LONG, BY_SIZE, 0);
    add_known(MPI_LONG_LONG, BY_SIZE, 1);
    add_known(MPI_UNSIGNED_LONG_LONG, BY_SIZE, 0);
    add_known(MPI_INT8_T, BY_SIZE, 1);
    add_known(MPI_INT16_T, BY_SIZE, 1);
    add_known(MPI_INT32_T, BY_SIZE, 1);
    add_known(MPI_INT64_T, BY_SIZE, 1);
    add_known(MPI_UINT8_T, BY_SIZE, 0);
    add_known(MPI_UINT16_T, BY_SIZE, 0);
    add_known(MPI_UINT32_T, BY_SIZE, 0);
    add_known(MPI_UINT64_T, BY_SIZE, 0);
}

/* Size of a datatype that moves as plain bytes (predefined, contiguous), or -1. */
static int plain_size(MPI_Datatype dt)
{
    pthread_once(&keyval_once, create_keyval);
    for (int i = 0; i < nknown; i++)
        if (known[i].dt == dt) return known[i].size;
    /* Contiguous means: no lower bound, no holes, and the next element starts
     * right after this one. The pair types (MPI_DOUBLE_INT, ...) are named but
     * have holes and an extent above their size; both extents are checked. */
    int ni, na, nd, combiner, size;
    MPI_Aint lb, extent, tlb, textent;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || PMPI_Type_size(dt, &size) != MPI_SUCCESS || size <= 0 ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS || lb != 0 || extent != size ||
        PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS || tlb != 0 || textent != size)
        return -1;
    return size;
}

static int osmp_dtype_of(MPI_Datatype dt, osmp_dtype_t *out)
{
    pthread_once(&keyval_once, create_keyval);
    for (int i = 0; i < nknown; i++)
        if (known[i].dt == dt) {
            if (known[i].odt < 0) return -1;
            *out = (osmp_dtype_t)known[i].odt;
            return 0;
        }
    return -1;
}

static int osmp_op_of(MPI_Op op, osmp_dtype_t dt, osmp_op_t *out)
{
    if (op == MPI_SUM) *out = OSMP_SUM;
    else if (op == MPI_PROD) *out = OSMP_PROD;
    else if (op == MPI_MIN) *out = OSMP_MIN;
    else if (op == MPI_MAX) *out = OSMP_MAX;
    else if (op == MPI_LAND) *out = OSMP_LAND;
    else if (op == MPI_LOR) *out = OSMP_LOR;
    else if (op == MPI_LXOR) *out = OSMP_LXOR;
    else if (op == MPI_BAND) *out = OSMP_BAND;
    else if (op == MPI_BOR) *out = OSMP_BOR;
    else if (op == MPI_BXOR) *out = OSMP_BXOR;
    else return -1;
    /* MPI defines logical and bitwise operations on integers only. */
    if ((dt == OSMP_FLOAT || dt == OSMP_DOUBLE) && *out > OSMP_MAX) return -1;
    return 0;
}

/* ---------------------------------------------------------------- communicators */

struct comm_state {
    int ok;             /* OSMP runs this communicator */
    int multinode;      /* local != comm */
    int size, rank;
    MPI_Comm local;     /* ranks on my (pseudo-)node, ordered by rank in comm */
    MPI_Comm leaders;   /* local rank 0 of every node, or MPI_COMM_NULL */
    int local_rank, local_size;
    int *node_of;       /* node index (rank in leaders) of every comm rank */
    int *local_rank_of; /* local rank of every comm rank */
    int nnodes;
    int *node_bytes, *node_displ; /* per node, in blocks until scaled: see node_counts */
    int *node_first;              /* index of a node's first block in node-major order */
    osmp_team_t team;
    MPI_Comm comm; /* the user's communicator, for its error handler */
    osmp_atomic64_t on_osmp[C_COUNT]; /* written by the one thread using comm, read by osmp_mpi_stat */
    struct comm_state *next, *prev;   /* the registry of live states */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct comm_state *registry;
/* Bumped whenever a state goes away, so no thread keeps a stale cached pointer. */
static osmp_atomic64_t state_generation = 1;
static _Thread_local struct {
    MPI_Comm comm;
    struct comm_state *s;
    uint64_t generation;
} last;

/* Number of calls accelerated and passed through for one operation name. */
EXPORT int osmp_mpi_stat(const char *op, long *acc, long *through)
{
    for (int c = 0; c < C_COUNT; c++)
        if (op && strcmp(op, call_names[c]) == 0) {
            long live = 0;
            pthread_mutex_lock(&registry_lock);
            for (struct comm_state *st = registry; st; st = st->next) live += (long)osmp__load_relaxed(&st->on_osmp[c]);
            pthread_mutex_unlock(&registry_lock);
            if (acc) *acc = (long)osmp__load_relaxed(&accelerated[c]) + live;
            if (through) *through = (long)osmp__load_relaxed(&passed[c]);
            return 0;
        }
    return -1;
}


static int oob_allgather(void *ctx, const void *send, void *recv, size_t len)
{
    return PMPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, *(MPI_Comm *)ctx) != MPI_SUCCESS;
}

static void free_state(struct comm_state *s)
{
    if (!s) return;
    osmp__fetch_add(&state_generation, 1);
    pthread_mutex_lock(&registry_lock);
    for (int c = 0; c < C_COUNT; c++) osmp__fetch_add(&accelerated[c], osmp__load_relaxed(&s->on_osmp[c]));
    if (s->prev) s->prev->next = s->next;
    else if (registry == s) registry = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&registry_lock);
    if (s->team) osmp_team_destroy(s->team);
    if (s->local != MPI_COMM_NULL && s->local != MPI_COMM_SELF) PMPI_Comm_free(&s->local);
    if (s->leaders != MPI_COMM_NULL) PMPI_Comm_free(&s->leaders);
    free(s->node_of);
    free(s->local_rank_of);
    free(s->node_bytes);
    free(s->node_displ);
    free(s->node_first);
    free(s);
}

static int finalizing; /* inside PMPI_Finalize: other ranks may delete in another order */

static int delete_state(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    struct comm_state *s = value;
    if (s && finalizing) { /* no collective calls now; the process is about to end */
        s->team = NULL;
        s->local = s->leaders = MPI_COMM_NULL;
    }
    free_state(s);
    return MPI_SUCCESS;
}

static void create_keyval(void)
{
    pthread_once(&knobs_once, read_knobs);
    fill_known();
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, NULL);
}

/*
 * State creation (collective over comm):
 *   1. split comm by shared memory (and into pseudo-nodes), ranks in comm order;
 *   2. a communicator of the local rank 0s, and every rank's node and local rank;
 *   3. an OSMP team over the local communicator (PMPI_Allgather as bootstrap);
 *   4. agree: OSMP runs the communicator only if every rank set up (allreduce MIN).
 */
static struct comm_state *build_state(MPI_Comm comm)
{
    struct comm_state *s = calloc(1, sizeof(*s));
    if (!s) return NULL; /* this rank then passes its calls to MPI while the others wait in 4: see the note */
    s->local = MPI_COMM_NULL;
    s->leaders = MPI_COMM_NULL;
    pthread_mutex_lock(&registry_lock);
    s->next = registry;
    if (registry) registry->prev = s;
    registry = s;
    pthread_mutex_unlock(&registry_lock);
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return s; /* ok = 0: MPI handles it */
    s->comm = comm;
    PMPI_Comm_size(comm, &s->size);
    PMPI_Comm_rank(comm, &s->rank);
    MPI_Comm node;
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, s->rank, MPI_INFO_NULL, &node); /* 1 */
    int pseudo = atoi(osmp__knob_str(OSMP_KNOB_MPI_PSEUDO_NODES)), nr, ns;
    if (pseudo < 1) pseudo = 1;
    PMPI_Comm_rank(node, &nr);
    PMPI_Comm_size(node, &ns);
    if (pseudo > 1) {
        PMPI_Comm_split(node, (int)((long)nr * pseudo / ns), nr, &s->local);
        PMPI_Comm_free(&node);
    } else {
        s->local = node;
    }
    PMPI_Comm_rank(s->local, &s->local_rank);
    PMPI_Comm_size(s->local, &s->local_size);
    s->multinode = s->local_size != s->size;
    PMPI_Comm_split(comm, s->local_rank == 0 ? 0 : MPI_UNDEFINED, s->rank, &s->leaders); /* 2 */
    int mine[2] = {-1, s->local_rank};
    if (s->leaders != MPI_COMM_NULL) PMPI_Comm_rank(s->leaders, &mine[0]);
    PMPI_Bcast(&mine[0], 1, MPI_INT, 0, s->local);
    int *all = malloc(sizeof(int) * 2 * (size_t)s->size);
    s->node_of = malloc(sizeof(int) * (size_t)s->size);
    s->local_rank_of = malloc(sizeof(int) * (size_t)s->size);
    int ok = all && s->node_of && s->local_rank_of;
    PMPI_Allgather(mine, 2, MPI_INT, ok ? all : (int[2]){0}, ok ? 2 : 0, MPI_INT, comm);
    for (int r = 0; ok && r < s->size; r++) {
        s->node_of[r] = all[2 * r];
        s->local_rank_of[r] = all[2 * r + 1];
    }
    free(all);
    /* node-major order: node 0's ranks in local order, then node 1's, ... */
    for (int r = 0; ok && r < s->size; r++)
        if (s->node_of[r] + 1 > s->nnodes) s->nnodes = s->node_of[r] + 1;
    s->node_bytes = calloc((size_t)s->nnodes + 1, sizeof(int));
    s->node_displ = calloc((size_t)s->nnodes + 1, sizeof(int));
    s->node_first = calloc((size_t)s->nnodes + 1, sizeof(int));
    ok = ok && s->node_bytes && s->node_displ && s->node_first;
    for (int r = 0; ok && r < s->size; r++) s->node_first[s->node_of[r] + 1]++;
    for (int k = 0; ok && k < s->nnodes; k++) s->node_first[k + 1] += s->node_first[k];
    if (ok && s->local_size > 1) { /* 3 */
        struct osmp_team_params p = {.rank = s->local_rank, .size = s->local_size,
                                     .oob_allgather = oob_allgather, .oob_ctx = &s->local};
        ok = osmp_team_create(&p, &s->team) == OSMP_OK;
    } else if (ok) {
        struct osmp_team_params p = {.rank = 0, .size = 1};
        ok = osmp_team_create(&p, &s->team) == OSMP_OK;
    }
    int all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm); /* 4 */
    s->ok = all_ok;
    return s;
}

/* The OSMP state of a communicator, NULL when its calls go to MPI. */
static struct comm_state *state_of(MPI_Comm comm, enum call c)
{
    if (disabled_mask & (1u << c)) return (void)pass(c, R_DISABLED), NULL;
    struct comm_state *s;
    /* Fast path: the communicator of this thread's previous call. */
    if (last.s && last.comm == comm && last.generation == osmp__load_relaxed(&state_generation)) {
        s = last.s;
    } else {
        pthread_once(&keyval_once, create_keyval);
        if (comm == MPI_COMM_NULL) return (void)pass(c, R_INTER), NULL;
        int flag = 0;
        s = NULL;
        PMPI_Comm_get_attr(comm, keyval, &s, &flag);
        if (!flag) {
            s = build_state(comm);
            PMPI_Comm_set_attr(comm, keyval, s);
        }
        if (!s) return (void)pass(c, R_SETUP), NULL;
        last.comm = comm;
        last.s = s;
        last.generation = osmp__load_relaxed(&state_generation);
    }
    if (!s->ok) return (void)pass(c, s->team ? R_SETUP : R_INTER), NULL;
    return s;
}

/* rc: an OSMP status, or (multi-node steps) an MPI error code from a PMPI_ call,
 * whose handler has already run. An OSMP failure (a peer lost, no memory) goes
 * to the communicator's error handler, as MPI's own failures do: by default the
 * job aborts, with MPI_ERRORS_RETURN the caller gets the code. */
static int done(struct comm_state *s, enum call c, int rc)
{
    osmp__store_relaxed(&s->on_osmp[c], osmp__load_relaxed(&s->on_osmp[c]) + 1); /* one writer per comm */
    if (rc >= 0) return rc;
    fprintf(stderr, "osmp-mpi: rank %d: MPI_%s failed on OSMP: %s\n", s->rank, call_names[c], osmp_status_str(rc));
    int code = rc == OSMP_ERR_NO_MEMORY ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    PMPI_Comm_call_errhandler(s->comm, code);
    return code;
}

static const void *in_place(const void *buf)
{
    return buf == MPI_IN_PLACE ? OSMP_IN_PLACE : buf;
}

/* ---------------------------------------------------------------- collectives */

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    struct comm_state *s = state_of(comm, C_BARRIER);
    if (!s) return PMPI_Barrier(comm);
    if (!s->multinode) return done(s, C_BARRIER, osmp_barrier(s->team));
    /* node barrier, leaders' barrier, node barrier */
    int rc = osmp_barrier(s->team);
    if (s->leaders != MPI_COMM_NULL) PMPI_Barrier(s->leaders);
    int rc2 = osmp_barrier(s->team);
    return done(s, C_BARRIER, rc ? rc : rc2);
}

/* ---- contiguous views of user buffers (data movement) ---- */

/* Bytes of count elements of dt, -1 if MPI would reject them. */
static long bytes_of(MPI_Datatype dt, int count)
{
    int size = plain_size(dt);
    if (count < 0 || (size < 0 && (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS))) return -1;
    return (long)size * count;
}

/* A contiguous view of count elements of dt at buf, in *v: buf itself for a
 * plain datatype or no bytes at all (a NULL buffer with a zero count is valid
 * MPI); else a buffer of its own, packed from buf if `pack`. OSMP_OK, or
 * OSMP_ERR_NO_MEMORY. */
static int view(const void *buf, int count, MPI_Datatype dt, long bytes, int pack, MPI_Comm comm, void **v)
{
    *v = (void *)(uintptr_t)buf;
    if (bytes == 0 || plain_size(dt) > 0) return OSMP_OK;
    if (!(*v = malloc((size_t)bytes))) return OSMP_ERR_NO_MEMORY;
    int pos = 0;
    if (pack) PMPI_Pack(buf, count, dt, *v, (int)bytes, &pos, comm);
    return OSMP_OK;
}

/* Unpack a view into buf (if `unpack`) and free it. */
static void unview(void *v, void *buf, int count, MPI_Datatype dt, long bytes, int unpack, MPI_Comm comm)
{
    int pos = 0;
    if (v == buf || !v) return;
    if (unpack) PMPI_Unpack(v, (int)bytes, &pos, buf, count, dt, comm);
    free(v);
}

/* Data movement runs on OSMP inside one node; bytes must fit the views. */
static struct comm_state *movement_state(MPI_Comm comm, enum call c, long bytes)
{
    if (bytes < 0 || bytes > INT_MAX) return (void)pass(c, bytes < 0 ? R_DTYPE : R_COUNT_LIMIT), NULL;
    struct comm_state *s = state_of(comm, c);
    if (s && s->multinode && c == C_ALLTOALL) return (void)pass(c, R_MULTINODE), NULL;
    return s;
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    long bytes = bytes_of(dt, count);
    struct comm_state *s = movement_state(comm, C_BCAST, bytes);
    if (!s || root < 0 || root >= s->size) return PMPI_Bcast(buf, count, dt, root, comm);
    void *v;
    int rc = view(buf, count, dt, bytes, s->rank == root, comm, &v);
    if (rc) {
    } else if (!s->multinode) {
        rc = osmp_bcast(s->team, v, (size_t)bytes, OSMP_UINT8, root);
    } else {
        /* 1. the root's node gets it from the root; 2. the leaders from the root's
         * leader; 3. the other nodes from their leader */
        int rnode = s->node_of[root], mynode = s->node_of[s->rank];
        if (mynode == rnode) rc = osmp_bcast(s->team, v, (size_t)bytes, OSMP_UINT8, s->local_rank_of[root]);
        if (s->leaders != MPI_COMM_NULL) PMPI_Bcast(v, (int)bytes, MPI_BYTE, rnode, s->leaders);
        if (mynode != rnode) rc = osmp_bcast(s->team, v, (size_t)bytes, OSMP_UINT8, 0);
    }
    unview(v, buf, count, dt, bytes, !rc && s->rank != root, comm);
    return done(s, C_BCAST, rc);
}

/* Shared checks of the reductions; 0 with *s NULL means "use MPI". */
static struct comm_state *reduction_state(MPI_Comm comm, MPI_Datatype dt, MPI_Op op, int count, enum call c,
                                          osmp_dtype_t *odt, osmp_op_t *oop)
{
    if (count < 0 || osmp_dtype_of(dt, odt)) return (void)pass(c, R_DTYPE), NULL;
    if (osmp_op_of(op, *odt, oop)) return (void)pass(c, R_OP), NULL;
    struct comm_state *s = state_of(comm, c);
    if (s && s->size == 1 && (*oop == OSMP_LAND || *oop == OSMP_LOR || *oop == OSMP_LXOR))
        return (void)pass(c, R_LONE_LOGICAL), NULL;
    return s;
}

EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct comm_state *s = reduction_state(comm, dt, op, count, C_ALLREDUCE, &odt, &oop);
    if (!s) return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    if (!s->multinode) return done(s, C_ALLREDUCE, osmp_allreduce(s->team, in_place(sendbuf), recvbuf, (size_t)count, odt, oop));
    /* 1. reduce to each node's leader; 2. leaders' allreduce; 3. broadcast in each node */
    int rc = osmp_reduce(s->team, s->local_rank == 0 ? in_place(sendbuf) : sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
                         recvbuf, (size_t)count, odt, oop, 0);
    if (s->leaders != MPI_COMM_NULL) PMPI_Allreduce(MPI_IN_PLACE, recvbuf, count, dt, op, s->leaders);
    int rc2 = osmp_bcast(s->team, recvbuf, (size_t)count, odt, 0);
    return done(s, C_ALLREDUCE, rc ? rc : rc2);
}

EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                      MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct comm_state *s = reduction_state(comm, dt, op, count, C_REDUCE, &odt, &oop);
    if (!s || root < 0 || root >= s->size) return PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
    if (!s->multinode)
        return done(s, C_REDUCE, osmp_reduce(s->team, in_place(sendbuf), recvbuf, (size_t)count, odt, oop, root));
    /* 1. reduce each node to its leader (local rank 0); 2. the leaders reduce to
     * the root's leader; 3. which hands the result to the root if it is not the root */
    int rnode = s->node_of[root], lroot = s->local_rank_of[root], rc;
    int is_leader = s->local_rank == 0, at_root = s->rank == root;
    void *tmp = NULL;
    if (is_leader && !at_root && !(tmp = malloc((size_t)count * osmp_dtype_size(odt) + 1))) return MPI_ERR_NO_MEM;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (is_leader)
        rc = osmp_reduce(s->team, at_root ? in_place(sendbuf) : in, at_root ? recvbuf : tmp, (size_t)count, odt, oop, 0);
    else
        rc = osmp_reduce(s->team, in, NULL, (size_t)count, odt, oop, 0);
    if (is_leader) {
        void *acc = at_root ? recvbuf : tmp;
        PMPI_Reduce(s->node_of[s->rank] == rnode ? MPI_IN_PLACE : acc, acc, count, dt, op, rnode, s->leaders);
        if (s->node_of[s->rank] == rnode && !at_root) PMPI_Send(acc, count, dt, lroot, 7171, s->local);
    } else if (at_root) {
        PMPI_Recv(recvbuf, count, dt, 0, 7171, s->local, MPI_STATUS_IGNORE);
    }
    free(tmp);
    return done(s, C_REDUCE, rc);
}

/* ---- several nodes: node-major staging (gather, allgather, scatter) ----
 * Blocks travel between nodes in node-major order (each node's ranks
 * contiguous, in local order); ranks of one node need not be contiguous in comm. */

static void node_counts(struct comm_state *s, size_t block)
{
    for (int k = 0; k < s->nnodes; k++) {
        s->node_bytes[k] = (int)((size_t)(s->node_first[k + 1] - s->node_first[k]) * block);
        s->node_displ[k] = (int)((size_t)s->node_first[k] * block);
    }
}

static size_t node_major(const struct comm_state *s, int r)
{
    return (size_t)(s->node_first[s->node_of[r]] + s->local_rank_of[r]);
}

/* Gather protocol, several nodes:
 *   1. each node gathers its blocks at its leader (OSMP);
 *   2. the leaders gather their nodes' blocks at the root's leader (MPI);
 *   3. which passes them to the root (MPI, inside the node) if it is not the root;
 *   4. the root puts every block where its rank says. */
static int hier_gather(struct comm_state *s, const void *in, void *out, size_t block, int root)
{
    int leader = s->local_rank == 0, at_root = s->rank == root, rnode = s->node_of[root];
    int mine_is_root_node = s->node_of[s->rank] == rnode;
    size_t total = block * (size_t)s->size;
    char *nb = leader ? malloc(block * (size_t)s->local_size + 1) : NULL;
    char *all = (leader && mine_is_root_node) || at_root ? malloc(total + 1) : NULL;
    if ((leader && !nb) || (((leader && mine_is_root_node) || at_root) && !all)) {
        free(nb);
        free(all);
        return OSMP_ERR_NO_MEMORY;
    }
    int rc = osmp_gather(s->team, in ? in : (const char *)out + (size_t)root * block, nb, block, OSMP_UINT8, 0); /* 1 */
    if (leader) { /* 2 */
        node_counts(s, block);
        PMPI_Gatherv(nb, s->node_bytes[s->node_of[s->rank]], MPI_BYTE, all, s->node_bytes, s->node_displ, MPI_BYTE,
                     rnode, s->leaders);
    }
    if (mine_is_root_node && s->local_rank_of[root] != 0) { /* 3 */
        if (leader) PMPI_Send(all, (int)total, MPI_BYTE, s->local_rank_of[root], 7173, s->local);
        if (at_root) PMPI_Recv(all, (int)total, MPI_BYTE, 0, 7173, s->local, MPI_STATUS_IGNORE);
    }
    for (int r = 0; at_root && r < s->size; r++) /* 4 */
        memcpy((char *)out + (size_t)r * block, all + node_major(s, r) * block, block);
    free(nb);
    free(all);
    return rc;
}

/* Allgather protocol, several nodes: 1. gather at each leader (OSMP); 2. the
 * leaders allgather their nodes' blocks (MPI); 3. each leader broadcasts the
 * whole vector in its node (OSMP); 4. every rank puts each block in place. */
static int hier_allgather(struct comm_state *s, const void *in, void *out, size_t block)
{
    int leader = s->local_rank == 0;
    size_t total = block * (size_t)s->size;
    char *nb = leader ? malloc(block * (size_t)s->local_size + 1) : NULL, *all = malloc(total + 1);
    if ((leader && !nb) || !all) {
        free(nb);
        free(all);
        return OSMP_ERR_NO_MEMORY;
    }
    int rc = osmp_gather(s->team, in ? in : (const char *)out + (size_t)s->rank * block, nb, block, OSMP_UINT8, 0);
    if (leader) {
        node_counts(s, block);
        PMPI_Allgatherv(nb, s->node_bytes[s->node_of[s->rank]], MPI_BYTE, all, s->node_bytes, s->node_displ, MPI_BYTE,
                        s->leaders);
    }
    int rc2 = osmp_bcast(s->team, all, total, OSMP_UINT8, 0);
    for (int r = 0; r < s->size; r++) memcpy((char *)out + (size_t)r * block, all + node_major(s, r) * block, block);
    free(nb);
    free(all);
    return rc ? rc : rc2;
}

/* Scatter protocol, several nodes: 1. the root orders the blocks node-major and
 * hands them to its leader; 2. the leaders scatter node portions (MPI); 3. each
 * leader scatters its portion in its node (OSMP). */
static int hier_scatter(struct comm_state *s, const void *in, void *out, size_t block, int root)
{
    int leader = s->local_rank == 0, at_root = s->rank == root, rnode = s->node_of[root];
    int mine_is_root_node = s->node_of[s->rank] == rnode;
    size_t total = block * (size_t)s->size;
    char *all = (leader && mine_is_root_node) || at_root ? malloc(total + 1) : NULL;
    char *nb = leader ? malloc(block * (size_t)s->local_size + 1) : NULL;
    if ((leader && !nb) || (((leader && mine_is_root_node) || at_root) && !all)) {
        free(nb);
        free(all);
        return OSMP_ERR_NO_MEMORY;
    }
    for (int r = 0; at_root && r < s->size; r++) /* 1 */
        memcpy(all + node_major(s, r) * block, (const char *)in + (size_t)r * block, block);
    if (mine_is_root_node && s->local_rank_of[root] != 0) {
        if (at_root) PMPI_Send(all, (int)total, MPI_BYTE, 0, 7174, s->local);
        if (leader) PMPI_Recv(all, (int)total, MPI_BYTE, s->local_rank_of[root], 7174, s->local, MPI_STATUS_IGNORE);
    }
    if (leader) { /* 2 */
        node_counts(s, block);
        PMPI_Scatterv(all, s->node_bytes, s->node_displ, MPI_BYTE, nb, s->node_bytes[s->node_of[s->rank]], MPI_BYTE,
                      rnode, s->leaders);
    }
    int rc = osmp_scatter(s->team, nb, out, block, OSMP_UINT8, 0); /* 3 */
    free(nb);
    free(all);
    return rc;
}

EXPORT int MPI_Gather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount, MPI_Datatype rdt,
                      int root, MPI_Comm comm)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int at_root = rank == root, in_pl = at_root && sendbuf == MPI_IN_PLACE;
    long block = at_root ? bytes_of(rdt, rcount) : bytes_of(sdt, scount);
    struct comm_state *s = movement_state(comm, C_GATHER, block < 0 ? -1 : block * size);
    if (!s || root < 0 || root >= size) return PMPI_Gather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm);
    void *in = NULL, *out = NULL;
    int rc = in_pl ? OSMP_OK : view(sendbuf, scount, sdt, block, 1, comm, &in);
    if (!rc && at_root) rc = view(recvbuf, rcount * size, rdt, block * size, in_pl, comm, &out);
    if (!rc)
        rc = s->multinode ? hier_gather(s, in_pl ? NULL : in, out, (size_t)block, root)
                          : osmp_gather(s->team, in_pl ? OSMP_IN_PLACE : in, out, (size_t)block, OSMP_UINT8, root);
    unview(in, (void *)(uintptr_t)sendbuf, scount, sdt, block, 0, comm);
    unview(out, recvbuf, rcount * size, rdt, block * size, !rc, comm);
    return done(s, C_GATHER, rc);
}

EXPORT int MPI_Allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                         MPI_Datatype rdt, MPI_Comm comm)
{
    int size;
    PMPI_Comm_size(comm, &size);
    int in_pl = sendbuf == MPI_IN_PLACE;
    long block = bytes_of(rdt, rcount);
    struct comm_state *s = movement_state(comm, C_ALLGATHER, block < 0 ? -1 : block * size);
    if (!s) return PMPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    void *in = NULL, *out = NULL;
    int rc = in_pl ? OSMP_OK : view(sendbuf, scount, sdt, block, 1, comm, &in);
    if (!rc) rc = view(recvbuf, rcount * size, rdt, block * size, in_pl, comm, &out);
    if (!rc)
        rc = s->multinode ? hier_allgather(s, in_pl ? NULL : in, out, (size_t)block)
                          : osmp_allgather(s->team, in_pl ? OSMP_IN_PLACE : in, out, (size_t)block, OSMP_UINT8);
    unview(in, (void *)(uintptr_t)sendbuf, scount, sdt, block, 0, comm);
    unview(out, recvbuf, rcount * size, rdt, block * size, !rc, comm);
    return done(s, C_ALLGATHER, rc);
}

EXPORT int MPI_Scatter(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                       MPI_Datatype rdt, int root, MPI_Comm comm)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int at_root = rank == root, in_pl = at_root && recvbuf == MPI_IN_PLACE;
    long block = at_root ? bytes_of(sdt, scount) : bytes_of(rdt, rcount);
    struct comm_state *s = movement_state(comm, C_SCATTER, block < 0 ? -1 : block * size);
    if (!s || root < 0 || root >= size) return PMPI_Scatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm);
    void *in = NULL, *out = NULL;
    int rc = at_root ? view(sendbuf, scount * size, sdt, block * size, 1, comm, &in) : OSMP_OK;
    if (!rc && !in_pl) rc = view(recvbuf, rcount, rdt, block, 0, comm, &out);
    if (!rc)
        rc = s->multinode ? hier_scatter(s, in, in_pl ? (char *)in + (size_t)root * (size_t)block : out, (size_t)block, root)
                          : osmp_scatter(s->team, in, in_pl ? OSMP_IN_PLACE : out, (size_t)block, OSMP_UINT8, root);
    unview(in, (void *)(uintptr_t)sendbuf, scount * size, sdt, block * size, 0, comm);
    unview(out, recvbuf, rcount, rdt, block, !rc, comm);
    return done(s, C_SCATTER, rc);
}

EXPORT int MPI_Alltoall(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                        MPI_Datatype rdt, MPI_Comm comm)
{
    int size;
    PMPI_Comm_size(comm, &size);
    int in_pl = sendbuf == MPI_IN_PLACE;
    long block = bytes_of(rdt, rcount);
    struct comm_state *s = movement_state(comm, C_ALLTOALL, block < 0 ? -1 : block * size);
    if (!s) return PMPI_Alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm);
    void *in = NULL, *out = NULL;
    int rc = in_pl ? OSMP_OK : view(sendbuf, scount * size, sdt, block * size, 1, comm, &in);
    if (!rc) rc = view(recvbuf, rcount * size, rdt, block * size, in_pl, comm, &out);
    if (!rc) rc = osmp_alltoall(s->team, in_pl ? OSMP_IN_PLACE : in, out, (size_t)block, OSMP_UINT8);
    unview(in, (void *)(uintptr_t)sendbuf, scount * size, sdt, block * size, 0, comm);
    unview(out, recvbuf, rcount * size, rdt, block * size, !rc, comm);
    return done(s, C_ALLTOALL, rc);
}

EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                                    MPI_Comm comm)
{
    osmp_dtype_t odt;
    osmp_op_t oop;
    struct comm_state *s = reduction_state(comm, dt, op, count, C_RSB, &odt, &oop);
    if (s && s->multinode) s = (pass(C_RSB, R_MULTINODE), NULL);
    if (!s) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, dt, op, comm);
    return done(s, C_RSB, osmp_reduce_scatter_block(s->team, in_place(sendbuf), recvbuf, (size_t)count, odt, oop));
}

/* ---------------------------------------------------------------- finalize */

EXPORT int MPI_Finalize(void)
{
    /* The world's state goes first, while every rank still makes this call. */
    MPI_Comm mine[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2 && keyval != MPI_KEYVAL_INVALID; i++) {
        void *v;
        int flag = 0;
        if (PMPI_Comm_get_attr(mine[i], keyval, &v, &flag) == MPI_SUCCESS && flag) PMPI_Comm_delete_attr(mine[i], keyval);
    }
    pthread_once(&knobs_once, read_knobs);
    if (verbose) {
        int rank;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        for (int c = 0; c < C_COUNT; c++) {
            long a = (long)osmp__load_relaxed(&accelerated[c]), p = (long)osmp__load_relaxed(&passed[c]);
            if (a || p) fprintf(stderr, "osmp-mpi: rank %d: %-20s %ld on OSMP, %ld passed to MPI\n", rank, call_names[c], a, p);
        }
    }
    finalizing = 1;
    return PMPI_Finalize();
}
