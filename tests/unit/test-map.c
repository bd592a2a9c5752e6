/* Rank -> core mapping (src/plan/map.c): validity, the auto mapping never
 * dearer than any other algorithm, optimality against brute force on small
 * cases, exact greedy choices, and the matrix parsers. Costs are recomputed
 * here from osmp_topo_distance, independently of map.c. */
#include <math.h>

#include "plan/map.h"
#include "test.h"

#define T OSMP_TOPOLOGIES_DIR

static osmp_topo_t load(osmp_topo_source_t src, const char *what)
{
    osmp_topo_t t = NULL;
    if (osmp_topo_load(src, what, 0, &t) != OSMP_OK) {
        fprintf(stderr, "  cannot load %s: %s\n", what, osmp_topo_last_error());
        test_failures++;
    }
    return t;
}

/* Traffic patterns, row i = bytes rank i sends to rank j. */
static double *pattern(const char *name, int n, unsigned seed)
{
    double *m = calloc((size_t)n * n, sizeof(double));
#define ADD(i, j, v) (m[(size_t)(i) * n + (j)] += (v))
    if (!strcmp(name, "ring"))
        for (int i = 0; i < n; i++) ADD(i, (i + 1) % n, 10), ADD(i, (i + n - 1) % n, 10);
    else if (!strcmp(name, "stencil2x4")) /* 2 x 4 grid, rank = y * 4 + x */
        for (int i = 0; i < n; i++) {
            int x = i % 4, y = i / 4;
            if (x + 1 < 4) ADD(i, i + 1, 7), ADD(i + 1, i, 7);
            if (y + 1 < 2) ADD(i, i + 4, 3), ADD(i + 4, i, 3);
        }
    else if (!strcmp(name, "pairs")) /* rank i talks to rank i + n/2 only: packed puts partners far apart */
        for (int i = 0; i < n / 2; i++) ADD(i, i + n / 2, 100), ADD(i + n / 2, i, 50);
    else if (!strcmp(name, "random")) { /* dense, weights 0..99 */
        unsigned s = seed * 2654435761u + 1;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                s = s * 1103515245u + 12345u;
                if (i != j) ADD(i, j, (s >> 16) % 100);
            }
    } else if (!strcmp(name, "sparse")) { /* a few heavy random pairs */
        unsigned s = seed * 40503u + 7;
        for (int k = 0; k < n; k++) {
            s = s * 1103515245u + 12345u;
            int i = (int)((s >> 16) % (unsigned)n);
            s = s * 1103515245u + 12345u;
            int j = (int)((s >> 16) % (unsigned)n);
            s = s * 1103515245u + 12345u;
            if (i != j) ADD(i, j, 1 + (s >> 16) % 1000);
        }
    }
#undef ADD
    return m;
}

static double cost_of(osmp_topo_t t, const double *m, int n, const int *core_of)
{
    double c = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) c += m[(size_t)i * n + j] * osmp_topo_distance(t, core_of[i], core_of[j]);
    return c;
}

/* Every injective map of n ranks into the cores: the least cost. */
static double brute(osmp_topo_t t, const double *m, int n, const int *cores, int ncores)
{
    int pick[16], used[64] = {0}, core_of[16], depth = 0;
    double best = INFINITY;
    pick[0] = -1;
    while (depth >= 0) {
        if (pick[depth] >= 0) used[pick[depth]] = 0;
        do pick[depth]++;
        while (pick[depth] < ncores && used[pick[depth]]);
        if (pick[depth] == ncores) {
            depth--;
            continue;
        }
        used[pick[depth]] = 1;
        core_of[depth] = cores[pick[depth]];
        if (depth + 1 == n) {
            double c = cost_of(t, m, n, core_of);
            if (c < best) best = c;
        } else {
            pick[++depth] = -1;
        }
    }
    return best;
}

/* slot_of must be distinct slots in range. */
static int valid(const int *slot_of, int n, int nslots)
{
    char seen[4096] = {0};
    for (int i = 0; i < n; i++) {
        if (slot_of[i] < 0 || slot_of[i] >= nslots || seen[slot_of[i]]) return 0;
        seen[slot_of[i]] = 1;
    }
    return 1;
}

/* Every algorithm gives a valid mapping whose cost map.c computes as we do;
 * auto is never dearer than any other, refined or not. */
static void check_case(osmp_topo_t t, const int *cores, int ns, const double *mat, int n, double *auto_cost)
{
    struct osmp__map m;
    REQUIRE_OK(osmp__map_init(&m, t, cores, ns, mat, n));
    int slot_of[4096], core_of[4096];
    double cost[OSMP__MAP_NALGS];
    for (int a = 0; a < OSMP__MAP_NALGS; a++) {
        CHECK_INT(osmp__map_run(&m, a, slot_of), OSMP_OK);
        CHECK(valid(slot_of, n, ns));
        for (int i = 0; i < n; i++) core_of[i] = cores[slot_of[i]];
        cost[a] = cost_of(t, mat, n, core_of);
        CHECK(fabs(cost[a] - osmp__map_cost(&m, slot_of)) < 1e-6 * (1 + cost[a]));
        if (a != OSMP__MAP_AUTO) {
            osmp__map_refine(&m, slot_of);
            CHECK(valid(slot_of, n, ns));
            CHECK(osmp__map_cost(&m, slot_of) <= cost[a] + 1e-9);
            CHECK(cost[OSMP__MAP_AUTO - 1] >= 0); /* silence: filled below */
        }
    }
    for (int a = 0; a < OSMP__MAP_AUTO; a++) {
        if (cost[OSMP__MAP_AUTO] > cost[a] + 1e-9)
            fprintf(stderr, "  auto %.0f dearer than %s %.0f\n", cost[OSMP__MAP_AUTO], osmp__map_alg_name(a), cost[a]);
        CHECK(cost[OSMP__MAP_AUTO] <= cost[a] + 1e-9);
    }
    if (auto_cost) *auto_cost = cost[OSMP__MAP_AUTO];
    osmp__map_fini(&m);
}

static void test_validity_real_machines(void)
{
    static const char *machines[] = {"amd-milan-2x64.xml", "intel-knl-7210-flat64.xml", "ibm-x3950-16pkg-96.xml",
                                     "amd-opteron-4s-8numa-64.xml", "kunpeng920-2x64-clusters.xml",
                                     "intel-irregular-groups.xml"};
    static const char *pats[] = {"ring", "pairs", "random", "sparse"};
    for (size_t k = 0; k < sizeof(machines) / sizeof(*machines); k++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", T, machines[k]);
        osmp_topo_t t = load(OSMP_TOPO_XML, path);
        if (!t) continue;
        int nc = osmp_topo_ncores(t), cores[512];
        for (int c = 0; c < nc; c++) cores[c] = c;
        for (size_t p = 0; p < sizeof(pats) / sizeof(*pats); p++) {
            int n = nc < 48 ? nc : 48;
            double *mat = pattern(pats[p], n, (unsigned)k);
            check_case(t, cores, nc, mat, n, NULL);
            free(mat);
        }
        osmp_topo_destroy(t);
    }
}

/* 8 ranks on the 8 cores of a 2-package, 2-L3 machine, and 6 ranks on 8
 * cores (the mapping also chooses which cores stay free): auto reaches the
 * brute-force optimum on each named case. */
static void test_brute_force(void)
{
    osmp_topo_t t = load(OSMP_TOPO_SYNTHETIC, "pack:2 l3:2 core:2 pu:1");
    osmp_topo_t t2 = load(OSMP_TOPO_SYNTHETIC, "pack:2 numa:2 core:2 pu:1");
    if (!t || !t2) return;
    int cores[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int scattered[8] = {7, 0, 5, 2, 3, 4, 1, 6};
    static const struct {
        const char *pat;
        int n;
        unsigned seed;
    } cases[] = {{"ring", 8, 0},   {"stencil2x4", 8, 0}, {"pairs", 8, 0},  {"random", 8, 1}, {"random", 8, 2},
                 {"random", 8, 3}, {"sparse", 8, 4},     {"sparse", 8, 5}, {"ring", 6, 0},   {"pairs", 6, 0},
                 {"random", 6, 6}, {"sparse", 6, 7}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++)
        for (int v = 0; v < 3; v++) {
            osmp_topo_t tt = v == 2 ? t2 : t;
            const int *cl = v == 1 ? scattered : cores;
            double *mat = pattern(cases[k].pat, cases[k].n, cases[k].seed), got = -1;
            check_case(tt, cl, 8, mat, cases[k].n, &got);
            double want = brute(tt, mat, cases[k].n, cl, 8);
            if (got != want)
                fprintf(stderr, "  %s n=%d seed %u variant %d: auto %.0f, optimum %.0f\n", cases[k].pat, cases[k].n,
                        cases[k].seed, v, got, want);
            CHECK(got == want);
            free(mat);
        }
    osmp_topo_destroy(t);
    osmp_topo_destroy(t2);
}

/* The greedy designs' choices, worked by hand on "pack:2 numa:2 core:2"
 * (cores 0-1 NUMA 0, 2-3 NUMA 1, 4-5 NUMA 2, 6-7 NUMA 3; packages 0-3, 4-7):
 * pairs (0,4) 100 > (1,5) 90 > (2,6) 80 > (3,7) 70 > (0,1) 5.
 * design1: each pair on the closest free pair, the lowest cores first:
 *   (0,4)->0,1 (1,5)->2,3 (2,6)->4,5 (3,7)->6,7.
 * design2: pairs dealt over the NUMA domains in turn: the same here, since
 * each domain holds exactly one pair; with 4 ranks on 8 cores the two pairs
 * go to NUMA 0 and NUMA 1 (design1: the same, the closest free pairs).
 * packed: rank i on core i (cost: every pair crosses packages, rung 4).
 * round_robin: ranks over NUMA 0,1,2,3,0,1,2,3: cores 0,2,4,6,1,3,5,7. */
static void test_greedy_exact(void)
{
    osmp_topo_t t = load(OSMP_TOPO_SYNTHETIC, "pack:2 numa:2 core:2 pu:1");
    if (!t) return;
    double mat[64] = {0};
    mat[0 * 8 + 4] = 100, mat[1 * 8 + 5] = 90, mat[2 * 8 + 6] = 80, mat[3 * 8 + 7] = 70, mat[0 * 8 + 1] = 5;
    int cores[8] = {0, 1, 2, 3, 4, 5, 6, 7}, slot_of[8];
    struct osmp__map m;
    REQUIRE_OK(osmp__map_init(&m, t, cores, 8, mat, 8));
    static const int want_d1[8] = {0, 2, 4, 6, 1, 3, 5, 7}, want_rr[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    CHECK_INT(osmp__map_run(&m, OSMP__MAP_DESIGN1, slot_of), OSMP_OK);
    for (int i = 0; i < 8; i++) CHECK_INT(slot_of[i], want_d1[i]);
    /* rung 3 (same NUMA) for the 4 pairs, rung 4 (0 on core 0, 1 on core 2: same package) for (0,1) */
    CHECK_INT((long long)osmp__map_cost(&m, slot_of), (100 + 90 + 80 + 70) * 3 + 5 * 4);
    CHECK_INT(osmp__map_run(&m, OSMP__MAP_DESIGN2, slot_of), OSMP_OK);
    for (int i = 0; i < 8; i++) CHECK_INT(slot_of[i], want_d1[i]);
    CHECK_INT(osmp__map_run(&m, OSMP__MAP_ROUND_ROBIN, slot_of), OSMP_OK);
    for (int i = 0; i < 8; i++) CHECK_INT(slot_of[i], want_rr[i]);
    CHECK_INT(osmp__map_run(&m, OSMP__MAP_PACKED, slot_of), OSMP_OK);
    CHECK_INT((long long)osmp__map_cost(&m, slot_of), (100 + 90 + 80 + 70) * 6 + 5 * 3);
    osmp__map_fini(&m);

    /* 4 ranks, 2 pairs on 8 cores: design1 fills NUMA 0 then NUMA 1 (the
     * closest free pairs by lowest core); design2 the same domains in turn;
     * a third pair would go to NUMA 2 under design2. With 6 ranks and 3
     * pairs on "pack:1 numa:3 core:4": design1 packs pairs into NUMA 0
     * (cores 0,1 then 2,3), design2 spreads them (0,1 / 4,5 / 8,9). */
    osmp_topo_t t3 = load(OSMP_TOPO_SYNTHETIC, "pack:1 numa:3 core:4 pu:1");
    if (t3) {
        double m6[36] = {0};
        m6[0 * 6 + 1] = 30, m6[2 * 6 + 3] = 20, m6[4 * 6 + 5] = 10;
        int c12[12];
        for (int i = 0; i < 12; i++) c12[i] = i;
        REQUIRE_OK(osmp__map_init(&m, t3, c12, 12, m6, 6));
        static const int d1[6] = {0, 1, 2, 3, 4, 5}, d2[6] = {0, 1, 4, 5, 8, 9};
        CHECK_INT(osmp__map_run(&m, OSMP__MAP_DESIGN1, slot_of), OSMP_OK);
        for (int i = 0; i < 6; i++) CHECK_INT(slot_of[i], d1[i]);
        CHECK_INT(osmp__map_run(&m, OSMP__MAP_DESIGN2, slot_of), OSMP_OK);
        for (int i = 0; i < 6; i++) CHECK_INT(slot_of[i], d2[i]);
        osmp__map_fini(&m);
        osmp_topo_destroy(t3);
    }
    osmp_topo_destroy(t);
}

static void test_parse(void)
{
    double *m;
    int n;
    char err[256];
    CHECK_INT(osmp__map_parse_matrix("0 5 \n7 0 \n", &m, &n, err, sizeof(err)), OSMP_OK);
    CHECK_INT(n, 2);
    if (n == 2) CHECK(m[1] == 5 && m[2] == 7 && m[0] == 0);
    free(m);
    CHECK_INT(osmp__map_parse_matrix("0 1.5e3\n\n2 0\n\n", &m, &n, err, sizeof(err)), OSMP_OK);
    CHECK(n == 2 && m[1] == 1500);
    free(m);
    /* Open MPI monitoring .prof: records summed per (src, dst), other kinds too */
    CHECK_INT(osmp__map_parse_matrix("# POINT TO POINT\nE\t0\t2\t48 bytes\t2 msgs sent\n"
                                     "I\t0\t2\t16 bytes\t1 msgs sent\nC\t2\t1\t8 bytes\t1 msgs sent\n",
                                     &m, &n, err, sizeof(err)),
              OSMP_OK);
    CHECK_INT(n, 3);
    if (n == 3) CHECK(m[0 * 3 + 2] == 64 && m[2 * 3 + 1] == 8 && m[1 * 3 + 0] == 0);
    free(m);
    static const struct {
        const char *text, *why;
    } bad[] = {{"0 1\n2\n", "line 2: 1 values, the first row has 2 (ragged matrix)"},
               {"0 -1\n2 0\n", "line 1: negative value \"-1\""},
               {"0 x\n2 0\n", "line 1: not a number \"x\""},
               {"0 nan\n2 0\n", "line 1: not a number \"nan\""},
               {"0 0x10\n2 0\n", "line 1: not a number \"0x10\""},
               {"0 1 2\n3 4 5\n", "2 rows of 3 values: a matrix of N lines of N numbers expected"},
               {"\n\n", "empty matrix"},
               {"E 0 1 12 bytes 1 msgs sent\nE 0 -1 4 bytes 1 msgs sent\n",
                "line 2: not a monitoring record \"KIND SRC DST BYTES bytes MSGS msgs\": \"E 0 -1 4 bytes 1 msgs sent\""}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
        m = NULL;
        CHECK_INT(osmp__map_parse_matrix(bad[k].text, &m, &n, err, sizeof(err)), OSMP_ERR_INVALID_ARG);
        CHECK_STR(err, bad[k].why);
        CHECK(m == NULL);
    }
}

static void test_bad_problem(void)
{
    osmp_topo_t t = load(OSMP_TOPO_SYNTHETIC, "pack:1 core:2 pu:1");
    if (!t) return;
    double mat[9] = {0};
    int cores[3] = {0, 1, 2};
    struct osmp__map m;
    CHECK_INT(osmp__map_init(&m, t, cores, 2, mat, 3), OSMP_ERR_INVALID_ARG); /* 3 ranks, 2 cores */
    CHECK_INT(osmp__map_init(&m, t, cores, 3, mat, 3), OSMP_ERR_INVALID_ARG); /* core 2 does not exist */
    CHECK_INT(osmp__map_alg_parse("design3"), -1);
    CHECK_STR(osmp__map_alg_name(osmp__map_alg_parse("round_robin")), "round_robin");
    osmp_topo_destroy(t);
}

int main(void)
{
    RUN(test_parse);
    RUN(test_bad_problem);
    RUN(test_greedy_exact);
    RUN(test_brute_force);
    RUN(test_validity_real_machines);
    return test_failures ? 1 : 0;
}
