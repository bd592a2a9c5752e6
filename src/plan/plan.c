/*
 * plan: from (topology, the core of each rank, a hierarchy spec, a root) to the
 * communication tree of one team. Pure: no processes, no shared memory.
 *
 * The rules (grouping by where participants run, dropping levels, leaders) are
 * stated once in osmp.h above struct osmp_spec_level; this file implements them.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "plan_internal.h"

/* Identity of the domain (or virtual part of it) holding a core at one level.
 * Domains are identified by kind and logical index because a stand-in domain
 * may be of another kind than the level's (see osmp_topo_domain_of). */
static uint64_t level_key(osmp_topo_t t, int core, const struct osmp_spec_level *l)
{
    const struct osmp_domain *d = &t->domain_of[l->kind][core]->pub;
    uint64_t part = (uint64_t)(core - d->first_core) * (uint64_t)l->split / (uint64_t)d->ncores;
    return (uint64_t)d->kind << 48 | (uint64_t)d->logical_index << 16 | part;
}

struct member {
    int rank;
    int core;
    const uint64_t *keys; /* this rank's key at every spec level */
};

/* qsort has no context argument in C11; the plan is built single-threaded per
 * call, but two threads may plan at once, so the context is thread-local. */
static _Thread_local int tl_from, tl_nkeys;

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    for (int j = tl_from; j < tl_nkeys; j++)
        if (x->keys[j] != y->keys[j]) return x->keys[j] < y->keys[j] ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

struct proto_group {
    int first, count; /* run in the sorted member array */
    int min_core;
};

static int cmp_proto(const void *a, const void *b)
{
    const struct proto_group *x = a, *y = b;
    if (x->min_core != y->min_core) return (x->min_core > y->min_core) - (x->min_core < y->min_core);
    return (x->first > y->first) - (x->first < y->first);
}

void osmp_plan_destroy(struct osmp_plan *plan)
{
    if (!plan) return;
    for (int i = 0; i < plan->nlevels; i++) {
        for (int g = 0; g < plan->levels[i].ngroups; g++) free(plan->levels[i].groups[g].members);
        free(plan->levels[i].groups);
    }
    free(plan->levels);
    free(plan);
}

/* Group `m` (sorted by keys from `lvl` up) into one plan level; returns the
 * number of groups or a negative status. */
static int make_level(struct member *m, int n, int lvl, int nlevels, int root, struct osmp_plan_level *out)
{
    tl_from = lvl;
    tl_nkeys = nlevels;
    qsort(m, (size_t)n, sizeof(*m), cmp_member);
    struct proto_group *pg = malloc(sizeof(*pg) * (size_t)n);
    if (!pg) return OSMP_ERR_NO_MEMORY;
    int ng = 0, biggest = 0;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && memcmp(m[i].keys + lvl, m[j].keys + lvl, sizeof(uint64_t) * (size_t)(nlevels - lvl)) == 0)
            j++;
        pg[ng].first = i;
        pg[ng].count = j - i;
        pg[ng].min_core = m[i].core;
        for (int x = i; x < j; x++)
            if (m[x].core < pg[ng].min_core) pg[ng].min_core = m[x].core;
        if (j - i > biggest) biggest = j - i;
        ng++;
        i = j;
    }
    if (biggest < 2) { /* nobody to talk to at this level: drop it */
        free(pg);
        return 0;
    }
    qsort(pg, (size_t)ng, sizeof(*pg), cmp_proto); /* hardware order */
    out->groups = calloc((size_t)ng, sizeof(*out->groups));
    if (!out->groups) {
        free(pg);
        return OSMP_ERR_NO_MEMORY;
    }
    out->ngroups = ng;
    for (int g = 0; g < ng; g++) {
        struct osmp_plan_group *grp = &out->groups[g];
        grp->nmembers = pg[g].count;
        grp->members = malloc(sizeof(int) * (size_t)pg[g].count);
        if (!grp->members) {
            free(pg);
            return OSMP_ERR_NO_MEMORY;
        }
        for (int x = 0; x < pg[g].count; x++) grp->members[x] = m[pg[g].first + x].rank;
        qsort(grp->members, (size_t)grp->nmembers, sizeof(int), cmp_int);
        grp->leader = grp->members[0];
        for (int x = 0; x < grp->nmembers; x++)
            if (grp->members[x] == root) grp->leader = root;
    }
    free(pg);
    return ng;
}

int osmp_plan_create(osmp_topo_t t, const int *cores, int nranks, const char *spec, int root,
                     struct osmp_plan **out)
{
    if (!t || !cores || !out || nranks < 1) return OSMP_ERR_INVALID_ARG;
    if (root < 0 || root >= nranks) return OSMP_ERR_RANGE;
    for (int r = 0; r < nranks; r++)
        if (cores[r] < 0 || cores[r] >= t->ncores) return OSMP_ERR_RANGE;

    char autospec[256];
    if (!spec || strcmp(spec, "auto") == 0) {
        int rc = osmp_plan_default_spec(t, autospec, sizeof(autospec));
        if (rc) return rc;
        spec = autospec;
    }
    /* Levels: the spec's, then the machine as the implicit top with no key. */
    struct osmp_spec_level levels[OSMP_SPEC_MAX_LEVELS + 1];
    int nspec;
    int rc = osmp_spec_parse(spec, levels, &nspec, NULL, 0);
    if (rc) return rc;
    osmp__spec_sort(t, levels, nspec);
    levels[nspec].kind = OSMP_DOMAIN_MACHINE;
    levels[nspec].split = 1;

    struct osmp_plan *plan = calloc(1, sizeof(*plan));
    struct member *m = malloc(sizeof(*m) * (size_t)nranks);
    uint64_t *keys = malloc(sizeof(*keys) * (size_t)nranks * (size_t)(nspec + 1));
    char *is_leader = calloc((size_t)nranks, 1); /* level + 1 at which a rank last led */
    if (plan) plan->levels = calloc((size_t)nspec + 1, sizeof(*plan->levels));
    if (!plan || !m || !keys || !is_leader || !plan->levels) {
        rc = OSMP_ERR_NO_MEMORY;
        goto out;
    }
    plan->nranks = nranks;
    plan->root = root;
    for (int r = 0; r < nranks; r++) {
        m[r].rank = r;
        m[r].core = cores[r];
        m[r].keys = keys + (size_t)r * (size_t)(nspec + 1);
        for (int j = 0; j < nspec; j++) keys[(size_t)r * (size_t)(nspec + 1) + (size_t)j] = level_key(t, cores[r], &levels[j]);
        keys[(size_t)r * (size_t)(nspec + 1) + (size_t)nspec] = 0; /* the machine */
    }
    int n = nranks;
    for (int lvl = 0; lvl <= nspec && n > 1; lvl++) {
        struct osmp_plan_level *L = &plan->levels[plan->nlevels];
        int ng = make_level(m, n, lvl, nspec + 1, root, L);
        if (ng < 0) {
            rc = ng;
            goto out;
        }
        if (ng == 0) continue;
        if (lvl == nspec)
            snprintf(L->name, sizeof(L->name), "machine");
        else
            osmp__spec_level_format(&levels[lvl], L->name, sizeof(L->name));
        L->kind = levels[lvl].kind;
        L->split = levels[lvl].split;
        plan->nlevels++;
        /* Only leaders go on; a leader's keys above this level are its group's. */
        for (int g = 0; g < ng; g++) is_leader[L->groups[g].leader] = (char)(lvl + 1);
        int next = 0;
        for (int i = 0; i < n; i++)
            if (is_leader[m[i].rank] == (char)(lvl + 1)) m[next++] = m[i];
        n = next;
    }
    rc = OSMP_OK;
out:
    free(m);
    free(keys);
    free(is_leader);
    if (rc) {
        osmp_plan_destroy(plan);
        return rc;
    }
    *out = plan;
    return OSMP_OK;
}

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        osmp__why(why, len, __VA_ARGS__);                                                                    \
        rc = OSMP_ERR_PLAN_INVALID;                                                                          \
        goto out;                                                                                            \
    } while (0)

int osmp_plan_check(const struct osmp_plan *p, char *why, size_t len)
{
    if (!p || p->nranks < 1 || p->root < 0 || p->root >= p->nranks || p->nlevels < 0) {
        osmp__why(why, len, "no plan, or nranks/root out of range");
        return OSMP_ERR_PLAN_INVALID;
    }
    int rc = OSMP_OK;
    /* present[r]: rank r is expected at the current level (all ranks at level 0). */
    char *present = malloc((size_t)p->nranks), *seen = malloc((size_t)p->nranks);
    if (!present || !seen) {
        free(present);
        free(seen);
        return OSMP_ERR_NO_MEMORY;
    }
    memset(present, 1, (size_t)p->nranks);
    if (p->nranks == 1 && p->nlevels != 0) FAIL("a single rank needs no level, plan has %d", p->nlevels);
    if (p->nranks > 1 && p->nlevels == 0) FAIL("%d ranks and no level", p->nranks);
    for (int i = 0; i < p->nlevels; i++) {
        const struct osmp_plan_level *L = &p->levels[i];
        memset(seen, 0, (size_t)p->nranks);
        int biggest = 0;
        if (L->ngroups < 1) FAIL("level %d (%s) has no group", i, L->name);
        for (int g = 0; g < L->ngroups; g++) {
            const struct osmp_plan_group *G = &L->groups[g];
            int leader_in = 0, root_in = 0;
            if (G->nmembers < 1) FAIL("level %d group %d is empty", i, g);
            for (int x = 0; x < G->nmembers; x++) {
                int r = G->members[x];
                if (r < 0 || r >= p->nranks) FAIL("level %d group %d has rank %d out of range", i, g, r);
                if (x > 0 && G->members[x - 1] >= r) FAIL("level %d group %d members not ascending", i, g);
                if (!present[r]) FAIL("rank %d at level %d is not a leader of level %d", r, i, i - 1);
                if (seen[r]) FAIL("rank %d twice at level %d", r, i);
                seen[r] = 1;
                leader_in |= r == G->leader;
                root_in |= r == p->root;
            }
            if (!leader_in) FAIL("leader %d of level %d group %d is not a member", G->leader, i, g);
            if (root_in && G->leader != p->root) FAIL("root %d does not lead its group at level %d", p->root, i);
            if (G->nmembers > biggest) biggest = G->nmembers;
        }
        if (biggest < 2) FAIL("level %d (%s) has no group of two", i, L->name);
        for (int r = 0; r < p->nranks; r++)
            if (present[r] && !seen[r]) FAIL("rank %d missing at level %d", r, i);
        memset(present, 0, (size_t)p->nranks);
        for (int g = 0; g < L->ngroups; g++) present[L->groups[g].leader] = 1;
    }
    if (p->nlevels > 0) {
        const struct osmp_plan_level *top = &p->levels[p->nlevels - 1];
        if (top->ngroups != 1) FAIL("top level has %d groups", top->ngroups);
        if (top->groups[0].leader != p->root) FAIL("top leader %d is not the root %d", top->groups[0].leader, p->root);
    }
out:
    free(present);
    free(seen);
    return rc;
}
