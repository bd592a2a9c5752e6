/*
 * OSMP - topology-aware collective communication inside a many-core node.
 *
 * This is the one public header. It is organized in groups:
 *   1. Error contract and status codes
 *   2. Topology: the node as a tree of locality domains, distance between cores
 *   3. Plan: the communication tree of one team (groups and leaders per level),
 *      distance-aware trees and rings, their metrics
 *   4. Teams and collectives: participants (processes or threads) join a team and
 *      run collectives over shared memory along the team's plan
 *   5. Knobs
 *
 * Error contract (read this first): every function that can fail returns an int,
 * OSMP_OK (0) on success and a negative OSMP_ERR_* status on failure; it never
 * aborts the process and never writes its output argument on failure.
 * osmp_status_str() turns a status into one line of text. Functions returning a
 * pointer or a count document their failure value beside them.
 *
 * Ownership: the caller owns what it passes in; objects handed out by a
 * *_create / *_load function are freed by the matching *_destroy.
 *
 * Threads: every function may be called from any thread. Topology and plan
 * objects are immutable once made: any number of threads may read them at once;
 * destroying one while another thread uses it is undefined. osmp_init and
 * osmp_finalize are serialized internally (any thread, any number of times). A
 * team handle is used by one thread at a time (section 4).
 *
 * Compatibility: OSMP_VERSION_* give the version of this header, osmp_version()
 * that of the library loaded. Within one major version, structs passed in grow
 * only at their end and say which optional fields they set (a mask), so a
 * program built against an older header keeps working with a newer library.
 */
#ifndef OSMP_H
#define OSMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(OSMP_STATIC_DEFINE)
#define OSMP_EXPORT
#elif defined(__GNUC__)
#define OSMP_EXPORT __attribute__((visibility("default")))
#else
#define OSMP_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define OSMP_VERSION_MAJOR 0
#define OSMP_VERSION_MINOR 2
#define OSMP_VERSION_PATCH 0
/* One number for compile-time comparisons: OSMP_VERSION >= OSMP_VERSION_OF(0, 2, 0). */
#define OSMP_VERSION_OF(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define OSMP_VERSION OSMP_VERSION_OF(OSMP_VERSION_MAJOR, OSMP_VERSION_MINOR, OSMP_VERSION_PATCH)

/* The version of the library loaded (OSMP_VERSION_OF of it); major, minor and
 * patch may each be NULL. */
OSMP_EXPORT int osmp_version(int *major, int *minor, int *patch);

/* ====================================================================== */
/* 1. Status codes                                                         */
/* ====================================================================== */

/* X(name, value, text): the single list every status comes from. */
#define OSMP_STATUS_MAP(X)                                                                                   \
    X(OK, 0, "success")                                                                                      \
    X(ERR_INVALID_ARG, -1, "invalid argument")                                                              \
    X(ERR_NO_MEMORY, -2, "out of memory")                                                                   \
    X(ERR_TOPO_LOAD, -3, "cannot load the topology")                                                        \
    X(ERR_TOPO_INVALID, -4, "topology violates an invariant")                                               \
    X(ERR_SPEC, -5, "malformed hierarchy spec")                                                             \
    X(ERR_RANGE, -6, "index out of range")                                                                  \
    X(ERR_PLAN_INVALID, -7, "plan violates an invariant")                                                   \
    X(ERR_UNSUPPORTED, -8, "not supported")                                                                  \
    X(ERR_TYPE, -9, "operation not defined on this datatype (bitwise and logical operations need integers)") \
    X(ERR_SHM, -10, "shared memory segment could not be created or mapped")                                 \
    X(ERR_BOOTSTRAP, -11, "team bootstrap failed (out-of-band exchange or a peer's setup)")                  \
    X(ERR_KNOB, -12, "an OSMP_* environment variable has a bad value")                                      \
    X(ERR_PEER_LOST, -13, "a participant of the team died or gave up; the team is unusable, destroy it")    \
    X(ERR_TIMEOUT, -14, "a participant did not join in time (OSMP_JOIN_TIMEOUT)")                            \
    X(ERR_MISMATCH, -15, "participants called a collective with different arguments (OSMP_CHECK_ARGS), "    \
                         "or decided a team's creation differently (osmp_team_last_error says what differs)")  \
    X(ERR_BAD_TEAM, -16, "not a live team handle (destroyed, or never created)")                             \
    X(ERR_NOT_MEMBER, -17, "the caller is not the participant this team handle belongs to")                 \
    X(ERR_COPY, -18, "a single copy from another process's memory failed (process_vm_readv)")

typedef enum {
#define OSMP__STATUS_ENUM(name, value, text) OSMP_##name = value,
    OSMP_STATUS_MAP(OSMP__STATUS_ENUM)
#undef OSMP__STATUS_ENUM
} osmp_status_t;

/* One line describing a status; "unknown status" for values not in the list. */
OSMP_EXPORT const char *osmp_status_str(int status);
/* The symbolic name, e.g. "OSMP_ERR_SPEC". */
OSMP_EXPORT const char *osmp_status_name(int status);

/* ====================================================================== */
/* 2. Topology                                                             */
/* ====================================================================== */

/*
 * The node is a tree of locality domains. Kinds are listed from the top down in
 * the order they usually nest, but real machines differ: a NUMA node may hold
 * several packages (IBM x3950) or a package several NUMA nodes (sub-NUMA
 * clustering, Opteron), groups sit above packages (boards) or inside them
 * (dies, clusters), and any level may be missing. The tree keeps the nesting the
 * hardware reports; it never invents a domain.
 */
typedef enum {
    OSMP_DOMAIN_MACHINE = 0,
    OSMP_DOMAIN_GROUP,   /* hwloc Group or Die: board above packages, or die/cluster inside one */
    OSMP_DOMAIN_PACKAGE,
    OSMP_DOMAIN_NUMA,    /* all NUMA nodes attached at one place (DDR + HBM) form one domain */
    OSMP_DOMAIN_L3,
    OSMP_DOMAIN_L2,
    OSMP_DOMAIN_CORE,
    OSMP_DOMAIN_PU,
    OSMP_DOMAIN_KIND_COUNT
} osmp_domain_kind_t;

/*
 * One domain. Read-only for users.
 * Invariants (checked by osmp_topo_check):
 *  - the root is the only MACHINE, depth 0, no parent; child->depth == depth + 1;
 *  - cores under a domain are the contiguous logical range [first_core, first_core + ncores),
 *    children's ranges are disjoint, ascending, and cover the parent's range;
 *  - a CORE has only PU children (at least one); a PU has no children and lies under a CORE;
 *  - logical_index numbers the domains of one kind 0..n-1 in depth-first order;
 *  - no NUMA domain lies inside another NUMA domain;
 *  - cpuset of every child is inside its parent's, and the children's cpusets cover it.
 */
struct osmp_domain {
    osmp_domain_kind_t kind;
    int logical_index;  /* among domains of this kind, depth-first order (hwloc's L#) */
    int os_index;       /* hwloc's P#, -1 where the hardware gives none (caches, groups) */
    int depth;          /* 0 = machine */
    int first_core;     /* logical index of the first core under this domain */
    int ncores;         /* number of cores under this domain (PU: 1, its core) */
    char *cpuset;       /* OS indices of the PUs, list syntax "0-3,8" */
    uint64_t cache_bytes; /* L2, L3: the cache's size as hwloc reports it (0: unknown); other kinds 0 */
    struct osmp_domain *parent;
    int nchildren;
    struct osmp_domain **children;
};

typedef struct osmp_topo *osmp_topo_t;

/* Where the node comes from. */
typedef enum {
    OSMP_TOPO_THIS_MACHINE = 0, /* hwloc discovery of the machine we run on */
    OSMP_TOPO_XML,              /* an hwloc XML file (lstopo foo.xml) of any machine */
    OSMP_TOPO_SYNTHETIC         /* an hwloc synthetic string, e.g. "pack:2 l3:4 core:8 pu:1" */
} osmp_topo_source_t;

/* Flags for osmp_topo_load. */
enum {
    /* Keep cores the process (or the XML's capturing process) is not allowed to
     * use. Default: only allowed cores, as a process on that machine sees it. */
    OSMP_TOPO_WHOLE_SYSTEM = 1u << 0
};

/* Load a topology. `what` is the file path (XML) or the description (synthetic),
 * ignored for THIS_MACHINE. Fails with OSMP_ERR_TOPO_LOAD (message in
 * osmp_topo_last_error) for a missing or malformed input, and with
 * OSMP_ERR_TOPO_INVALID if the result breaks an invariant of osmp_topo_check (no
 * core, a core without PUs, ...); osmp_topo_last_error() says which. */
OSMP_EXPORT int osmp_topo_load(osmp_topo_source_t source, const char *what, unsigned flags, osmp_topo_t *topo);
OSMP_EXPORT void osmp_topo_destroy(osmp_topo_t topo);
/* Details of the last load failure in this thread (empty string if none). */
OSMP_EXPORT const char *osmp_topo_last_error(void);

/* 1 if the topology was discovered on the machine the caller runs on (its PUs
 * are this machine's CPUs; also an XML that osmp-probe wrote on this host), 0
 * for another machine's (XML, synthetic). */
OSMP_EXPORT int osmp_topo_is_this_machine(osmp_topo_t topo);
OSMP_EXPORT const struct osmp_domain *osmp_topo_root(osmp_topo_t topo);
OSMP_EXPORT int osmp_topo_ncores(osmp_topo_t topo);
/* Number of domains of a kind (0 if the machine has none). */
OSMP_EXPORT int osmp_topo_count(osmp_topo_t topo, osmp_domain_kind_t kind);
/* Domain `index` of a kind, NULL if out of range. */
OSMP_EXPORT const struct osmp_domain *osmp_topo_domain(osmp_topo_t topo, osmp_domain_kind_t kind, int index);
/* Lower-case name used in specs and output: "machine", "group", "package",
 * "numa", "l3", "l2", "core", "pu"; NULL for an invalid kind. */
OSMP_EXPORT const char *osmp_domain_kind_name(osmp_domain_kind_t kind);
/* Parse a kind name (case-insensitive); -1 if unknown. */
OSMP_EXPORT int osmp_domain_kind_parse(const char *name, size_t len);

/*
 * The domain of kind `kind` that holds `core`, for grouping and cross-edge
 * counts. If the core has an ancestor of that kind, it is the nearest one.
 * Otherwise it is the largest ancestor of the core that contains no domain of
 * that kind: the domain that stands in the missing one's place (a package
 * outside every board is its own board; on a machine without NUMA information
 * the whole machine is one NUMA domain). NULL if core is out of range.
 */
OSMP_EXPORT const struct osmp_domain *osmp_topo_domain_of(osmp_topo_t topo, int core, osmp_domain_kind_t kind);

/*
 * Distance ladder between two cores, from their lowest common domain (LCD):
 *
 *   rung  name                     LCD                                   Ma et al. (2011)
 *   0     OSMP_DIST_CORE           the same core (SMT siblings)          0 (same core)
 *   1     OSMP_DIST_L2             an L2 (or L1) cache                   1 (shared cache)
 *   2     OSMP_DIST_L3             an L3, or a cluster group inside it   1 (shared cache)
 *   3     OSMP_DIST_NUMA           a NUMA node, or a die inside it       2 (same socket/memory)
 *   4     OSMP_DIST_PACKAGE        a package (different NUMA nodes)      3 (same socket, other NUMA)
 *   5     OSMP_DIST_GROUP          a group/board above packages          4-5 (same board, other socket)
 *   6     OSMP_DIST_MACHINE        nothing below the machine             6 (other board)
 *
 * The rung is ordinal: it orders pairs, it does not measure time. Where the
 * hardware reports a NUMA distance matrix (hwloc "NUMALatency"), or the
 * topology is osmp-probe's measurement of the machine (core-to-core latency),
 * pairs on one rung are further ordered by it; see osmp_topo_distance_key.
 */
typedef enum {
    OSMP_DIST_CORE = 0,
    OSMP_DIST_L2,
    OSMP_DIST_L3,
    OSMP_DIST_NUMA,
    OSMP_DIST_PACKAGE,
    OSMP_DIST_GROUP,
    OSMP_DIST_MACHINE,
    OSMP_DIST_RUNGS
} osmp_dist_rung_t;

/* Rung of the pair of cores (logical indices); negative status if out of range. */
OSMP_EXPORT int osmp_topo_distance(osmp_topo_t topo, int core_a, int core_b);
/* A total order refining the rung: rung first, then the measured latency of the
 * pair in ns where the topology has osmp-probe's matrix (hwloc distances
 * "OSMPLatency"), else the NUMA matrix entry (0 without a matrix or inside one
 * NUMA node; an asymmetric matrix counts the mean of the two directions), then a deeper LCD first.
 * Comparable only within one topology. 0 for the same core. UINT32_MAX on bad input. */
OSMP_EXPORT uint32_t osmp_topo_distance_key(osmp_topo_t topo, int core_a, int core_b);
/* Short rung name: "core", "l2", "l3", "numa", "package", "group", "machine". */
OSMP_EXPORT const char *osmp_dist_rung_name(int rung);

/*
 * Placement: which core each of n participants (ranks) sits on, as logical core
 * indices of the loaded topology.
 *
 * osmp_topo_place policies ("linear" when NULL):
 *   linear        rank r on core r
 *   scatter       round-robin over the tree: consecutive ranks as far apart as
 *                 the tree allows (different packages, then L3s, ...)
 *   numa          round-robin over NUMA domains, filling each from its first core
 *   random:SEED   a pseudo-random permutation of the cores, reproducible from SEED
 * With more ranks than cores, the placement wraps around (cores repeat).
 * OSMP_ERR_INVALID_ARG with a one-line reason in err for an unknown policy.
 */
OSMP_EXPORT int osmp_topo_place(osmp_topo_t topo, const char *policy, int n, int *cores, char *err, size_t err_len);

/* Parse a core list "0-5,12,18-20" (ranks in order; a core may repeat) into
 * cores[0..*n). Cores must be below ncores. At most cap entries. On error returns
 * OSMP_ERR_INVALID_ARG (malformed) or OSMP_ERR_RANGE (index >= ncores, or more
 * than cap entries) with a one-line reason in err. */
OSMP_EXPORT int osmp_core_list_parse(const char *list, int ncores, int *cores, int cap, int *n, char *err,
                                     size_t err_len);

/* Assert the invariants listed above struct osmp_domain. Returns OSMP_OK or
 * OSMP_ERR_TOPO_INVALID and writes the first violation into why (if non-NULL). */
OSMP_EXPORT int osmp_topo_check(osmp_topo_t topo, char *why, size_t why_len);

/* ====================================================================== */
/* 3. Plan                                                                 */
/* ====================================================================== */

/*
 * Hierarchy spec: comma-separated levels from the leaf up, each a kind name,
 * optionally with a virtual split ":k" (1 <= k <= 4096) that cuts each domain of
 * that kind into k parts of consecutive cores (for shallow machines:
 * "l2,package:4,package"). The machine level is always the implicit top.
 * NULL or "auto" chooses the default for the machine (osmp_plan_default_spec).
 * "" or "flat" means the machine level only (the default spec says "flat").
 *
 * Levels are used from small to large domains (mean cores per group over the
 * machine, ties in spec order), so "numa,package" means packages inside NUMA
 * nodes on a machine whose NUMA nodes hold several packages.
 *
 * Grouping: at level i a participant's key is its domain (or virtual part) at
 * level i together with its domains at every level above, so groups always nest
 * whatever the spec's order. A level where no group has two members is dropped;
 * this also drops a level that repeats the one below it (l3 = package on most
 * Intel parts) and levels the machine lacks.
 *
 * Leaders: the root leads every group on its path (so a broadcast or reduce never
 * takes an extra hop); elsewhere a group's leader is its lowest rank.
 */
#define OSMP_SPEC_MAX_LEVELS 16

struct osmp_spec_level {
    osmp_domain_kind_t kind;
    int split; /* 1 = the domain itself, k > 1 = k consecutive parts of it */
};

/* Parse a spec. On error returns OSMP_ERR_SPEC and, if err is non-NULL, a one-line
 * reason naming the offending level. */
OSMP_EXPORT int osmp_spec_parse(const char *spec, struct osmp_spec_level *levels, int *nlevels, char *err,
                                size_t err_len);
/* Format a parsed spec back ("l3,package:4"); returns the length written. */
OSMP_EXPORT int osmp_spec_format(const struct osmp_spec_level *levels, int nlevels, char *buf, size_t len);

/* The default spec for a machine: every kind whose domains split the machine,
 * ordered from small to large domains, and where a domain would give its leader
 * more than OSMP_PLAN_MAX_FANOUT children, a virtual split of it first, into the
 * number of parts d that minimizes (d - 1) + (ceil(units / d) - 1), the most
 * parts among equals (28 cores: 7 parts of 4). */
#define OSMP_PLAN_MAX_FANOUT 8
OSMP_EXPORT int osmp_plan_default_spec(osmp_topo_t topo, char *buf, size_t len);

/*
 * A plan. Invariants (checked by osmp_plan_check):
 *  - level 0 holds every rank exactly once; level i+1 holds exactly the leaders
 *    of level i's groups, each once;
 *  - every group has at least one member, members ascending, its leader among them;
 *  - every level has a group with at least two members;
 *  - the last level has exactly one group and the root leads it (no levels at all
 *    when nranks == 1); the root leads every group it belongs to.
 */
struct osmp_plan_group {
    int leader;
    int nmembers;
    int *members; /* ranks, ascending */
};

struct osmp_plan_level {
    char name[24]; /* spec level it came from, e.g. "l3", "package:4", "machine" */
    osmp_domain_kind_t kind;
    int split;
    int ngroups;
    struct osmp_plan_group *groups; /* in hardware order of their domains */
};

struct osmp_plan {
    int nranks;
    int root;
    int nlevels;
    struct osmp_plan_level *levels; /* leaf first */
};

/* Build the plan of nranks participants; cores[r] is the logical core of rank r
 * (a core may repeat). spec as above. OSMP_ERR_RANGE for a core or root out of
 * range, OSMP_ERR_SPEC for a bad spec. */
OSMP_EXPORT int osmp_plan_create(osmp_topo_t topo, const int *cores, int nranks, const char *spec, int root,
                                 struct osmp_plan **plan);
OSMP_EXPORT void osmp_plan_destroy(struct osmp_plan *plan);
OSMP_EXPORT int osmp_plan_check(const struct osmp_plan *plan, char *why, size_t why_len);

/*
 * Trees and rings over the participants, as directed edges [from, to] in ranks.
 * A tree lists nranks-1 edges parent -> child; a ring lists nranks edges
 * r -> next(r) including the closing one (none for a single rank).
 */
typedef enum {
    OSMP_GRAPH_PLAN = 0,  /* the plan's tree: each group leader -> every other member */
    OSMP_GRAPH_MST,       /* distance-aware broadcast tree (Ma et al.) */
    OSMP_GRAPH_RING,      /* distance-aware allgather ring (Ma et al.) */
    OSMP_GRAPH_BINOMIAL,  /* rank-order binomial tree, as MPI libraries build it */
    OSMP_GRAPH_RANKRING   /* rank-order ring r -> r+1 */
} osmp_graph_kind_t;

struct osmp_graph {
    osmp_graph_kind_t kind;
    int nranks;
    int root;
    int nedges;
    int (*edges)[2];
    /* metrics, filled by osmp_graph_create */
    int depth;   /* tree: longest root-to-leaf path in edges; ring: nranks-1 */
    int fanout;  /* tree: most children of one vertex; ring: 1 */
    /* Edges whose ends lie in different domains of each kind (osmp_topo_domain_of);
     * -1 for kinds the machine lacks, the machine and PUs. For MST and RING the
     * counts depend only on the participants' cores, not on rank order. For PLAN
     * they do for the kinds the spec names; for finer kinds they depend on which
     * rank leads (the lowest), e.g. L2 crossings inside an L3 group. */
    int cross[OSMP_DOMAIN_KIND_COUNT];
};

/* MST: Kruskal over all pairs, edges sorted by distance key, then edges touching
 * the root first, then by (smaller rank, larger rank); oriented away from the
 * root. Among minimum-weight trees this keeps the root's edges, hence a small
 * depth. RING: same edge order without the root rule, an edge is taken when both
 * ends have degree < 2 and it closes no cycle; the final path is closed. The ring
 * is listed starting at the root towards its lower-ranked neighbour.
 * Both sort all n(n-1)/2 pairs: OSMP_ERR_RANGE above OSMP_GRAPH_MAX_RANKS.
 * PLAN needs the plan (else NULL allowed). */
#define OSMP_GRAPH_MAX_RANKS 4096
OSMP_EXPORT int osmp_graph_create(osmp_topo_t topo, const int *cores, int nranks, int root, osmp_graph_kind_t kind,
                                  const struct osmp_plan *plan, struct osmp_graph **graph);
OSMP_EXPORT void osmp_graph_destroy(struct osmp_graph *graph);
OSMP_EXPORT const char *osmp_graph_kind_name(osmp_graph_kind_t kind);

/* ====================================================================== */
/* 4. Teams and collectives                                                */
/* ====================================================================== */

/*
 * A team is a set of participants, each a process or a thread with its own
 * handle. Every participant calls the same collectives in the same order with
 * matching arguments (as in MPI); different teams are independent, so threads
 * may drive different teams concurrently. A handle is used by one thread at a
 * time. Collectives return OSMP_OK or a negative status and leave the
 * caller's buffers untouched when they reject their arguments.
 *
 * Failures (SECURITY.md has the whole model): a participant that dies makes the
 * others' calls return OSMP_ERR_PEER_LOST within milliseconds, after which the
 * team only answers OSMP_ERR_PEER_LOST and should be destroyed; a handle used
 * after destroy gives OSMP_ERR_BAD_TEAM, one used by a process (or, for thread
 * teams, a thread) that is not its participant OSMP_ERR_NOT_MEMBER. Arguments
 * that differ across participants are undefined, as in MPI, unless
 * OSMP_CHECK_ARGS=1 (OSMP_ERR_MISMATCH on every participant).
 */
typedef struct osmp_team *osmp_team_t;

typedef enum {
    OSMP_INT8 = 0,
    OSMP_INT16,
    OSMP_INT32,
    OSMP_INT64,
    OSMP_UINT8,
    OSMP_UINT16,
    OSMP_UINT32,
    OSMP_UINT64,
    OSMP_FLOAT,
    OSMP_DOUBLE,
    OSMP_FLOAT16,  /* IEEE 754 binary16 (half), 2 bytes */
    OSMP_BFLOAT16, /* bfloat16: binary32's upper 16 bits, 2 bytes */
    OSMP_DTYPE_COUNT
} osmp_dtype_t;

/* Integer sums and products wrap around; LAND/LOR/LXOR give 0 or 1 (except where
 * a scan passes one contribution on as it is, as MPI does: osmp_scan at rank 0,
 * osmp_exscan at rank 1); bitwise and logical operations on floating point
 * types fail with OSMP_ERR_TYPE.
 *
 * FLOAT16 and BFLOAT16: every combine of two elements converts both to binary32,
 * operates there, and rounds the result to the 16-bit type, to nearest even
 * (MIN and MAX choose an operand; a NaN that SUM or PROD makes is the positive
 * quiet NaN; a signalling NaN comes out quiet). Partial results travel between
 * participants as 16-bit values, so a reduction over n participants rounds at
 * each of its n - 1 combines, not once at the end: the partials take half the
 * bytes binary32 ones would on every hop, and the error of sums stays within 2
 * units in the last place of the sum of the inputs' magnitudes at 8 to 256
 * participants (docs/measurements.md section 16 has both choices measured).
 * The order of combination follows the team's plan and the algorithm the
 * selection runs for that size, so the same inputs on the same placement give
 * the same bits every run; the vector paths (F16C, AVX-512) and the scalar one
 * give the same bits. */
typedef enum {
    OSMP_SUM = 0,
    OSMP_PROD,
    OSMP_MIN,
    OSMP_MAX,
    OSMP_LAND,
    OSMP_LOR,
    OSMP_LXOR,
    OSMP_BAND,
    OSMP_BOR,
    OSMP_BXOR,
    OSMP_OP_COUNT
} osmp_op_t;

/* Bytes of one element; 0 for an invalid datatype. */
OSMP_EXPORT size_t osmp_dtype_size(osmp_dtype_t dtype);

/* Pass as the send buffer (receive buffer of scatter at the root) where MPI allows MPI_IN_PLACE. */
OSMP_EXPORT extern const char osmp_in_place_marker;
#define OSMP_IN_PLACE ((void *)&osmp_in_place_marker)

/* Out-of-band allgather supplied by the runtime that starts the participants:
 * every participant passes `len` bytes and receives size * len bytes in rank
 * order. Returns 0 on success. Called a few times during team creation only. */
typedef int (*osmp_oob_allgather_fn)(void *ctx, const void *send, void *recv, size_t len);

/* Optional fields of struct osmp_team_params, set in its mask. */
enum {
    OSMP_TEAM_PARAM_CORE = 1u << 0,      /* core: else the OS says where the caller runs */
    OSMP_TEAM_PARAM_HIERARCHY = 1u << 1, /* hierarchy: else OSMP_HIERARCHY (default auto) */
    OSMP_TEAM_PARAM_TOPO = 1u << 2,      /* topo: else the process's (this machine, or OSMP_TOPOLOGY) */
    OSMP_TEAM_PARAM_TRAFFIC = 1u << 3,   /* traffic: count the payload bytes this participant copies */
    OSMP_TEAM_PARAM_TUNE = 1u << 4       /* tune: else the process's tune table (OSMP_TUNE_FILE) */
};

/* Zero-initialize, then set the required fields and, for each optional field
 * set, its bit in mask. Fields are only ever added at the end. */
struct osmp_team_params {
    uint64_t mask; /* OSMP_TEAM_PARAM_* of the optional fields set */
    int rank;      /* 0 .. size-1, distinct */
    int size;
    osmp_oob_allgather_fn oob_allgather; /* required when size > 1 */
    void *oob_ctx;
    int core;              /* logical core of `topo` (osmp-topo numbering) the participant runs on */
    const char *hierarchy; /* hierarchy spec of the team's plan */
    /* The machine the team is planned on (every participant passes an
     * equivalent one; it must outlive the team). Without `core`, a participant
     * sits on the core whose PU the OS runs it on, if the topology has it, else
     * on core rank % ncores. */
    osmp_topo_t topo;
    /* 2 * size * size counters of the caller's, zeroed by it, that must
     * outlive the team: at the end of every collective, this participant adds
     * the payload bytes of each copy it made (what OSMP_TRACE writes as "copy"
     * lines: from memory owned by team rank s into memory owned by team rank
     * d) to traffic[s * size + d], and 1 to traffic[size * size + s * size + d]
     * for each call that moved bytes from s to d. The sum over all
     * participants' counters is what the collectives moved between each pair
     * (s == d: copies within one participant's memory). Read it between calls
     * or after osmp_team_destroy. */
    uint64_t *traffic;
    /* A tune table's text (docs/tuning.md; "" for none) for this team instead
     * of the process's: the same on every participant, read during creation
     * only. A damaged one, or one made on another topology, is said on stderr
     * and the defaults are used. */
    const char *tune;
};

/* Collective over the participants of the new team. If any participant fails
 * to set up, all of them return the same error (failures travel in the
 * out-of-band exchange) and no segment is left behind. OSMP_ERR_INVALID_ARG
 * for unknown mask bits.
 * Every participant makes the team's decisions itself, from what it sees: its
 * topology (OSMP_TOPOLOGY, or hwloc restricted to its cpuset), the plans, the
 * algorithms and thresholds chosen from them, its OSMP_HIERARCHY_<OP> and its
 * tune table (the knobs rank 0 reads need not agree: rank 0's apply).
 * Creation compares a digest of each; where they differ, every participant
 * returns OSMP_ERR_MISMATCH (and rank 0 prints the reason on stderr, once per
 * process and reason). A decision that a participant cannot make (no memory
 * for it) fails creation too, never a guess of its own. */
OSMP_EXPORT int osmp_team_create(const struct osmp_team_params *params, osmp_team_t *team);
/* Why the calling thread's last osmp_team_create, osmp_team_create_threads or
 * osmp_init failed, in one line that is the same on every participant: the
 * participant and the step that failed ("team creation: rank 2: out of memory
 * (choosing the algorithms and thresholds)"), or for OSMP_ERR_MISMATCH what
 * differs and between whom ("team creation: rank 3's topology of the team's
 * cores differs from rank 0's (...)"). "" after a success, and after a failure
 * found before the exchange (invalid arguments). Valid until the thread's next
 * creation. */
OSMP_EXPORT const char *osmp_team_last_error(void);

/* Threads of one or several processes as one team: each process of `parent`
 * starts nthreads threads (the same number everywhere), and each thread calls
 * this with its index 0..nthreads-1 and gets its own handle. Rank =
 * parent_rank * nthreads + thread_index. With a team of one as parent (osmp_init
 * outside osmp-run), these are the threads of one process. The first call on a
 * parent fixes nthreads for all later thread teams of that parent
 * (OSMP_ERR_INVALID_ARG otherwise). A thread team's handle may only be used by
 * the thread that created it (OSMP_ERR_NOT_MEMBER otherwise). */
OSMP_EXPORT int osmp_team_create_threads(osmp_team_t parent, int nthreads, int thread_index, osmp_team_t *team);

/* Collective: every participant calls it; frees the team. A later call through
 * the handle returns OSMP_ERR_BAD_TEAM. On a team that lost a participant it
 * frees without waiting and returns OSMP_ERR_PEER_LOST. */
OSMP_EXPORT int osmp_team_destroy(osmp_team_t team);

/* Remove the shared memory segments (/dev/shm/osmp-*) of this user whose
 * creating process is dead; *removed (may be NULL) gets their number. A segment
 * has a name only while its team is being created; a process's first team
 * creation and osmp-run call this, so a name left by participants all killed at
 * that moment does not outlive the next run. Only names made in the caller's
 * pid namespace are judged (the name says which): /dev/shm may be shared with
 * other pid namespaces, where the creator's pid means another process. */
OSMP_EXPORT int osmp_shm_cleanup(int *removed);

/* Under osmp-run: the team of every launched process. Otherwise a team of one.
 * Later calls return the same team until osmp_finalize. */
OSMP_EXPORT int osmp_init(osmp_team_t *world);
OSMP_EXPORT int osmp_finalize(void);

OSMP_EXPORT int osmp_team_rank(osmp_team_t team);
OSMP_EXPORT int osmp_team_size(osmp_team_t team);
/* Why a team failed: *rank gets the participant whose failure came first (-1:
 * none yet, or a rank beyond 2^24 - 2) and *reason what happened to it:
 * OSMP_ERR_PEER_LOST if its process died, else the status of its own failure
 * inside a collective (OSMP_ERR_NO_MEMORY, OSMP_ERR_COPY for a refused single
 * copy, ...), which it returned itself while the others got
 * OSMP_ERR_PEER_LOST. OSMP_OK in *reason: the team has not failed. */
OSMP_EXPORT int osmp_team_failure(osmp_team_t team, int *rank, int *reason);
/* The plan the team runs on (owned by the team; the plan of root 0). */
OSMP_EXPORT const struct osmp_plan *osmp_team_plan(osmp_team_t team);

/* Every collective, in the one list that the library, libosmp_mpi, osmp-bench
 * and the tests read: X(NAME, name, flags). */
#define OSMP_COLL_ROOTED 1u  /* takes a root */
#define OSMP_COLL_REDUCES 2u /* takes an operation */
#define OSMP_COLL_BLOCKS 4u  /* count is one participant's block; size blocks make the vector */
#define OSMP_COLL_VECTOR 8u  /* blocks of different counts, at displacements (the "v" variants) */
#define OSMP_COLL_MAP(X)                                                                                     \
    X(BARRIER, barrier, 0)                                                                                   \
    X(BCAST, bcast, OSMP_COLL_ROOTED)                                                                        \
    X(REDUCE, reduce, OSMP_COLL_ROOTED | OSMP_COLL_REDUCES)                                                  \
    X(ALLREDUCE, allreduce, OSMP_COLL_REDUCES)                                                               \
    X(GATHER, gather, OSMP_COLL_ROOTED | OSMP_COLL_BLOCKS)                                                   \
    X(ALLGATHER, allgather, OSMP_COLL_BLOCKS)                                                                \
    X(SCATTER, scatter, OSMP_COLL_ROOTED | OSMP_COLL_BLOCKS)                                                 \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, OSMP_COLL_REDUCES | OSMP_COLL_BLOCKS)                      \
    X(ALLTOALL, alltoall, OSMP_COLL_BLOCKS)                                                                  \
    X(GATHERV, gatherv, OSMP_COLL_ROOTED | OSMP_COLL_BLOCKS | OSMP_COLL_VECTOR)                               \
    X(SCATTERV, scatterv, OSMP_COLL_ROOTED | OSMP_COLL_BLOCKS | OSMP_COLL_VECTOR)                             \
    X(ALLGATHERV, allgatherv, OSMP_COLL_BLOCKS | OSMP_COLL_VECTOR)                                            \
    X(ALLTOALLV, alltoallv, OSMP_COLL_BLOCKS | OSMP_COLL_VECTOR)                                              \
    X(REDUCE_SCATTER, reduce_scatter, OSMP_COLL_REDUCES | OSMP_COLL_BLOCKS | OSMP_COLL_VECTOR)                \
    X(SCAN, scan, OSMP_COLL_REDUCES)                                                                         \
    X(EXSCAN, exscan, OSMP_COLL_REDUCES)

typedef enum {
#define OSMP__COLL_ENUM(NAME, name, flags) OSMP_COLL_##NAME,
    OSMP_COLL_MAP(OSMP__COLL_ENUM)
#undef OSMP__COLL_ENUM
        OSMP_COLL_COUNT
} osmp_coll_t;

/* "barrier", "bcast", ...: the function's name without osmp_; NULL if out of range. */
OSMP_EXPORT const char *osmp_coll_name(osmp_coll_t coll);
/* OSMP_COLL_ROOTED | ... of a collective; 0 if out of range. */
OSMP_EXPORT unsigned osmp_coll_flags(osmp_coll_t coll);

/* What the team runs for collective `coll` with blocks of `bytes` (count x
 * element size; a rank's block for gather, scatter, allgather, alltoall):
 * the algorithm's name (kary:K with its radix), or "mpi" where the tune table
 * gives those calls to the MPI library (libosmp_mpi passes them on); where
 * the choice came from: "table" (the built-in selection table), "knob"
 * (OSMP_<OP>_ALG) or "tune:LINE" (the tune table); and the band of sizes
 * around `bytes`, lo .. hi, inclusive, that get the same answer. */
struct osmp_choice {
    char name[32];
    char from[32];
    size_t lo, hi;
};
OSMP_EXPORT int osmp_team_choice(osmp_team_t team, osmp_coll_t coll, size_t bytes, struct osmp_choice *choice);

OSMP_EXPORT int osmp_barrier(osmp_team_t team);
OSMP_EXPORT int osmp_bcast(osmp_team_t team, void *buf, size_t count, osmp_dtype_t dtype, int root);
OSMP_EXPORT int osmp_reduce(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                            osmp_op_t op, int root);
OSMP_EXPORT int osmp_allreduce(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                               osmp_op_t op);
/* recvbuf (root only) holds size * count elements in rank order. */
OSMP_EXPORT int osmp_gather(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                            int root);
OSMP_EXPORT int osmp_allgather(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                               osmp_dtype_t dtype);
/* sendbuf (root only) holds size * count elements; each rank receives its count. */
OSMP_EXPORT int osmp_scatter(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                             int root);
/* sendbuf holds size * count elements; rank r receives block r of the reduction. */
OSMP_EXPORT int osmp_reduce_scatter_block(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                          osmp_dtype_t dtype, osmp_op_t op);
/* Block j of rank i's sendbuf lands in block i of rank j's recvbuf (count elements each). */
OSMP_EXPORT int osmp_alltoall(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype);

/*
 * Vector variants, as in MPI: counts and displacements in elements, one per
 * rank; the arrays are read only where MPI reads them (the root's of gatherv
 * and scatterv), bytes outside the blocks are left alone, and a participant
 * needs to know only its own counts (nothing else agrees on the rest).
 * OSMP_IN_PLACE as MPI allows it: gatherv's sendbuf at the root (its block is
 * already at displs[root]), scatterv's recvbuf at the root, allgatherv's
 * sendbuf (my block at displs[rank]), alltoallv's sendbuf (recvbuf holds the
 * blocks to send, described by recvcounts and rdispls), reduce_scatter's
 * sendbuf (recvbuf holds the whole input; the result goes to its start).
 */
OSMP_EXPORT int osmp_gatherv(osmp_team_t team, const void *sendbuf, size_t sendcount, void *recvbuf,
                             const size_t *recvcounts, const size_t *displs, osmp_dtype_t dtype, int root);
OSMP_EXPORT int osmp_scatterv(osmp_team_t team, const void *sendbuf, const size_t *sendcounts, const size_t *displs,
                              void *recvbuf, size_t recvcount, osmp_dtype_t dtype, int root);
OSMP_EXPORT int osmp_allgatherv(osmp_team_t team, const void *sendbuf, size_t sendcount, void *recvbuf,
                                const size_t *recvcounts, const size_t *displs, osmp_dtype_t dtype);
OSMP_EXPORT int osmp_alltoallv(osmp_team_t team, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                               void *recvbuf, const size_t *recvcounts, const size_t *rdispls, osmp_dtype_t dtype);
/* sendbuf holds sum(recvcounts) elements; rank r receives the reduction of its
 * recvcounts[r] elements (those after the blocks of ranks below it). */
OSMP_EXPORT int osmp_reduce_scatter(osmp_team_t team, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                                    osmp_dtype_t dtype, osmp_op_t op);
/* Rank r receives the reduction of ranks 0 .. r (scan) or 0 .. r-1 (exscan:
 * rank 0's recvbuf is left alone), combined in rank order. */
OSMP_EXPORT int osmp_scan(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                          osmp_op_t op);
OSMP_EXPORT int osmp_exscan(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                            osmp_op_t op);

/*
 * Nonblocking and persistent collectives, as MPI's (MPI_Iallreduce,
 * MPI_Allreduce_init). osmp_i<op> takes the blocking call's arguments and
 * returns at once with a request; osmp_<op>_init makes a persistent request
 * that osmp_start runs any number of times, each run followed by completion.
 * The rules are MPI's:
 *   - every participant posts the team's collectives (blocking calls,
 *     nonblocking calls, starts) in the same order; a blocking call never
 *     matches a nonblocking one;
 *   - the buffers (and the count and displacement arrays) belong to the
 *     library from the post until completion: do not read the output or write
 *     the input meanwhile;
 *   - any number may be outstanding on a team. They advance in posting order,
 *     one at a time per participant (docs/design.md section 11): completing a
 *     later one completes the earlier ones first, and a blocking call first
 *     completes every outstanding one;
 *   - progress: every test, wait, and OSMP call on the team moves its
 *     outstanding collectives forward, and a participant blocked in a wait
 *     also moves those it posted on its other teams. A test never waits for
 *     another participant: it takes the steps that can be taken now and
 *     returns, whatever algorithm the call runs. Between OSMP calls (the
 *     participant computes, or blocks in another library) see "Progress" below.
 * Errors in the arguments are returned by the post (no request is made, *req
 * is OSMP_REQUEST_NULL); failures while it runs (a lost peer) by its
 * completion, as the blocking call returns them. OSMP_CHECK_ARGS checks a
 * nonblocking call's arguments when it runs.
 */
typedef struct osmp_request *osmp_request_t;
#define OSMP_REQUEST_NULL ((osmp_request_t)0)

OSMP_EXPORT int osmp_ibarrier(osmp_team_t team, osmp_request_t *req);
OSMP_EXPORT int osmp_ibcast(osmp_team_t team, void *buf, size_t count, osmp_dtype_t dtype, int root,
                            osmp_request_t *req);
OSMP_EXPORT int osmp_ireduce(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                             osmp_op_t op, int root, osmp_request_t *req);
OSMP_EXPORT int osmp_iallreduce(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_igather(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                             int root, osmp_request_t *req);
OSMP_EXPORT int osmp_iallgather(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                osmp_dtype_t dtype, osmp_request_t *req);
OSMP_EXPORT int osmp_iscatter(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                              int root, osmp_request_t *req);
OSMP_EXPORT int osmp_ireduce_scatter_block(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                           osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_ialltoall(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                               osmp_dtype_t dtype, osmp_request_t *req);
OSMP_EXPORT int osmp_igatherv(osmp_team_t team, const void *sendbuf, size_t sendcount, void *recvbuf,
                              const size_t *recvcounts, const size_t *displs, osmp_dtype_t dtype, int root,
                              osmp_request_t *req);
OSMP_EXPORT int osmp_iscatterv(osmp_team_t team, const void *sendbuf, const size_t *sendcounts,
                               const size_t *displs, void *recvbuf, size_t recvcount, osmp_dtype_t dtype, int root,
                               osmp_request_t *req);
OSMP_EXPORT int osmp_iallgatherv(osmp_team_t team, const void *sendbuf, size_t sendcount, void *recvbuf,
                                 const size_t *recvcounts, const size_t *displs, osmp_dtype_t dtype,
                                 osmp_request_t *req);
OSMP_EXPORT int osmp_ialltoallv(osmp_team_t team, const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, osmp_dtype_t dtype, osmp_request_t *req);
OSMP_EXPORT int osmp_ireduce_scatter(osmp_team_t team, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                                     osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_iscan(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                           osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_iexscan(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count, osmp_dtype_t dtype,
                             osmp_op_t op, osmp_request_t *req);

/* Persistent requests: the same arguments, checked once here; each
 * osmp_start posts the collective with them (an in-place input is read at
 * each run). Collective in the MPI sense: every participant makes them in
 * the same order, and starts them in the same order. */
OSMP_EXPORT int osmp_barrier_init(osmp_team_t team, osmp_request_t *req);
OSMP_EXPORT int osmp_bcast_init(osmp_team_t team, void *buf, size_t count, osmp_dtype_t dtype, int root,
                                osmp_request_t *req);
OSMP_EXPORT int osmp_reduce_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                 osmp_dtype_t dtype, osmp_op_t op, int root, osmp_request_t *req);
OSMP_EXPORT int osmp_allreduce_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                    osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_gather_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                 osmp_dtype_t dtype, int root, osmp_request_t *req);
OSMP_EXPORT int osmp_allgather_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                    osmp_dtype_t dtype, osmp_request_t *req);
OSMP_EXPORT int osmp_scatter_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                  osmp_dtype_t dtype, int root, osmp_request_t *req);
OSMP_EXPORT int osmp_reduce_scatter_block_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                               osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_alltoall_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                   osmp_dtype_t dtype, osmp_request_t *req);
OSMP_EXPORT int osmp_gatherv_init(osmp_team_t team, const void *sendbuf, size_t sendcount, void *recvbuf,
                                  const size_t *recvcounts, const size_t *displs, osmp_dtype_t dtype, int root,
                                  osmp_request_t *req);
OSMP_EXPORT int osmp_scatterv_init(osmp_team_t team, const void *sendbuf, const size_t *sendcounts,
                                   const size_t *displs, void *recvbuf, size_t recvcount, osmp_dtype_t dtype,
                                   int root, osmp_request_t *req);
OSMP_EXPORT int osmp_allgatherv_init(osmp_team_t team, const void *sendbuf, size_t sendcount, void *recvbuf,
                                     const size_t *recvcounts, const size_t *displs, osmp_dtype_t dtype,
                                     osmp_request_t *req);
OSMP_EXPORT int osmp_alltoallv_init(osmp_team_t team, const void *sendbuf, const size_t *sendcounts,
                                    const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                    const size_t *rdispls, osmp_dtype_t dtype, osmp_request_t *req);
OSMP_EXPORT int osmp_reduce_scatter_init(osmp_team_t team, const void *sendbuf, void *recvbuf,
                                         const size_t *recvcounts, osmp_dtype_t dtype, osmp_op_t op,
                                         osmp_request_t *req);
OSMP_EXPORT int osmp_scan_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                               osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);
OSMP_EXPORT int osmp_exscan_init(osmp_team_t team, const void *sendbuf, void *recvbuf, size_t count,
                                 osmp_dtype_t dtype, osmp_op_t op, osmp_request_t *req);

/* Post an inactive persistent request (OSMP_ERR_INVALID_ARG for one that is
 * active or not persistent). */
OSMP_EXPORT int osmp_start(osmp_request_t *req);
OSMP_EXPORT int osmp_startall(int n, osmp_request_t *reqs);

/*
 * Completion, as MPI's: a completed nonblocking request is freed and *req set
 * to OSMP_REQUEST_NULL; a persistent one becomes inactive and stays. A
 * OSMP_REQUEST_NULL or inactive request is complete at once (OSMP_OK).
 * Each returns the collective's status (the first failure among several).
 */
/* *done = 1 once complete (then as osmp_wait); 0: not yet, the request stays. */
OSMP_EXPORT int osmp_test(osmp_request_t *req, int *done);
OSMP_EXPORT int osmp_wait(osmp_request_t *req);
OSMP_EXPORT int osmp_waitall(int n, osmp_request_t *reqs);
/* *done = 1 and every request completed when all are; else none is completed. */
OSMP_EXPORT int osmp_testall(int n, osmp_request_t *reqs, int *done);
/* Completes one request, *index its position; -1 when none is active. */
OSMP_EXPORT int osmp_waitany(int n, osmp_request_t *reqs, int *index);
/* Frees a request and sets *req to OSMP_REQUEST_NULL. An active one still
 * runs to its end (the team's later calls complete it); the caller only
 * loses the means to wait for it. */
OSMP_EXPORT int osmp_request_free(osmp_request_t *req);

/*
 * Progress, in both directions of MPI's progress rule (docs/design.md section 11).
 *
 * What the C API guarantees: a posted request completes without any further
 * OSMP call of its participants (they may compute, or block in another
 * library, even waiting for one another there) under OSMP_PROGRESS=auto (the
 * default) or thread: a thread of OSMP's, started by the first post, moves
 * the outstanding requests of this process's teams. It never spins (it
 * sleeps on the counter a request waits for, or naps 1 to 8 ms while the
 * participants move their requests themselves), calls nothing outside OSMP,
 * and exits with the process. It takes resumable steps only, and every
 * algorithm has a resumable form, so it moves every request.
 * Under auto, a runtime that advances the requests itself whenever the thread
 * that posted them blocks in it (libosmp_mpi under Open MPI, and MPICH 4.3
 * and later) declares it with osmp_set_progress_driver(1), and teams created
 * after that run no thread. OSMP_PROGRESS=none: requests move only inside
 * OSMP calls (posts, tests, waits, any call on their team).
 *
 * The other direction: while a thread waits inside OSMP (a blocking
 * collective, osmp_wait, team creation), a runtime under which OSMP runs may
 * need that thread to progress it (an MPI library: a peer blocked in a send to
 * this process, or in an RMA epoch on its memory). osmp_set_wait_poll(fn, arg)
 * makes such a waiter call fn(arg) once its spin (OSMP_SPIN) is over, then
 * again 50 us later, the interval doubling up to 1 ms (back to 50 us after a
 * call that returned nonzero: it did work), and it sleeps no longer than until
 * its next call. (In a team with more participants than CPUs, where a waiter
 * yields instead of spinning, the first call comes 50 us into the wait and a
 * sleep is cut short only after a call that did work.) fn is called only by threads that wait inside an OSMP call,
 * never by OSMP's progress thread, never inside fn (a wait that fn itself
 * makes does not call it again); it may return 0 at once (its thread may not
 * call the runtime now). NULL (the default): none. Set it before the first
 * team, or while no thread waits inside OSMP.
 */
typedef int (*osmp_poll_fn)(void *arg);
OSMP_EXPORT int osmp_set_wait_poll(osmp_poll_fn fn, void *arg);
/* 1: the caller's runtime advances this process's requests (see above); 0 (the default): it does not.
 * Teams created after the call follow it. OSMP_OK. */
OSMP_EXPORT int osmp_set_progress_driver(int external);

/*
 * Memory that other processes' participants read in place. Where a collective
 * copies a block once (OSMP_SINGLE_COPY; between processes from
 * OSMP_SINGLE_COPY_MIN bytes), a block in memory from osmp_alloc is read
 * through a mapping of it (plain loads, no system call once mapped) instead of
 * with Linux CMA (process_vm_readv, which pins and walks the pages on every
 * call). Other memory is read with CMA. libosmp_mpi's MPI_Alloc_mem returns it.
 * A reader keeps up to 16 of its peers' regions mapped, so a freed region's
 * memory may stay in use until one of its readers maps 16 others or exits.
 */
/* *ptr gets bytes (0: still a valid, distinct pointer) of page-aligned memory.
 * OSMP_ERR_NO_MEMORY, OSMP_ERR_INVALID_ARG for a NULL ptr. */
OSMP_EXPORT int osmp_alloc(size_t bytes, void **ptr);
/* Frees what osmp_alloc returned; NULL does nothing. OSMP_ERR_INVALID_ARG for
 * any other pointer (nothing is freed). */
OSMP_EXPORT int osmp_free(void *ptr);
/* Single copies from other processes this process made in collectives since
 * it started: through a mapping of osmp_alloc memory, and with CMA. */
struct osmp_copy_stats {
    uint64_t mapped, mapped_bytes;
    uint64_t cma, cma_bytes;
};
OSMP_EXPORT void osmp_copy_stats(struct osmp_copy_stats *stats);

/* ====================================================================== */
/* 5. Knobs                                                                */
/* ====================================================================== */

/* Every OSMP_* environment variable with its default and meaning. */
OSMP_EXPORT void osmp_knobs_print(FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* OSMP_H */
