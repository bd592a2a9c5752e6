/* Trees and rings: Ma et al.'s MST and ring, rank-order baselines, metrics,
 * and placement independence of plans, trees and rings. */
#include "test.h"

static struct osmp_graph *graph(osmp_topo_t t, const int *cores, int n, int root, osmp_graph_kind_t kind,
                                const struct osmp_plan *plan)
{
    struct osmp_graph *g = NULL;
    int rc = osmp_graph_create(t, cores, n, root, kind, plan, &g);
    if (rc != OSMP_OK) {
        fprintf(stderr, "  %s graph failed: %s\n", osmp_graph_kind_name(kind), osmp_status_name(rc));
        test_failures++;
    }
    return g;
}

static void check_edges(const struct osmp_graph *g, const int (*want)[2], int n)
{
    CHECK_INT(g->nedges, n);
    for (int e = 0; e < n && e < g->nedges; e++) {
        if (g->edges[e][0] != want[e][0] || g->edges[e][1] != want[e][1])
            fprintf(stderr, "  edge %d is %d->%d, expected %d->%d\n", e, g->edges[e][0], g->edges[e][1], want[e][0],
                    want[e][1]);
        CHECK(g->edges[e][0] == want[e][0] && g->edges[e][1] == want[e][1]);
    }
}

/* A graph is a spanning tree from the root (trees) or one cycle through all (rings). */
static void check_shape(const struct osmp_graph *g)
{
    int n = g->nranks, ring = g->kind == OSMP_GRAPH_RING || g->kind == OSMP_GRAPH_RANKRING;
    int in[4096] = {0}, out[4096] = {0};
    CHECK_INT(g->nedges, n == 1 ? 0 : ring ? n : n - 1);
    for (int e = 0; e < g->nedges; e++) {
        CHECK(g->edges[e][0] != g->edges[e][1]);
        out[g->edges[e][0]]++;
        in[g->edges[e][1]]++;
    }
    for (int v = 0; v < n && n > 1; v++) {
        if (ring) {
            CHECK_INT(in[v], 1);
            CHECK_INT(out[v], 1);
        } else {
            CHECK_INT(in[v], v == g->root ? 0 : 1);
        }
    }
    if (ring && n > 1) { /* one cycle: following next() from the root returns after exactly n steps */
        int next[4096];
        for (int e = 0; e < g->nedges; e++) next[g->edges[e][0]] = g->edges[e][1];
        int v = g->root, steps = 0;
        do {
            v = next[v];
            steps++;
        } while (v != g->root && steps <= n);
        CHECK_INT(steps, n);
    }
}

/* Ma et al.'s example: 12 participants on 4 NUMA nodes, two per board, placed at
 * random. The MST joins the two boards once; the ring enters and leaves each NUMA
 * node once, so it crosses NUMA boundaries 4 times (and boards twice). */
static void test_ma_example(void)
{
    osmp_topo_t t = load_checked(OSMP_TOPO_SYNTHETIC, "group:2 numa:2 core:3 pu:1", 0);
    if (!t) return;
    for (int seed = 1; seed <= 50; seed++) {
        int cores[12];
        char pol[32], err[128];
        snprintf(pol, sizeof(pol), "random:%d", seed);
        REQUIRE_OK(osmp_topo_place(t, pol, 12, cores, err, sizeof(err)));
        for (int root = 0; root < 12; root += 5) {
            struct osmp_graph *mst = graph(t, cores, 12, root, OSMP_GRAPH_MST, NULL);
            struct osmp_graph *ring = graph(t, cores, 12, root, OSMP_GRAPH_RING, NULL);
            if (!mst || !ring) return;
            check_shape(mst);
            check_shape(ring);
            CHECK_INT(mst->cross[OSMP_DOMAIN_GROUP], 1);
            CHECK_INT(mst->cross[OSMP_DOMAIN_NUMA], 3);
            CHECK_INT(ring->cross[OSMP_DOMAIN_NUMA], 4);
            CHECK_INT(ring->cross[OSMP_DOMAIN_GROUP], 2);
            CHECK_INT(ring->depth, 11);
            CHECK_INT(ring->fanout, 1);
            /* The rank-order ring on a random placement is worse. */
            struct osmp_graph *rr = graph(t, cores, 12, root, OSMP_GRAPH_RANKRING, NULL);
            CHECK(rr->cross[OSMP_DOMAIN_NUMA] >= 4);
            osmp_graph_destroy(rr);
            osmp_graph_destroy(mst);
            osmp_graph_destroy(ring);
        }
    }
    osmp_topo_destroy(t);
}

static void test_exact_small_graphs(void)
{
    osmp_topo_t t = load_checked(OSMP_TOPO_SYNTHETIC, "pack:2 l3:2 core:2 pu:1", 0);
    if (!t) return;
    /* Ranks alternate packages (scatter): 0,2 share an L3; so do 1,3; 4,6; 5,7. */
    const int cores[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    struct osmp_graph *g = graph(t, cores, 8, 0, OSMP_GRAPH_MST, NULL);
    /* Kruskal: L3 pairs (0-2, 1-3, 4-6, 5-7), then package pairs with the root's
     * first (0-4), then 1-5; the machine edge with the root (0-1) closes it. */
    static const int mst[][2] = {{0, 2}, {0, 4}, {0, 1}, {4, 6}, {1, 3}, {1, 5}, {5, 7}};
    check_edges(g, mst, 7);
    CHECK_INT(g->depth, 3);
    CHECK_INT(g->fanout, 3);
    CHECK_INT(g->cross[OSMP_DOMAIN_PACKAGE], 1);
    CHECK_INT(g->cross[OSMP_DOMAIN_L3], 3);
    CHECK_INT(g->cross[OSMP_DOMAIN_CORE], 7);
    CHECK_INT(g->cross[OSMP_DOMAIN_MACHINE], -1);
    CHECK_INT(g->cross[OSMP_DOMAIN_NUMA], 0); /* one NUMA node for the whole synthetic machine */
    osmp_graph_destroy(g);

    g = graph(t, cores, 8, 0, OSMP_GRAPH_RING, NULL);
    /* L3 pairs, then 0-4 and 1-5 inside packages, then 2-3 joins the two paths and
     * 6-7 closes the ring; walked from the root towards its lower neighbour 2. */
    static const int ring[][2] = {{0, 2}, {2, 3}, {3, 1}, {1, 5}, {5, 7}, {7, 6}, {6, 4}, {4, 0}};
    check_edges(g, ring, 8);
    CHECK_INT(g->cross[OSMP_DOMAIN_PACKAGE], 2);
    CHECK_INT(g->cross[OSMP_DOMAIN_L3], 4);
    osmp_graph_destroy(g);

    g = graph(t, cores, 8, 0, OSMP_GRAPH_BINOMIAL, NULL);
    static const int bin0[][2] = {{0, 1}, {0, 2}, {2, 3}, {0, 4}, {4, 5}, {4, 6}, {6, 7}};
    check_edges(g, bin0, 7);
    CHECK_INT(g->depth, 3);
    CHECK_INT(g->fanout, 3);
    CHECK_INT(g->cross[OSMP_DOMAIN_PACKAGE], 4); /* 0-1, 2-3, 4-5, 6-7 */
    osmp_graph_destroy(g);

    g = graph(t, cores, 5, 3, OSMP_GRAPH_BINOMIAL, NULL);
    static const int bin3[][2] = {{3, 4}, {3, 0}, {0, 1}, {3, 2}};
    check_edges(g, bin3, 4);
    osmp_graph_destroy(g);

    g = graph(t, cores, 3, 1, OSMP_GRAPH_RANKRING, NULL);
    static const int rr[][2] = {{0, 1}, {1, 2}, {2, 0}};
    check_edges(g, rr, 3);
    osmp_graph_destroy(g);

    g = graph(t, cores, 2, 1, OSMP_GRAPH_RING, NULL);
    static const int two[][2] = {{1, 0}, {0, 1}};
    check_edges(g, two, 2);
    osmp_graph_destroy(g);

    g = graph(t, cores, 1, 0, OSMP_GRAPH_RING, NULL);
    CHECK_INT(g->nedges, 0);
    CHECK_INT(g->depth, 0);
    osmp_graph_destroy(g);

    /* The plan as a tree: leader -> member at each level. */
    struct osmp_plan *p;
    REQUIRE_OK(osmp_plan_create(t, cores, 8, "l3,package", 0, &p));
    g = graph(t, cores, 8, 0, OSMP_GRAPH_PLAN, p);
    static const int plan[][2] = {{0, 2}, {4, 6}, {1, 3}, {5, 7}, {0, 4}, {1, 5}, {0, 1}};
    check_edges(g, plan, 7);
    CHECK_INT(g->depth, 3);
    CHECK_INT(g->cross[OSMP_DOMAIN_PACKAGE], 1);
    osmp_graph_destroy(g);
    CHECK_INT(osmp_graph_create(t, cores, 8, 0, OSMP_GRAPH_PLAN, NULL, &g), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_graph_create(t, cores, 8, 8, OSMP_GRAPH_MST, NULL, &g), OSMP_ERR_RANGE);
    osmp_plan_destroy(p);
    osmp_topo_destroy(t);
}

/* All pairs equally far: Kruskal with root edges first gives the star of depth 1. */
static void test_mst_prefers_root_edges(void)
{
    osmp_topo_t t = load_checked(OSMP_TOPO_SYNTHETIC, "pack:6 core:1 pu:1", 0);
    if (!t) return;
    const int cores[6] = {0, 1, 2, 3, 4, 5};
    struct osmp_graph *g = graph(t, cores, 6, 4, OSMP_GRAPH_MST, NULL);
    static const int star[][2] = {{4, 0}, {4, 1}, {4, 2}, {4, 3}, {4, 5}};
    check_edges(g, star, 5);
    CHECK_INT(g->depth, 1);
    CHECK_INT(g->fanout, 5);
    osmp_graph_destroy(g);
    osmp_topo_destroy(t);
}

/* ---- placement independence: the same cores under any rank order ----
 * Compared: levels and group sizes of the plan, cross-edge counts of MST and
 * ring, and of the plan tree for the spec's kinds. Not compared: the plan tree's
 * edge depth, which depends on which ranks lead (the number of levels, what a
 * level-by-level collective waits for, is compared). */

struct summary {
    char levels[1024]; /* per level: name and sorted group sizes */
    int plan_cross[OSMP_DOMAIN_KIND_COUNT], mst_cross[OSMP_DOMAIN_KIND_COUNT], ring_cross[OSMP_DOMAIN_KIND_COUNT];
    int in_spec[OSMP_DOMAIN_KIND_COUNT]; /* kinds the spec names without a split */
};

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int summarize(osmp_topo_t t, const int *cores, int n, int root, const char *spec, struct summary *s)
{
    struct osmp_plan *p;
    if (osmp_plan_create(t, cores, n, spec, root, &p) != OSMP_OK) return -1;
    char why[256];
    if (osmp_plan_check(p, why, sizeof(why)) != OSMP_OK) {
        fprintf(stderr, "  plan invariant: %s\n", why);
        test_failures++;
    }
    /* Leaders are lowest ranks, so edges inside a group cross domains finer than
     * the group's level in a rank-dependent way: compare only the spec's kinds. */
    char dflt[256];
    struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
    int nl = 0;
    if (!spec) osmp_plan_default_spec(t, dflt, sizeof(dflt));
    osmp_spec_parse(spec ? spec : dflt, lv, &nl, NULL, 0);
    memset(s->in_spec, 0, sizeof(s->in_spec));
    for (int i = 0; i < nl; i++) s->in_spec[lv[i].kind] |= lv[i].split == 1;
    size_t used = 0;
    s->levels[0] = '\0';
    for (int i = 0; i < p->nlevels; i++) {
        int sizes[4096];
        for (int g = 0; g < p->levels[i].ngroups; g++) sizes[g] = p->levels[i].groups[g].nmembers;
        qsort(sizes, (size_t)p->levels[i].ngroups, sizeof(int), cmp_int);
        used += (size_t)snprintf(s->levels + used, sizeof(s->levels) - used, "%s:", p->levels[i].name);
        for (int g = 0; g < p->levels[i].ngroups && used < sizeof(s->levels); g++)
            used += (size_t)snprintf(s->levels + used, sizeof(s->levels) - used, "%d,", sizes[g]);
    }
    struct osmp_graph *gp, *gm, *gr;
    if (osmp_graph_create(t, cores, n, root, OSMP_GRAPH_PLAN, p, &gp) ||
        osmp_graph_create(t, cores, n, root, OSMP_GRAPH_MST, NULL, &gm) ||
        osmp_graph_create(t, cores, n, root, OSMP_GRAPH_RING, NULL, &gr))
        return -1;
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) s->plan_cross[k] = s->in_spec[k] ? gp->cross[k] : -2;
    memcpy(s->mst_cross, gm->cross, sizeof(s->mst_cross));
    memcpy(s->ring_cross, gr->cross, sizeof(s->ring_cross));
    osmp_graph_destroy(gp);
    osmp_graph_destroy(gm);
    osmp_graph_destroy(gr);
    osmp_plan_destroy(p);
    return 0;
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void test_placement_independence(void)
{
    static const struct {
        const char *file;
        unsigned flags;
    } tops[] = {{"amd-milan-2x64.xml", 0},          {"amd-opteron-4s-8numa-64.xml", 0},
                {"ibm-x3950-16pkg-96.xml", 0},      {"kunpeng920-2x64-clusters.xml", 0},
                {"intel-cascadelake-snc-memcache.xml", 0}, {"intel-irregular-groups.xml", OSMP_TOPO_WHOLE_SYSTEM},
                {"intel-knl-7210-flat64.xml", 0}};
    static const char *const specs[] = {NULL, "l3,numa,package", "package:4,group"};
    for (size_t ti = 0; ti < sizeof(tops) / sizeof(tops[0]); ti++) {
        osmp_topo_t t = load_xml(tops[ti].file, tops[ti].flags);
        if (!t) continue;
        int nc = osmp_topo_ncores(t);
        for (uint64_t seed = 1; seed <= 6; seed++) {
            uint64_t s = seed * 7919 + ti;
            /* n distinct cores chosen at random: the set the placements share */
            int n = 12 + (int)(rng(&s) % 30), perm[128], base[64];
            for (int c = 0; c < nc; c++) perm[c] = c;
            for (int c = 0; c < n; c++) {
                int j = c + (int)(rng(&s) % (uint64_t)(nc - c));
                int x = perm[c];
                perm[c] = perm[j];
                perm[j] = x;
                base[c] = perm[c];
            }
            for (size_t si = 0; si < sizeof(specs) / sizeof(specs[0]); si++) {
                /* linear (sorted cores), then shuffles of the rank order; the root
                 * moves with its core so the same core roots every tree */
                qsort(base, (size_t)n, sizeof(int), cmp_int);
                int root_core = base[(int)(rng(&s) % (uint64_t)n)];
                struct summary ref, got;
                int root = 0;
                for (int r = 0; r < n; r++)
                    if (base[r] == root_core) root = r;
                if (summarize(t, base, n, root, specs[si], &ref)) {
                    test_failures++;
                    continue;
                }
                for (int shuffle = 0; shuffle < 5; shuffle++) {
                    int cores[64];
                    memcpy(cores, base, sizeof(int) * (size_t)n);
                    for (int c = n - 1; c > 0; c--) {
                        int j = (int)(rng(&s) % (uint64_t)(c + 1));
                        int x = cores[c];
                        cores[c] = cores[j];
                        cores[j] = x;
                    }
                    for (int r = 0; r < n; r++)
                        if (cores[r] == root_core) root = r;
                    if (summarize(t, cores, n, root, specs[si], &got)) {
                        test_failures++;
                        continue;
                    }
                    int same = strcmp(ref.levels, got.levels) == 0 &&
                               memcmp(ref.plan_cross, got.plan_cross, sizeof(ref.plan_cross)) == 0 &&
                               memcmp(ref.mst_cross, got.mst_cross, sizeof(ref.mst_cross)) == 0 &&
                               memcmp(ref.ring_cross, got.ring_cross, sizeof(ref.ring_cross)) == 0;
                    if (!same) {
                        fprintf(stderr, "  %s seed %d spec %s: %s vs %s\n", tops[ti].file, (int)seed,
                                specs[si] ? specs[si] : "auto", ref.levels, got.levels);
                        for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
                            fprintf(stderr, "   %s plan %d/%d mst %d/%d ring %d/%d\n", osmp_domain_kind_name(k),
                                    ref.plan_cross[k], got.plan_cross[k], ref.mst_cross[k], got.mst_cross[k],
                                    ref.ring_cross[k], got.ring_cross[k]);
                    }
                    CHECK(same);
                }
            }
        }
        osmp_topo_destroy(t);
    }
}

int main(void)
{
    RUN(test_ma_example);
    RUN(test_exact_small_graphs);
    RUN(test_mst_prefers_root_edges);
    RUN(test_placement_independence);
    return TEST_EXIT();
}
