/* plan layer: hierarchy specs, groups and leaders, level dropping, the checker. */
#include "test.h"

/* Build a plan, run the invariant check on it (every test does), and compare it
 * with the expected levels written as "name: leader[m m m] leader[m m]; name: ...".
 * Groups are listed in hardware order, members ascending, leader first. */
static void expect_plan(osmp_topo_t t, const int *cores, int n, const char *spec, int root, const char *want)
{
    struct osmp_plan *p = NULL;
    int rc = osmp_plan_create(t, cores, n, spec, root, &p);
    if (rc != OSMP_OK) {
        fprintf(stderr, "  plan with spec \"%s\" failed: %s\n", spec ? spec : "(auto)", osmp_status_name(rc));
        test_failures++;
        return;
    }
    char why[256];
    if (osmp_plan_check(p, why, sizeof(why)) != OSMP_OK) {
        fprintf(stderr, "  plan invariant: %s\n", why);
        test_failures++;
    }
    char got[4096];
    size_t used = 0;
    got[0] = '\0';
    for (int i = 0; i < p->nlevels; i++) {
        used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s:", i ? "; " : "", p->levels[i].name);
        for (int g = 0; g < p->levels[i].ngroups; g++) {
            const struct osmp_plan_group *G = &p->levels[i].groups[g];
            used += (size_t)snprintf(got + used, sizeof(got) - used, " %d[", G->leader);
            for (int x = 0; x < G->nmembers; x++)
                used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%d", x ? " " : "", G->members[x]);
            used += (size_t)snprintf(got + used, sizeof(got) - used, "]");
        }
    }
    CHECK_STR(got, want);
    osmp_plan_destroy(p);
}

static void test_spec_parse(void)
{
    struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
    int n = -1;
    char err[256], buf[128];
    REQUIRE_OK(osmp_spec_parse("l3,numa,package", lv, &n, err, sizeof(err)));
    CHECK_INT(n, 3);
    CHECK_INT(lv[0].kind, OSMP_DOMAIN_L3);
    CHECK_INT(lv[1].kind, OSMP_DOMAIN_NUMA);
    CHECK_INT(lv[2].kind, OSMP_DOMAIN_PACKAGE);
    CHECK_INT(lv[2].split, 1);
    REQUIRE_OK(osmp_spec_parse(" L2 , package:4,Package ", lv, &n, err, sizeof(err)));
    CHECK_INT(n, 3);
    CHECK_INT(lv[1].split, 4);
    osmp_spec_format(lv, n, buf, sizeof(buf));
    CHECK_STR(buf, "l2,package:4,package");
    REQUIRE_OK(osmp_spec_parse("", lv, &n, err, sizeof(err)));
    CHECK_INT(n, 0);
    REQUIRE_OK(osmp_spec_parse("flat", lv, &n, err, sizeof(err)));
    CHECK_INT(n, 0);
    static const char *const bad[] = {"l4",      "l3,,numa", "l3,",       ",l3",      "package:0", "package:",
                                      "package:x", "pu",     "l3;numa",   "package:5000", "numa:2:3",
                                      "core,core,core,core,core,core,core,core,core,core,core,core,core,core,core,core,core"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = osmp_spec_parse(bad[i], lv, &n, err, sizeof(err));
        if (rc != OSMP_ERR_SPEC) fprintf(stderr, "  spec \"%s\" accepted\n", bad[i]);
        CHECK_INT(rc, OSMP_ERR_SPEC);
    }
    osmp_spec_parse("l3,l4", lv, &n, err, sizeof(err));
    CHECK(strstr(err, "\"l4\"") != NULL);
}

/* The default spec of each machine, reviewed by hand against its lstopo. */
static void test_default_specs(void)
{
    static const struct {
        const char *file, *spec;
    } cases[] = {
        {"amd-milan-2x64.xml", "l3,numa"},                     /* CCX of 8, then the package (= NUMA) */
        {"amd-opteron-4s-8numa-64.xml", "l2,l3,package"},      /* L3 = NUMA node, two per package */
        {"ibm-x3950-16pkg-96.xml", "l2,l3,numa"},              /* package = L3, NUMA node = board */
        {"intel-cascadelake-2x20-smt.xml", "core,l3:5,l3"},    /* 20 cores behind one L3: 5 parts of 4 */
        {"intel-cascadelake-snc-memcache.xml", "core,numa:5,numa,l3"}, /* 10-core NUMA nodes: 5 parts of 2 */
        {"intel-knl-7210-flat64.xml", "core,l2,machine:8"},    /* 32 tiles in one flat package: 8 parts of 4 */
        {"kunpeng920-2x64-clusters.xml", "group,l3,package"},  /* clusters of 4, L3 = NUMA of 32 */
        {"ibm-power7-64c-smt4.xml", "core,numa,group"},        /* inner groups = NUMA, outer = board */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        osmp_topo_t t = load_xml(cases[i].file, 0);
        if (!t) continue;
        char buf[256];
        REQUIRE_OK(osmp_plan_default_spec(t, buf, sizeof(buf)));
        if (strcmp(buf, cases[i].spec) != 0) fprintf(stderr, "  %s\n", cases[i].file);
        CHECK_STR(buf, cases[i].spec);
        osmp_topo_destroy(t);
    }
}

/* AMD Milan: L3 (CCX) of 8 cores, 8 CCX per package. Ranks alternate packages. */
static void test_groups_milan(void)
{
    osmp_topo_t t = load_xml("amd-milan-2x64.xml", 0);
    if (!t) return;
    const int cores[] = {0, 64, 8, 72, 1, 65, 9, 73};
    expect_plan(t, cores, 8, "l3,numa", 0, "l3: 0[0 4] 2[2 6] 1[1 5] 3[3 7]; numa: 0[0 2] 1[1 3]; machine: 0[0 1]");
    /* Root 5 leads its CCX, its package and the machine. */
    expect_plan(t, cores, 8, "l3,numa", 5, "l3: 0[0 4] 2[2 6] 5[1 5] 3[3 7]; numa: 0[0 2] 5[3 5]; machine: 5[0 5]");
    /* The package repeats the NUMA node: dropped. */
    expect_plan(t, cores, 8, "l3,numa,package", 0,
                "l3: 0[0 4] 2[2 6] 1[1 5] 3[3 7]; numa: 0[0 2] 1[1 3]; machine: 0[0 1]");
    /* Rank order does not matter, only cores: the same cores in another rank order. */
    const int shuffled[] = {73, 9, 65, 1, 72, 8, 64, 0};
    expect_plan(t, shuffled, 8, "l3,numa", 7, "l3: 7[3 7] 1[1 5] 2[2 6] 0[0 4]; numa: 7[1 7] 0[0 2]; machine: 7[0 7]");
    /* A single participant needs no level; repeated cores (oversubscription) share the core level. */
    expect_plan(t, cores, 1, "l3,numa", 0, "");
    const int repeated[] = {3, 3, 4, 4, 40};
    expect_plan(t, repeated, 5, "core,l3,numa", 0, "core: 0[0 1] 2[2 3] 4[4]; l3: 0[0 2] 4[4]; numa: 0[0 4]");
    osmp_topo_destroy(t);
}

/* Cascade Lake with SNC: logical core k is OS PU 4k mod 40 (see test-topo); the plan
 * speaks logical cores only. NUMA nodes hold cores 0-9, 10-19, 20-29, 30-39. */
static void test_groups_snc_os_numbering(void)
{
    osmp_topo_t t = load_xml("intel-cascadelake-snc-memcache.xml", 0);
    if (!t) return;
    const int cores[] = {0, 10, 1, 11, 20, 30, 21, 31};
    expect_plan(t, cores, 8, "numa,package", 0,
                "numa: 0[0 2] 1[1 3] 4[4 6] 5[5 7]; package: 0[0 1] 4[4 5]; machine: 0[0 4]");
    /* Default spec core,numa:2,numa,l3: no core is shared (dropped), the first half of
     * each NUMA node holds both of its ranks (numa:2 kept, numa then repeats it). */
    expect_plan(t, cores, 8, NULL, 3, "numa:5: 0[0 2] 3[1 3] 4[4 6] 5[5 7]; l3: 3[0 3] 4[4 5]; machine: 3[3 4]");
    osmp_topo_destroy(t);
}

/* Xeon Phi 7210: 64 cores in one package, nothing between tiles (L2 pairs) and the
 * package. A virtual split gives the package four parts of 16 cores. */
static void test_groups_knl_virtual_split(void)
{
    osmp_topo_t t = load_xml("intel-knl-7210-flat64.xml", 0);
    if (!t) return;
    int cores[16];
    for (int r = 0; r < 16; r++) cores[r] = 4 * r; /* 4 ranks in each quarter */
    expect_plan(t, cores, 16, "package:4", 5,
                "package:4: 0[0 1 2 3] 5[4 5 6 7] 8[8 9 10 11] 12[12 13 14 15]; machine: 5[0 5 8 12]");
    /* Without the split one flat group of 16 (the package spans the machine, so
     * no machine level follows it). */
    expect_plan(t, cores, 16, "package", 0, "package: 0[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]");
    /* An uneven split: 3 parts of 64 cores are 0-21, 22-42, 43-63. */
    const int c3[] = {21, 22, 42, 43, 0, 63};
    expect_plan(t, c3, 6, "package:3", 0, "package:3: 0[0 4] 1[1 2] 3[3 5]; machine: 0[0 1 3]");
    osmp_topo_destroy(t);
}

/* IBM x3950: NUMA nodes are boards of 4 packages (6 cores each) above the packages. */
static void test_groups_numa_above_package(void)
{
    osmp_topo_t t = load_xml("ibm-x3950-16pkg-96.xml", 0);
    if (!t) return;
    const int cores[] = {0, 6, 24, 1, 30, 7, 95};
    const char *want = "package: 0[0 3] 1[1 5] 2[2] 4[4] 6[6]; numa: 0[0 1] 2[2 4] 6[6]; machine: 0[0 2 6]";
    expect_plan(t, cores, 7, "package,numa", 0, want);
    /* Levels are taken from small to large domains whatever order the spec gives. */
    expect_plan(t, cores, 7, "numa,package", 0, want);
    osmp_topo_destroy(t);
}

/* Irregular groups (whole system): packages 0-1 and 2-3 and 5-6 on boards,
 * packages 4 and 7 alone; 8 cores per package. */
static void test_groups_irregular(void)
{
    osmp_topo_t t = load_xml("intel-irregular-groups.xml", OSMP_TOPO_WHOLE_SYSTEM);
    if (!t) return;
    const int cores[] = {0, 8, 16, 32, 33, 40, 56, 57};
    expect_plan(t, cores, 8, "package,group", 0,
                "package: 0[0] 1[1] 2[2] 3[3 4] 5[5] 6[6 7]; group: 0[0 1] 2[2] 3[3] 5[5] 6[6]; machine: 0[0 2 3 5 6]");
    osmp_topo_destroy(t);
}

static void test_errors_and_checker(void)
{
    osmp_topo_t t = load_xml("amd-milan-2x64.xml", 0);
    if (!t) return;
    const int cores[] = {0, 1, 8, 9};
    const int bad_core[] = {0, 128};
    struct osmp_plan *p = (struct osmp_plan *)0x1;
    CHECK_INT(osmp_plan_create(t, cores, 4, "l3,l4", 0, &p), OSMP_ERR_SPEC);
    CHECK_INT(osmp_plan_create(t, bad_core, 2, "l3", 0, &p), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, cores, 4, "l3", 4, &p), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, cores, 4, "l3", -1, &p), OSMP_ERR_RANGE);
    CHECK_INT(osmp_plan_create(t, cores, 0, "l3", 0, &p), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_plan_create(t, NULL, 4, "l3", 0, &p), OSMP_ERR_INVALID_ARG);
    CHECK(p == (struct osmp_plan *)0x1);
    /* The checker must catch what a broken planner would produce. */
    REQUIRE_OK(osmp_plan_create(t, cores, 4, "l3", 1, &p));
    char why[256];
    CHECK_INT(osmp_plan_check(p, why, sizeof(why)), OSMP_OK);
    p->levels[0].groups[0].leader = 0; /* root 1 no longer leads its group */
    CHECK_INT(osmp_plan_check(p, why, sizeof(why)), OSMP_ERR_PLAN_INVALID);
    p->levels[0].groups[0].leader = 1;
    p->levels[0].groups[1].members[0] = 1; /* rank 1 twice, rank 2 missing */
    CHECK_INT(osmp_plan_check(p, why, sizeof(why)), OSMP_ERR_PLAN_INVALID);
    p->levels[0].groups[1].members[0] = 2;
    CHECK_INT(osmp_plan_check(p, why, sizeof(why)), OSMP_OK);
    p->levels[1].groups[0].members[1] = 3; /* a non-leader promoted */
    CHECK_INT(osmp_plan_check(p, why, sizeof(why)), OSMP_ERR_PLAN_INVALID);
    CHECK(strstr(why, "rank 3") != NULL);
    osmp_plan_destroy(p);
    osmp_topo_destroy(t);
}

int main(void)
{
    RUN(test_spec_parse);
    RUN(test_default_specs);
    RUN(test_groups_milan);
    RUN(test_groups_snc_os_numbering);
    RUN(test_groups_knl_virtual_split);
    RUN(test_groups_numa_above_package);
    RUN(test_groups_irregular);
    RUN(test_errors_and_checker);
    return TEST_EXIT();
}
