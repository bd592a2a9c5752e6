/*
 * Selection: everything a team decides once, at its creation, so that a call
 * costs one table lookup. The one table that says which algorithm runs for
 * each collective, size class and team shape (with OSMP_<OP>_ALG), and the
 * block sizes from which data is copied once or streamed, and the chunk.
 * Algorithms do not choose among themselves: one that takes blocks only up to
 * its line or slot says so (max_block, algs.def), and larger blocks go to the
 * next matching row here.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fault.h"
#include "common/util.h"
#include "coll/co.h"
#include "coll/tune.h"

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
enum { ONCE = 1 };

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
    int once;  /* ONCE: the row applies only where blocks are copied once */
} table[] = {
    /* Oversubscribed, where a participant runs only when another yields: in the
     * tree, rank 0 releases the others and, usually still running, goes on
     * first into the next call, which is then often ready when they get their
     * turn; the direct barrier makes every rank wait for every other's turn. */
    {OSMP_COLL_BARRIER, ANY_SIZE, OVERSUB, "flat", 0, 0},
    {OSMP_COLL_BARRIER, ANY_SIZE, ONE | FLAT_SMALL, "direct", 0, 0},
    {OSMP_COLL_BARRIER, ANY_SIZE, ANY_SHAPE, "flat", 0, 0},
    /* Large broadcasts are limited by the links they cross: on a team where the
     * plan's tree crosses some slow boundary more often than the MST does (a
     * level the hierarchy spec leaves out, leaders joined without regard to the
     * NUMA distance matrix), take the MST. */
    {OSMP_COLL_BCAST, LARGE, HIER_MST, "mst", 0, 0},
    {OSMP_COLL_BCAST, ANY_SIZE, ANY_SHAPE, "flat", 0, 0},
    {OSMP_COLL_REDUCE, INLINE | MEDIUM, ANY_SHAPE, "flat", 0, 0},
    {OSMP_COLL_REDUCE, LARGE, HIER, "hsliced", 0, 0},
    {OSMP_COLL_REDUCE, LARGE, ANY_SHAPE, "kary", 2, 0},
    {OSMP_COLL_ALLREDUCE, INLINE | MEDIUM, FLAT_SMALL, "direct", 0, 0},
    {OSMP_COLL_ALLREDUCE, LARGE, FLAT_SMALL | FLAT_LARGE, "sliced", 0, 0},
    {OSMP_COLL_ALLREDUCE, LARGE, HIER, "hsliced", 0, 0},
    {OSMP_COLL_ALLREDUCE, INLINE | MEDIUM, ANY_SHAPE, "flat", 0, 0},
    {OSMP_COLL_ALLREDUCE, LARGE, ANY_SHAPE, "kary", 2, 0},
    /* Gather and scatter along the plan where it has levels: the root then deals
     * with its own groups' members and the other leaders only (OSMP, Fig. 4).
     * Large blocks too: the root copies every byte either way, and the extra
     * copy at each level runs inside a domain, in parallel over the leaders. */
    {OSMP_COLL_GATHER, ANY_SIZE, HIER, "hier", 0, 0},
    {OSMP_COLL_GATHER, ANY_SIZE, ANY_SHAPE, "direct", 0, 0},
    /* Large blocks: the ring moves each block over each ring edge once, and the
     * clustered ring crosses each boundary twice at most per domain; gathering
     * at one root would funnel every block through the root's links twice. */
    {OSMP_COLL_ALLGATHER, LARGE, ANY_SHAPE, "ring", 0, 0},
    /* Blocks that fit a line or a slot on small flat teams: one hop, as
     * allreduce direct; where they are copied once (threads, low
     * OSMP_SINGLE_COPY_MIN), the ring reads each once from its owner. */
    {OSMP_COLL_ALLGATHER, INLINE | MEDIUM, FLAT_SMALL, "ring", 0, ONCE},
    {OSMP_COLL_ALLGATHER, INLINE | MEDIUM, FLAT_SMALL, "direct", 0, 0},
    {OSMP_COLL_ALLGATHER, ANY_SIZE, ANY_SHAPE, "gather_bcast", 0, 0},
    {OSMP_COLL_SCATTER, ANY_SIZE, HIER, "hier", 0, 0},
    {OSMP_COLL_SCATTER, ANY_SIZE, ANY_SHAPE, "direct", 0, 0},
    /* Large blocks: every rank adds its contribution to one block per step, all
     * at once, where one reduce per block runs the blocks one after another. */
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, LARGE, ANY_SHAPE, "ring", 0, 0},
    /* Small blocks on small flat teams: one hop, as allreduce direct. */
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, INLINE | MEDIUM, FLAT_SMALL, "direct", 0, 0},
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, ANY_SIZE, ANY_SHAPE, "reduces", 0, 0},
    /* Several top domains: spread the cross-domain reads over the rounds. */
    {OSMP_COLL_ALLTOALL, ANY_SIZE, HIER, "distance", 0, 0},
    {OSMP_COLL_ALLTOALL, ANY_SIZE, ANY_SHAPE, "pairwise", 0, 0},
    /* Small vectors on small flat teams: one hop, as allgather direct, where
     * the slots take a slot and its counter line per writer. */
    {OSMP_COLL_ALLTOALL, INLINE | MEDIUM, FLAT_SMALL, "direct", 0, 0},
    {OSMP_COLL_ALLTOALL, ANY_SIZE, ANY_SHAPE, "slots", 0, 0},
    /* The vector variants: one algorithm for every size (ranks see different
     * counts, so a row by size could split the team between algorithms; an
     * algorithm that sees every count may choose by them inside: allgatherv's
     * direct exchange takes the ring beyond a slot; alltoallv's pairs choose
     * by the sizes both ends of a block know). Reduce_scatter takes its
     * ring at every size: n-1 hops in all, where n reduces one after another
     * cost a tree's depth each, and every rank combines a block at every step. */
    {OSMP_COLL_GATHERV, ANY_SIZE, ANY_SHAPE, "direct", 0, 0},
    {OSMP_COLL_SCATTERV, ANY_SIZE, ANY_SHAPE, "direct", 0, 0},
    {OSMP_COLL_ALLGATHERV, ANY_SIZE, FLAT_SMALL, "direct", 0, 0},
    {OSMP_COLL_ALLGATHERV, ANY_SIZE, ANY_SHAPE, "gatherv_bcast", 0, 0},
    {OSMP_COLL_ALLTOALLV, ANY_SIZE, ANY_SHAPE, "direct", 0, 0},
    {OSMP_COLL_ALLTOALLV, ANY_SIZE, ANY_SHAPE, "slots", 0, 0},
    {OSMP_COLL_REDUCE_SCATTER, ANY_SIZE, ANY_SHAPE, "ring", 0, 0},
    /* Scans on oversubscribed teams by the Fenwick tree: every message read and
     * combined is paid in turns of the run queue, and the tree reads about 2n
     * (502 at 256) where rdbl reads n log2 n (1,793): at 256 on 2 cores it took
     * 0.16-0.71x an allreduce of the same size where rdbl took 0.83-1.77x
     * (docs/measurements.md section 15). */
    {OSMP_COLL_SCAN, ANY_SIZE, OVERSUB, "tree", 0, 0},
    {OSMP_COLL_EXSCAN, ANY_SIZE, OVERSUB, "tree", 0, 0},
    /* With a core each, depth: rdbl's ceil(log2 n) steps, all ranks reading at
     * once, where the tree takes 2 log2 n and the chain n - 1 hand-offs (at 2
     * ranks all three make the same one hand-off, at 3 rdbl and the chain two
     * steps; from 4 rdbl has the fewest). */
    {OSMP_COLL_SCAN, ANY_SIZE, ANY_SHAPE, "rdbl", 0, 0},
    {OSMP_COLL_EXSCAN, ANY_SIZE, ANY_SHAPE, "rdbl", 0, 0},
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

int osmp__tune_choice_valid(int coll, const char *choice)
{
    struct osmp__choice ch;
    char err[8];
    return strcmp(choice, "auto") != 0 && osmp__alg_parse((osmp_coll_t)coll, choice, &ch, err, sizeof(err)) == OSMP_OK;
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
 * pairs. Every rank decides alike: the inputs are the team's cores and topology
 * (team creation compares every participant's digest of both). Teams above
 * OSMP__GRAPH_RANKS_MAX keep the plan's tree. Without memory for the walk the
 * answer is unknown, and guessing would let this participant choose otherwise
 * than the others: OSMP_ERR_NO_MEMORY, which fails the team's creation.
 */
static int mst_cheaper(osmp__coll_t t, int *cheaper)
{
    int n = t->size, rc;
    *cheaper = 0;
    if (n > OSMP__GRAPH_RANKS_MAX) return OSMP_OK;
    struct osmp_graph *plan = NULL;
    uint32_t *best = osmp__decide_malloc(sizeof(uint32_t) * (size_t)n); /* cheapest key into the tree so far; UINT32_MAX: in it */
    int *from = osmp__decide_malloc(sizeof(int) * (size_t)n);           /* the tree's end of that edge */
    rc = !best || !from ? OSMP_ERR_NO_MEMORY : osmp_graph_create(t->topo, t->cores, n, 0, OSMP_GRAPH_PLAN, t->plan, &plan);
    if (rc) {
        free(best);
        free(from);
        return rc;
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
    *cheaper = mst_cost < plan_cost;
    return OSMP_OK;
}

static int shape_of(osmp__coll_t t, unsigned *shape)
{
    unsigned over = t->oversubscribed ? OVERSUB : 0;
    int cheaper = 0, rc = OSMP_OK;
    if (t->size == 1) *shape = ONE;
    else if (!osmp__flat_team(t)) *shape = (!(rc = mst_cheaper(t, &cheaper)) && cheaper ? HIER_MST : HIER_PLAN) | over;
    else *shape = (t->size <= FLAT_SMALL_MAX ? FLAT_SMALL : FLAT_LARGE) | over;
    return rc;
}

/* The smallest block of each size class (OSMP__MEDIUM_MAX and the line bound them). */
static size_t class_min(int sz)
{
    return sz == OSMP__SIZE_INLINE ? 0 : sz == OSMP__SIZE_MEDIUM ? OSMP_INLINE_MAX + 1 : OSMP__MEDIUM_MAX + 1;
}

/* Add algorithm a to the chain of one (collective, size class, single copy)
 * for the blocks it takes on this team beyond the links before it. Returns 1
 * once the chain takes every size. */
static int chain_add(osmp__coll_t t, struct osmp__choice *chain, int *k, int sz, const struct osmp__alg *a,
                     int radix, size_t upto, int from)
{
    size_t max = a->max_block ? a->max_block(t) : SIZE_MAX;
    if (upto < max) max = upto;
    /* (it cannot run on this team, or the links before it take these blocks) */
    if (max == 0 || max < class_min(sz) || (*k && max <= chain[*k - 1].max)) return 0;
    if (*k == OSMP__CHAIN) abort(); /* (fill keeps the last link for the table's last choice) */
    chain[(*k)++] = (struct osmp__choice){a, radix, max, from};
    return max == SIZE_MAX;
}

/* Last-level cache bytes the team's cores sit under (*llc): the sum over the
 * distinct L3s (an L2 where the machine has no L3) of their sizes, as hwloc
 * gives them; 0 if one is unknown. OSMP_ERR_NO_MEMORY without memory to count
 * them (as mst_cheaper: never a guess that the others would not make). */
static int team_llc(osmp__coll_t t, uint64_t *llc)
{
    const struct osmp_domain **seen = osmp__decide_calloc((size_t)t->size, sizeof(*seen));
    uint64_t sum = 0;
    *llc = 0;
    if (!seen) return OSMP_ERR_NO_MEMORY;
    for (int r = 0, k = 0; r < t->size; r++) {
        const struct osmp_domain *d = osmp_topo_domain_of(t->topo, t->cores[r], OSMP_DOMAIN_L3);
        if (d && d->kind != OSMP_DOMAIN_L3) d = osmp_topo_domain_of(t->topo, t->cores[r], OSMP_DOMAIN_L2);
        if (!d || (d->kind != OSMP_DOMAIN_L3 && d->kind != OSMP_DOMAIN_L2) || !d->cache_bytes) {
            sum = 0;
            break;
        }
        int known = 0;
        for (int i = 0; i < k; i++)
            known |= seen[i] == d;
        if (!known) {
            seen[k++] = d;
            sum += d->cache_bytes;
        }
    }
    free(seen);
    *llc = sum;
    return OSMP_OK;
}

/* Is the team far apart: two or more participants, no two of which share a
 * last-level cache (rung numa or above, as far() weighs a tree's edges)? Then
 * every line staged between two of them travels from one last-level cache to
 * another (knobs.h OSMP__SINGLE_COPY_MIN_FAR). A team of more participants
 * than the machine has last-level caches never is. */
static int far_team(osmp__coll_t t)
{
    for (int a = 0; a < t->size; a++)
        for (int b = a + 1; b < t->size; b++)
            if (osmp_topo_distance(t->topo, t->cores[a], t->cores[b]) < OSMP_DIST_NUMA) return 0;
    return t->size >= 2;
}

/* The last-level cache over rank 0's core (its L3, else its L2), as hwloc
 * gives it; 0 if unknown. */
static uint64_t llc_of_one(osmp__coll_t t)
{
    const struct osmp_domain *d = osmp_topo_domain_of(t->topo, t->cores[0], OSMP_DOMAIN_L3);
    if (!d || d->kind != OSMP_DOMAIN_L3) d = osmp_topo_domain_of(t->topo, t->cores[0], OSMP_DOMAIN_L2);
    return d && (d->kind == OSMP_DOMAIN_L3 || d->kind == OSMP_DOMAIN_L2) ? d->cache_bytes : 0;
}

/* The thresholds: streaming into the slots (OSMP_STREAM_MIN), per collective
 * the blocks copied once (OSMP_SINGLE_COPY_MIN), and an exchange's own block
 * streamed. Where nobody set them, they follow the caches hwloc reports
 * (knobs.h says why each): a staged message copied once from
 * OSMP__SINGLE_COPY_LLCS last-level caches of one participant up; an
 * exchange's blocks once the team's n^2 of them fill OSMP__SINGLE_COPY_EXCHANGE_LLC
 * of the last-level caches it spans; its own block streamed once they fill
 * half of them. Constants only where hwloc knows no cache size. A tune
 * table's single_copy_min comes after these (tune_settings). */
static int thresholds(osmp__coll_t t, const struct osmp__select_in *in)
{
    int far = far_team(t);
    t->mb.stream_min = in->stream_min >= 0                                ? (size_t)in->stream_min
                       : in->stream_min == -1 && far && OSMP__HAVE_STREAM ? (size_t)OSMP__STREAM_MIN_FAR
                                                                          : SIZE_MAX;
    uint64_t n2 = (uint64_t)t->size * (uint64_t)t->size, llc, one = llc_of_one(t);
    int rc = team_llc(t, &llc);
    if (rc) return rc;
    t->own_stream_min = OSMP__HAVE_STREAM ? (size_t)((llc ? llc / 2 : OSMP__OWN_STREAM_TEAM) / n2) : SIZE_MAX;
    uint64_t exch = (llc ? (uint64_t)((double)llc * OSMP__SINGLE_COPY_EXCHANGE_LLC) : OSMP__SINGLE_COPY_EXCHANGE_TEAM) / n2;
    if (exch < OSMP__SINGLE_COPY_EXCHANGE_FLOOR) exch = OSMP__SINGLE_COPY_EXCHANGE_FLOOR;
    uint64_t staged = one ? OSMP__SINGLE_COPY_LLCS * one : OSMP__SINGLE_COPY_MIN_AUTO;
    for (int k = 0; k < OSMP_COLL_COUNT; k++) {
        unsigned f = osmp_coll_flags((osmp_coll_t)k);
        int exchange = (f & OSMP_COLL_BLOCKS) && !(f & (OSMP_COLL_ROOTED | OSMP_COLL_REDUCES));
        uint64_t min = in->one_process ? in->single_copy_min_threads : in->single_copy_min;
        if (!in->one_process && in->single_copy_auto) {
            min = exchange ? exch : staged;
            /* far: a staged line crosses twice, unless its slot is streamed */
            if (far && (exchange || t->mb.stream_min > OSMP__SINGLE_COPY_MIN_FAR) &&
                min > OSMP__SINGLE_COPY_MIN_FAR)
                min = OSMP__SINGLE_COPY_MIN_FAR;
        }
        /* Reduce's single copy moves a leaf's copy onto its parent (reduce_tree.c):
         * between processes it saves a crossing, between threads nothing. */
        if (in->one_process && k == OSMP_COLL_REDUCE) min = UINT64_MAX;
        t->single_copy_min[k] = !t->single_copy || min > SIZE_MAX ? SIZE_MAX : (size_t)min;
    }
    return OSMP_OK;
}

/* Chunks: a chunk handoff costs line transfers both ways, so small teams take
 * fewer, larger chunks (a participant's slots, 2 x depth x chunk, stay at 2
 * MiB with the default depth); larger teams keep 32 KiB: their segment grows
 * with the team, and deeper trees pipeline better in small chunks. */
#define AUTO_CHUNK_TEAM 4
size_t osmp__select_chunk(int size)
{
    return size <= AUTO_CHUNK_TEAM ? 131072 : 32768;
}

/* Does row r of the tune table hold for this team? */
static int tune_row_for(const osmp__coll_t t, const struct osmp__tune_row *r)
{
    return r->ranks == 0 || r->ranks == t->size;
}

/* Add the links of `from` (a chain of the selection table's own) for the
 * sizes after the chain's last link up to hi. Returns 1 once the chain takes
 * every size. */
static int fill(osmp__coll_t t, struct osmp__choice *chain, int *k, int sz, const struct osmp__choice *from,
                size_t hi)
{
    for (const struct osmp__choice *f = from;; f++) {
        if (*k == OSMP__CHAIN - 1) { /* full: the table's last choice takes the rest */
            while (f->max != SIZE_MAX) f++;
            chain[(*k)++] = *f;
            return 1;
        }
        if (*k && f->max <= chain[*k - 1].max) continue;
        if (chain_add(t, chain, k, sz, f->alg, f->radix, f->max < hi ? f->max : hi, f->from)) return 1;
        if (f->max >= hi) return 0;
    }
}

/* Collective c's chain for one (size class, single copy) from the tune
 * table's bands for this team, in its order (each collective's bands start at
 * 0 and follow each other): each band's algorithm up to the band's end, or
 * its line or slot, then the selection table's own choice (`own`, a whole
 * chain) for the rest of the band; so also for "mpi" and "auto" bands and for
 * algorithms that cannot run here (single copy). */
static void tune_chain(osmp__coll_t t, const struct osmp__tune *tune, int c, int sz, int sc,
                       const struct osmp__choice *own, struct osmp__choice *chain)
{
    int k = 0, done = 0;
    for (int i = 0; tune && !done && i < tune->nrows; i++) {
        const struct osmp__tune_row *r = &tune->rows[i];
        char name[24];
        int radix;
        if (r->setting != OSMP__TUNE_RULE || r->coll != c || !tune_row_for(t, r)) continue;
        size_t hi = r->hi > SIZE_MAX ? SIZE_MAX : (size_t)r->hi;
        const struct osmp__alg *a =
            osmp__tune_alg(r, name, sizeof(name), &radix) ? find((osmp_coll_t)c, name, strlen(name)) : NULL;
        if (a && a->needs_single_copy != (sc ? -1 : 1) && k < OSMP__CHAIN - 1)
            done = chain_add(t, chain, &k, sz, a, a->takes_radix ? radix : a->radix, hi, r->line);
        if (!done) done = fill(t, chain, &k, sz, own, hi);
    }
    if (!done) fill(t, chain, &k, sz, own, SIZE_MAX);
}

/* The tune table's settings for this team: single copy thresholds, and the
 * "mpi" bands (osmp_team_choice). Chunk and depth are read at creation (team.c). */
static void tune_settings(osmp__coll_t t, const struct osmp__tune *tune)
{
    memset(t->nmpi, 0, sizeof(t->nmpi));
    for (int i = 0; tune && i < tune->nrows; i++) {
        const struct osmp__tune_row *r = &tune->rows[i];
        if (!tune_row_for(t, r)) continue;
        if (r->setting == OSMP__TUNE_SINGLE_COPY_MIN && t->single_copy_min[r->coll] != SIZE_MAX)
            t->single_copy_min[r->coll] = r->value > SIZE_MAX ? SIZE_MAX : (size_t)r->value;
        if (r->setting == OSMP__TUNE_RULE && !strcmp(r->choice, "mpi") && t->nmpi[r->coll] < OSMP__MPI_BANDS)
            t->mpi[r->coll][t->nmpi[r->coll]++] =
                (struct osmp__band){(size_t)r->lo, r->hi > SIZE_MAX ? SIZE_MAX : (size_t)r->hi, r->line};
    }
}

/* OSMP_FAULT=delay:COLL.ALG:USEC (fault.h). */
static void slow_alg(osmp__coll_t t)
{
    const char *name;
    t->slow_us = osmp__fault_delay(&name);
    t->slow_alg = NULL;
    const char *dot = t->slow_us ? strchr(name, '.') : NULL;
    for (int c = 0; dot && c < OSMP_COLL_COUNT; c++)
        if (strlen(osmp_coll_name((osmp_coll_t)c)) == (size_t)(dot - name) &&
            !strncmp(name, osmp_coll_name((osmp_coll_t)c), (size_t)(dot - name)))
            t->slow_alg = find((osmp_coll_t)c, dot + 1, strlen(dot + 1));
}

int osmp__select_init(osmp__coll_t t, const struct osmp__select_in *in)
{
    unsigned team_shape;
    int rc = thresholds(t, in);
    if (rc) return rc;
    tune_settings(t, in->tune);
    slow_alg(t);
    if ((rc = shape_of(t, &team_shape))) return rc;
    const struct osmp_plan *team_plan = t->plan;
    const char *team_spec = t->hierarchy;
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        unsigned shape = team_shape;
        if (t->op_plan[c]) { /* a collective with its own spec: its own shape */
            t->plan = t->op_plan[c];
            t->hierarchy = t->op_hierarchy[c];
            rc = shape_of(t, &shape);
            t->plan = team_plan;
            t->hierarchy = team_spec;
            if (rc) return rc;
        }
        const struct osmp__choice *forced = &in->forced[c];
        for (int sz = 0; sz < OSMP__NSIZES; sz++)
            for (int sc = 0; sc < 2; sc++) {
                struct osmp__choice own[OSMP__CHAIN]; /* the selection table's chain, before the tune table's */
                struct osmp__choice *chain = in->tune && !forced->alg ? own : t->choice[c][sz][sc];
                int k = 0, done = 0;
                /* A forced algorithm runs where it can; beyond its blocks, the table's choice. */
                if (forced->alg && forced->alg->needs_single_copy != (sc ? -1 : 1))
                    done = chain_add(t, chain, &k, sz, forced->alg, forced->radix, SIZE_MAX, OSMP__FROM_KNOB);
                for (size_t i = 0; !done && i < sizeof(table) / sizeof(table[0]); i++) {
                    const struct osmp__alg *a = find(table[i].coll, table[i].alg, strlen(table[i].alg));
                    if (table[i].coll == (osmp_coll_t)c && (table[i].sizes >> sz & 1) &&
                        (table[i].shapes & shape) && a->needs_single_copy != (sc ? -1 : 1) &&
                        (sc || !table[i].once))
                        done = chain_add(t, chain, &k, sz, a, a->takes_radix ? table[i].radix : a->radix, SIZE_MAX,
                                         OSMP__FROM_TABLE);
                }
                if (!done) abort(); /* every collective's last row takes every size */
                if (chain == own) tune_chain(t, in->tune, c, sz, sc, own, t->choice[c][sz][sc]);
            }
    }
    return OSMP_OK;
}

void osmp__select_single_copy_off(osmp__coll_t t)
{
    t->single_copy = 0;
    for (int k = 0; k < OSMP_COLL_COUNT; k++) t->single_copy_min[k] = SIZE_MAX;
}

void osmp__select_digest(osmp__coll_t t, uint64_t *chains, uint64_t *limits)
{
    uint64_t h = OSMP__HASH_INIT;
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
        for (int sz = 0; sz < OSMP__NSIZES; sz++)
            for (int sc = 0; sc < 2; sc++)
                for (const struct osmp__choice *ch = t->choice[c][sz][sc];; ch++) { /* ends at the link taking every size */
                    h = osmp__hash(h, (uint64_t)(ch->alg - algs[c]) << 32 | (uint32_t)ch->radix);
                    h = osmp__hash(h, (uint64_t)ch->max);
                    h = osmp__hash(h, (uint64_t)(uint32_t)ch->from);
                    if (ch->max == SIZE_MAX) break;
                }
    *chains = h;
    h = osmp__hash(osmp__hash(OSMP__HASH_INIT, t->mb.stream_min), t->own_stream_min);
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        h = osmp__hash(osmp__hash(h, t->single_copy_min[c]), (uint64_t)t->nmpi[c]);
        for (int i = 0; i < t->nmpi[c]; i++)
            h = osmp__hash(osmp__hash(osmp__hash(h, t->mpi[c][i].lo), t->mpi[c][i].hi), (uint64_t)t->mpi[c][i].from);
    }
    *limits = h;
}

/* The algorithm for this call's block size (and a->copy_min, single_copy,
 * radix); NULL when a phase cannot hold its steps (OSMP_ERR_RANGE). */
static inline __attribute__((always_inline)) const struct osmp__choice *choose(osmp__coll_t t, osmp_coll_t c,
                                                                              struct osmp__args *a)
{
    size_t bytes = a->count * a->esize;
    /* Enough steps in one phase for one chunk each, also per rank (scatter):
     * only a huge message needs the two divisions. */
    if (__builtin_expect(bytes >= (size_t)1 << 30, 0) &&
        bytes / t->mb.chunk >= OSMP__PHASE_STEPS / 2 / (uint64_t)t->size)
        return NULL;
    int sz = bytes <= OSMP_INLINE_MAX ? OSMP__SIZE_INLINE : bytes <= OSMP__MEDIUM_MAX ? OSMP__SIZE_MEDIUM
                                                                                       : OSMP__SIZE_LARGE;
    a->copy_min = t->single_copy_min[c];
    a->single_copy = osmp__copy_once(a, bytes);
    const struct osmp__choice *ch = t->choice[c][sz][a->single_copy];
    while (__builtin_expect(bytes > ch->max, 0))
        ch++; /* beyond an algorithm's line or slot */
    a->radix = ch->radix;
    if (__builtin_expect(t->trace != NULL, 0)) osmp__trace_alg_(t->trace, ch->alg->name, ch->radix, a->root, bytes);
    return ch;
}

int osmp__choice_of(osmp__coll_t t, osmp_coll_t c, size_t bytes, struct osmp_choice *out)
{
    size_t lo = 0, hi = SIZE_MAX;
    for (int i = 0; i < t->nmpi[c]; i++) {
        const struct osmp__band *b = &t->mpi[c][i];
        if (bytes >= b->lo && bytes <= b->hi) {
            snprintf(out->name, sizeof(out->name), "mpi");
            snprintf(out->from, sizeof(out->from), "tune:%d", b->from);
            out->lo = b->lo, out->hi = b->hi;
            return OSMP_OK;
        }
        if (b->hi < bytes && b->hi + 1 > lo) lo = b->hi + 1;
        if (b->lo > bytes && b->lo - 1 < hi) hi = b->lo - 1;
    }
    int sz = bytes <= OSMP_INLINE_MAX ? OSMP__SIZE_INLINE : bytes <= OSMP__MEDIUM_MAX ? OSMP__SIZE_MEDIUM
                                                                                       : OSMP__SIZE_LARGE;
    size_t cmin = class_min(sz), cmax = sz == OSMP__SIZE_LARGE ? SIZE_MAX : class_min(sz + 1) - 1;
    size_t copy_min = t->single_copy_min[c];
    int sc = bytes >= copy_min;
    const struct osmp__choice *ch = t->choice[c][sz][sc];
    while (bytes > ch->max) {
        cmin = ch->max + 1;
        ch++;
    }
    if (ch->max < cmax) cmax = ch->max;
    if (sc && copy_min > cmin) cmin = copy_min;
    if (!sc && copy_min - 1 < cmax) cmax = copy_min - 1;
    out->lo = cmin > lo ? cmin : lo;
    out->hi = cmax < hi ? cmax : hi;
    snprintf(out->name, sizeof(out->name), ch->alg->takes_radix ? "%s:%d" : "%s", ch->alg->name, ch->radix);
    if (ch->from > 0) snprintf(out->from, sizeof(out->from), "tune:%d", ch->from);
    else snprintf(out->from, sizeof(out->from), "%s", ch->from == OSMP__FROM_KNOB ? "knob" : "table");
    return OSMP_OK;
}

static inline int run_alg(osmp__coll_t t, const struct osmp__args *a, const struct osmp__alg *alg,
                          struct osmp__co *co)
{
    return co ? alg->co(t, a, co) : alg->run(t, a);
}

/* Run (co NULL) or resume the algorithm ch, with collective c's own spec
 * while it runs (a composition's parts set theirs in turn), on the short ring
 * where its blocks fit it (shm/mailbox.h, "Memory that grows with use"). */
static inline __attribute__((always_inline)) int run_choice(osmp__coll_t t, osmp_coll_t c, const struct osmp__args *a,
                                                           const struct osmp__alg *alg, struct osmp__co *co)
{
    if (__builtin_expect(alg == t->slow_alg, 0)) usleep(t->slow_us);
    /* Every participant knows a uniform collective's block, and a bound of
     * allgatherv's and reduce_scatter's (gatherv's, scatterv's and alltoallv's
     * counts are not all known everywhere), so all of them take the same ring.
     * Set, not restored: the depth is every call's own (requests run one at a
     * time, and a composition is a sequence of parts that set theirs). */
    size_t block = !a->vector ? a->count * a->esize : a->vector_bound ? a->vector_bound : SIZE_MAX;
    int want = block <= OSMP__SHORT_RING_MAX ? t->mb.short_depth : t->mb.ring_depth;
    if (__builtin_expect(want != t->mb.depth, 0)) osmp__mb_set_depth(&t->mb, want);
    int rc;
    if (__builtin_expect(t->op_plan[c] == NULL, 1)) {
        rc = run_alg(t, a, alg, co);
    } else {
        const struct osmp_plan *plan = t->plan;
        const char *spec = t->hierarchy;
        t->plan = t->op_plan[c];
        t->hierarchy = t->op_hierarchy[c];
        rc = run_alg(t, a, alg, co);
        t->plan = plan;
        t->hierarchy = spec;
    }
    return rc;
}

/* The end of a run: a local failure (no memory, a failed copy) leaves the
 * others waiting for steps this participant will not take, so the team fails
 * for everyone. */
static inline int run_end(osmp__coll_t t, int rc)
{
    if (__builtin_expect(t->trace != NULL, 0) && rc != OSMP__PENDING) osmp__trace_run_end_(t->trace);
    return __builtin_expect(rc <= OSMP__PENDING && rc >= OSMP_OK, 1) ? rc : osmp__mb_fail(&t->mb, rc);
}

int osmp__run(osmp__coll_t t, osmp_coll_t c, struct osmp__args *a)
{
    const struct osmp__choice *ch = choose(t, c, a);
    if (__builtin_expect(!ch, 0)) return OSMP_ERR_RANGE;
    return run_end(t, run_choice(t, c, a, ch->alg, NULL));
}

int osmp__co_start(osmp__coll_t t, osmp_coll_t c, struct osmp__args *a, const struct osmp__alg **alg)
{
    const struct osmp__choice *ch = choose(t, c, a);
    if (!ch) return OSMP_ERR_RANGE;
    *alg = ch->alg;
    return OSMP_OK;
}

int osmp__co_resume(osmp__coll_t t, osmp_coll_t c, const struct osmp__args *a, const struct osmp__alg *alg,
                    struct osmp__co *co)
{
    return run_end(t, run_choice(t, c, a, alg, co));
}

int osmp__part_start(osmp__coll_t t, osmp_coll_t c, struct osmp__part *p)
{
    p->c = c;
    memset(&p->co, 0, sizeof(p->co));
    return osmp__co_start(t, c, &p->a, &p->alg);
}

int osmp__part_resume(osmp__coll_t t, struct osmp__part *p)
{
    return osmp__co_resume(t, p->c, &p->a, p->alg, &p->co);
}

void osmp__algs_print(FILE *f)
{
    static const char *const size_names[OSMP__NSIZES] = {"inline", "medium", "large"};
    fprintf(f, "Algorithms (force one with OSMP_<OP>_ALG=NAME; auto follows the selection table; \"composition\": "
               "a schedule of other collectives, run in turn):\n");
    for (int c = 0; c < OSMP_COLL_COUNT; c++) {
        fprintf(f, "  %s\n", osmp_coll_name((osmp_coll_t)c));
        for (const struct osmp__alg *a = algs[c]; a->name; a++)
            fprintf(f, "    %-14s %s%s%s\n", a->takes_radix ? "kary:K" : a->name, a->doc,
                    a->needs_single_copy > 0 ? " [single copy]" : "", a->parts ? " [composition]" : "");
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
        fprintf(f, "  %-22s %-20s %-32s %s%s%s\n", coll ? coll : "?", sizes, shapes, name,
                a->needs_single_copy > 0 || table[i].once ? " (where single copy runs)" : "",
                a->max_block ? " (while it fits, else the next row)" : "");
    }
}
