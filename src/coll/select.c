/*
 * Algorithm selection: the one table that says which algorithm runs for each
 * collective, size class and team shape, and the machinery that resolves it
 * (with OSMP_<OP>_ALG) once per team, so a call costs one table lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

/* Team shapes. */
enum { ONE = 1, FLAT_SMALL = 2, FLAT_LARGE = 4, HIER = 8, ANY_SHAPE = 15 };
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
    int radix;
} table[] = {
    {OSMP_COLL_BARRIER, ANY_SIZE, ONE | FLAT_SMALL, "direct", 0},
    {OSMP_COLL_BARRIER, ANY_SIZE, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_BCAST, ANY_SIZE, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_REDUCE, INLINE | MEDIUM, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_REDUCE, LARGE, HIER, "hsliced", 0},
    {OSMP_COLL_REDUCE, LARGE, ANY_SHAPE, "kary", 2},
    {OSMP_COLL_ALLREDUCE, INLINE, FLAT_SMALL, "direct", 0},
    {OSMP_COLL_ALLREDUCE, LARGE, FLAT_SMALL | FLAT_LARGE, "sliced", 0},
    {OSMP_COLL_ALLREDUCE, LARGE, HIER, "hsliced", 0},
    {OSMP_COLL_ALLREDUCE, INLINE | MEDIUM, ANY_SHAPE, "flat", 0},
    {OSMP_COLL_ALLREDUCE, LARGE, ANY_SHAPE, "kary", 2},
    {OSMP_COLL_GATHER, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_ALLGATHER, ANY_SIZE, ANY_SHAPE, "gather_bcast", 0},
    {OSMP_COLL_SCATTER, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_REDUCE_SCATTER_BLOCK, ANY_SIZE, ANY_SHAPE, "reduces", 0},
    {OSMP_COLL_ALLTOALL, ANY_SIZE, ANY_SHAPE, "pairwise", 0},
    {OSMP_COLL_ALLTOALL, ANY_SIZE, ANY_SHAPE, "scatters", 0},
    /* The vector variants: one algorithm for every size (ranks see different counts). */
    {OSMP_COLL_GATHERV, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_SCATTERV, ANY_SIZE, ANY_SHAPE, "direct", 0},
    {OSMP_COLL_ALLGATHERV, ANY_SIZE, ANY_SHAPE, "gatherv_bcast", 0},
    {OSMP_COLL_ALLTOALLV, ANY_SIZE, ANY_SHAPE, "scatters", 0},
    {OSMP_COLL_REDUCE_SCATTER, ANY_SIZE, ANY_SHAPE, "reduces", 0},
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

static unsigned shape_of(osmp__coll_t t)
{
    if (t->size == 1) return ONE;
    if (!osmp__flat_team(t)) return HIER;
    return t->size <= FLAT_SMALL_MAX ? FLAT_SMALL : FLAT_LARGE;
}

void osmp__select_init(osmp__coll_t t, const struct osmp__choice forced[OSMP_COLL_COUNT])
{
    unsigned shape = shape_of(t);
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
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
                        ch->radix = table[i].radix;
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
    a->single_copy = t->single_copy && bytes >= t->single_copy_min;
    const struct osmp__choice *ch = &t->choice[c][sz][a->single_copy];
    a->radix = ch->radix;
    return ch->alg->run(t, a);
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
               "one = a team of one, flat = one group of <= %d / more ranks, hier = several levels):\n",
            OSMP_INLINE_MAX, OSMP__MEDIUM_MAX, FLAT_SMALL_MAX);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        char sizes[32] = "", shapes[48] = "";
        for (int sz = 0; sz < OSMP__NSIZES; sz++)
            if (table[i].sizes >> sz & 1) snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s",
                                                   *sizes ? "," : "", size_names[sz]);
        static const char *const shape_names[] = {"one", "flat<=16", "flat>16", "hier"};
        for (int s = 0; s < 4; s++)
            if (table[i].shapes >> s & 1) snprintf(shapes + strlen(shapes), sizeof(shapes) - strlen(shapes), "%s%s",
                                                   *shapes ? "," : "", shape_names[s]);
        const struct osmp__alg *a = find(table[i].coll, table[i].alg, strlen(table[i].alg));
        char name[32];
        snprintf(name, sizeof(name), a->takes_radix ? "%s:%d" : "%s", table[i].alg, table[i].radix);
        fprintf(f, "  %-22s %-20s %-32s %s%s\n", osmp_coll_name(table[i].coll), sizes, shapes, name,
                a->needs_single_copy ? " (where single copy runs)" : "");
    }
}
