/*
 * Teams: creation over an out-of-band allgather, the team segment, thread
 * teams, osmp_init under osmp-run.
 *
 * Creation protocol (every participant):
 *   1. Rank 0 reads the knobs that must agree (chunk, depth, hierarchy, ...),
 *      creates the team segment (unguessable name, O_EXCL, 0600) and puts its
 *      name in its record; everyone adds its pid, core and a status.
 *   2. Allgather the records. Any bad status: everyone fails with it.
 *   3. Everyone maps the segment and first-touches its own region (its pages then
 *      live on its NUMA node), builds the plans, resolves the selection, and
 *      probes whether it can read the next rank's memory (Linux CMA) for
 *      single copy.
 *   4. Allgather the outcome and the digests of what each decided on its own
 *      (AGREE_*): this is also the point where all have mapped, so rank 0
 *      unlinks the name right after. Digests that differ: everyone fails with
 *      OSMP_ERR_MISMATCH; any other failure: everyone fails with it.
 * One segment per team, carved into per-participant regions: every group of the
 * plan finds its members' mailboxes there, and /dev/shm holds one name only for
 * the time of one exchange.
 *
 * Failures. A participant that fails to set up still takes part in both
 * exchanges, so that everyone returns its status, and every failure path undoes
 * its mappings (rank 0 also unlinks the name). Each participant watches the other processes of
 * the team (liveness.c) for as long as the team exists.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fault.h"
#include "common/knobs.h"
#include "common/machine.h"
#include "common/util.h"
#include "shm/shm.h"
#include "team/rendezvous.h"
#include "coll/tune.h"
#include "team/team.h"
#include "topo/measured.h"

pid_t osmp__self_pid;

static void after_fork_in_child(void)
{
    osmp__self_pid = getpid();
}

__attribute__((constructor)) static void init_self_pid(void)
{
    osmp__self_pid = getpid();
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* ---------------------------------------------------------------- topology */

static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static osmp_topo_t process_topo;
static int process_topo_rc;

static void load_process_topo(void)
{
    const char *spec = osmp__knob_str(OSMP_KNOB_TOPOLOGY);
    process_topo_rc = osmp__topo_load_knob(spec, &process_topo);
    /* Once per process: every team would fail the same way. */
    if (process_topo_rc && *spec) fprintf(stderr, "osmp: %s\n", osmp_topo_last_error());
}

static int get_topo(osmp_topo_t *t)
{
    pthread_once(&topo_once, load_process_topo);
    *t = process_topo;
    return process_topo_rc;
}

/* The logical core of `topo` this thread runs on now, or -1 if the OS will not
 * say or the topology has no such PU. */
static int current_core(osmp_topo_t topo)
{
    int cpu = sched_getcpu();
    for (int i = 0; cpu >= 0 && i < osmp_topo_count(topo, OSMP_DOMAIN_PU); i++) {
        const struct osmp_domain *pu = osmp_topo_domain(topo, OSMP_DOMAIN_PU, i);
        if (pu->os_index == cpu) return pu->parent->logical_index;
    }
    return -1;
}

/* ---------------------------------------------------------------- knobs */

#define OSMP__CPU_WORDS 16 /* 1024 CPUs */

/* Where a participant's creation failed: the reason (osmp_team_last_error)
 * names it with the participant. */
enum step {
    STEP_NONE,
    STEP_MEMORY,
    STEP_TOPOLOGY,
    STEP_CORE,
    STEP_SPECS,
    STEP_KNOBS,
    STEP_SEGMENT,
    STEP_ATTACH,
    STEP_TRACE,
    STEP_PLANS,
    STEP_SELECTION,
    STEP_COUNT
};
static const char *const step_names[STEP_COUNT] = {
    "",
    "allocating the team",
    "loading its topology (OSMP_TOPOLOGY)",
    "its core",
    "OSMP_HIERARCHY_<OP>",
    "reading the knobs",
    "creating the team segment",
    "mapping the team segment",
    "opening the transfer trace",
    "building the plans",
    "choosing the algorithms and thresholds",
};

struct boot1 {
    int32_t status, step, core, pid, single_copy_mode; /* mode: 0 none, 1 auto, 2 required */
    int32_t check_args, ncpus; /* ncpus: CPUs this participant may run on (sched_getaffinity) */
    uint64_t cpus[OSMP__CPU_WORDS]; /* which (the first 64 * OSMP__CPU_WORDS) */
    uint64_t probe_addr, chunk, depth, single_copy_min, single_copy_min_threads, step_start;
    int64_t stream_min;       /* OSMP_STREAM_MIN; -1: auto (a far team), -2: never */
    int32_t single_copy_auto; /* OSMP_SINGLE_COPY_MIN=auto: the exchange and far-team rules apply */
    /* OSMP_<OP>_ALG as an index into the collective's table (-1: auto) and a radix */
    int16_t alg[OSMP_COLL_COUNT], radix[OSMP_COLL_COUNT];
    char seg_name[OSMP_SEG_NAME_MAX];
    char hierarchy[128];
    char trace[400]; /* file name base of the transfer trace (coll/trace.h), empty when off */
};

/*
 * What every participant decides on its own, from what it sees, and all must
 * decide alike (a disagreement is a hang or wrong data): a digest of each,
 * compared in the outcome exchange. The knobs that must agree are rank 0's
 * (read_shared_knobs) and need none. In the order a mismatch is named: the
 * first that differs is the likely cause of the later ones.
 */
enum {
    AGREE_LIBRARY,  /* the library's version and layout: cache line, page size, region bytes */
    AGREE_TOPOLOGY, /* what its topology says about the team's cores (osmp__topo_cores_digest) */
    AGREE_SPECS,    /* its OSMP_HIERARCHY_<OP> */
    AGREE_TUNE,     /* the tune table it uses (the hash of its text; 0: none) */
    AGREE_PLANS,    /* the plans: root 0's and each OSMP_HIERARCHY_<OP>'s */
    AGREE_CHAINS,   /* the selection: per collective, size class and single copy, the algorithms */
    AGREE_LIMITS,   /* the thresholds (single copy, streaming) and the tune table's "mpi" bands */
    AGREE_PARTS
};
static const char *const agree_names[AGREE_PARTS] = {
    "library build (version, cache line, page size)",
    "topology of the team's cores",
    "OSMP_HIERARCHY_<OP>",
    "tune table",
    "plan",
    "algorithm selection",
    "thresholds",
};

struct boot2 {
    int32_t status, step, can_read_next;
    uint32_t have;                /* bit p: part[p] computed (a participant that failed before has not) */
    uint64_t part[AGREE_PARTS];   /* the digests */
};

static volatile uint64_t probe_word = 0x6f736d7070726f62ULL; /* read by the next rank to test CMA */

static void report_knob(const char *why)
{
    fprintf(stderr, "osmp: %s\n", why);
}

/* Rank 0's shared settings, or the first problem with them. */
/* The tune table's value of a setting for a team of `size`, or -1. */
static long tuned(const struct osmp__tune *tune, int setting, int size)
{
    long v = -1;
    for (int i = 0; tune && i < tune->nrows; i++)
        if (tune->rows[i].setting == setting && (tune->rows[i].ranks == 0 || tune->rows[i].ranks == size))
            v = (long)tune->rows[i].value;
    return v;
}

static int read_shared_knobs(struct boot1 *b, const char *hierarchy, int size, const struct osmp__tune *tune)
{
    char err[200];
    const char *cs = osmp__knob_str(OSMP_KNOB_CHUNK_SIZE), *ds = osmp__knob_str(OSMP_KNOB_PIPELINE_DEPTH);
    long tc = tuned(tune, OSMP__TUNE_CHUNK, size), td = tuned(tune, OSMP__TUNE_DEPTH, size);
    long chunk = strcmp(cs, "auto") == 0
                     ? (tc > 0 ? tc : (long)osmp__select_chunk(size))
                     : osmp__knob_long(OSMP_KNOB_CHUNK_SIZE, 64, 16 << 20, err, sizeof(err));
    if (chunk < 0) snprintf(err, sizeof(err), "OSMP_CHUNK_SIZE=\"%s\" must be auto or an integer in 64..16777216", cs);
    long depth = chunk < 0                   ? -1
                 : strcmp(ds, "auto") == 0 ? (td > 0 ? td : OSMP__DEFAULT_DEPTH)
                                             : osmp__knob_long(OSMP_KNOB_PIPELINE_DEPTH, 1, OSMP__MAX_DEPTH, err, sizeof(err));
    if (chunk >= 0 && depth < 0)
        snprintf(err, sizeof(err), "OSMP_PIPELINE_DEPTH=\"%s\" must be auto or an integer in 1..%d", ds, OSMP__MAX_DEPTH);
    const char *sm = osmp__knob_str(OSMP_KNOB_SINGLE_COPY_MIN);
    int sm_auto = strcmp(sm, "auto") == 0;
    long scmin = depth < 0 ? -1
                 : sm_auto ? OSMP__SINGLE_COPY_MIN_AUTO
                           : osmp__knob_long(OSMP_KNOB_SINGLE_COPY_MIN, 0, 1L << 40, err, sizeof(err));
    if (depth >= 0 && scmin < 0)
        snprintf(err, sizeof(err), "OSMP_SINGLE_COPY_MIN=\"%s\" must be auto or an integer in 0..%ld", sm, 1L << 40);
    long scmin_threads =
        scmin < 0 ? -1 : osmp__knob_long(OSMP_KNOB_SINGLE_COPY_MIN_THREADS, 0, 1L << 40, err, sizeof(err));
    const char *st = osmp__knob_str(OSMP_KNOB_STREAM_MIN);
    int st_auto = strcmp(st, "auto") == 0, st_never = strcmp(st, "never") == 0;
    long stream = scmin_threads < 0 ? -1
                  : st_auto || st_never
                      ? 0
                      : osmp__knob_long(OSMP_KNOB_STREAM_MIN, 0, 1L << 40, err, sizeof(err));
    if (scmin_threads >= 0 && stream < 0)
        snprintf(err, sizeof(err), "OSMP_STREAM_MIN=\"%s\" must be auto, never or an integer in 0..%ld", st, 1L << 40);
    long check = stream < 0 ? -1 : osmp__knob_long(OSMP_KNOB_CHECK_ARGS, 0, 1, err, sizeof(err));
    if (check < 0) {
        report_knob(err);
        return OSMP_ERR_KNOB;
    }
    b->chunk = (uint64_t)chunk & ~(uint64_t)7; /* whole elements of every datatype */
    b->depth = (uint64_t)depth;
    b->single_copy_min = (uint64_t)scmin;
    b->single_copy_min_threads = (uint64_t)scmin_threads;
    b->single_copy_auto = sm_auto;
    b->stream_min = st_auto ? -1 : st_never ? -2 : stream;
    b->check_args = (int32_t)check;
    const char *start = osmp__knob_str(OSMP_KNOB_STEP_START);
    char *end;
    errno = 0;
    b->step_start = strtoull(start, &end, 0);
    if (errno || *end || end == start || *start == '-') {
        report_knob("OSMP_STEP_START must be an unsigned 64-bit integer");
        return OSMP_ERR_KNOB;
    }
    const char *sc = osmp__knob_str(OSMP_KNOB_SINGLE_COPY);
    b->single_copy_mode = strcmp(sc, "none") == 0 ? 0 : strcmp(sc, "auto") == 0 ? 1 : strcmp(sc, "cma") == 0 ? 2 : -1;
    if (b->single_copy_mode < 0) {
        report_knob("OSMP_SINGLE_COPY must be auto, cma or none");
        return OSMP_ERR_KNOB;
    }
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        struct osmp__choice ch;
        if (osmp__alg_parse((osmp_coll_t)c, osmp__knob_str(OSMP_KNOB_ALG(c)), &ch, err, sizeof(err))) {
            char why[300]; /* one line naming the variable, then the selection table, as for every tuning knob */
            snprintf(why, sizeof(why), "%s: %s", osmp__knob_name(OSMP_KNOB_ALG(c)), err);
            osmp__knob_bad(OSMP_KNOB_ALG(c), why);
            osmp__alg_parse((osmp_coll_t)c, "auto", &ch, err, sizeof(err));
        }
        b->alg[c] = (int16_t)(ch.alg ? ch.alg - osmp__algs_of((osmp_coll_t)c) : -1);
        b->radix[c] = (int16_t)ch.radix;
    }
    const char *h = hierarchy ? hierarchy : osmp__knob_str(OSMP_KNOB_HIERARCHY);
    if (strlen(h) >= sizeof(b->hierarchy)) {
        report_knob("hierarchy spec too long");
        return OSMP_ERR_SPEC;
    }
    struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
    int nl;
    if (strcmp(h, "auto") != 0 && osmp_spec_parse(h, lv, &nl, err, sizeof(err)) != OSMP_OK) {
        report_knob(err);
        return OSMP_ERR_SPEC;
    }
    snprintf(b->hierarchy, sizeof(b->hierarchy), "%s", h);
    return osmp__trace_base(osmp__knob_str(OSMP_KNOB_TRACE), b->trace, sizeof(b->trace));
}

/* This participant's OSMP_HIERARCHY_<OP> specs into t (those set), and a hash
 * of all of them: every participant reads its own environment, and creation
 * fails unless the hashes agree (the specs would not fit the bootstrap record). */
static int read_op_specs(struct osmp__team *t, uint64_t *hash)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        const char *v = osmp__knob_str(OSMP_KNOB_HIERARCHY_OF(c));
        for (const char *x = v;; x++) {
            h = (h ^ (unsigned char)*x) * 1099511628211ULL;
            if (!*x) break;
        }
        if (!*v) continue;
        char err[200];
        struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
        int nl;
        if (strlen(v) >= 128 || (strcmp(v, "auto") != 0 && osmp_spec_parse(v, lv, &nl, err, sizeof(err)))) {
            char why[300];
            char name[32];
            snprintf(name, sizeof(name), "%s", osmp_coll_name((osmp_coll_t)c));
            for (char *x = name; *x; x++) *x = (char)toupper((unsigned char)*x);
            snprintf(why, sizeof(why), "OSMP_HIERARCHY_%s: %s", name, strlen(v) >= 128 ? "spec too long" : err);
            report_knob(why);
            return OSMP_ERR_SPEC;
        }
        if (!(t->op_hierarchy[c] = strdup(v))) return OSMP_ERR_NO_MEMORY;
    }
    *hash = h;
    return OSMP_OK;
}

/* Records of team creation are small; this bounds them. */
#define THREAD_RV_MAXLEN OSMP__RV_RECORD_MAX
_Static_assert(sizeof(struct boot1) <= OSMP__RV_RECORD_MAX && sizeof(struct boot2) <= OSMP__RV_RECORD_MAX,
               "creation records fit the rendezvous");

struct osmp__thread_rv {
    int nthreads;
    osmp_atomic32_t failed; /* a rendezvous timed out: the arrival counts no longer agree */
    int rc;     /* thread 0's exchange over the parent team */
    struct osmp__wait_policy wait;
    char *all;           /* parent size * nthreads * maxlen */
    struct osmp__rv *rv; /* nthreads records of maxlen */
};

/* ---------------------------------------------------------------- create/destroy */

static pthread_mutex_t dead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct osmp_team *dead_kept[OSMP__DEAD_KEPT]; /* a ring of the last destroyed handles */
static unsigned dead_next;

static void free_team(osmp__team_t t)
{
    if (!t) return;
    osmp__progress_team_fini(t);
    osmp__trees_free(&t->coll);
    osmp__slicings_free(&t->coll);
    osmp__trace_close(t->coll.trace);
    if (t->seg_private)
        free(t->coll.mb.seg);
    else
        osmp__seg_detach(t->coll.mb.seg, t->seg_size);
    if (t->thread_rv_lock) {
        pthread_mutex_destroy(t->thread_rv_lock);
        free(t->thread_rv_lock);
    }
    if (t->thread_rv) {
        free(t->thread_rv->all);
        free(t->thread_rv->rv);
        free(t->thread_rv);
    }
    for (int r = 0; t->watching && r < t->coll.size; r++)
        if (!t->local[r]) osmp__live_unwatch(t->pids[r]);
    osmp_plan_destroy(t->plan);
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        osmp_plan_destroy(t->op_plan[c]);
        free(t->op_hierarchy[c]);
    }
    free(t->pids);
    free(t->coll.mb.seen);
    free(t->coll.mb.mini_rec);
    free(t->peers);
    free(t->local);
    free(t->cores);
    free(t);
}

static int worst(const int32_t *status, int n, size_t stride)
{
    int w = OSMP_OK;
    for (int r = 0; r < n; r++) {
        int s = *(const int32_t *)(const void *)((const char *)status + (size_t)r * stride);
        if (s < w) w = s;
    }
    return w;
}

/* An out-of-band exchange failed: OSMP's own exchanges say why (a lost peer, a
 * timeout); anything else is a bootstrap failure. */
static int oob_status(int rc)
{
    return rc == OSMP_ERR_PEER_LOST || rc == OSMP_ERR_TIMEOUT ? rc : OSMP_ERR_BOOTSTRAP;
}

/* The receive buffers of the creation exchanges. A participant must take part
 * in both exchanges to fail together with the others, and it cannot without
 * them: if the heap refuses, an anonymous mapping (*mapped set); if that fails
 * too, abort, because the others would wait in the exchange (an MPI allgather
 * has no timeout). */
static void *exchange_buffer(size_t bytes, int *mapped)
{
    void *b = osmp__calloc(1, bytes);
    *mapped = !b;
    if (b) return b;
    b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* zeroed */
    if (b != MAP_FAILED) return b;
    fprintf(stderr, "osmp: no memory to take part in a team's creation exchange (%zu bytes): abort\n", bytes);
    abort();
}

static void exchange_free(void *b, size_t bytes, int mapped)
{
    if (mapped) munmap(b, bytes);
    else free(b);
}

/* This participant's CPU set, for the waiting policy (see oversubscribed). */
static void my_cpus(struct boot1 *b)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return; /* ncpus 0: unknown */
    b->ncpus = CPU_COUNT(&set);
    for (int c = 0; c < 64 * OSMP__CPU_WORDS && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) b->cpus[c / 64] |= UINT64_C(1) << (c % 64);
}

/* Do the participants oversubscribe the CPUs they may run on: more of them
 * than the CPUs of all their sets together, or two pinned to one CPU? Then a
 * waiter that spins only delays the peer it waits for, which may need its
 * CPU. Counted from where they may run, not from the calling process alone (a
 * process bound to one core is not oversubscribed when its peers sit on other
 * cores), and not counting other programs: yielding to foreign load only
 * delays the collective. The same answer on every participant. */
static int oversubscribed(const struct boot1 *all, int n)
{
    uint64_t any[OSMP__CPU_WORDS] = {0}, pinned[OSMP__CPU_WORDS] = {0};
    int beyond = 0; /* participants with a CPU past the mask's end: counted by their sets' sizes */
    for (int r = 0; r < n; r++) {
        if (all[r].ncpus <= 0) return n > (int)sysconf(_SC_NPROCESSORS_ONLN); /* unknown: the old rule */
        int seen = 0;
        for (int w = 0; w < OSMP__CPU_WORDS; w++) {
            any[w] |= all[r].cpus[w];
            seen += __builtin_popcountll(all[r].cpus[w]);
        }
        if (seen < all[r].ncpus) beyond = all[r].ncpus > beyond ? all[r].ncpus : beyond;
        if (all[r].ncpus == 1 && seen == 1)
            for (int w = 0; w < OSMP__CPU_WORDS; w++) {
                if (pinned[w] & all[r].cpus[w]) return 1; /* two pinned to one CPU */
                pinned[w] |= all[r].cpus[w];
            }
    }
    int total = 0;
    for (int w = 0; w < OSMP__CPU_WORDS; w++) total += __builtin_popcountll(any[w]);
    return n > (total > beyond ? total : beyond);
}

#define KNOWN_PARAMS                                                                                          \
    (OSMP_TEAM_PARAM_CORE | OSMP_TEAM_PARAM_HIERARCHY | OSMP_TEAM_PARAM_TOPO | OSMP_TEAM_PARAM_TRAFFIC |      \
     OSMP_TEAM_PARAM_TUNE)

/* The core a participant sits on: given, or where the OS runs it; planning on
 * another machine, rank % ncores (spread over that machine). */
static int32_t core_of(const struct osmp_team_params *p, osmp_topo_t topo)
{
    if (p->mask & OSMP_TEAM_PARAM_CORE) return p->core;
    if (!osmp_topo_is_this_machine(topo)) return p->rank % osmp_topo_ncores(topo);
    int c = current_core(topo);
    return c >= 0 ? c : 0;
}

/* The team's view for its algorithms, once the exchanges have agreed. */
static int init_coll(osmp__team_t t, const struct boot1 *r0, osmp_topo_t topo, const struct osmp__tune *tune)
{
    struct osmp__coll *c = &t->coll;
    c->cores = t->cores;
    c->topo = topo;
    c->hierarchy = t->hierarchy;
    c->plan = t->plan;
    for (int k = 0; k < OSMP_COLL_COUNT; k++) {
        c->op_hierarchy[k] = t->op_hierarchy[k];
        c->op_plan[k] = t->op_plan[k];
    }
    c->peers = t->peers;
    c->step = r0->step_start;
    /* Threads of one process copy with plain loads, which pay from the first
     * byte that does not ride in the mailbox line; between processes a copy is
     * a process_vm_readv that pins pages, which pays only for large blocks
     * (OSMP_SINGLE_COPY_MIN_THREADS and _MIN). */
    struct osmp__select_in in = {.stream_min = r0->stream_min,
                                 .single_copy_min = r0->single_copy_min,
                                 .single_copy_min_threads = r0->single_copy_min_threads,
                                 .single_copy_auto = r0->single_copy_auto,
                                 .tune = tune,
                                 .one_process = 1};
    for (int r = 0; r < c->size; r++)
        in.one_process &= t->local[r];
    for (int k = 0; k < OSMP_COLL_COUNT; k++) {
        in.forced[k].alg = r0->alg[k] < 0 ? NULL : &osmp__algs_of((osmp_coll_t)k)[r0->alg[k]];
        in.forced[k].radix = r0->radix[k];
    }
    return osmp__select_init(c, &in);
}

/* ---------------------------------------------------------------- agreement */

static _Thread_local char create_error[400];

const char *osmp_team_last_error(void)
{
    return create_error;
}

/* The failure of a creation exchange as one line, the same on every
 * participant: the first participant with the worst status, and where it
 * failed. */
static void say_failure(const void *all, size_t stride, int n, int rc)
{
    for (int r = 0; r < n; r++) {
        const int32_t *f = (const int32_t *)(const void *)((const char *)all + (size_t)r * stride); /* status, step */
        if (f[0] != rc) continue;
        const char *step = f[1] > STEP_NONE && f[1] < STEP_COUNT ? step_names[f[1]] : "";
        snprintf(create_error, sizeof(create_error), "team creation: rank %d: %s%s%s%s", r, osmp_status_str(rc),
                 *step ? " (" : "", step, *step ? ")" : "");
        return;
    }
}

static uint64_t plan_digest(uint64_t h, const struct osmp_plan *p)
{
    if (!p) return osmp__hash(h, UINT64_MAX);
    h = osmp__hash(osmp__hash(osmp__hash(h, (uint64_t)p->nranks), (uint64_t)p->root), (uint64_t)p->nlevels);
    for (int i = 0; i < p->nlevels; i++) {
        const struct osmp_plan_level *l = &p->levels[i];
        h = osmp__hash_str(h, l->name);
        h = osmp__hash(osmp__hash(osmp__hash(h, (uint64_t)l->kind), (uint64_t)l->split), (uint64_t)l->ngroups);
        for (int g = 0; g < l->ngroups; g++) {
            const struct osmp_plan_group *G = &l->groups[g];
            h = osmp__hash(osmp__hash(h, (uint64_t)G->leader), (uint64_t)G->nmembers);
            for (int m = 0; m < G->nmembers; m++) h = osmp__hash(h, (uint64_t)G->members[m]);
        }
    }
    return h;
}

static void agree_set(struct boot2 *b, int part, uint64_t digest)
{
    b->part[part] = digest;
    b->have |= 1u << part;
}

/* Do the participants' digests agree? Each part is compared among those that
 * computed it; the first part that differs names the mismatch, with the
 * first participant that differs from the first that has it, and the other
 * parts in which those two differ. Before any failed status: a participant
 * that sees another machine fails to plan as a consequence. On a mismatch,
 * the reason in create_error (the same line on every participant) and 1 +
 * a key of what differs between whom (not the digests: under MPI a process's
 * core, and so the digests, may change from one team to the next); else 0. */
static uint64_t disagree(const struct boot2 *all, int n)
{
    for (int p = 0; p < AGREE_PARTS; p++) {
        int ref = -1;
        for (int r = 0; r < n; r++) {
            if (!(all[r].have >> p & 1)) continue;
            if (ref < 0) {
                ref = r;
                continue;
            }
            if (all[r].part[p] == all[ref].part[p]) continue;
            char vals[64] = "", also[200] = "";
            if (p == AGREE_TUNE) /* 0: no table */
                snprintf(vals, sizeof(vals), "%s vs %s", all[r].part[p] ? "a table" : "none",
                         all[ref].part[p] ? "a table" : "none");
            size_t at = 0;
            for (int q = p + 1; q < AGREE_PARTS; q++)
                if ((all[r].have & all[ref].have) >> q & 1 && all[r].part[q] != all[ref].part[q] && at < sizeof(also))
                    at += (size_t)snprintf(also + at, sizeof(also) - at, "%s%s", at ? ", " : "; also ", agree_names[q]);
            snprintf(create_error, sizeof(create_error),
                     "team creation: rank %d's %s differs from rank %d's (%s%sdigest %016llx vs %016llx%s)", r,
                     agree_names[p], ref, vals, *vals ? ", " : "", (unsigned long long)all[r].part[p],
                     (unsigned long long)all[ref].part[p], also);
            return 1 + ((uint64_t)p << 48 | (uint64_t)r << 24 | (uint64_t)ref);
        }
    }
    return 0;
}

/* A mismatch is a setup error the user must hear of, once, from rank 0; a
 * process that creates team after team (libosmp_mpi) says each (key of
 * disagree) once. */
static void report_mismatch(int rank, uint64_t key)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t said;
    pthread_mutex_lock(&lock);
    int say = rank == 0 && key != said;
    if (say) said = key;
    pthread_mutex_unlock(&lock);
    if (say) fprintf(stderr, "osmp: %s\n", create_error);
}

/* OSMP_PUBLISH_FENCE: whether this process's publications fence (shm/wait.c). */
static void fence_setup(void)
{
    const char *v = osmp__knob_str(OSMP_KNOB_PUBLISH_FENCE);
    int always = strcmp(v, "always") == 0;
    if (!always && strcmp(v, "auto") != 0) {
        char why[160];
        snprintf(why, sizeof(why), "OSMP_PUBLISH_FENCE=\"%.100s\" must be auto or always", v);
        osmp__knob_bad(OSMP_KNOB_PUBLISH_FENCE, why);
    }
    osmp__wait_setup(always);
}

int osmp_team_create(const struct osmp_team_params *p, osmp_team_t *out)
{
    create_error[0] = '\0';
    if (!p || !out || p->size < 1 || p->rank < 0 || p->rank >= p->size || (p->size > 1 && !p->oob_allgather) ||
        (p->mask & ~(uint64_t)KNOWN_PARAMS) || ((p->mask & OSMP_TEAM_PARAM_TOPO) && !p->topo) ||
        ((p->mask & OSMP_TEAM_PARAM_TRAFFIC) && !p->traffic) || ((p->mask & OSMP_TEAM_PARAM_TUNE) && !p->tune))
        return OSMP_ERR_INVALID_ARG;
    osmp__check_cache_line();
    fence_setup();
    osmp_topo_t topo = p->topo;
    /* A topology this process cannot load still takes part: the others would wait. */
    int topo_rc = p->mask & OSMP_TEAM_PARAM_TOPO ? OSMP_OK : get_topo(&topo);
    int rc = OSMP_OK;
    struct osmp__team *t = osmp__calloc(1, sizeof(*t));
    struct osmp_team *h = osmp__calloc(1, sizeof(*h));
    int mapped1, mapped2;
    struct boot1 *all1 = exchange_buffer((size_t)p->size * sizeof(*all1), &mapped1);
    struct boot2 *all2 = exchange_buffer((size_t)p->size * sizeof(*all2), &mapped2);
    if (t) {
        t->pids = osmp__calloc((size_t)p->size, sizeof(*t->pids));
        t->coll.mb.seen = osmp__calloc(2 * (size_t)p->size, sizeof(uint64_t));
        t->coll.mb.mini_rec = osmp__calloc(2, sizeof(*t->coll.mb.mini_rec));
        t->local = osmp__calloc((size_t)p->size, 1);
        t->cores = osmp__calloc((size_t)p->size, sizeof(*t->cores));
        t->peers = osmp__calloc((size_t)p->size, sizeof(*t->peers));
        t->thread_rv_lock = osmp__calloc(1, sizeof(pthread_mutex_t)); /* destroyable even if never initialized */
    }
    if (!t || !h || !t->pids || !t->coll.mb.seen || !t->coll.mb.mini_rec || !t->local || !t->cores ||
        !t->peers || !t->thread_rv_lock) {
        /* still take part in the exchange so the others fail instead of waiting */
        rc = OSMP_ERR_NO_MEMORY;
    } else {
        pthread_mutex_init(t->thread_rv_lock, NULL);
    }
    struct boot1 mine = {0};
    mine.status = rc;
    mine.step = rc ? STEP_MEMORY : STEP_NONE;
    if (!mine.status && topo_rc) {
        mine.status = topo_rc;
        mine.step = STEP_TOPOLOGY;
    }
    mine.pid = (int32_t)getpid();
    mine.probe_addr = (uint64_t)(uintptr_t)&probe_word;
    mine.core = mine.status ? 0 : core_of(p, topo);
    my_cpus(&mine);
    /* A core beyond this participant's topology is left to the agreement:
     * another participant's topology may have it (the digests differ), or none
     * has (the plans fail alike). */
    if (mine.core < 0 && !mine.status) {
        mine.status = OSMP_ERR_RANGE;
        mine.step = STEP_CORE;
    }
    struct boot2 mine2 = {OSMP_OK, STEP_NONE, 1, 0, {0}};
    uint64_t specs = 0;
    if (!mine.status && (mine.status = read_op_specs(t, &specs))) mine.step = STEP_SPECS;
    if (!mine.status) agree_set(&mine2, AGREE_SPECS, specs);
    /* The tune table: every participant reads its own, and they must agree (AGREE_TUNE). */
    struct osmp__tune *tune_owned = NULL;
    const struct osmp__tune *tune =
        mine.status ? NULL : osmp__tune_for(topo, p->mask & OSMP_TEAM_PARAM_TUNE ? p->tune : NULL, &tune_owned, p->rank == 0);
    agree_set(&mine2, AGREE_TUNE, tune ? tune->hash : 0);
    void *seg = NULL;
    size_t seg_size = 0;
    if (p->rank == 0 && !mine.status) { /* 1 */
        mine.status =
            read_shared_knobs(&mine, p->mask & OSMP_TEAM_PARAM_HIERARCHY ? p->hierarchy : NULL, p->size, tune);
        mine.step = mine.status ? STEP_KNOBS : STEP_NONE;
        if (!mine.status) {
            seg_size = osmp__mb_region_bytes(mine.chunk, (int)mine.depth) * (size_t)p->size;
            if (p->size == 1) {
                seg = aligned_alloc(osmp__page_size(), seg_size);
                mine.status = seg ? OSMP_OK : OSMP_ERR_NO_MEMORY;
            } else {
                mine.status = osmp__seg_create(seg_size, mine.seg_name, &seg);
            }
            mine.step = mine.status ? STEP_SEGMENT : STEP_NONE;
        }
    }
    int orc = 0;
    if (p->size == 1)
        *all1 = mine;
    else
        orc = p->oob_allgather(p->oob_ctx, &mine, all1, sizeof(mine)); /* 2 */
    rc = orc ? oob_status(orc) : worst(&all1[0].status, p->size, sizeof(*all1));
    if (rc) {
        if (orc) snprintf(create_error, sizeof(create_error), "team creation: the out-of-band exchange failed");
        else say_failure(all1, sizeof(*all1), p->size, rc);
        if (seg && p->size > 1) {
            osmp__seg_unlink(mine.seg_name);
            osmp__seg_detach(seg, seg_size);
        } else {
            free(seg);
        }
        /* Rank 0 may be the one that failed, killed after it created the
         * name: whoever knows the name removes it; whoever does not (the
         * exchange itself failed) removes the names of dead creators. */
        if (p->size > 1 && p->rank != 0) {
            if (!orc && all1[0].seg_name[0]) osmp__seg_unlink(all1[0].seg_name);
            else if (orc) osmp__seg_reap();
        }
        goto fail;
    }

    const struct boot1 *r0 = &all1[0];
    struct osmp__mbox *mb = &t->coll.mb;
    t->coll.rank = mb->rank = p->rank;
    t->coll.size = mb->size = p->size;
    mb->chunk = r0->chunk;
    mb->ring_depth = (int)r0->depth;
    mb->short_depth = mb->ring_depth < OSMP__SHORT_RING_SLOTS ? mb->ring_depth : OSMP__SHORT_RING_SLOTS;
    osmp__mb_set_depth(mb, mb->ring_depth);
    mb->region_size = osmp__mb_region_bytes(mb->chunk, mb->ring_depth);
    mb->pids = t->pids;
    mb->local = t->local;
    t->check_args = r0->check_args;
    snprintf(t->hierarchy, sizeof(t->hierarchy), "%s", r0->hierarchy);
    t->seg_size = mb->region_size * (size_t)p->size;
    for (int r = 0, k = 0; r < p->size; r++)
        if (r != p->rank) t->peers[k++] = r;
    for (int r = 0; r < p->size; r++) {
        t->pids[r] = all1[r].pid;
        t->local[r] = all1[r].pid == mine.pid;
        t->cores[r] = all1[r].core;
    }
    agree_set(&mine2, AGREE_LIBRARY,
              osmp__hash(osmp__hash(osmp__hash(osmp__hash(OSMP__HASH_INIT, OSMP_VERSION), OSMP_CACHE_LINE),
                                    osmp__page_size()),
                         mb->region_size));
    agree_set(&mine2, AGREE_TOPOLOGY,
              osmp__topo_cores_digest(topo, t->cores, p->size, p->size <= OSMP__GRAPH_RANKS_MAX));
    mb->wait.spin = osmp__knob_long_or_default(OSMP_KNOB_SPIN, 0, 1L << 30);
    mb->wait.yields = osmp__knob_long_or_default(OSMP_KNOB_YIELDS, 0, 1L << 30);
    /* Oversubscribed, a waiter yields at once: the peer it waits for may be
     * waiting for its core, and every poll delays it. */
    t->coll.oversubscribed = oversubscribed(all1, p->size);
    osmp__progress_team_init(t);
    if (t->coll.oversubscribed && mb->wait.spin > 0) mb->wait.spin = 0;
    /* Not oversubscribed, a waiter that has spun its budget sleeps at once: a
     * yield only hands the core to other programs (a CPU hog, a build) for a
     * time slice, milliseconds, where the futex wake-up gets it back as soon
     * as the peer publishes. */
    if (!t->coll.oversubscribed) mb->wait.yields = 0;

    if (p->rank == 0) {
        mb->seg = seg;
        t->seg_private = p->size == 1;
    } else if ((mine2.status = osmp__seg_attach(r0->seg_name, t->seg_size, &mb->seg))) { /* 3 */
        mine2.step = STEP_ATTACH;
    }
    if (!mine2.status) osmp__mb_init_mine(mb, r0->step_start);
    if (!mine2.status) mine2.status = osmp__trace_open(&t->coll.trace, r0->trace, p->rank, p->size, mine.core);
    if (!mine2.status && (p->mask & OSMP_TEAM_PARAM_TRAFFIC))
        mine2.status = osmp__trace_sink(&t->coll.trace, p->traffic, p->rank, p->size);
    if (mine2.status && !mine2.step) mine2.step = STEP_TRACE;
    /* The plans and the selection here, before the last exchange: a
     * participant that fails on its own after it would leave the others with a
     * team it is not in, and the others compare what it decided. */
    if (!mine2.status) mine2.status = osmp_plan_create(topo, t->cores, p->size, t->hierarchy, 0, &t->plan);
    for (int c = 0; c < OSMP_COLL_COUNT && !mine2.status; c++)
        if (t->op_hierarchy[c])
            mine2.status = osmp_plan_create(topo, t->cores, p->size, t->op_hierarchy[c], 0, &t->op_plan[c]);
    if (mine2.status && !mine2.step) mine2.step = STEP_PLANS;
    if (!mine2.status) {
        uint64_t d = plan_digest(OSMP__HASH_INIT, t->plan);
        for (int c = 0; c < OSMP_COLL_COUNT; c++) d = plan_digest(d, t->op_plan[c]);
        agree_set(&mine2, AGREE_PLANS, d);
    }
    /* Selection as if every participant can read the next one's memory;
     * corrected below where one cannot (the outcomes say). */
    t->coll.single_copy = r0->single_copy_mode != 0;
    if (!mine2.status && (mine2.status = init_coll(t, r0, topo, tune))) mine2.step = STEP_SELECTION;
    if (!mine2.status) {
        uint64_t chains, limits;
        osmp__select_digest(&t->coll, &chains, &limits);
        agree_set(&mine2, AGREE_CHAINS, chains);
        agree_set(&mine2, AGREE_LIMITS, limits);
    }
    free(tune_owned);
    tune_owned = NULL;
    /* Watch the peers from now on: a participant that dies from here is noticed by the others' waits. */
    for (int r = 0; r < p->size; r++)
        if (!t->local[r]) osmp__live_watch(t->pids[r]);
    t->watching = 1;
    int next = (p->rank + 1) % p->size;
    if (!t->local[next]) {
        uint64_t v = 0;
        mine2.can_read_next = osmp__copy_probe(t->pids[next], 0, &v, (const void *)(uintptr_t)all1[next].probe_addr,
                                              sizeof(v)) == OSMP_OK &&
                              v == probe_word;
    }
    orc = 0;
    uint64_t key;
    if (p->size > 1)
        orc = p->oob_allgather(p->oob_ctx, &mine2, all2, sizeof(mine2)); /* 4 */
    else
        *all2 = mine2;
    /* Everyone has mapped the segment (or failed to): its name goes. Each
     * participant unlinks it, so that it goes with the first one past the
     * exchange even if rank 0 is killed right after. */
    if (p->size > 1) osmp__seg_unlink(r0->seg_name);
    if (orc) {
        rc = oob_status(orc);
        snprintf(create_error, sizeof(create_error), "team creation: the out-of-band exchange failed");
    } else if ((key = disagree(all2, p->size))) {
        rc = OSMP_ERR_MISMATCH;
        report_mismatch(p->rank, key);
    } else if ((rc = worst(&all2[0].status, p->size, sizeof(*all2)))) {
        say_failure(all2, sizeof(*all2), p->size, rc);
    }
    int readable = 1, unreadable = -1;
    for (int r = 0; r < p->size; r++) {
        readable &= all2[r].can_read_next;
        if (!all2[r].can_read_next && unreadable < 0) unreadable = r;
    }
    if (t->coll.single_copy && !readable) osmp__select_single_copy_off(&t->coll);
    if (!rc && r0->single_copy_mode == 2 && !readable) {
        rc = OSMP_ERR_UNSUPPORTED;
        snprintf(create_error, sizeof(create_error),
                 "team creation: OSMP_SINGLE_COPY=cma, but rank %d cannot read rank %d's memory", unreadable,
                 (unreadable + 1) % p->size);
    }
    if (rc) goto fail;
    exchange_free(all1, (size_t)p->size * sizeof(*all1), mapped1);
    exchange_free(all2, (size_t)p->size * sizeof(*all2), mapped2);
    h->magic = OSMP__TEAM_LIVE;
    h->impl = t;
    h->pid = osmp__self_pid;
    *out = h;
    return OSMP_OK;

fail:
    free(tune_owned);
    free_team(t);
    free(h);
    exchange_free(all1, (size_t)p->size * sizeof(*all1), mapped1);
    exchange_free(all2, (size_t)p->size * sizeof(*all2), mapped2);
    return rc;
}

int osmp_team_destroy(osmp_team_t h)
{
    osmp__team_t t;
    int rc = osmp__team_of_handle(h, &t);
    if (rc) return rc;
    /* Nobody may still read my region when it goes away; a failed team cannot
     * agree on that any more, and nobody will read it again either. */
    struct osmp__args none = {.esize = 1};
    osmp__team_lock(t);
    if (t->head) osmp__requests_drain(t); /* outstanding requests end first (a failed team ends them failed) */
    osmp__team_unlock(t);
    rc = t->coll.mb.failed ? t->coll.mb.failed : osmp__run(&t->coll, OSMP_COLL_BARRIER, &none);
    free_team(t);
    pthread_mutex_lock(&dead_lock);
    h->magic = OSMP__TEAM_DEAD;
    h->impl = NULL;
    struct osmp_team *oldest = dead_kept[dead_next % OSMP__DEAD_KEPT];
    dead_kept[dead_next++ % OSMP__DEAD_KEPT] = h;
    pthread_mutex_unlock(&dead_lock);
    free(oldest);
    return rc;
}

int osmp_team_rank(osmp_team_t h)
{
    osmp__team_t t;
    int rc = osmp__team_of_handle(h, &t);
    return rc ? rc : t->coll.rank;
}

int osmp_team_size(osmp_team_t h)
{
    osmp__team_t t;
    int rc = osmp__team_of_handle(h, &t);
    return rc ? rc : t->coll.size;
}

int osmp_team_failure(osmp_team_t h, int *rank, int *reason)
{
    osmp__team_t t;
    int rc = osmp__team_of_handle(h, &t);
    if (rc) return rc;
    if (!rank || !reason) return OSMP_ERR_INVALID_ARG;
    *reason = osmp__mb_failure(&t->coll.mb, rank);
    return OSMP_OK;
}

const struct osmp_plan *osmp_team_plan(osmp_team_t h)
{
    osmp__team_t t;
    return osmp__team_of_handle(h, &t) ? NULL : t->plan;
}

int osmp_team_choice(osmp_team_t h, osmp_coll_t coll, size_t bytes, struct osmp_choice *choice)
{
    osmp__team_t t;
    int rc = osmp__team_of_handle(h, &t);
    if (rc) return rc;
    if (!choice || (unsigned)coll >= OSMP_COLL_COUNT) return OSMP_ERR_INVALID_ARG;
    return osmp__choice_of(&t->coll, coll, bytes, choice);
}

/* ---------------------------------------------------------------- threads */

struct thread_oob {
    osmp_team_t parent;
    struct osmp__thread_rv *trv;
    int index;
    int64_t deadline;
};

static int64_t join_deadline(void)
{
    long s = osmp__knob_long_or_default(OSMP_KNOB_JOIN_TIMEOUT, 0, 1L << 30);
    return s ? osmp__now_ns() + (int64_t)s * 1000000000 : 0;
}

/* Allgather for threads of several processes: the threads of a process meet in
 * memory, thread 0 exchanges the process's records over the parent team. */
static int thread_oob_allgather(void *ctx, const void *send, void *recv, size_t len)
{
    struct thread_oob *o = ctx;
    struct osmp__thread_rv *trv = o->trv;
    struct osmp__rv *rv = trv->rv;
    int T = trv->nthreads, P = o->parent->impl->coll.size, rc;
    if (len > THREAD_RV_MAXLEN) return -1;
    memcpy(rv->data + (size_t)o->index * len, send, len); /* packed: T records of len */
    if ((rc = osmp__rv_barrier(rv, &trv->wait, o->deadline))) goto out;
    if (o->index == 0) trv->rc = osmp_allgather(o->parent, rv->data, trv->all, (size_t)T * len, OSMP_UINT8);
    if ((rc = osmp__rv_barrier(rv, &trv->wait, o->deadline))) goto out;
    memcpy(recv, trv->all, (size_t)P * (size_t)T * len);
    rc = trv->rc;
    int rc2 = osmp__rv_barrier(rv, &trv->wait, o->deadline);
    if (!rc) rc = rc2;
out:
    if (rc == OSMP_ERR_TIMEOUT) osmp__cas32(&trv->failed, 0, 1);
    return rc;
}

int osmp_team_create_threads(osmp_team_t parent_h, int nthreads, int index, osmp_team_t *team)
{
    osmp__team_t parent;
    int rc = osmp__team_of(parent_h, &parent);
    if (rc) return rc;
    if (!team || nthreads < 1 || index < 0 || index >= nthreads) return OSMP_ERR_INVALID_ARG;
    pthread_mutex_lock(parent->thread_rv_lock);
    if (!parent->thread_rv) {
        struct osmp__thread_rv *trv = osmp__calloc(1, sizeof(*trv));
        if (trv) {
            trv->nthreads = nthreads;
            trv->wait = parent->coll.mb.wait;
            if (parent->coll.size * nthreads > (int)sysconf(_SC_NPROCESSORS_ONLN)) trv->wait.spin = 50;
            trv->all = osmp__malloc((size_t)parent->coll.size * (size_t)nthreads * THREAD_RV_MAXLEN);
            trv->rv = osmp__malloc(osmp__rv_bytes(nthreads, THREAD_RV_MAXLEN));
            if (!trv->all || !trv->rv) {
                free(trv->all);
                free(trv->rv);
                free(trv);
                trv = NULL;
            } else {
                osmp__rv_init(trv->rv, nthreads, THREAD_RV_MAXLEN);
            }
        }
        parent->thread_rv = trv;
    }
    struct osmp__thread_rv *trv = parent->thread_rv;
    pthread_mutex_unlock(parent->thread_rv_lock);
    if (!trv) return OSMP_ERR_NO_MEMORY;
    if (trv->nthreads != nthreads) return OSMP_ERR_INVALID_ARG;
    if (osmp__load32(&trv->failed)) return OSMP_ERR_TIMEOUT;
    struct thread_oob oob = {parent_h, trv, index, join_deadline()};
    /* The parent's machine and hierarchy; on another machine the threads share
     * their process's planning core. */
    osmp_topo_t topo = parent->coll.topo;
    struct osmp_team_params p = {
        .mask = OSMP_TEAM_PARAM_TOPO | OSMP_TEAM_PARAM_HIERARCHY |
                (osmp_topo_is_this_machine(topo) ? 0 : OSMP_TEAM_PARAM_CORE),
        .rank = parent->coll.rank * nthreads + index,
        .size = parent->coll.size * nthreads,
        .core = parent->cores[parent->coll.rank],
        .hierarchy = parent->hierarchy,
        .topo = topo,
        .oob_allgather = thread_oob_allgather,
        .oob_ctx = &oob,
    };
    rc = osmp_team_create(&p, team);
    if (!rc) {
        (*team)->thread = 1;
        (*team)->owner = pthread_self();
    }
    return rc;
}

/* ---------------------------------------------------------------- init */

/* osmp_init's team and osmp-run's rendezvous, under init_lock: init and
 * finalize may be called from any thread. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static osmp_team_t world;
static struct osmp__rv *run_rv;
static size_t run_rv_bytes;
static int run_rank;
static int64_t run_deadline;
static struct osmp__wait_policy run_wait = {50, 2000, 1};

static int run_allgather(void *ctx, const void *send, void *recv, size_t len)
{
    (void)ctx;
    return osmp__rv_allgather(run_rv, run_rank, send, recv, len, &run_wait, run_deadline);
}

static int env_int(const char *name, int *v)
{
    const char *s = getenv(name);
    char *end;
    if (!s) return -1;
    long x = strtol(s, &end, 10);
    if (*s == '\0' || *end || x < 0 || x > (1 << 24)) return -1;
    *v = (int)x;
    return 0;
}

static int init_locked(osmp_team_t *out)
{
    if (world) {
        *out = world;
        return OSMP_OK;
    }
    struct osmp_team_params p = {.rank = 0, .size = 1};
    int fd;
    if (getenv("OSMP_RUN_FD")) { /* started by osmp-run */
        struct stat st;
        if (env_int("OSMP_RUN_FD", &fd) || env_int("OSMP_RUN_RANK", &p.rank) || env_int("OSMP_RUN_SIZE", &p.size) ||
            fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(struct osmp__rv))
            return OSMP_ERR_BOOTSTRAP;
        if (!env_int("OSMP_RUN_CORE", &p.core)) p.mask |= OSMP_TEAM_PARAM_CORE;
        run_rv_bytes = (size_t)st.st_size;
        run_rv = mmap(NULL, run_rv_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (run_rv == MAP_FAILED) {
            run_rv = NULL;
            return OSMP_ERR_BOOTSTRAP;
        }
        if (run_rv->size != (uint32_t)p.size || osmp__rv_bytes(p.size, run_rv->maxlen) > run_rv_bytes) {
            munmap(run_rv, run_rv_bytes);
            run_rv = NULL;
            return OSMP_ERR_BOOTSTRAP;
        }
        run_rank = p.rank;
        run_deadline = join_deadline();
        p.oob_allgather = run_allgather;
    }
    int rc = osmp_team_create(&p, &world);
    if (rc) return rc;
    *out = world;
    return OSMP_OK;
}

int osmp_init(osmp_team_t *out)
{
    if (!out) return OSMP_ERR_INVALID_ARG;
    pthread_mutex_lock(&init_lock);
    int rc = init_locked(out);
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int osmp_finalize(void)
{
    int rc = OSMP_OK;
    pthread_mutex_lock(&init_lock);
    if (world) rc = osmp_team_destroy(world);
    world = NULL;
    if (run_rv) munmap(run_rv, run_rv_bytes);
    run_rv = NULL;
    pthread_mutex_unlock(&init_lock);
    return rc;
}
