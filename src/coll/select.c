/*
 * Algorithm selection: the one table that says which algorithm runs for each
 * collective, size class and team shape, and the machinery that resolves it
 * (with OSMP_<OP>_ALG) once per team, so a call costs one table lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/coll.h"

/* Team shapes. A hierarchical team is HIER_MST when the distance-aware MST
 * moves fewer bytes across the costliest boundaries than the plan's tree does
 * (mst_cheaper), else HIER_PLAN. */
enum { ONE = 1, FLAT_SMALL = 2, FLAT_LARGE = 4, HIER_PLAN = 8, HIER_MST = 16 };
enum { HIER = HIER_PLAN | HIER_MST, ANY_SHAPE = 31 };
/* Added to any shape of a team with more participants than CPUs (team.c). A
 * row for OVERSUB alone matches only such teams. */
enum { OVERSUB = 32 };
#define NSHAPE_BITS 6
/* Flat teams up to this size use the all-read algorithms for small messages:
 * every rank polls every other rank's line, n^2 line transfers per call. */
#define FLAT_SMALL_MAX 16
/* Size classes, as bits: OSMP__SIZE_INLINE (fits the mailbox line),
 * OSMP__SIZE_MEDIUM (up to OSMP__MEDIUM_MAX), OSMP__SIZE_LARGE. */
#define INLINE (1u << OSMP__SIZE_INLINE)
#define MEDIUM (1u << OSMP__SIZE_MEDIUM)
#define LARGE (1u << OSMP__SIZE_LARGE)
#define ANY_SIZE (INLINE | MEDIUM | LARGE)

/*
 * The selection table: for each collective, the first row whose size class and
 * team shape match (and whose algorithm can run: some need single copy) wins.
 * Large reductions are sliced so that every member shares the reduction work
 * and the bandwidth (at every level of a hierarchical team, so that no leader
 * carries its group's whole vector); the binary tree remains for large reduces
 * on flat teams. Small ones want the fewest hops.
 */
static const struct {
    osmp_coll_t coll;
    unsigned sizes, shapes;
    const char *alg;
    int radix; /* for algorithms that take one; the others imply theirs */
} table[] = {
    /* Oversubscribed, where a participant runs only when another yields: in the
     * tree, rank 0 releases the others and, usually still running, goes on
     * first into the next call, which is then often ready when they get their
     * turn (a broadcast from 0: 4 ranks on 2 cores, Open MPI, OSU timing (per
     * call, a barrier between), bcast of 8 B 2.4-3.6 us with the direct
     * barrier, 0.2-0.5 us with the tree; the barrier itself 0.6-1.6x MPI's). */
    {OSMP_COLL_BARRIER, ANY_SIZE, OVERSUB, "flat", 0},
    {OSMP_COLL_BARRIER, ANY_SIZE, ONE | FLAT_SMALL, "direct", 0},
    {OSMP_COLL_BARRIER, ANY_SIZE, ANY_SHAPE, "flat", 0},
    /* Large broadcasts are limited by the links they cross: on a team where the
     * plan's tree crosses some slow boundary more often than the MST does (a
     * level the hierarchy spec leaves out, leaders joined without regard to the
     * NUMA distance matrix), take the MST. */
    {OSMP_COLL_BCAST, LARGE, HIER_MST, "mst", 0},
    {OSMP_COLL_BCAST, ANY_SIZE, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_REDUCE, INLINE | MEDIUM, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_REDUCE, LARGE, HIER, "hsliced", 0},
    {OSMP_COLL_REDUCE, LARGE, ANY_SHAPE, "kary", 2},
    {OSMP_COLL_ALLREDUCE, INLINE | MEDIUM, FLAT_SMALL, "direct", 0},
    {OSMP_COLL_ALLREDUCE, LARGE, FLAT_SMALL | FLAT_LARGE, "sliced", 0},
    {OSMP_COLL_ALLREDUCE, LARGE, HIER, "hsliced", 0},
    {OSMP_COLL_ALLREDUCE, INLINE | MEDIUM, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_ALLREDUCE, LARGE, ANY_SHAPE, "kary", 2},
    /* Gather and scatter along the plan where it has levels: the root then deals
     * with its own groups' members and the other leaders only (OSMP, Fig. 4).
     * Large blocks too: the root copies every byte either way, and the extra
     * copy at each level runs inside a domain, in parallel over the leaders. */
    {OSMP_COLL_GATHER, ANY_SIZE, HIER, "hier", 0},
    {OSMP_COLL_GATHER, ANY_SIZE, ANY_SHAPE, "direct", 0},
    /* Large blocks: the ring moves each block over each ring edge once, and the
     * clustered ring crosses each boundary twice at most per domain; gathering
     * at one root would funnel every block through the root's links twice. */
    {OSMP_COLL_ALLGATHER, LARGE, ANY_SHAPE, "ring", 0},
    /* Blocks that fit a line or a slot on small flat teams: one hop, as
     * allreduce direct (2 ranks, per call: 8 B 0.29 -> 0.22 us, 4 KiB 2.4 -> 1.9). */
    {OSMP_COLL_ALLGATHER, INLINE | MEDIUM, FLAT_SMALL, "direct", 0},
    {OSMP_COLL_ALLGATHER, ANY_SIZE, ANY_SHAPE, "gather_bcast", 0},
    {OSMP_COLL_SCATTER, ANY_SIZE, HIER, "hier", 0},
    {OSMP_COLL_SCATTER, ANY_SIZE, ANY_SHAPE, "direct", 0},
    /* Large blocks: every rank adds its contribution to one block per step, all
     * at once, where one reduce per block runs the blocks one after another. */
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, LARGE, ANY_SHAPE, "ring", 0},
    /* Small blocks on small flat teams: one hop, as allreduce direct. */
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, INLINE | MEDIUM, FLAT_SMALL, "direct", 0},
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, ANY_SIZE, ANY_SHAPE, "reduces", 0},
    /* Several top domains: spread the cross-domain reads over the rounds. */
    {OSMP_COLL_ALLTOALL, ANY_SIZE, HIER, "distance", 0},
    {OSMP_COLL_ALLTOALL, ANY_SIZE, ANY_SHAPE, "pairwise", 0},
    /* Small vectors on small flat teams: one hop, as allgather direct, where
     * the slots take a slot and its counter line per writer (2 ranks against
     * slots, bench/ab medians of 5 runs: 1 B-1 KiB back to back 0.60-0.72 of
     * the time, per call 0.88-0.99; 4-16 KiB 0.86-0.98). */
    {OSMP_COLL_ALLTOALL, INLINE | MEDIUM, FLAT_SMALL, "direct", 0},
    {OSMP_COLL_ALLTOALL, ANY_SIZE, ANY_SHAPE, "slots", 0},
    /* The vector variants: one algorithm for every size (ranks see different
     * counts, so a row by size could split the team between algorithms; an
     * algorithm that sees every count may choose by them inside: allgatherv's
     * direct exchange takes the ring beyond a slot; alltoallv's pairs choose
     * by the sizes both ends of a block know). Reduce_scatter takes its
     * ring at every size: n-1 hops in all, where n reduces one after another
     * cost a tree's depth each, and every rank combines a block at every step. */
    {OSMP_COLL_GATHERV, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_SCATTERV, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_ALLGATHERV, ANY_SIZE, FLAT_SMALL, "direct", 0},
    {OSMP_COLL_ALLGATHERV, ANY_SIZE, ANY_SHAPE, "gatherv_bcast", 0},
    {OSMP_COLL_ALLTOALLV, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_REDUCE_SCATTER, ANY_SIZE, ANY_SHAPE, "ring", 0},
    {OSMP_COLL_SCAN, ANY_SIZE, ANY_SHAPE, "chain", 0},
    {OSMP_COLL_EXSCAN, ANY_SIZE, ANY_SHAPE, "chain", 0},
};

#define OSMP__COLL_ALGS(NAME, name, flags) osmp__##name##_algs,
static const struct osmp__alg *const algs[OSMP_COLL_COUNT] = {OSMP_COLL_MAP(OSMP__COLL_ALGS)};
#undef OSMP__COLL_ALGS

static const struct {
    const char *name;
    unsigned flags;
} colls[OSMP_COLL_COUNT] = {
#define OSMP__COLL_ROW(NAME, name, flags) {#name, flags},
    OSMP_COLL_MAP(OSMP__COLL_ROW)
#undef OSMP__COLL_ROW
};

const char *osmp_coll_name(osmp_coll_t c)
{
    return (unsigned)c < OSMP_COLL_COUNT ? colls[c].name : NULL;
}

unsigned osmp_coll_flags(osmp_coll_t c)
{
    return (unsigned)c < OSMP_COLL_COUNT ? colls[c].flags : 0;
}

const struct osmp__alg *osmp__algs_of(osmp_coll_t c)
{
    return (unsigned)c < OSMP_COLL_COUNT ? algs[c] : NULL;
}

static const struct osmp__alg *find(osmp_coll_t c, const char *name, size_t len)
{
    for (const struct osmp__alg *a = algs[c]; a->name; a++)
        if (strlen(a->name) == len && strncmp(a->name, name, len) == 0) return a;
    return NULL;
}

int osmp__alg_parse(osmp_coll_t c, const char *value, struct osmp__choice *choice, char *err, size_t err_len)
{
    choice->alg = NULL;
    choice->radix = 0;
    if (strcmp(value, "auto") == 0) return OSMP_OK;
    const char *colon = strchr(value, ':');
    const struct osmp__alg *a = find(c, value, colon ? (size_t)(colon - value) : strlen(value));
    char *end = NULL;
    long k = colon ? strtol(colon + 1, &end, 10) : 0;
    if (a && (a->takes_radix ? colon && end != colon + 1 && !*end && k >= 1 && k <= 64 : !colon)) {
        choice->alg = a;
        choice->radix = a->takes_radix ? (int)k : a->radix;
        return OSMP_OK;
    }
    size_t at = (size_t)snprintf(err, err_len, "%s algorithm \"%s\" unknown; expected auto", osmp_coll_name(c), value);
    for (const struct osmp__alg *x = algs[c]; x->name && at < err_len; x++)
        at += (size_t)snprintf(err + at, err_len - at, ", %s%s", x->name, x->takes_radix ? ":K (K in 1..64)" : "");
    return OSMP_ERR_KNOB;
}

/* The key of a pair as the MST weighs it (lower rank first), and what the
 * edge adds to a tree's cost: edges between cores that share no last-level
 * cache (rung numa and above) carry their bytes through memory and the
 * interconnect; the others add nothing. */
static uint32_t pair_key(osmp__coll_t t, int a, int b)
{
    return a < b ? osmp_topo_distance_key(t->topo, t->cores[a], t->cores[b])
                 : osmp_topo_distance_key(t->topo, t->cores[b], t->cores[a]);
}

static uint64_t far(osmp__coll_t t, int a, int b)
{
    return osmp_topo_distance(t->topo, t->cores[a], t->cores[b]) >= OSMP_DIST_NUMA ? pair_key(t, a, b) : 0;
}

/*
 * The rule for the MST broadcast: the plan's flat tree rooted at 0 and a
 * minimum spanning tree are compared by the summed keys of their far edges, and
 * the MST is taken only when it is strictly smaller. A minimum spanning tree
 * has, for every distance, at most as many edges above it as any other spanning
 * tree, so it never loses; a strictly smaller sum means the plan's tree makes
 * some slow crossing that the MST does not (a level the hierarchy spec leaves
 * out) or crosses between NUMA nodes further apart (leaders joined regardless
 * of the distance matrix). Where they tie, the plan's tree keeps its shallower
 * shape and the user's hierarchy spec. All minimum spanning trees have the same
 * edge keys, so Prim's O(n^2) walk gives the MST's sum without sorting all
 * pairs. Every rank decides alike: the inputs are the team's cores and topology.
 * Teams above OSMP__GRAPH_RANKS_MAX keep the plan's tree.
 */
static int mst_cheaper(osmp__coll_t t)
{
    int n = t->size;
    if (n > OSMP__GRAPH_RANKS_MAX) return 0;
    struct osmp_graph *plan = NULL;
    uint32_t *best = osmp__malloc(sizeof(uint32_t) * (size_t)n); /* cheapest key into the tree so far; UINT32_MAX: in it */
    int *from = osmp__malloc(sizeof(int) * (size_t)n);           /* the tree's end of that edge */
    if (!best || !from || osmp_graph_create(t->topo, t->cores, n, 0, OSMP_GRAPH_PLAN, t->plan, &plan) != OSMP_OK) {
        free(best);
        free(from);
        return 0;
    }
    uint64_t plan_cost = 0, mst_cost = 0;
    for (int e = 0; e < plan->nedges; e++) plan_cost += far(t, plan->edges[e][0], plan->edges[e][1]);
    osmp_graph_destroy(plan);
    best[0] = UINT32_MAX;
    for (int v = 1; v < n; v++) {
        best[v] = pair_key(t, 0, v);
        from[v] = 0;
    }
    for (int added = 1; added < n; added++) {
        int next = -1;
        for (int v = 0; v < n; v++)
            if (best[v] != UINT32_MAX && (next < 0 || best[v] < best[next])) next = v;
        mst_cost += far(t, from[next], next);
        best[next] = UINT32_MAX;
        for (int v = 0; v < n; v++) {
            uint32_t k = best[v] == UINT32_MAX ? UINT32_MAX : pair_key(t, next, v);
            if (k < best[v]) {
                best[v] = k;
                from[v] = next;
            }
        }
    }
    free(best);
    free(from);
    return mst_cost < plan_cost;
}

static unsigned shape_of(osmp__coll_t t)
{
    unsigned over = t->oversubscribed ? OVERSUB : 0;
    if (t->size == 1) return ONE;
    if (!osmp__flat_team(t)) return (mst_cheaper(t) ? HIER_MST : HIER_PLAN) | over;
    return (t->size <= FLAT_SMALL_MAX ? FLAT_SMALL : FLAT_LARGE) | over;
}

void osmp__select_init(osmp__coll_t t, const struct osmp__choice forced[OSMP_COLL_COUNT])
{
    unsigned team_shape = shape_of(t);
    const struct osmp_plan *team_plan = t->plan;
    const char *team_spec = t->hierarchy;
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        unsigned shape = team_shape;
        if (t->op_plan[c]) { /* a collective with its own spec: its own shape */
            t->plan = t->op_plan[c];
            t->hierarchy = t->op_hierarchy[c];
            shape = shape_of(t);
            t->plan = team_plan;
            t->hierarchy = team_spec;
        }
        for (int sz = 0; sz < OSMP__NSIZES; sz++)
            for (int sc = 0; sc < 2; sc++) {
                struct osmp__choice *ch = &t->choice[c][sz][sc];
                ch->alg = NULL;
                if (forced[c].alg && (sc || !forced[c].alg->needs_single_copy)) {
                    *ch = forced[c];
                    continue;
                }
                for (size_t i = 0; !ch->alg && i < sizeof(table) / sizeof(table[0]); i++) {
                    const struct osmp__alg *a = find(table[i].coll, table[i].alg, strlen(table[i].alg));
                    if (table[i].coll == (osmp_coll_t)c && (table[i].sizes >> sz & 1) && (table[i].shapes & shape) &&
                        (sc || !a->needs_single_copy)) {
                        ch->alg = a;
                        ch->radix = a->takes_radix ? table[i].radix : a->radix;
                    }
                }
            }
    }
}

int osmp__run(osmp__coll_t t, osmp_coll_t c, struct osmp__args *a)
{
    size_t bytes = a->count * a->esize;
    /* Enough steps in one phase for one chunk each, also per rank (scatter):
     * only a huge message needs the two divisions. */
    if (__builtin_expect(bytes >= (size_t)1 << 30, 0) &&
        bytes / t->mb.chunk >= OSMP__PHASE_STEPS / 2 / (uint64_t)t->size)
        return OSMP_ERR_RANGE;
    int sz = bytes <= OSMP_INLINE_MAX ? OSMP__SIZE_INLINE : bytes <= OSMP__MEDIUM_MAX ? OSMP__SIZE_MEDIUM
                                                                                       : OSMP__SIZE_LARGE;
    a->copy_min = t->single_copy_min[c];
    a->single_copy = osmp__copy_once(a, bytes);
    const struct osmp__choice *ch = &t->choice[c][sz][a->single_copy];
    a->radix = ch->radix;
    if (__builtin_expect(t->trace != NULL, 0)) osmp__trace_alg_(t->trace, ch->alg->name, ch->radix, a->root, bytes);
    int rc;
    if (__builtin_expect(t->op_plan[c] == NULL, 1)) {
        rc = ch->alg->run(t, a);
    } else { /* its own spec while it runs; a composition's parts set theirs in turn */
        const struct osmp_plan *plan = t->plan;
        const char *spec = t->hierarchy;
        t->plan = t->op_plan[c];
        t->hierarchy = t->op_hierarchy[c];
        rc = ch->alg->run(t, a);
        t->plan = plan;
        t->hierarchy = spec;
    }
    if (__builtin_expect(t->trace != NULL, 0)) osmp__trace_run_end_(t->trace);
    /* A local failure (no memory, a failed copy) leaves the others waiting for
     * steps this participant will not take: the team fails for everyone. */
    return __builtin_expect(rc == OSMP_OK, 1) ? rc : osmp__mb_fail(&t->mb, rc);
}

void osmp__algs_print(FILE *f)
{
    static const char *const size_names[OSMP__NSIZES] = {"inline", "medium", "large"};
    fprintf(f, "Algorithms (force one with OSMP_<OP>_ALG=NAME; auto follows the selection table):\n");
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        fprintf(f, "  %s\n", osmp_coll_name((osmp_coll_t)c));
        for (const struct osmp__alg *a = algs[c]; a->name; a++)
            fprintf(f, "    %-14s %s%s\n", a->takes_radix ? "kary:K" : a->name, a->doc,
                    a->needs_single_copy ? " [single copy]" : "");
    }
    fprintf(f, "\nSelection (first matching row; sizes: inline <= %d B, medium <= %d B, large above; shapes: "
               "one = a team of one, flat = one group of <= %d / more ranks, hier = several levels, "
               "hier:mst = several levels where the MST crosses the boundaries between last level caches "
               "less than the plan's tree, by summed distance keys):\n",
            OSMP_INLINE_MAX, OSMP__MEDIUM_MAX, FLAT_SMALL_MAX);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        char sizes[32] = "", shapes[48] = "";
        for (int sz = 0; sz < OSMP__NSIZES; sz++)
            if (table[i].sizes >> sz & 1) snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s",
                                                   *sizes ? "," : "", size_names[sz]);
        static const char *const shape_names[NSHAPE_BITS] = {"one", "flat<=16", "flat>16", "hier:plan", "hier:mst",
                                                                    "oversubscribed"};
        for (int s = 0; s < NSHAPE_BITS; s++) {
            const char *sn = shape_names[s];
            if (!(table[i].shapes >> s & 1) || (1u << s == HIER_MST && (table[i].shapes & HIER) == HIER)) continue;
            if (1u << s == HIER_PLAN && (table[i].shapes & HIER) == HIER) sn = "hier";
            snprintf(shapes + strlen(shapes), sizeof(shapes) - strlen(shapes), "%s%s", *shapes ? "," : "", sn);
        }
        const struct osmp__alg *a = find(table[i].coll, table[i].alg, strlen(table[i].alg));
        char name[32];
        snprintf(name, sizeof(name), a->takes_radix ? "%s:%d" : "%s", table[i].alg, table[i].radix);
        const char *coll = osmp_coll_name(table[i].coll); /* NULL only out of range; -O3 cannot tell */
        fprintf(f, "  %-22s %-20s %-32s %s%s\n", coll ? coll : "?", sizes, shapes, name,
                a->needs_single_copy ? " (where single copy runs)" : "");
    }
}
