/*
 * Measured topology (src/topo/cluster.c, measured.c): the CSV parser, the
 * clustering of every matrix in tests/data/latency against each machine's
 * documented structure, synthetic matrices with noise and missing levels, bad
 * input, and the hwloc XML round trip into osmp_topo_load and the distance key.
 */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "test.h"
#include "topo/measured.h"

/* ---------------------------------------------------------------- helpers */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)l + 1);
    if (buf && fread(buf, 1, (size_t)l, f) != (size_t)l) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)l;
    return buf;
}

static double *load_latency(const char *name, int *n)
{
    char path[4096], why[256];
    snprintf(path, sizeof(path), "%s/%s", OSMP_LATENCY_DIR, name);
    size_t len;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        test_failures++;
        return NULL;
    }
    double *m = NULL;
    int rc = osmp__latency_parse_csv(text, len, &m, n, why, sizeof(why));
    free(text);
    if (rc) {
        fprintf(stderr, "%s: %s\n", path, why);
        test_failures++;
        return NULL;
    }
    return m;
}

typedef int (*key_fn)(int cpu);

/* Level `l` of t is exactly the partition "same key". */
static void check_level(const struct osmp__mtree *t, int l, key_fn key, const char *what)
{
    if (l >= t->nlevels) {
        fprintf(stderr, "  %s: no level %d (%d levels)\n", what, l, t->nlevels);
        test_failures++;
        return;
    }
    const int *g = t->levels[l].group_of;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < i; j++)
            if ((g[i] == g[j]) != (key(i) == key(j))) {
                fprintf(stderr, "  %s: level %d puts CPUs %d and %d %s, expected %s\n", what, l, j, i,
                        g[i] == g[j] ? "together" : "apart", key(i) == key(j) ? "together" : "apart");
                test_failures++;
                return;
            }
}

static struct osmp__mtree *cluster_checked(const double *m, int n)
{
    struct osmp__mtree *t = NULL;
    char why[256];
    int rc = osmp__latency_cluster(m, n, &t, why, sizeof(why));
    if (rc) {
        fprintf(stderr, "  clustering failed: %s\n", why);
        test_failures++;
        return NULL;
    }
    if (osmp__mtree_check(t, why, sizeof(why))) {
        fprintf(stderr, "  tree invariant: %s\n", why);
        test_failures++;
    }
    return t;
}

static int all_one(int cpu)
{
    (void)cpu;
    return 0;
}

/* ---------------------------------------------------------------- shared matrices */

/*
 * Expected structure of each machine, from the vendors' documentation, with
 * Linux's numbering of logical CPUs (ACPI/MADT order: the first hardware thread
 * of every core, package by package, then the second threads in the same
 * order). The data is used only to confirm which numbering the machine used
 * (each CPU's nearest neighbour), never to derive the groups.
 */

/* AMD Ryzen 9 5950X (Zen 3, AMD product page and the Zen 3 "Vermeer" disclosure):
 * 16 cores, SMT2 = 32 CPUs (the CSV has 32 rows), two CCDs of 8 cores, each one
 * CCX sharing 32 MB of L3. Linux: CPU c and c + 16 are the two threads of core
 * c % 16; cores 0-7 on CCD 0. Levels: SMT pairs, CCDs, machine. */
static int ryzen_core(int c) { return c % 16; }
static int ryzen_ccd(int c) { return (c % 16) / 8; }

/* AMD EPYC 7R13 (AWS c6a/m6a .metal: 2 sockets, AWS instance docs): Zen 3, 48
 * cores per socket in 6 CCDs of 8 cores (one CCX, 32 MB L3 each), SMT2: 2 x 48 x
 * 2 = 192 CPUs (192 rows). Linux: CPU c and c + 96 are one core; cores 0-47 on
 * socket 0, CCX = 8 consecutive cores. Levels: SMT pairs, CCX, sockets, machine.
 * Socket 1 in this data: its CCXs are 185-207 ns apart, exactly as far as
 * from socket 0 (182-208 ns), where socket 0's CCXs are 84-116 ns apart: the
 * tool that measured it (core-to-core-latency) bounced one line allocated
 * once, so pairs on socket 1 went through socket 0's home agent. No
 * measurement can show a domain its latencies do not have: the socket level
 * holds socket 0 and, alone, each CCX of socket 1. */
static int epyc_core(int c) { return c % 96; }
static int epyc_ccx(int c) { return (c % 96) / 8; }
static int epyc_socket_seen(int c) { return (c % 96) < 48 ? -1 : (c % 96) / 8; }

/* 2x Intel Xeon Gold 6242 (Cascade Lake, Intel ARK): 16 cores, HT, one L3 per
 * socket on a mesh (no sub-socket cluster without SNC): 2 x 16 x 2 = 64 CPUs (64
 * rows). Linux: CPU c and c + 32 are one core; cores 0-15 on socket 0 (this
 * machine numbers packages contiguously; the Xeon 6230 of
 * tests/data/topologies interleaves them, a BIOS choice). Levels: SMT pairs,
 * sockets, machine. */
static int xeon_core(int c) { return c % 32; }
static int xeon_socket(int c) { return (c % 32) / 16; }

/* Intel Xeon Phi 7210 (Knights Landing, Intel ARK and the KNL ISC'16 paper):
 * 64 cores in 32 tiles of 2 cores sharing 1 MB L2, 4 threads per core on a
 * mesh. The 64 rows are the first threads (CPUs 0-63); Linux numbers tiles
 * consecutively: CPUs 2k and 2k+1 share an L2 (as in hwloc's capture of a 7210,
 * tests/data/topologies/intel-knl-7210-flat64.xml). Levels: tiles, machine. */
static int phi_tile(int c) { return c / 2; }

/* AWS Graviton3 (Neoverse V1, AWS docs): 64 cores, no SMT, private L2 per core,
 * one 32 MB L3 shared by all on a mesh: no domain between the core and the
 * machine. Levels: the machine only. */

static void test_shared_matrices(void)
{
    int n;
    double *m;
    struct osmp__mtree *t;

    fprintf(stderr, "  amd-ryzen-5950x\n");
    if ((m = load_latency("amd-ryzen-5950x.csv", &n)) && (t = cluster_checked(m, n))) {
        CHECK_INT(n, 32);
        CHECK_INT(t->nlevels, 3);
        check_level(t, 0, ryzen_core, "ryzen SMT");
        check_level(t, 1, ryzen_ccd, "ryzen CCD");
        check_level(t, 2, all_one, "ryzen machine");
        osmp__mtree_destroy(t);
    }
    free(m);

    fprintf(stderr, "  amd-epyc-7r13-48c\n");
    if ((m = load_latency("amd-epyc-7r13-48c.csv", &n)) && (t = cluster_checked(m, n))) {
        CHECK_INT(n, 192);
        CHECK_INT(t->nlevels, 4);
        check_level(t, 0, epyc_core, "epyc SMT");
        check_level(t, 1, epyc_ccx, "epyc CCX");
        check_level(t, 2, epyc_socket_seen, "epyc sockets as measured");
        check_level(t, 3, all_one, "epyc machine");
        osmp__mtree_destroy(t);
    }
    free(m);

    fprintf(stderr, "  intel-2x-xeon-gold-6242\n");
    if ((m = load_latency("intel-2x-xeon-gold-6242.csv", &n)) && (t = cluster_checked(m, n))) {
        CHECK_INT(n, 64);
        CHECK_INT(t->nlevels, 3);
        check_level(t, 0, xeon_core, "xeon SMT");
        check_level(t, 1, xeon_socket, "xeon sockets");
        check_level(t, 2, all_one, "xeon machine");
        osmp__mtree_destroy(t);
    }
    free(m);

    fprintf(stderr, "  intel-xeon-phi-7210\n");
    if ((m = load_latency("intel-xeon-phi-7210.csv", &n)) && (t = cluster_checked(m, n))) {
        CHECK_INT(n, 64);
        CHECK_INT(t->nlevels, 2);
        check_level(t, 0, phi_tile, "phi tiles");
        check_level(t, 1, all_one, "phi machine");
        osmp__mtree_destroy(t);
    }
    free(m);

    fprintf(stderr, "  aws-graviton3\n");
    if ((m = load_latency("aws-graviton3.csv", &n)) && (t = cluster_checked(m, n))) {
        CHECK_INT(n, 64);
        CHECK_INT(t->nlevels, 1);
        check_level(t, 0, all_one, "graviton machine");
        osmp__mtree_destroy(t);
    }
    free(m);
}

/* ---------------------------------------------------------------- synthetic */

static uint64_t rng = 88172645463325252ull;
static double uniform(void) /* [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A machine described by up to 4 level keys (leaf first) and their latencies;
 * the latency of a pair is the first level where they share a key, times noise
 * in [1 - noise, 1 + noise]. */
struct synth {
    int n, nlevels;
    key_fn key[4];
    double lat[5]; /* lat[nlevels] = between top groups */
    double noise;
};

static double *make(const struct synth *s)
{
    int n = s->n;
    double *m = calloc((size_t)n * (size_t)n, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            int l = 0;
            while (l < s->nlevels && s->key[l](i) != s->key[l](j)) l++;
            double v = s->lat[l] * (1 + s->noise * (2 * uniform() - 1));
            m[i * n + j] = m[j * n + i] = v;
        }
    return m;
}

/* 2 sockets x 4 CCX x 4 cores x SMT2 = 64 CPUs, Linux numbering (c, c + 32 one core). */
static int s_core(int c) { return c % 32; }
static int s_ccx(int c) { return (c % 32) / 4; }
static int s_sock(int c) { return (c % 32) / 16; }
/* SMT siblings numbered next to each other (2c, 2c + 1), 2 CCDs of 16 CPUs. */
static int s_pair(int c) { return c / 2; }
static int s_ccd16(int c) { return c / 16; }
/* Without SMT: 32 CPUs. */
static int s_ccx32(int c) { return c / 4; }
static int s_sock32(int c) { return c / 16; }
/* Sockets interleaved (even CPUs on socket 0, as the Xeon 6230 of tests/data/topologies). */
static int s_sock_interleaved(int c) { return c % 2; }
static int s_core_interleaved(int c) { return c % 32; }

static void check_synth(const char *what, const struct synth *s, const double *m)
{
    fprintf(stderr, "  %s\n", what);
    struct osmp__mtree *t = cluster_checked(m, s->n);
    if (!t) return;
    CHECK_INT(t->nlevels, s->nlevels + 1);
    for (int l = 0; l < s->nlevels; l++) check_level(t, l, s->key[l], what);
    check_level(t, s->nlevels, all_one, what);
    for (int l = 0; l < t->nlevels && l <= s->nlevels; l++)
        if (fabs(t->levels[l].latency_ns - s->lat[l]) > s->lat[l] * (s->noise + 0.01)) {
            fprintf(stderr, "  %s: level %d latency %.1f, expected %.1f\n", what, l, t->levels[l].latency_ns, s->lat[l]);
            test_failures++;
        }
    osmp__mtree_destroy(t);
}

static void test_synthetic(void)
{
    struct synth full = {64, 3, {s_core, s_ccx, s_sock}, {8, 25, 90, 180}, 0.08};
    double *m = make(&full);
    check_synth("2 sockets x 4 CCX x 4 cores x SMT2, noise 8%", &full, m);

    /* One CPU slow to answer everyone (an OS housekeeping CPU): +6 ns on all its pairs, so its SMT
     * pair (14 ns) stands apart from the others (8 ns) by more than the gap ratio. */
    for (int j = 1; j < 64; j++) m[j] = m[j * 64] = m[j] + 6;
    check_synth("the same, CPU 0 slow", &full, m);
    free(m);

    /* Interrupted measurements are only ever slower: one pair per CCX (of 28) 2.5x too slow. */
    m = make(&full);
    for (int ccx = 0; ccx < 8; ccx++) {
        int a = ccx * 4, b = ccx * 4 + 2 + 32; /* two different cores of the CCX */
        m[a * 64 + b] = m[b * 64 + a] = 2.5 * m[a * 64 + b];
    }
    check_synth("the same, one slow pair per CCX", &full, m);
    free(m);

    struct synth nosmt = {32, 2, {s_ccx32, s_sock32}, {25, 90, 180}, 0.08};
    m = make(&nosmt);
    check_synth("missing SMT level: 2 sockets x 4 CCX x 4 cores", &nosmt, m);
    free(m);

    struct synth noccx = {64, 2, {s_core, s_sock}, {8, 50, 140}, 0.10};
    m = make(&noccx);
    check_synth("missing CCX level: 2 sockets x 16 cores x SMT2, noise 10%", &noccx, m);
    free(m);

    struct synth inter = {64, 2, {s_core_interleaved, s_sock_interleaved}, {8, 50, 140}, 0.05};
    m = make(&inter);
    check_synth("sockets interleaved (even/odd CPUs)", &inter, m);
    free(m);

    /* A mesh: latencies spread 40-60 ns with no gap; one pair measured at 20 ns is no level. */
    struct synth flat = {48, 0, {0}, {50}, 0.2};
    m = make(&flat);
    check_synth("flat mesh, 40-60 ns", &flat, m);
    m[5 * 48 + 7] = m[7 * 48 + 5] = 20;
    check_synth("flat mesh, one fast pair", &flat, m);
    free(m);

    /* Below the timer's resolution (nviennot's Ryzen 9 5900X): inside a CCX about a third of the pairs read 0,
     * the others 25-27 ns; the zeros must fall in with them, not make a level. (The generator's state is
     * put back: the checks after this one expect its sequence.) */
    uint64_t saved_rng = rng;
    m = make(&nosmt);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < i; j++)
            if (s_ccx32(i) == s_ccx32(j) && (i + j) % 3 == 0) m[i * 32 + j] = m[j * 32 + i] = 0;
    struct synth nosmt_zero = nosmt;
    nosmt_zero.noise = 1.0; /* the latency checks: the level's median may be the stand-in for 0 */
    check_synth("missing SMT level, a third of the pairs inside a CCX at 0 ns", &nosmt_zero, m);
    for (int i = 0; i < 32 * 32; i++) m[i] = 0;
    struct osmp__mtree *none = NULL;
    char why0[128] = "";
    CHECK_INT(osmp__latency_cluster(m, 32, &none, why0, sizeof(why0)), OSMP_ERR_INVALID_ARG);
    CHECK(strstr(why0, "every latency is 0") != NULL);
    free(m);
    rng = saved_rng;

    /* A coarse timer (nviennot's Ryzen 9 7950X): SMT siblings (2c, 2c + 1) read 5 ns on some cores and 10.5 ns
     * on others, and two pairs of CPUs of different cores read 10.5 ns too, (12, 1) and (12, 5). Those two must
     * not join cores {0, 1}, {4, 5} and {12, 13} into one group (they share no other close CPU), which made
     * the whole SMT cut at 10.5 ns unclean and left the 10.5 ns siblings as single CPUs. */
    saved_rng = rng;
    struct synth smt = {32, 2, {s_pair, s_ccd16}, {5, 15.5, 70}, 0.03};
    m = make(&smt);
    for (int c = 1; c < 16; c += 2) m[(2 * c + 1) * 32 + 2 * c] = m[(2 * c) * 32 + 2 * c + 1] = 10.5;
    m[12 * 32 + 1] = m[1 * 32 + 12] = 10.5;
    m[12 * 32 + 5] = m[5 * 32 + 12] = 10.5;
    struct synth smt_loose = smt;
    smt_loose.noise = 1.0; /* the SMT level's median mixes 5 and 10.5 */
    check_synth("SMT siblings at 5 and 10.5 ns, two accidental 10.5 ns pairs", &smt_loose, m);
    free(m);
    rng = saved_rng;

    struct synth two = {2, 0, {0}, {30}, 0};
    m = make(&two);
    check_synth("2 CPUs", &two, m);
    free(m);
}

static void test_bad_matrices(void)
{
    struct osmp__mtree *t = NULL;
    char why[256] = "";
    double one[1] = {0};
    CHECK_INT(osmp__latency_cluster(one, 1, &t, why, sizeof(why)), OSMP_ERR_INVALID_ARG);
    CHECK(strstr(why, "1 CPUs") != NULL);
    double m[9] = {0, 10, 20, 10, 0, NAN, 20, NAN, 0};
    CHECK_INT(osmp__latency_cluster(m, 3, &t, why, sizeof(why)), OSMP_ERR_INVALID_ARG);
    CHECK(strstr(why, "CPUs 2 and 1") != NULL);
    m[5] = m[7] = -3;
    CHECK_INT(osmp__latency_cluster(m, 3, &t, why, sizeof(why)), OSMP_ERR_INVALID_ARG);
    CHECK(t == NULL);
}

/* ---------------------------------------------------------------- CSV */

static int parse(const char *text, double **m, int *n, char *why, size_t len)
{
    *m = NULL;
    return osmp__latency_parse_csv(text, strlen(text), m, n, why, len);
}

static void test_csv(void)
{
    double *m;
    int n;
    char why[256];
    REQUIRE_OK(parse(",,\n10.5,,\n20,30,\n", &m, &n, why, sizeof(why)));
    CHECK_INT(n, 3);
    CHECK(m[1 * 3 + 0] == 10.5 && m[0 * 3 + 1] == 10.5 && m[2 * 3 + 1] == 30 && m[1 * 3 + 2] == 30 && m[4] == 0);
    free(m);
    /* No trailing blanks, CRLF, no final newline: the same matrix. */
    REQUIRE_OK(parse("\r\n10.5\r\n20,30", &m, &n, why, sizeof(why)));
    CHECK_INT(n, 3);
    CHECK(m[2 * 3 + 0] == 20);
    free(m);
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "0 or 1 CPU"},
        {"\n", "0 or 1 CPU"},
        {",\n", "1 CPU"},
        {",,\n10,,\n20,,\n", "row 2 column 1 is empty"},
        {",,\n10,,\n20\n", "row 2 has 1 columns, expected 2 latencies (ragged CSV)"},
        {",,\n10,,\n20,nan,\n", "row 2 column 1: \"nan\" is not a finite latency"},
        {",,\n10,,\n20,-4,\n", "row 2 column 1: latency -4 must not be negative"},
        {",,\n10,,\n20,abc,\n", "row 2 column 1: \"abc\" is not a number"},
        {",,\n10,,\n20,30,,\n", "row 2 has more than 3 columns"},
        {"0,10,20\n10,0,30\n20,30,0\n", "row 0 column 0 holds a value"},
        {",,\n10,,5\n20,30,\n", "row 1 column 2 holds a value"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        int rc = parse(bad[i].text, &m, &n, why, sizeof(why));
        CHECK_INT(rc, OSMP_ERR_INVALID_ARG);
        CHECK(m == NULL);
        if (!strstr(why, bad[i].why)) {
            fprintf(stderr, "  case %zu: \"%s\" does not say \"%s\"\n", i, why, bad[i].why);
            test_failures++;
        }
    }
}

/* ---------------------------------------------------------------- XML */

/* The logical core whose PU has OS index p. */
static int core_of_pu(osmp_topo_t t, int p)
{
    for (int i = 0; i < osmp_topo_count(t, OSMP_DOMAIN_PU); i++) {
        const struct osmp_domain *pu = osmp_topo_domain(t, OSMP_DOMAIN_PU, i);
        if (pu->os_index == p) return pu->parent->logical_index;
    }
    return -1;
}

static void test_xml_round_trip(void)
{
    int n;
    double *m = load_latency("amd-ryzen-5950x.csv", &n);
    if (!m) return;
    struct osmp__mtree *t = cluster_checked(m, n);
    if (!t) {
        free(m);
        return;
    }
    hwloc_topology_t hw;
    hwloc_topology_init(&hw);
    hwloc_topology_set_synthetic(hw, "core:32 pu:1");
    hwloc_topology_load(hw);
    int cpus[32];
    for (int i = 0; i < 32; i++) cpus[i] = i;
    char path[] = "/tmp/osmp-test-cluster-XXXXXX", why[256];
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    int conflicts = -1;
    int rc = osmp__measured_export_xml(hw, cpus, m, t, NULL, path, &conflicts, why, sizeof(why));
    hwloc_topology_destroy(hw);
    CHECK_INT(rc, OSMP_OK);
    CHECK_INT(conflicts, 0);
    osmp_topo_t topo = load_checked(OSMP_TOPO_XML, path, 0);
    unlink(path);
    if (topo) {
        /* 16 SMT pairs + 2 CCDs: each a Group (the machine is the root). */
        CHECK_INT(osmp_topo_count(topo, OSMP_DOMAIN_GROUP), 18);
        CHECK_INT(osmp_topo_ncores(topo), 32);
        CHECK(!osmp_topo_is_this_machine(topo));
        int c0 = core_of_pu(topo, 0), c16 = core_of_pu(topo, 16), c1 = core_of_pu(topo, 1), c8 = core_of_pu(topo, 8);
        /* The outermost group (CCD) holds CPUs 0-7 and 16-23. */
        CHECK(osmp_topo_domain_of(topo, c0, OSMP_DOMAIN_GROUP) == osmp_topo_domain_of(topo, c1, OSMP_DOMAIN_GROUP));
        CHECK(osmp_topo_domain_of(topo, c0, OSMP_DOMAIN_GROUP) != osmp_topo_domain_of(topo, c8, OSMP_DOMAIN_GROUP));
        /* The distance key orders pairs by the measured latency: SMT sibling, then CCD, then the other CCD. */
        uint32_t k_smt = osmp_topo_distance_key(topo, c0, c16), k_ccd = osmp_topo_distance_key(topo, c0, c1),
                 k_far = osmp_topo_distance_key(topo, c0, c8);
        CHECK(k_smt < k_ccd && k_ccd < k_far);
        CHECK_INT((k_far >> 8) & 0xffff, (uint32_t)(m[8] + 0.5));
        CHECK_INT((k_smt >> 8) & 0xffff, (uint32_t)(m[16] + 0.5));
        osmp_topo_destroy(topo);
    }
    osmp__mtree_destroy(t);
    free(m);
}

/* osmp-probe's line on whether hwloc's tree and the measured one agree: Milan (hwloc's capture, 2 packages of
 * 8 CCX of 8 cores, P# consecutive in each CCX) against matrices that have that structure, less, and more. */
static int milan_ccx(int c) { return c / 8; }
static int milan_sock(int c) { return c / 64; }
static int milan_half_ccx(int c) { return c / 4; }

static void test_compare_with_hwloc(void)
{
    hwloc_topology_t hw;
    hwloc_topology_init(&hw);
    CHECK(hwloc_topology_set_xml(hw, topo_path("amd-milan-2x64.xml")) == 0);
    CHECK(hwloc_topology_load(hw) == 0);
    int cpus[128];
    for (int i = 0; i < 128; i++) cpus[i] = i;
    static const struct {
        struct synth s;
        int agree;
        const char *line;
    } cases[] = {
        {{128, 2, {milan_ccx, milan_sock}, {25, 100, 200}, 0.05}, 1, "agree"},
        {{128, 0, {0}, {60}, 0.05}, 0, "hwloc's Package L#0 (CPUs 0-63) is not a measured domain"},
        {{128, 1, {milan_sock}, {60, 200}, 0.05}, 0, "hwloc's L3 L#0 (CPUs 0-7) is not a measured domain"},
        {{128, 3, {milan_half_ccx, milan_ccx, milan_sock}, {15, 25, 100, 200}, 0.05}, 0,
         "CPUs 0-3 form a measured domain (group0, 15.0 ns) that hwloc's tree does not have"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double *m = make(&cases[i].s);
        struct osmp__mtree *t = cluster_checked(m, 128);
        if (t) {
            char line[512];
            CHECK_INT(osmp__measured_compare(hw, cpus, t, line, sizeof(line)), cases[i].agree);
            if (!strstr(line, cases[i].line)) {
                fprintf(stderr, "  case %zu: \"%s\" does not say \"%s\"\n", i, line, cases[i].line);
                test_failures++;
            }
            osmp__mtree_destroy(t);
        }
        free(m);
    }
    hwloc_topology_destroy(hw);
}

/* OSMP_TOPOLOGY=measured: the per-user cache, a clear error when it is missing. */
static void test_measured_knob(void)
{
    char dir[] = "/tmp/osmp-test-cache-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    setenv("XDG_CACHE_HOME", dir, 1);
    char path[4096], why[256];
    REQUIRE_OK(osmp__measured_cache_path(path, sizeof(path), why, sizeof(why)));
    char host[256];
    gethostname(host, sizeof(host));
    char expect[4400];
    snprintf(expect, sizeof(expect), "%s/osmp/topology-%s.xml", dir, host);
    CHECK_STR(path, expect);
    osmp_topo_t t = NULL;
    CHECK_INT(osmp__topo_load_knob("measured", &t), OSMP_ERR_TOPO_LOAD);
    CHECK(strstr(osmp_topo_last_error(), path) != NULL);
    CHECK(strstr(osmp_topo_last_error(), "osmp-probe --save") != NULL);
    /* A relative XDG_CACHE_HOME is invalid (XDG spec): HOME's .cache then. */
    setenv("XDG_CACHE_HOME", "relative", 1);
    setenv("HOME", dir, 1);
    REQUIRE_OK(osmp__measured_cache_path(path, sizeof(path), why, sizeof(why)));
    snprintf(expect, sizeof(expect), "%s/.cache/osmp/topology-%s.xml", dir, host);
    CHECK_STR(path, expect);
    /* The other forms of the knob. */
    REQUIRE_OK(osmp__topo_load_knob("synthetic:pack:2 core:2 pu:1", &t));
    CHECK_INT(osmp_topo_ncores(t), 4);
    osmp_topo_destroy(t);
    rmdir(dir);
}

int main(void)
{
    RUN(test_csv);
    RUN(test_shared_matrices);
    RUN(test_synthetic);
    RUN(test_bad_matrices);
    RUN(test_xml_round_trip);
    RUN(test_compare_with_hwloc);
    RUN(test_measured_knob);
    return TEST_EXIT();
}
