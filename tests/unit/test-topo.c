/* topo layer: loading, the domain tree, distances, placement, core lists. */
#include <unistd.h>

#include "test.h"

/* Counts from hwloc itself (hwloc-calc --number-of TYPE all, and lstopo with
 * --disallowed for the whole system), not from our code. Domains without any
 * usable core are not in our tree: on amd-8numa-restricted-cpuset one package
 * and one NUMA node have only disallowed cores, and hwloc-calc agrees (6, 3). */
static const struct {
    const char *file;
    unsigned flags;
    int packages, numa, l3, l2, cores, pus, groups;
} machines[] = {
    {"amd-8numa-restricted-cpuset.xml", 0, 6, 3, 0, 10, 10, 10, 0},
    {"amd-milan-2x64.xml", 0, 2, 2, 16, 128, 128, 128, 0},
    {"amd-opteron-4s-8numa-64.xml", 0, 4, 8, 8, 32, 64, 64, 0},
    {"ibm-power7-64c-smt4.xml", 0, 64, 8, 64, 64, 64, 256, 12},
    {"ibm-x3950-16pkg-96.xml", 0, 16, 4, 16, 48, 96, 96, 4},
    {"intel-cascadelake-2x20-smt.xml", 0, 2, 1, 2, 40, 40, 80, 0},
    {"intel-cascadelake-snc-memcache.xml", 0, 2, 4, 2, 40, 40, 80, 4},
    {"intel-irregular-groups.xml", 0, 2, 2, 2, 16, 16, 16, 0},
    {"intel-irregular-groups.xml", OSMP_TOPO_WHOLE_SYSTEM, 8, 8, 8, 64, 64, 64, 3},
    {"intel-knl-7210-flat64.xml", 0, 1, 1, 0, 32, 64, 256, 0},
    {"kunpeng920-2x64-clusters.xml", 0, 2, 4, 4, 128, 128, 128, 32},
};

static void test_every_xml_loads_with_expected_counts(void)
{
    for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
        osmp_topo_t t = load_xml(machines[i].file, machines[i].flags);
        if (!t) continue;
        fprintf(stderr, "  %s%s\n", machines[i].file, machines[i].flags ? " (whole system)" : "");
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_MACHINE), 1);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_PACKAGE), machines[i].packages);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_NUMA), machines[i].numa);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_L3), machines[i].l3);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_L2), machines[i].l2);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_CORE), machines[i].cores);
        CHECK_INT(osmp_topo_ncores(t), machines[i].cores);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_PU), machines[i].pus);
        CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_GROUP), machines[i].groups);
        osmp_topo_destroy(t);
    }
}

static void test_this_machine_and_synthetic(void)
{
    osmp_topo_t t = load_checked(OSMP_TOPO_THIS_MACHINE, NULL, 0);
    if (t) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        CHECK(osmp_topo_count(t, OSMP_DOMAIN_PU) >= 1 && osmp_topo_count(t, OSMP_DOMAIN_PU) <= online);
        osmp_topo_destroy(t);
    }
    t = load_checked(OSMP_TOPO_SYNTHETIC, "pack:2 l3:2 core:4 pu:2", 0);
    if (!t) return;
    CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_PACKAGE), 2);
    CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_L3), 4);
    CHECK_INT(osmp_topo_ncores(t), 16);
    CHECK_INT(osmp_topo_count(t, OSMP_DOMAIN_PU), 32);
    const struct osmp_domain *l3 = osmp_topo_domain(t, OSMP_DOMAIN_L3, 3);
    CHECK(l3 != NULL);
    if (l3) {
        CHECK_INT(l3->first_core, 12);
        CHECK_INT(l3->ncores, 4);
        CHECK_STR(l3->cpuset, "24-31");
        CHECK_INT(l3->parent->kind, OSMP_DOMAIN_PACKAGE);
        CHECK_INT(l3->parent->logical_index, 1);
    }
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_L3, 4) == NULL);
    CHECK(osmp_topo_domain(t, OSMP_DOMAIN_L3, -1) == NULL);
    osmp_topo_destroy(t);
}

/* osmp_topo_load of an XML text through a temporary file: its status; the reason in why. */
static int load_text(const char *xml, char *why, size_t len)
{
    char path[] = "/tmp/osmp-test-topo-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1000;
    FILE *f = fdopen(fd, "w");
    fputs(xml, f);
    fclose(f);
    osmp_topo_t t = NULL;
    int rc = osmp_topo_load(OSMP_TOPO_XML, path, 0, &t);
    snprintf(why, len, "%s", osmp_topo_last_error());
    osmp_topo_destroy(t);
    unlink(path);
    return rc;
}

/* Inputs hwloc 2.9 aborts, crashes or spends 500 MB on (src/topo/xmlcheck.c, the fuzz regressions),
 * each refused with its reason, and their near misses, which reach hwloc. */
static void test_xml_refused_before_hwloc(void)
{
#define OBJ(type, attrs) "<object type=\"" type "\" " attrs ">"
#define SETS "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""
#define ONE_PU(machine, numa, pu)                                                                              \
    "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n" OBJ("Machine", machine) "\n" OBJ("NUMANode", numa)   \
    "</object>\n" OBJ("Core", "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"")                              \
        OBJ("PU", pu) "</object></object>\n</object>\n</topology>\n"
#define PU_OK "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\""
    static const struct {
        const char *xml, *why; /* why: NULL if it loads */
    } cases[] = {
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"0\" " SETS, PU_OK), NULL},
        {ONE_PU("os_index=\"0\" " SETS " subtype=\",x\"", "os_index=\"0\" " SETS, PU_OK), NULL}, /* not a bitmap */
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"0\" " SETS, "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\",0x1\""),
         "line 5: complete_cpuset is not a bitmap"},
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"0\" " SETS, "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"&#44;1\""),
         "line 5: complete_cpuset is not a bitmap"},
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"0\" " SETS, "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1,,0x0\""),
         NULL}, /* an empty word after the first is a zero word */
        {ONE_PU("os_index=\"0\" cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"", "os_index=\"0\" " SETS, PU_OK),
         "line 3: an object with a cpuset but no complete_cpuset"},
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"0\" " SETS, "cpuset=\"0x1\" complete_cpuset=\"0x1\""),
         "line 5: a PU or NUMANode without os_index"},
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"2000000\" " SETS, PU_OK),
         "line 4: a PU or NUMANode with an os_index above 1048576"},
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"1048576\" " SETS, PU_OK), NULL},
        {ONE_PU("os_index=\"0\" " SETS, "os_index=\"0\" nodeset=\"0x1\" complete_nodeset=\"0x1\"", PU_OK),
         "line 4: a NUMANode without cpuset"},
        {"<!DOCTYPE topology>\n<topology></topology>\n", "line 1: a DOCTYPE without SYSTEM"},
        {"<topology version=\"2.0\">" OBJ("NU", "os_index=\"\" cpuset=\"03\" complete_cpuset=\"03\" nodeset=\"0x1\" "
                                           "complete_nodeset=\"0x1\"") "\n</object></topology>",
         "line 1: the first object is not the Machine"},
        {"<topology><object type=\"Ma\" cpuset=\"1\" complete_cpuset=\"01\" allowed_cpuset=\"2\" nodeset=\"1\" "
         "complete_nodeset=\"01\"></object></topology>",
         "line 1: no CPU of the Machine's cpuset is in its complete_cpuset and allowed_cpuset"},
        {"<topology><object type=\"Machine\" cpuset=\"1\" complete_cpuset=\"0\" nodeset=\"1\" complete_nodeset=\"1\">"
         "</object></topology>",
         "line 1: no CPU of the Machine's cpuset is in its complete_cpuset and allowed_cpuset"},
        {ONE_PU("os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" "
                "complete_nodeset=\"0x1\"", "os_index=\"0\" " SETS, PU_OK),
         NULL}, /* one allowed CPU is enough */
        /* a quote inside a processing instruction does not hide the next tag's bitmap */
        {"<?l \"?><topology><object cpuset=\"\"/></topology>", "line 1: cpuset is not a bitmap"},
        /* nor does a bitmap's text inside another value count */
        {ONE_PU("os_index=\"0\" " SETS " subtype=\"a cpuset=',1' b\"", "os_index=\"0\" " SETS, PU_OK), NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[256];
        int rc = load_text(cases[i].xml, why, sizeof(why));
        if (cases[i].why) {
            CHECK_INT(rc, OSMP_ERR_TOPO_LOAD);
            if (!strstr(why, cases[i].why)) fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, why, cases[i].why);
            CHECK(strstr(why, cases[i].why) != NULL);
        } else {
            if (rc) fprintf(stderr, "case %zu: %s\n", i, why);
            CHECK_INT(rc, OSMP_OK);
        }
    }
#undef OBJ
#undef SETS
#undef ONE_PU
#undef PU_OK
}

static void test_load_errors(void)
{
    osmp_topo_t t = (osmp_topo_t)0x1;
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, "/nonexistent/osmp.xml", 0, &t), OSMP_ERR_TOPO_LOAD);
    CHECK(t == (osmp_topo_t)0x1); /* output untouched on failure */
    CHECK(strstr(osmp_topo_last_error(), "/nonexistent/osmp.xml") != NULL);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/tools/data/malformed.xml", 0, &t), OSMP_ERR_TOPO_LOAD);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/tools/data/not-a-topology.xml", 0, &t),
              OSMP_ERR_TOPO_LOAD);
    /* What hwloc 2.9 would abort or crash on is refused before it sees the file, with the line. */
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/tools/data/bitmap-comma.xml", 0, &t), OSMP_ERR_TOPO_LOAD);
    CHECK(strstr(osmp_topo_last_error(), "line 7: complete_cpuset is not a bitmap") != NULL);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/tools/data/no-complete-cpuset.xml", 0, &t),
              OSMP_ERR_TOPO_LOAD);
    CHECK(strstr(osmp_topo_last_error(), "line 4: an object with a cpuset but no complete_cpuset") != NULL);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/tools/data/pu-without-os-index.xml", 0, &t),
              OSMP_ERR_TOPO_LOAD);
    CHECK(strstr(osmp_topo_last_error(), "line 15: a PU or NUMANode without os_index") != NULL);
    CHECK(t == (osmp_topo_t)0x1);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_SYNTHETIC, "pack:2 bogus:3", 0, &t), OSMP_ERR_TOPO_LOAD);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_SYNTHETIC, NULL, 0, &t), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_THIS_MACHINE, NULL, 0x80, &t), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_topo_load(OSMP_TOPO_THIS_MACHINE, NULL, 0, NULL), OSMP_ERR_INVALID_ARG);
    CHECK(t == (osmp_topo_t)0x1);
    CHECK_STR(osmp_status_name(OSMP_ERR_SPEC), "OSMP_ERR_SPEC");
    CHECK_STR(osmp_status_str(OSMP_OK), "success");
    CHECK_STR(osmp_status_str(12345), "unknown status");
}

/* Cascade Lake with sub-NUMA clustering numbers PUs across cores: logical core 1
 * is OS PU 4 and its SMT sibling 44. Groups and placement use logical indices. */
static void test_os_and_logical_indices(void)
{
    osmp_topo_t t = load_xml("intel-cascadelake-snc-memcache.xml", 0);
    if (!t) return;
    const struct osmp_domain *core1 = osmp_topo_domain(t, OSMP_DOMAIN_CORE, 1);
    CHECK_STR(core1->cpuset, "4,44");
    CHECK_INT(core1->nchildren, 2);
    CHECK_INT(core1->children[0]->kind, OSMP_DOMAIN_PU);
    CHECK_INT(core1->children[0]->logical_index, 2);
    CHECK_INT(core1->children[0]->os_index, 4);
    CHECK_INT(core1->children[1]->os_index, 44);
    /* The SNC NUMA node sits under the L3 that spans the package, with 10 cores. */
    const struct osmp_domain *numa1 = osmp_topo_domain_of(t, 10, OSMP_DOMAIN_NUMA);
    CHECK_INT(numa1->kind, OSMP_DOMAIN_NUMA);
    CHECK_INT(numa1->logical_index, 1);
    CHECK_INT(numa1->first_core, 10);
    CHECK_INT(numa1->ncores, 10);
    osmp_topo_destroy(t);
}

static void test_distance_ladder(void)
{
    osmp_topo_t t = load_xml("amd-milan-2x64.xml", 0);
    if (t) {
        CHECK_INT(osmp_topo_distance(t, 5, 5), OSMP_DIST_CORE);
        CHECK_INT(osmp_topo_distance(t, 0, 1), OSMP_DIST_L3); /* L2 is per core on Zen 3 */
        CHECK_INT(osmp_topo_distance(t, 0, 8), OSMP_DIST_NUMA);
        CHECK_INT(osmp_topo_distance(t, 0, 64), OSMP_DIST_MACHINE);
        CHECK_INT(osmp_topo_distance(t, 0, 128), OSMP_ERR_RANGE);
        CHECK_INT(osmp_topo_distance(t, 8, 0), osmp_topo_distance(t, 0, 8));
        CHECK(osmp_topo_distance_key(t, 0, 128) == UINT32_MAX);
        osmp_topo_destroy(t);
    }
    t = load_xml("amd-opteron-4s-8numa-64.xml", 0);
    if (t) {
        CHECK_INT(osmp_topo_distance(t, 0, 1), OSMP_DIST_L2);
        CHECK_INT(osmp_topo_distance(t, 0, 2), OSMP_DIST_L3);
        CHECK_INT(osmp_topo_distance(t, 0, 8), OSMP_DIST_PACKAGE); /* second NUMA node of package 0 */
        CHECK_INT(osmp_topo_distance(t, 0, 16), OSMP_DIST_MACHINE);
        /* The NUMA matrix orders pairs on one rung: find two machine-rung pairs it separates. */
        uint32_t lo = UINT32_MAX, hi = 0;
        for (int c = 16; c < 64; c += 8) {
            uint32_t k = osmp_topo_distance_key(t, 0, c);
            CHECK_INT(k >> 24, OSMP_DIST_MACHINE);
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
        }
        CHECK(lo < hi);
        CHECK(osmp_topo_distance_key(t, 0, 8) < lo);
        osmp_topo_destroy(t);
    }
    t = load_xml("ibm-x3950-16pkg-96.xml", 0);
    if (t) {
        CHECK_INT(osmp_topo_distance(t, 0, 6), OSMP_DIST_GROUP); /* next package on the same board */
        CHECK_INT(osmp_topo_distance(t, 0, 24), OSMP_DIST_MACHINE);
        osmp_topo_destroy(t);
    }
    t = load_xml("kunpeng920-2x64-clusters.xml", 0);
    if (t) {
        /* Cores 0-3 form a cluster inside the L3 of cores 0-31: same rung, closer key. */
        CHECK_INT(osmp_topo_distance(t, 0, 3), OSMP_DIST_L3);
        CHECK_INT(osmp_topo_distance(t, 0, 4), OSMP_DIST_L3);
        CHECK(osmp_topo_distance_key(t, 0, 3) < osmp_topo_distance_key(t, 0, 4));
        CHECK_INT(osmp_topo_distance(t, 0, 32), OSMP_DIST_PACKAGE);
        osmp_topo_destroy(t);
    }
    t = load_xml("intel-knl-7210-flat64.xml", 0);
    if (t) {
        CHECK_INT(osmp_topo_distance(t, 0, 1), OSMP_DIST_L2);
        CHECK_INT(osmp_topo_distance(t, 0, 2), OSMP_DIST_NUMA);
        osmp_topo_destroy(t);
    }
    t = load_xml("intel-cascadelake-snc-memcache.xml", 0);
    if (t) {
        CHECK_INT(osmp_topo_distance(t, 0, 10), OSMP_DIST_L3); /* L3 spans the package */
        CHECK(osmp_topo_distance_key(t, 0, 1) < osmp_topo_distance_key(t, 0, 10));
        osmp_topo_destroy(t);
    }
    /* An asymmetric NUMA matrix (20 one way, 30 the other) orders both directions by the mean. */
    t = NULL;
    CHECK_INT(osmp_topo_load(OSMP_TOPO_XML, OSMP_TESTS_DIR "/fuzz/regressions/xml/numa-distances-asymmetric.xml", 0, &t),
              OSMP_OK);
    if (t) {
        CHECK_INT(osmp_topo_distance(t, 0, 2), OSMP_DIST_MACHINE);
        CHECK_INT(osmp_topo_distance_key(t, 0, 2) >> 8 & 0xffff, 25);
        CHECK_INT(osmp_topo_distance_key(t, 2, 0), osmp_topo_distance_key(t, 0, 2));
        osmp_topo_destroy(t);
    }
    CHECK_STR(osmp_dist_rung_name(OSMP_DIST_GROUP), "group");
    CHECK(osmp_dist_rung_name(OSMP_DIST_RUNGS) == NULL);
}

static void test_domain_of_stand_ins(void)
{
    osmp_topo_t t = load_xml("intel-irregular-groups.xml", OSMP_TOPO_WHOLE_SYSTEM);
    if (t) {
        /* Package 4 (cores 32-39) belongs to no group: it stands in for its own board. */
        const struct osmp_domain *d = osmp_topo_domain_of(t, 32, OSMP_DOMAIN_GROUP);
        CHECK_INT(d->kind, OSMP_DOMAIN_PACKAGE);
        CHECK_INT(d->logical_index, 4);
        d = osmp_topo_domain_of(t, 0, OSMP_DOMAIN_GROUP);
        CHECK_INT(d->kind, OSMP_DOMAIN_GROUP);
        CHECK_INT(d->first_core, 0);
        CHECK_INT(d->ncores, 16);
        CHECK_INT(osmp_topo_distance(t, 0, 8), OSMP_DIST_GROUP);
        CHECK_INT(osmp_topo_distance(t, 0, 32), OSMP_DIST_MACHINE);
        osmp_topo_destroy(t);
    }
    t = load_xml("amd-8numa-restricted-cpuset.xml", 0);
    if (t) {
        /* Package 0's memory is outside the allowed nodeset: the package stands in. */
        const struct osmp_domain *d = osmp_topo_domain_of(t, 0, OSMP_DOMAIN_NUMA);
        CHECK_INT(d->kind, OSMP_DOMAIN_PACKAGE);
        CHECK_INT(d->logical_index, 0);
        CHECK_INT(osmp_topo_domain_of(t, 2, OSMP_DOMAIN_NUMA)->kind, OSMP_DOMAIN_NUMA);
        /* No L3 anywhere: the whole machine stands in. */
        CHECK_INT(osmp_topo_domain_of(t, 0, OSMP_DOMAIN_L3)->kind, OSMP_DOMAIN_MACHINE);
        CHECK(osmp_topo_domain_of(t, 10, OSMP_DOMAIN_L3) == NULL);
        osmp_topo_destroy(t);
    }
}

/* Cache sizes as hwloc reports them (the exchanges stream their own block by
 * the L3's, team.c): a Milan CCX's L3 is 32 MiB, its cores' L2 512 KiB; no
 * other kind has one; a synthetic L3 takes the size it is given. */
static void test_cache_bytes(void)
{
    osmp_topo_t t = load_xml("amd-milan-2x64.xml", 0);
    if (t) {
        CHECK_INT(osmp_topo_domain_of(t, 0, OSMP_DOMAIN_L3)->cache_bytes, 33554432);
        CHECK_INT(osmp_topo_domain_of(t, 127, OSMP_DOMAIN_L3)->cache_bytes, 33554432);
        CHECK_INT(osmp_topo_domain_of(t, 0, OSMP_DOMAIN_L2)->cache_bytes, 524288);
        CHECK_INT(osmp_topo_domain_of(t, 0, OSMP_DOMAIN_CORE)->cache_bytes, 0);
        CHECK_INT(osmp_topo_domain_of(t, 0, OSMP_DOMAIN_PACKAGE)->cache_bytes, 0);
        osmp_topo_destroy(t);
    }
    t = NULL;
    CHECK_INT(osmp_topo_load(OSMP_TOPO_SYNTHETIC, "pack:2 l3:2(size=8388608) core:4 pu:1", 0, &t), OSMP_OK);
    if (t) {
        CHECK_INT(osmp_topo_domain_of(t, 15, OSMP_DOMAIN_L3)->cache_bytes, 8388608);
        osmp_topo_destroy(t);
    }
}

static void test_placement_policies(void)
{
    osmp_topo_t t = load_checked(OSMP_TOPO_SYNTHETIC, "pack:2 numa:2 core:2 pu:1", 0);
    if (!t) return;
    int c[10];
    char err[128];
    static const int linear[] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1};
    static const int scatter[] = {0, 4, 2, 6, 1, 5, 3, 7, 0, 4};
    static const int numa[] = {0, 2, 4, 6, 1, 3, 5, 7, 0, 2};
    REQUIRE_OK(osmp_topo_place(t, "linear", 10, c, err, sizeof(err)));
    CHECK(memcmp(c, linear, sizeof(c)) == 0);
    REQUIRE_OK(osmp_topo_place(t, "scatter", 10, c, err, sizeof(err)));
    CHECK(memcmp(c, scatter, sizeof(c)) == 0);
    REQUIRE_OK(osmp_topo_place(t, "numa", 10, c, err, sizeof(err)));
    CHECK(memcmp(c, numa, sizeof(c)) == 0);
    int a[8], b[8], seen[8] = {0};
    REQUIRE_OK(osmp_topo_place(t, "random:42", 8, a, err, sizeof(err)));
    REQUIRE_OK(osmp_topo_place(t, "random:42", 8, b, err, sizeof(err)));
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    for (int i = 0; i < 8; i++) seen[a[i]]++;
    for (int i = 0; i < 8; i++) CHECK_INT(seen[i], 1);
    int differs = 0;
    for (int s = 1; s < 6 && !differs; s++) {
        char p[32];
        snprintf(p, sizeof(p), "random:%d", s);
        REQUIRE_OK(osmp_topo_place(t, p, 8, b, err, sizeof(err)));
        differs = memcmp(a, b, sizeof(a)) != 0;
    }
    CHECK(differs);
    CHECK_INT(osmp_topo_place(t, "sideways", 4, c, err, sizeof(err)), OSMP_ERR_INVALID_ARG);
    CHECK(strstr(err, "sideways") != NULL);
    CHECK_INT(osmp_topo_place(t, "random:", 4, c, err, sizeof(err)), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_topo_place(t, "random:12x", 4, c, err, sizeof(err)), OSMP_ERR_INVALID_ARG);
    osmp_topo_destroy(t);
}

static void test_core_list(void)
{
    int c[32], n = -1;
    char err[160];
    REQUIRE_OK(osmp_core_list_parse("0-5,12,18-20", 64, c, 32, &n, err, sizeof(err)));
    static const int want[] = {0, 1, 2, 3, 4, 5, 12, 18, 19, 20};
    CHECK_INT(n, 10);
    CHECK(memcmp(c, want, sizeof(want)) == 0);
    REQUIRE_OK(osmp_core_list_parse("3,3,1", 4, c, 32, &n, err, sizeof(err)));
    CHECK_INT(n, 3);
    CHECK_INT(c[1], 3);
    static const char *const malformed[] = {"", ",", "1,", ",1", "1-", "-1", "a", "1 2", "0,,1", "1-2-3", "5-3"};
    for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
        n = -1;
        int rc = osmp_core_list_parse(malformed[i], 64, c, 32, &n, err, sizeof(err));
        if (rc != OSMP_ERR_INVALID_ARG) fprintf(stderr, "  core list \"%s\" accepted\n", malformed[i]);
        CHECK_INT(rc, OSMP_ERR_INVALID_ARG);
        CHECK_INT(n, -1);
    }
    CHECK_INT(osmp_core_list_parse("64", 64, c, 32, &n, err, sizeof(err)), OSMP_ERR_RANGE);
    CHECK(strstr(err, "0-63") != NULL);
    CHECK_INT(osmp_core_list_parse("99999999999999", 64, c, 32, &n, err, sizeof(err)), OSMP_ERR_RANGE);
    CHECK_INT(osmp_core_list_parse("0-40", 64, c, 32, &n, err, sizeof(err)), OSMP_ERR_RANGE);
}

int main(void)
{
    RUN(test_every_xml_loads_with_expected_counts);
    RUN(test_this_machine_and_synthetic);
    RUN(test_load_errors);
    RUN(test_xml_refused_before_hwloc);
    RUN(test_os_and_logical_indices);
    RUN(test_distance_ladder);
    RUN(test_domain_of_stand_ins);
    RUN(test_cache_bytes);
    RUN(test_placement_policies);
    RUN(test_core_list);
    return TEST_EXIT();
}
