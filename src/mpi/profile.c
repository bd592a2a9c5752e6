/*
 * libosmp_mpi: the communication matrix of a run (OSMP_PROFILE=FILE), the input
 * of osmp-map.
 *
 * Every point-to-point send is counted in the sender's row, by the receiver's
 * rank in MPI_COMM_WORLD: MPI_Send, Bsend, Ssend, Rsend, their non-blocking
 * forms, persistent sends (counted at each MPI_Start/Startall, not at
 * Send_init), and the send half of Sendrecv and Sendrecv_replace. A rank of
 * another communicator is translated once per communicator
 * (MPI_Group_translate_ranks; the table hangs on the communicator as an
 * attribute, freed with it); MPI_PROC_NULL is not counted. Bytes are count x
 * MPI_Type_size (the data, not the extent).
 *
 * At MPI_Finalize rank 0 gathers the rows and writes FILE, the bytes as N lines
 * of N numbers (Open MPI monitoring's .mat layout; row i = what world rank i
 * sent, where profile2mat.pl writes the symmetrized average) and FILE.json with
 * the bytes and message counts.
 *
 * Collectives that run on OSMP count what they move: each node-local team is
 * created with OSMP_TEAM_PARAM_TRAFFIC, so the transfer trace's per-call pairs
 * (coll/trace.h: every payload copy, from the owner of the source to the owner
 * of the destination) are summed into counters by team rank, translated to
 * world ranks here. Copies within one rank's memory are left out. What MPI does
 * (calls passed to it, the leaders' steps across nodes) is not counted. FILE
 * holds point-to-point plus collective bytes (what osmp-map should see); the
 * json keeps them apart: "p2p" {bytes, messages}, "collectives" {bytes, calls:
 * the number of calls that moved bytes between the pair}.
 *
 * Off, each entry point costs one predictable branch on a global before the
 * PMPI_ call (see ENTRY); the slow path behind it also forwards calls in a
 * program of the other MPI library (OSMP_MPI_FORWARD_IF_FOREIGN).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/knobs.h"
#include "osmp_mpi.h"

/* 0: not decided yet, 1: off (native library), 2: on, 3: the other MPI library */
enum { P_UNKNOWN, P_OFF, P_ON, P_FOREIGN };
static int osmp__mpi_profile_mode;

static int world_size = -1, world_rank_me;
static osmp_atomic64_t *row_bytes, *row_msgs; /* [world_size] */
static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Persistent send requests: the destination and bytes each Start counts. */
struct preq {
    MPI_Request req;
    int dest;
    long bytes;
};
static struct preq *preqs;
static size_t npreq, cappreq;
static pthread_mutex_t preq_lock = PTHREAD_MUTEX_INITIALIZER;

/* Teams whose collectives count: their counters and their ranks' world ranks.
 * Kept until MPI_Finalize (a freed communicator's bytes still count). */
struct cteam {
    uint64_t *acc; /* 2 * n * n, see OSMP_TEAM_PARAM_TRAFFIC */
    int n;
    int *world;
    struct cteam *next;
};
static struct cteam *cteams;
static pthread_mutex_t cteam_lock = PTHREAD_MUTEX_INITIALIZER;

static int delete_table(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static void decide(void)
{
    if (osmp__mpi_setup() == 2) {
        osmp__mpi_profile_mode = P_FOREIGN;
        return;
    }
    const char *file = osmp__knob_str(OSMP_KNOB_PROFILE);
    int init = 0;
    PMPI_Initialized(&init);
    if (!*file || !init) {
        osmp__mpi_profile_mode = P_OFF;
        return;
    }
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_me);
    row_bytes = calloc((size_t)world_size, sizeof(*row_bytes));
    row_msgs = calloc((size_t)world_size, sizeof(*row_msgs));
    if (!row_bytes || !row_msgs) {
        fprintf(stderr, "osmp-mpi: OSMP_PROFILE: out of memory, not profiling\n");
        osmp__mpi_profile_mode = P_OFF;
        return;
    }
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_table, &keyval, NULL);
    osmp__mpi_profile_mode = P_ON;
}

/* P_ON, P_OFF or P_FOREIGN (decided at the first call after MPI_Init). */
static int mode(void)
{
    if (osmp__mpi_profile_mode == P_UNKNOWN) pthread_once(&once, decide);
    return osmp__mpi_profile_mode;
}

/* World rank of rank `dest` of comm (of its remote group for an
 * intercommunicator); -1 for MPI_PROC_NULL or an invalid rank (MPI reports it). */
static int world_of(MPI_Comm comm, int dest)
{
    if (dest == MPI_PROC_NULL || dest < 0) return -1;
    if (comm == MPI_COMM_WORLD) return dest < world_size ? dest : -1;
    int *table = NULL, flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &table, &flag) != MPI_SUCCESS) return -1;
    if (!flag) {
        int inter = 0, n;
        MPI_Group g, wg;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter) PMPI_Comm_remote_group(comm, &g);
        else PMPI_Comm_group(comm, &g);
        PMPI_Comm_group(MPI_COMM_WORLD, &wg);
        PMPI_Group_size(g, &n);
        table = malloc(sizeof(int) * ((size_t)n + 1));
        int *idx = malloc(sizeof(int) * (size_t)n);
        if (table && idx) {
            table[0] = n;
            for (int i = 0; i < n; i++) idx[i] = i;
            PMPI_Group_translate_ranks(g, n, idx, wg, table + 1);
            PMPI_Comm_set_attr(comm, keyval, table);
        } else {
            free(table);
            table = NULL;
        }
        free(idx);
        PMPI_Group_free(&g);
        PMPI_Group_free(&wg);
        if (!table) return -1;
    }
    if (dest >= table[0]) return -1;
    int w = table[1 + dest];
    return w == MPI_UNDEFINED || w >= world_size ? -1 : w; /* a process outside the world (spawned) */
}

static long bytes_of(int count, MPI_Datatype dt)
{
    int size = 0;
    if (count <= 0 || PMPI_Type_size(dt, &size) != MPI_SUCCESS) return 0;
    return (long)count * size;
}

static void count_send(int dest_world, long bytes)
{
    if (dest_world < 0) return;
    osmp__fetch_add(&row_bytes[dest_world], (uint64_t)bytes);
    osmp__fetch_add(&row_msgs[dest_world], 1);
}

static void record(const void *buf, int count, MPI_Datatype dt, int dest, MPI_Comm comm)
{
    (void)buf;
    if (mode() != P_ON) return;
    count_send(world_of(comm, dest), bytes_of(count, dt));
}

static void remember(MPI_Request req, int count, MPI_Datatype dt, int dest, MPI_Comm comm)
{
    if (mode() != P_ON || req == MPI_REQUEST_NULL) return;
    struct preq p = {req, world_of(comm, dest), bytes_of(count, dt)};
    pthread_mutex_lock(&preq_lock);
    if (npreq == cappreq) {
        size_t cap = cappreq ? 2 * cappreq : 16;
        struct preq *n = realloc(preqs, cap * sizeof(*n));
        if (n) preqs = n, cappreq = cap;
    }
    if (npreq < cappreq) preqs[npreq++] = p;
    pthread_mutex_unlock(&preq_lock);
}

static void started(MPI_Request req)
{
    pthread_mutex_lock(&preq_lock);
    for (size_t i = 0; i < npreq; i++)
        if (preqs[i].req == req) {
            count_send(preqs[i].dest, preqs[i].bytes);
            break;
        }
    pthread_mutex_unlock(&preq_lock);
}

static void forget(MPI_Request req)
{
    pthread_mutex_lock(&preq_lock);
    for (size_t i = 0; i < npreq; i++)
        if (preqs[i].req == req) {
            preqs[i] = preqs[--npreq];
            break;
        }
    pthread_mutex_unlock(&preq_lock);
}

/*
 * The entry points. Off, one branch: the exported function tests the mode and
 * calls PMPI_. Everything else sits in a separate function (noinline) that it
 * tail-calls with the same arguments: OSMP_MPI_FORWARD_IF_FOREIGN's
 * __builtin_apply_args makes its function save every argument register
 * (general and vector) on entry, 20-odd instructions that must not be paid on
 * every send; entered by a jump, the slow function sees the argument registers
 * (and stack arguments) of the original call untouched, as the forwarding in a
 * program of the other MPI library needs.
 *   ENTRY(Name, params, args, before, after): before runs ahead of PMPI_Name,
 *   after (with the result in rc_) behind it, both only on the slow path.
 */
#define SLOW __builtin_expect(osmp__mpi_profile_mode != P_OFF, 0)
#define ENTRY(Name, params, args, before, after)                                                             \
    static __attribute__((noinline)) int slow_##Name params                                                  \
    {                                                                                                        \
        OSMP_MPI_FORWARD_IF_FOREIGN(MPI_##Name);                                                             \
        before;                                                                                              \
        int rc_ = PMPI_##Name args;                                                                          \
        after;                                                                                               \
        return rc_;                                                                                          \
    }                                                                                                        \
    EXPORT int MPI_##Name params                                                                             \
    {                                                                                                        \
        if (SLOW) return slow_##Name args;                                                                   \
        return PMPI_##Name args;                                                                             \
    }

#define SEND_PARAMS (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
#define SEND_ARGS (buf, count, dt, dest, tag, comm)
#define ISEND_PARAMS (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
#define ISEND_ARGS (buf, count, dt, dest, tag, comm, req)
#define COUNT_IT record(buf, count, dt, dest, comm)
#define NOTHING (void)0
#define REMEMBER_IT                                                                                          \
    if (rc_ == MPI_SUCCESS) remember(*req, count, dt, dest, comm)

/* The four send modes (standard, buffered, synchronous, ready), each blocking,
 * non-blocking and persistent; persistent sends count at each start, not here. */
#define SEND_MODES(M) M(Send, send) M(Bsend, bsend) M(Ssend, ssend) M(Rsend, rsend)
#define BLOCKING(Name, name) ENTRY(Name, SEND_PARAMS, SEND_ARGS, COUNT_IT, NOTHING)
#define NONBLOCKING(Name, name) ENTRY(I##name, ISEND_PARAMS, ISEND_ARGS, COUNT_IT, NOTHING)
#define PERSISTENT(Name, name) ENTRY(Name##_init, ISEND_PARAMS, ISEND_ARGS, NOTHING, REMEMBER_IT)
SEND_MODES(BLOCKING)
SEND_MODES(NONBLOCKING)
SEND_MODES(PERSISTENT)
/* MPI_Start, MPI_Startall, MPI_Request_free: a persistent collective of persist.c's is its business (looked
 * for only while some exist: one load); MPI_Startall with one among its requests starts them one by one, in
 * order, through MPI_Start. */
#define ENTRY_PC(Name, params, args, before, pc)                                                             \
    static __attribute__((noinline)) int slow_##Name params                                                  \
    {                                                                                                        \
        OSMP_MPI_FORWARD_IF_FOREIGN(MPI_##Name);                                                             \
        before;                                                                                              \
        return PMPI_##Name args;                                                                             \
    }                                                                                                        \
    EXPORT int MPI_##Name params                                                                             \
    {                                                                                                        \
        if (__builtin_expect(osmp__load_relaxed(&osmp__mpi_pc_live) != 0, 0)) pc;                            \
        if (SLOW) return slow_##Name args;                                                                   \
        return PMPI_##Name args;                                                                             \
    }
#define PC_ONE(call)                                                                                         \
    do {                                                                                                     \
        struct osmp__mpi_nb *w_ = req ? osmp__mpi_pc_find(*req) : NULL;                                      \
        if (w_) return call(w_, req);                                                                        \
    } while (0)
static int startall_pc(int n, MPI_Request reqs[])
{
    int any = 0, rc = MPI_SUCCESS;
    for (int i = 0; reqs && i < n && !any; i++) any = osmp__mpi_pc_find(reqs[i]) != NULL;
    if (!any) return -1;
    for (int i = 0; i < n; i++) {
        int one = MPI_Start(&reqs[i]);
        if (rc == MPI_SUCCESS) rc = one;
    }
    return rc;
}
ENTRY_PC(Start, (MPI_Request *req), (req), if (mode() == P_ON) started(*req), PC_ONE(osmp__mpi_pc_start))
ENTRY_PC(Startall, (int n, MPI_Request reqs[]), (n, reqs),
         if (mode() == P_ON) for (int i_ = 0; i_ < n; i_++) started(reqs[i_]), do {
             int rc_ = startall_pc(n, reqs);
             if (rc_ >= 0) return rc_;
         } while (0))
/* before the library frees it (it sets *req to MPI_REQUEST_NULL) */
ENTRY_PC(Request_free, (MPI_Request *req), (req), if (mode() == P_ON && npreq) forget(*req),
         PC_ONE(osmp__mpi_pc_free))
ENTRY(Sendrecv,
      (const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount, MPI_Datatype rdt,
       int source, int rtag, MPI_Comm comm, MPI_Status *status),
      (sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, status),
      record(sbuf, scount, sdt, dest, comm), NOTHING)
ENTRY(Sendrecv_replace,
      (void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag, MPI_Comm comm,
       MPI_Status *status),
      (buf, count, dt, dest, stag, source, rtag, comm, status), COUNT_IT, NOTHING)

void osmp__mpi_profile_team(struct osmp_team_params *p, MPI_Comm local)
{
    if (mode() != P_ON) return;
    struct cteam *c = calloc(1, sizeof(*c));
    int n = p->size, *idx = malloc(sizeof(int) * (size_t)n);
    if (c) c->acc = calloc(2 * (size_t)n * (size_t)n, sizeof(uint64_t)), c->world = malloc(sizeof(int) * (size_t)n);
    if (!c || !c->acc || !c->world || !idx) {
        if (c) free(c->acc), free(c->world);
        free(c), free(idx);
        fprintf(stderr, "osmp-mpi: OSMP_PROFILE: out of memory, a communicator's collectives go uncounted\n");
        return;
    }
    MPI_Group g, wg;
    PMPI_Comm_group(local, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < n; i++) idx[i] = i;
    PMPI_Group_translate_ranks(g, n, idx, wg, c->world);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    free(idx);
    c->n = n;
    p->mask |= OSMP_TEAM_PARAM_TRAFFIC;
    p->traffic = c->acc;
    pthread_mutex_lock(&cteam_lock);
    c->next = cteams;
    cteams = c;
    pthread_mutex_unlock(&cteam_lock);
}

/* For the Fortran entry points (fortran_p2p.c), which forward to the MPI
 * library's own: the same counting, after the handles are converted. */
int osmp__mpi_profile_on(void)
{
    return __builtin_expect(osmp__mpi_profile_mode != P_OFF, 0) && mode() == P_ON;
}

void osmp__mpi_profile_send(int count, MPI_Datatype dt, int dest, MPI_Comm comm)
{
    record(NULL, count, dt, dest, comm);
}

void osmp__mpi_profile_send_init(MPI_Request req, int count, MPI_Datatype dt, int dest, MPI_Comm comm)
{
    remember(req, count, dt, dest, comm);
}

void osmp__mpi_profile_start(MPI_Request req)
{
    if (mode() == P_ON) started(req);
}

void osmp__mpi_profile_request_free(MPI_Request req)
{
    if (mode() == P_ON && npreq) forget(req);
}

/* ---------------------------------------------------------------- finalize */

static void write_matrix(FILE *f, const uint64_t *m, int n, const char *indent, int json)
{
    for (int i = 0; i < n; i++) {
        fputs(json ? (i ? ",\n" : "\n") : "", f);
        fputs(json ? indent : "", f);
        fputs(json ? "[" : "", f);
        for (int j = 0; j < n; j++)
            fprintf(f, json ? "%s%llu" : "%s%llu ", json && j ? ", " : "", (unsigned long long)m[(size_t)i * n + j]);
        fputs(json ? "]" : "\n", f);
    }
}

/* Collective over MPI_COMM_WORLD, from MPI_Finalize: rank 0 writes the files. */
void osmp__mpi_profile_finalize(void)
{
    if (mode() != P_ON) return;
    int n = world_size;
    /* the collectives' counters of every team, by world rank, summed at rank 0 */
    size_t nn = (size_t)n * (size_t)n;
    uint64_t *coll = calloc(2 * nn, sizeof(uint64_t)), *coll_all = world_rank_me == 0 ? calloc(2 * nn, sizeof(uint64_t)) : NULL;
    if (!coll || (world_rank_me == 0 && !coll_all)) {
        fprintf(stderr, "osmp-mpi: OSMP_PROFILE: out of memory at MPI_Finalize\n");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    pthread_mutex_lock(&cteam_lock);
    for (struct cteam *c = cteams, *next; c; c = next) {
        next = c->next;
        size_t k = (size_t)c->n;
        for (size_t a = 0; a < k; a++)
            for (size_t b = 0; b < k; b++) {
                int wa = c->world[a], wb = c->world[b];
                if (a == b || wa < 0 || wb < 0 || wa >= n || wb >= n) continue; /* MPI_UNDEFINED: outside the world */
                coll[(size_t)wa * n + wb] += c->acc[a * k + b];
                coll[nn + (size_t)wa * n + wb] += c->acc[k * k + a * k + b];
            }
        free(c->acc), free(c->world), free(c);
    }
    cteams = NULL;
    pthread_mutex_unlock(&cteam_lock);
    PMPI_Reduce(coll, coll_all, (int)(2 * nn), MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    free(coll);
    uint64_t *mine = malloc(sizeof(uint64_t) * 2 * (size_t)n), *all = NULL;
    if (world_rank_me == 0) all = malloc(sizeof(uint64_t) * 2 * (size_t)n * (size_t)n);
    if (!mine || (world_rank_me == 0 && !all)) {
        fprintf(stderr, "osmp-mpi: OSMP_PROFILE: out of memory at MPI_Finalize\n");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int j = 0; j < n; j++) {
        mine[j] = osmp__load_relaxed(&row_bytes[j]);
        mine[n + j] = osmp__load_relaxed(&row_msgs[j]);
    }
    PMPI_Gather(mine, 2 * n, MPI_UINT64_T, all, 2 * n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    osmp__mpi_profile_mode = P_OFF; /* sends after this (none in a correct program) go uncounted */
    if (world_rank_me == 0) {
        uint64_t *bytes = malloc(sizeof(uint64_t) * (size_t)n * n), *msgs = malloc(sizeof(uint64_t) * (size_t)n * n);
        if (!bytes || !msgs) {
            fprintf(stderr, "osmp-mpi: OSMP_PROFILE: out of memory at MPI_Finalize\n");
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                bytes[(size_t)i * n + j] = all[(size_t)i * 2 * n + j];
                msgs[(size_t)i * n + j] = all[(size_t)i * 2 * n + n + j];
            }
        const char *file = osmp__knob_str(OSMP_KNOB_PROFILE);
        char json[4200];
        snprintf(json, sizeof(json), "%s.json", file);
        FILE *f = fopen(file, "w"), *j = fopen(json, "w");
        if (!f || !j) {
            fprintf(stderr, "osmp-mpi: OSMP_PROFILE: cannot write %s: %s\n", !f ? file : json, strerror(errno));
        } else {
            uint64_t *total = malloc(sizeof(uint64_t) * nn);
            for (size_t k = 0; total && k < nn; k++) total[k] = bytes[k] + coll_all[k];
            write_matrix(f, total ? total : bytes, n, "", 0);
            free(total);
            fprintf(j, "{\"ranks\": %d,\n \"p2p\": {\n  \"bytes\": [", n);
            write_matrix(j, bytes, n, "   ", 1);
            fprintf(j, "],\n  \"messages\": [");
            write_matrix(j, msgs, n, "   ", 1);
            fprintf(j, "]},\n \"collectives\": {\n  \"bytes\": [");
            write_matrix(j, coll_all, n, "   ", 1);
            fprintf(j, "],\n  \"calls\": [");
            write_matrix(j, coll_all + nn, n, "   ", 1);
            fprintf(j, "]}}\n");
        }
        if (f) fclose(f);
        if (j) fclose(j);
        free(bytes), free(msgs);
    }
    free(mine), free(all), free(coll_all);
}
