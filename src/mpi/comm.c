/*
 * libosmp_mpi: the OSMP state of each communicator (built on its first
 * intercepted collective, cached in an attribute), the statistics of what ran
 * where (OSMP_VERBOSE, osmp_mpi_stat), the knobs, and MPI_Finalize.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/knobs.h"
#include "mpi/osmp_mpi.h"

/* ---------------------------------------------------------------- statistics */

static osmp_atomic64_t accelerated[OSMP_COLL_COUNT], passed[OSMP_COLL_COUNT];

static const char *const reason_text[R_NREASONS] = {
    "disabled by OSMP_MPI_DISABLE",
    "datatype is derived, non-contiguous or not an OSMP type",
    "operation is user-defined, MAXLOC/MINLOC or not defined on the datatype",
    "intercommunicator",
    "operation not hierarchical yet on a communicator spanning several nodes",
    "OSMP could not set up this communicator",
    "count does not fit",
    "a logical operation on a communicator of one: MPI returns the value as is, OSMP as 0 or 1",
    "this libosmp_mpi is for the other MPI library",
    "the processes hold OSMP_MPI_MAX_TEAMS teams already (communicators over other sets of processes)",
    "the tune table (osmp-tune, OSMP_TUNE_FILE) says MPI is faster for this size",
};
static osmp_atomic64_t reason_seen[R_NREASONS];

static int keyval = MPI_KEYVAL_INVALID;

static int verbose = -1;
static unsigned disabled_mask; /* bit per call */
_Static_assert(OSMP_COLL_COUNT <= 32, "a bit per collective");
static int foreign_mpi; /* the program runs another MPI library than this build's: pass everything */
static int alloc_mem = 1; /* OSMP_MPI_ALLOC_MEM */
static int share_teams = 1, max_teams = 64; /* OSMP_MPI_SHARE_TEAMS, OSMP_MPI_MAX_TEAMS: see "teams" below */
static void check_library(void);

/* Our handles and constants are those of the MPI library this file was built
 * with; preloaded into a program of the other library they mean nothing there.
 * The running library's PMPI_ functions come first in the lookup order, so
 * its version string says which one runs. */
#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
#define USE_INSTEAD "libosmp_mpich.so (for MPICH)"
#else
#define BUILT_FOR "MPICH"
#define USE_INSTEAD "libosmp_mpi.so (for Open MPI)"
#endif


void *osmp__mpi_next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "osmp-mpi: %s of the running MPI library not found\n", name);
        abort();
    }
    return f;
}

static void check_library(void)
{
    static char version[16384]; /* above both libraries' MPI_MAX_LIBRARY_VERSION_STRING */
    int len = 0;
    if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS) return;
    version[len > 0 && len < (int)sizeof(version) ? len : (int)sizeof(version) - 1] = '\0';
    if (strstr(version, BUILT_FOR)) return;
    foreign_mpi = 1;
    disabled_mask = ~0u;
    version[strcspn(version, "\n,")] = '\0';
    fprintf(stderr, "osmp-mpi: this libosmp_mpi was built for " BUILT_FOR " but the program runs %s: every call goes "
                    "to MPI; preload " USE_INSTEAD " instead\n", version);
}

static void read_knobs(void)
{
    char err[200];
    verbose = atoi(osmp__knob_str(OSMP_KNOB_VERBOSE)) > 0;
    long v = osmp__knob_long(OSMP_KNOB_MPI_SHARE_TEAMS, 0, 1, err, sizeof(err));
    if (v < 0) fprintf(stderr, "osmp-mpi: %s; using the default\n", err);
    else share_teams = (int)v;
    v = osmp__knob_long(OSMP_KNOB_MPI_ALLOC_MEM, 0, 1, err, sizeof(err));
    if (v < 0) fprintf(stderr, "osmp-mpi: %s; using the default\n", err);
    else alloc_mem = (int)v;
    v = osmp__knob_long(OSMP_KNOB_MPI_MAX_TEAMS, 0, 1 << 20, err, sizeof(err));
    if (v < 0) fprintf(stderr, "osmp-mpi: %s; using the default\n", err);
    else max_teams = (int)v;
    const char *d = osmp__knob_str(OSMP_KNOB_MPI_DISABLE);
    if (strcmp(d, "1") == 0) {
        disabled_mask = ~0u;
    } else if (strcmp(d, "0") != 0) {
        for (int c = 0; c < OSMP_COLL_COUNT; c++) {
            const char *name = osmp_coll_name((osmp_coll_t)c), *p = strstr(d, name);
            size_t len = strlen(name);
            /* whole words only: "reduce" must not match inside "allreduce" */
            while (p && ((p != d && p[-1] != ',') || (p[len] && p[len] != ','))) p = strstr(p + 1, name);
            if (p) disabled_mask |= 1u << c;
        }
    }
}

static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;

int osmp__mpi_pass(osmp_coll_t c, enum osmp__mpi_reason r)
{
    osmp__fetch_add(&passed[c], 1);
    if (foreign_mpi) r = R_FOREIGN;
    if (verbose && osmp__fetch_add(&reason_seen[r], 1) == 0) {
        int rank = -1;
        if (!foreign_mpi) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "osmp-mpi: rank %d: %s goes to MPI: %s\n", rank, osmp_coll_name(c), reason_text[r]);
    }
    return 0;
}

/* ---------------------------------------------------------------- communicators */


static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct osmp__mpi_comm *registry;
static struct team_rec *teams; /* every team of this process: see "teams" below; under registry_lock */
static int live_teams;                 /* shared or not */
static long long teams_created;
/* Bumped whenever a state goes away, so no thread keeps a stale cached pointer. */
static osmp_atomic64_t state_generation = 1;
static OSMP_MPI_TLS struct {
    MPI_Comm comm;
    struct osmp__mpi_comm *s;
    uint64_t generation;
} last;

/* Number of calls accelerated and passed through for one operation name; for
 * "teams", the teams this process holds now and has created in all. */
EXPORT int osmp_mpi_stat(const char *op, long *acc, long *through)
{
    if (op && strcmp(op, "teams") == 0) {
        pthread_mutex_lock(&registry_lock);
        if (acc) *acc = live_teams;
        if (through) *through = (long)teams_created;
        pthread_mutex_unlock(&registry_lock);
        return 0;
    }
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
        if (op && strcmp(op, osmp_coll_name(c)) == 0) {
            long live = 0;
            pthread_mutex_lock(&registry_lock);
            for (struct osmp__mpi_comm *st = registry; st; st = st->next) live += (long)osmp__load_relaxed(&st->on_osmp[c]);
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

static int finalizing; /* inside PMPI_Finalize: other ranks may delete in another order */

/* ---------------------------------------------------------------- teams */

/*
 * Communicators whose node-local part is the same processes in the same order
 * (dups above all: libraries dup for isolation, thousands of times) share one
 * team, with its segment, plans and trees; a dup then costs two small MPI
 * collectives and no shared memory. Sharing is safe because a correct program
 * calls the collectives of communicators over the same processes in the same
 * order on each of them (MPI 4.0 section 6.14: no deadlock even if every
 * collective synchronized). Under MPI_THREAD_MULTIPLE two threads may drive two
 * such communicators at once, so there (and with OSMP_MPI_SHARE_TEAMS=0) each
 * communicator has its own team. OSMP_MPI_MAX_TEAMS bounds the teams a process
 * holds: communicators beyond it go to MPI.
 *
 * A team goes when its last communicator is freed, not before: requests posted
 * on a communicator run on after MPI_Comm_free (MPI allows it) on the team,
 * holding the communicator's state (refs). osmp_team_destroy is collective, so
 * it runs where every member is, in the last communicator's MPI_Comm_free, and
 * every member must take the same decision there:
 *   1. `refs` counts communicators, the same on every member (communicators
 *      are made and freed collectively); not the requests, which each member
 *      completes and frees on its own (MPI_Wait, MPI_Request_free are local);
 *   2. requests still running on the team (nonblocking ones, persistent runs,
 *      of this communicator or of freed ones that shared it) end first
 *      (osmp__mpi_nb_settle): they were posted on every member before this
 *      collective call, and destroying the team would end them under their MPI
 *      requests;
 *   3. an inactive persistent request outlives its communicator and may be
 *      started again until MPI_Request_free, which a member calls whenever it
 *      likes: if persistent requests were ever made on the team (a count the
 *      same everywhere, each _init being collective), the members agree in an
 *      allreduce on the team whether any of them still has one; if so the team
 *      stays, on every member, for as long as the process runs ("parked", still
 *      counted by OSMP_MPI_MAX_TEAMS; a later communicator over the same
 *      processes takes it up where teams are shared). A barrier at a local call
 *      (the last MPI_Request_free) would hang a legal program: the other members
 *      may be waiting for this one in point-to-point calls.
 */
struct team_rec {
    int n, *world;  /* listed: the members' ranks in MPI_COMM_WORLD, in team order */
    long long id;   /* the same on every member: local rank 0's pid << 24 + its count */
    osmp_team_t team;
    int refs;       /* communicators of this process on it (1 above) */
    int persistent; /* persistent requests on it alive in this process (3 above) */
    int made;       /* persistent requests ever made on it (the same on every member) */
    int listed;     /* later communicators over the same processes may share it */
    struct team_rec *next;
};
static MPI_Group world_group = MPI_GROUP_NULL;
osmp_atomic32_t osmp__mpi_teams_destroyed;

static void team_gone(osmp_team_t team)
{
    pthread_mutex_lock(&registry_lock);
    live_teams--;
    pthread_mutex_unlock(&registry_lock);
    osmp__fetch_add32(&osmp__mpi_teams_destroyed, 1); /* (tune.c's cached bands name teams by handle) */
    osmp_team_destroy(team);
}

/* s's communicator is freed (collective): its reference to the team goes (see above). */
static void release_team(struct osmp__mpi_comm *s)
{
    struct team_rec *rec = s->rec;
    if (finalizing || !rec) return; /* the process ends: its teams stay reachable, their names are long gone */
    pthread_mutex_lock(&registry_lock);
    int gone = --rec->refs == 0, made = rec->made;
    pthread_mutex_unlock(&registry_lock);
    if (!gone) return; /* 1 */
    osmp__mpi_nb_settle(rec->team); /* 2 */
    if (made) { /* 3 */
        pthread_mutex_lock(&registry_lock);
        int32_t mine = rec->persistent > 0, any = 0;
        pthread_mutex_unlock(&registry_lock);
        /* (a failed team cannot agree: osmp_team_destroy then frees without waiting, unless a request here needs it) */
        if (osmp_allreduce(rec->team, &mine, &any, 1, OSMP_INT32, OSMP_MAX) != OSMP_OK) any = mine;
        if (any) return;
    }
    pthread_mutex_lock(&registry_lock);
    for (struct team_rec **p = &teams; *p; p = &(*p)->next)
        if (*p == rec) {
            *p = rec->next;
            break;
        }
    for (struct osmp__mpi_comm *o = registry; o; o = o->next) /* (freed communicators' states, held by requests done) */
        if (o->rec == rec) {
            o->rec = NULL;
            o->team = NULL;
        }
    pthread_mutex_unlock(&registry_lock);
    team_gone(rec->team);
    free(rec->world);
    free(rec);
}

/* The communicator's reference is gone, and the last request's: the memory goes (no MPI call, no collective:
 * a request may let go anywhere, inside MPI's progress too). */
static void destroy_state(struct osmp__mpi_comm *s)
{
    pthread_mutex_lock(&registry_lock);
    for (int c = 0; c < OSMP_COLL_COUNT; c++) osmp__fetch_add(&accelerated[c], osmp__load_relaxed(&s->on_osmp[c]));
    if (s->prev) s->prev->next = s->next;
    else if (registry == s) registry = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&registry_lock);
    free(s->node_of);
    free(s->local_rank_of);
    free(s->node_bytes);
    free(s->node_displ);
    free(s->node_first);
    free(s);
}

void osmp__mpi_state_hold(struct osmp__mpi_comm *s, int persistent)
{
    osmp__fetch_add32(&s->refs, 1);
    if (!persistent) return;
    pthread_mutex_lock(&registry_lock);
    s->rec->persistent++;
    pthread_mutex_unlock(&registry_lock);
}

void osmp__mpi_state_made_persistent(struct osmp__mpi_comm *s)
{
    pthread_mutex_lock(&registry_lock);
    s->rec->made++;
    pthread_mutex_unlock(&registry_lock);
}

void osmp__mpi_state_put(struct osmp__mpi_comm *s, int persistent)
{
    if (persistent) {
        pthread_mutex_lock(&registry_lock);
        if (s->rec) s->rec->persistent--; /* (the team stays: 3 above) */
        pthread_mutex_unlock(&registry_lock);
    }
    if (osmp__fetch_sub32(&s->refs, 1) == 1) destroy_state(s);
}

/* The attribute's delete callback: MPI_Comm_free (collective), or MPI_Finalize. */
static void free_state(struct osmp__mpi_comm *s)
{
    if (!s) return;
    osmp__fetch_add(&state_generation, 1); /* (no thread's cache maps the handle, which MPI may give again, to s) */
    osmp__mpi_nb_forget(s);
    release_team(s);
    /* At finalize the ranks delete their communicators in any order: no collective any more. */
    if (!finalizing) {
        if (s->local != MPI_COMM_NULL && s->local != MPI_COMM_SELF && s->local != s->comm) PMPI_Comm_free(&s->local);
        if (s->leaders != MPI_COMM_NULL) PMPI_Comm_free(&s->leaders);
    }
    s->local = s->leaders = s->comm = MPI_COMM_NULL; /* (gone: errors of requests still running go elsewhere) */
    osmp__mpi_state_put(s, 0);
}

static int delete_state(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    free_state(value);
    return MPI_SUCCESS;
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
osmp_atomic32_t osmp__mpi_ready;

static void setup(void)
{
    pthread_once(&knobs_once, read_knobs);
    check_library();
    if (!foreign_mpi) {
        osmp__mpi_types_init();
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, NULL);
        int level = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&level);
        if (level == MPI_THREAD_MULTIPLE) share_teams = 0;
        PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
        char say[256];
        /* (nb.c: before the first team; none with every call passed to MPI, which then calls nothing of OSMP's) */
        if (disabled_mask != ~0u) osmp__mpi_progress_setup(level, say, sizeof(say));
        else snprintf(say, sizeof(say), "every call goes to MPI (OSMP_MPI_DISABLE)");
        if (verbose) {
            int rank = -1;
            PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
            fprintf(stderr, "osmp-mpi: rank %d: %s\n", rank, say);
        }
    }
    osmp__store32(&osmp__mpi_ready, foreign_mpi ? 2 : 1);
}

uint32_t osmp__mpi_setup_slow(void)
{
    pthread_once(&setup_once, setup);
    return osmp__load32(&osmp__mpi_ready);
}

/* The world ranks of comm's members in comm order (NULL if one is not in the world). */
static int *world_ranks(MPI_Comm comm, int n)
{
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n), ok = in && out;
    MPI_Group g = MPI_GROUP_NULL;
    ok = ok && PMPI_Comm_group(comm, &g) == MPI_SUCCESS;
    for (int i = 0; ok && i < n; i++) in[i] = i;
    ok = ok && PMPI_Group_translate_ranks(g, n, in, world_group, out) == MPI_SUCCESS;
    for (int i = 0; ok && i < n; i++) ok = out[i] != MPI_UNDEFINED;
    if (g != MPI_GROUP_NULL) PMPI_Group_free(&g);
    free(in);
    if (!ok) free(out);
    return ok ? out : NULL;
}

/* The shared team over exactly these world ranks, with a reference taken. */
static struct team_rec *find_team(const int *world, int n)
{
    struct team_rec *found = NULL;
    pthread_mutex_lock(&registry_lock);
    for (struct team_rec *st = teams; st && !found; st = st->next) {
        if (!st->listed) continue;
        int who, why = OSMP_OK;
        osmp_team_failure(st->team, &who, &why); /* a failed team stays with its communicators, no new one joins it */
        if (why == OSMP_OK && st->n == n && memcmp(st->world, world, sizeof(int) * (size_t)n) == 0) found = st;
    }
    if (found) found->refs++;
    pthread_mutex_unlock(&registry_lock);
    return found;
}

/*
 * The team of s->local (collective over it):
 *   1. each member looks for a team over the same world ranks and proposes its
 *      id (0: none); local rank 0 also proposes an id for a new team;
 *   2. allreduce MAX of (id, -id, at the cap, failed, new id);
 *   3. all found the same team: share it; any failed or at the cap: no team
 *      (the communicator goes to MPI); else create a new one and, if it may be
 *      shared, list it under the new id. (Its record is allocated before 2, so
 *      that no member fails alone after it.)
 * ok: this rank's state so far; returns whether the communicator has a team.
 */
static int attach_team(struct osmp__mpi_comm *s, int ok)
{
    static long long count;
    int *world = ok && share_teams ? world_ranks(s->local, s->local_size) : NULL;
    struct team_rec *found = world ? find_team(world, s->local_size) : NULL; /* 1 */
    struct team_rec *rec = ok ? calloc(1, sizeof(*rec)) : NULL;
    ok = ok && rec;
    pthread_mutex_lock(&registry_lock);
    long long v[5] = {found ? found->id : 0, found ? -found->id : 0, !found && live_teams >= max_teams, !ok,
                      s->local_rank == 0 ? ((long long)getpid() << 24) + (++count & 0xffffff) : 0};
    pthread_mutex_unlock(&registry_lock);
    if (s->local_size > 1) PMPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, MPI_MAX, s->local); /* 2 */
    int agreed = found && v[0] == found->id && -v[1] == found->id && !v[3];
    if (agreed) { /* 3 */
        free(world);
        free(rec);
        s->rec = found;
        s->team = found->team;
        return 1;
    }
    if (found) { /* another member has no team or another one: ours stays for the communicators on it */
        pthread_mutex_lock(&registry_lock);
        found->refs--;
        pthread_mutex_unlock(&registry_lock);
    }
    s->capped = v[2] != 0 && !v[3];
    if (v[2] || v[3]) {
        free(world);
        free(rec);
        return 0;
    }
    int rc;
    if (s->local_size > 1) {
        struct osmp_team_params p = {.rank = s->local_rank, .size = s->local_size,
                                     .oob_allgather = oob_allgather, .oob_ctx = &s->local};
        osmp__mpi_profile_team(&p, s->local); /* OSMP_PROFILE (profile.c): count what its collectives move */
        rc = osmp_team_create(&p, &s->team);
    } else {
        struct osmp_team_params p = {.rank = 0, .size = 1};
        rc = osmp_team_create(&p, &s->team);
    }
    if (rc != OSMP_OK) {
        if (verbose) { /* why, once per reason: the next communicators over these processes fail alike */
            static char said[400];
            const char *why = *osmp_team_last_error() ? osmp_team_last_error() : osmp_status_str(rc);
            pthread_mutex_lock(&registry_lock);
            int say = strcmp(said, why) != 0;
            if (say) snprintf(said, sizeof(said), "%s", why);
            pthread_mutex_unlock(&registry_lock);
            int wr = -1;
            PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
            if (say) fprintf(stderr, "osmp-mpi: rank %d: a communicator goes to MPI: %s\n", wr, why);
        }
        free(world);
        free(rec);
        s->team = NULL;
        return 0;
    }
    pthread_mutex_lock(&registry_lock);
    live_teams++;
    teams_created++;
    *rec = (struct team_rec){.n = s->local_size, .world = world, .id = v[4], .team = s->team, .refs = 1,
                             .listed = world != NULL};
    rec->next = teams;
    teams = rec;
    pthread_mutex_unlock(&registry_lock);
    s->rec = rec;
    return 1;
}

/*
 * State creation (collective over comm):
 *   1. split comm by shared memory (and into pseudo-nodes), ranks in comm order;
 *      on one node the communicator is its own local part;
 *   2. across nodes: a communicator of the local rank 0s, and every rank's node
 *      and local rank;
 *   3. the team of the local part (attach_team: shared or new, PMPI_Allgather
 *      as bootstrap);
 *   4. across nodes: OSMP runs the communicator only if every node has a team
 *      (allreduce MIN); on one node 3 agreed already.
 */
static struct osmp__mpi_comm *build_state(MPI_Comm comm)
{
    struct osmp__mpi_comm *s = calloc(1, sizeof(*s));
    if (!s) return NULL; /* not survived: this rank passes its calls to MPI while the others wait in 1-4 */
    s->local = s->leaders = s->comm = MPI_COMM_NULL;
    osmp__store32(&s->refs, 1); /* the communicator's */
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
    s->multinode = s->local_size != s->size; /* the same on every rank */
    if (!s->multinode) {
        PMPI_Comm_free(&s->local);
        s->local = comm;
    }
    s->node_of = malloc(sizeof(int) * (size_t)s->size);
    s->local_rank_of = malloc(sizeof(int) * (size_t)s->size);
    int ok = s->node_of && s->local_rank_of;
    if (s->multinode) {
        PMPI_Comm_split(comm, s->local_rank == 0 ? 0 : MPI_UNDEFINED, s->rank, &s->leaders); /* 2 */
        int mine[2] = {-1, s->local_rank};
        if (s->leaders != MPI_COMM_NULL) PMPI_Comm_rank(s->leaders, &mine[0]);
        PMPI_Bcast(&mine[0], 1, MPI_INT, 0, s->local);
        int *all = malloc(sizeof(int) * 2 * (size_t)s->size);
        ok = ok && all;
        PMPI_Allgather(mine, 2, MPI_INT, ok ? all : (int[2]){0}, ok ? 2 : 0, MPI_INT, comm);
        for (int r = 0; ok && r < s->size; r++) {
            s->node_of[r] = all[2 * r];
            s->local_rank_of[r] = all[2 * r + 1];
        }
        free(all);
    } else {
        for (int r = 0; ok && r < s->size; r++) {
            s->node_of[r] = 0;
            s->local_rank_of[r] = r;
        }
    }
    /* node-major order: node 0's ranks in local order, then node 1's, ... */
    for (int r = 0; ok && r < s->size; r++)
        if (s->node_of[r] + 1 > s->nnodes) s->nnodes = s->node_of[r] + 1;
    s->node_bytes = calloc((size_t)s->nnodes + 1, sizeof(int));
    s->node_displ = calloc((size_t)s->nnodes + 1, sizeof(int));
    s->node_first = calloc((size_t)s->nnodes + 1, sizeof(int));
    ok = ok && s->node_bytes && s->node_displ && s->node_first;
    for (int r = 0; ok && r < s->size; r++) s->node_first[s->node_of[r] + 1]++;
    for (int k = 0; ok && k < s->nnodes; k++) s->node_first[k + 1] += s->node_first[k];
    ok = attach_team(s, ok); /* 3 */
    int all_ok = ok;
    if (s->multinode) PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm); /* 4 */
    s->ok = all_ok;
    return s;
}

struct osmp__mpi_comm *osmp__mpi_state(MPI_Comm comm, osmp_coll_t c)
{
    osmp__mpi_setup(); /* the knobs (OSMP_MPI_DISABLE) before the first decision */
    if (disabled_mask & (1u << c)) return (void)osmp__mpi_pass(c, R_DISABLED), NULL;
    struct osmp__mpi_comm *s;
    /* Fast path: the communicator of this thread's previous call. */
    if (last.s && last.comm == comm && last.generation == osmp__load_relaxed(&state_generation)) {
        s = last.s;
    } else {
        if (comm == MPI_COMM_NULL) return (void)osmp__mpi_pass(c, R_INTER), NULL;
        int flag = 0;
        s = NULL;
        PMPI_Comm_get_attr(comm, keyval, &s, &flag);
        if (!flag) {
            s = build_state(comm);
            PMPI_Comm_set_attr(comm, keyval, s);
        }
        if (!s) return (void)osmp__mpi_pass(c, R_SETUP), NULL;
        last.comm = comm;
        last.s = s;
        last.generation = osmp__load_relaxed(&state_generation);
    }
    if (!s->ok) return (void)osmp__mpi_pass(c, s->capped ? R_TEAMS : s->comm != MPI_COMM_NULL ? R_SETUP : R_INTER), NULL;
    return s;
}

/* rc: an OSMP status, or (multi-node steps) an MPI error code from a PMPI_ call,
 * whose handler has already run. An OSMP failure (a peer lost, no memory) goes
 * to the communicator's error handler, as MPI's own failures do: by default the
 * job aborts, with MPI_ERRORS_RETURN the caller gets the code. */
int osmp__mpi_failed(struct osmp__mpi_comm *s, osmp_coll_t c, int rc)
{
    int who = -1, why = OSMP_OK, culprit = -1;
    if (s->team) osmp_team_failure(s->team, &who, &why);
    for (int r = 0; who >= 0 && r < s->size; r++) /* the team's rank as a rank of comm */
        if (s->node_of[r] == s->node_of[s->rank] && s->local_rank_of[r] == who) culprit = r;
    if (why != OSMP_OK && culprit != s->rank)
        fprintf(stderr, "osmp-mpi: rank %d: MPI_%s failed on OSMP: %s (rank %d of the communicator: %s)\n", s->rank,
                osmp_coll_name(c), osmp_status_str(rc), culprit, osmp_status_str(why));
    else
        fprintf(stderr, "osmp-mpi: rank %d: MPI_%s failed on OSMP: %s\n", s->rank, osmp_coll_name(c),
                osmp_status_str(rc));
    int code = rc == OSMP_ERR_NO_MEMORY ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
    PMPI_Comm_call_errhandler(osmp__mpi_handler_comm(s), code);
    return code;
}

/* ---------------------------------------------------------------- memory */

/* MPI_Alloc_mem hands out osmp_alloc memory, which the other processes of a
 * collective read in place (src/shm/copy.c) where they would read MPI's with
 * CMA. MPI promises only memory that its calls accept, and they accept any.
 * The info keys are hints to the MPI library; OSMP has none to take. Under
 * OSMP_MPI_DISABLE=1 (every call to MPI) the memory is MPI's too. */
OSMP_MPI_ENTRY(int, MPI_Alloc_mem)(MPI_Aint size, MPI_Info info, void *baseptr)
{
    OSMP_MPI_ENTERED(MPI_Alloc_mem);
    pthread_once(&knobs_once, read_knobs);
    void *p;
    if (alloc_mem && disabled_mask != ~0u && size >= 0 && baseptr && osmp_alloc((size_t)size, &p) == OSMP_OK) {
        *(void **)baseptr = p;
        return MPI_SUCCESS;
    }
    return PMPI_Alloc_mem(size, info, baseptr);
}

OSMP_MPI_ENTRY(int, MPI_Free_mem)(void *base)
{
    OSMP_MPI_ENTERED(MPI_Free_mem);
    return osmp_free(base) == OSMP_OK && base ? MPI_SUCCESS : PMPI_Free_mem(base);
}

/* ---------------------------------------------------------------- finalize */

OSMP_MPI_ENTRY(int, MPI_Finalize)(void)
{
    OSMP_MPI_ENTERED(MPI_Finalize);
    osmp__mpi_nb_finalize(); /* nonblocking calls still running (freed while active) end; the progress callback goes */
    osmp__mpi_profile_finalize(); /* OSMP_PROFILE (profile.c): collective over the world */
    /* The world's state goes first, while every rank still makes this call. */
    MPI_Comm mine[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2 && keyval != MPI_KEYVAL_INVALID; i++) {
        void *v;
        int flag = 0;
        if (PMPI_Comm_get_attr(mine[i], keyval, &v, &flag) == MPI_SUCCESS && flag) PMPI_Comm_delete_attr(mine[i], keyval);
    }
    pthread_once(&knobs_once, read_knobs);
    if (verbose) {
        int rank = -1;
        if (!foreign_mpi) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        for (int c = 0; c < OSMP_COLL_COUNT; c++) {
            long a = (long)osmp__load_relaxed(&accelerated[c]), p = (long)osmp__load_relaxed(&passed[c]);
            if (a || p) fprintf(stderr, "osmp-mpi: rank %d: %-20s %ld on OSMP, %ld passed to MPI\n", rank, osmp_coll_name(c), a, p);
        }
    }
    if (disabled_mask != ~0u) osmp__mpi_progress_end(); /* (no wait inside OSMP calls MPI from here on) */
    finalizing = 1;
    return PMPI_Finalize();
}

