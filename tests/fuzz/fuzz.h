/*
 * Shared by the fuzz harnesses (each fuzz-<name>.c includes it once). Each harness defines
 * LLVMFuzzerTestOneInput; built with libFuzzer (OSMP_FUZZ=ON, clang) it is fuzz-<name>, linked with
 * replay.c it is fuzz-replay-<name>, which runs the committed corpus and regressions in every build.
 *
 * Checks use FUZZ_CHECK, not assert(): the replay tests also run in RelWithDebInfo (NDEBUG) builds.
 */
#ifndef OSMP_FUZZ_H
#define OSMP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                                \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: fuzz check failed: %s: ", __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

/* The project's ASan builds make UBSan findings fatal with -fno-sanitize-recover; the fuzz build
 * (OSMP_FUZZ) does not, so make every finding stop the fuzzer here. UBSAN_OPTIONS still wins. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

/* With OSMP_FUZZ_VERBOSE set, harnesses say what happened to each input (for replaying one by hand). */
#define FUZZ_NOTE(...)                                                                                       \
    do {                                                                                                     \
        if (getenv("OSMP_FUZZ_VERBOSE")) {                                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
        }                                                                                                    \
    } while (0)

/* The input as a NUL-terminated string (it ends at the first NUL byte if it has one). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FUZZ_CHECK(s != NULL, "out of memory");
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* FNV-1a: derives parameters (ranks, cores, root) from the input, so corpus files stay plain text. */
static inline uint32_t fuzz_hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    return h;
}

static inline int fuzz_count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* A reason written by a failing call: non-empty, NUL-terminated inside the buffer, one line (newlines
 * only where the message quotes the caller's input). */
static inline void fuzz_check_reason(const char *err, size_t cap, const char *input)
{
    size_t len = strnlen(err, cap);
    FUZZ_CHECK(len < cap, "reason not NUL-terminated");
    FUZZ_CHECK(len > 0, "empty reason");
    FUZZ_CHECK(fuzz_count_char(err, '\n') <= fuzz_count_char(input, '\n'), "reason \"%s\" is not one line",
               err);
}

/* hwloc speaks on stderr about malformed XML and synthetic strings; OSMP reports through its status. */
static inline void fuzz_quiet_hwloc(void)
{
    setenv("HWLOC_XML_VERBOSE", "0", 0);
    setenv("HWLOC_SYNTHETIC_VERBOSE", "0", 0);
    setenv("HWLOC_HIDE_ERRORS", "2", 0);
}

/* A fixed 16-core machine (2 packages x 2 L3 x 4 cores), loaded once: targets that need a topology do
 * not depend on files. It stays loaded, which also keeps hwloc's components from being reloaded for
 * every input by the targets that load topologies of their own. */
static inline osmp_topo_t fuzz_fixed_topo(void)
{
    static osmp_topo_t topo;
    if (!topo) {
        fuzz_quiet_hwloc();
        int rc = osmp_topo_load(OSMP_TOPO_SYNTHETIC, "package:2 l3:2 core:4 pu:1", 0, &topo);
        FUZZ_CHECK(rc == OSMP_OK, "fixed topology: %s", osmp_topo_last_error());
        FUZZ_CHECK(osmp_topo_ncores(topo) == 16, "fixed topology has %d cores", osmp_topo_ncores(topo));
    }
    return topo;
}

/* What OSMP builds on a topology that loaded from outside input must hold together: the tree's
 * invariants, distances, placements, the default spec, plans and graphs on up to 64 ranks. */
static inline void fuzz_exercise_topo(osmp_topo_t t, uint32_t h)
{
    char why[512] = "";
    FUZZ_CHECK(osmp_topo_check(t, why, sizeof(why)) == OSMP_OK, "osmp_topo_check: %s", why);
    int nc = osmp_topo_ncores(t);
    FUZZ_CHECK(nc >= 1 && osmp_topo_count(t, OSMP_DOMAIN_CORE) == nc, "%d cores", nc);
    FUZZ_CHECK(osmp_topo_count(t, OSMP_DOMAIN_MACHINE) == 1, "%d machines",
               osmp_topo_count(t, OSMP_DOMAIN_MACHINE));
    FUZZ_CHECK(osmp_topo_count(t, OSMP_DOMAIN_PU) >= nc, "fewer PUs than cores");

    for (int i = 0; i < 8; i++) {
        int a = (int)((h + 7919u * (unsigned)i) % (unsigned)nc),
            b = (int)((h / 3 + 104729u * (unsigned)i) % (unsigned)nc);
        int d = osmp_topo_distance(t, a, b);
        FUZZ_CHECK(d >= 0 && d < OSMP_DIST_RUNGS && d == osmp_topo_distance(t, b, a), "distance(%d,%d) = %d",
                   a, b, d);
        FUZZ_CHECK((d == OSMP_DIST_CORE) == (a == b), "distance(%d,%d) = %d", a, b, d);
        uint32_t k = osmp_topo_distance_key(t, a, b);
        FUZZ_CHECK(k == osmp_topo_distance_key(t, b, a) && k >> 24 == (uint32_t)d, "distance key(%d,%d)", a,
                   b);
    }

    char spec[256];
    int rc = osmp_plan_default_spec(t, spec, sizeof(spec));
    FUZZ_CHECK(rc == OSMP_OK, "osmp_plan_default_spec: %s", osmp_status_name(rc));
    struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
    int nl;
    FUZZ_CHECK(osmp_spec_parse(spec, lv, &nl, why, sizeof(why)) == OSMP_OK, "default spec \"%s\": %s", spec,
               why);

    /* Every policy places nc ranks on nc distinct cores. */
    int *cores = malloc(sizeof(int) * (size_t)nc), *place = NULL;
    char *seen = malloc((size_t)nc);
    FUZZ_CHECK(cores && seen, "out of memory");
    char rnd[32];
    snprintf(rnd, sizeof(rnd), "random:%u", h);
    const char *policies[] = {"linear", "scatter", "numa", rnd};
    for (int p = 0; p < 4; p++) {
        rc = osmp_topo_place(t, policies[p], nc, cores, why, sizeof(why));
        FUZZ_CHECK(rc == OSMP_OK, "place %s: %s", policies[p], why);
        memset(seen, 0, (size_t)nc);
        for (int r = 0; r < nc; r++) {
            FUZZ_CHECK(cores[r] >= 0 && cores[r] < nc && !seen[cores[r]], "place %s: rank %d on core %d",
                       policies[p], r, cores[r]);
            seen[cores[r]] = 1;
        }
    }

    /* A team of up to 64 ranks (cores repeat past nc) on the scattered cores. */
    int n = 1 + (int)(h % 64u), root = (int)((h >> 8) % (unsigned)n);
    place = malloc(sizeof(int) * (size_t)n);
    FUZZ_CHECK(place != NULL, "out of memory");
    FUZZ_CHECK(osmp_topo_place(t, "scatter", n, place, why, sizeof(why)) == OSMP_OK, "place: %s", why);
    static const char *const specs[] = {"flat", "core,l2,l3,numa,package,group", "package:4",
                                        "numa,l3:3,machine:2"};
    const char *plan_specs[] = {"auto", specs[(h >> 16) % 4]};
    for (int s = 0; s < 2; s++) {
        struct osmp_plan *plan = NULL;
        rc = osmp_plan_create(t, place, n, plan_specs[s], root, &plan);
        FUZZ_CHECK(rc == OSMP_OK, "plan %s: %s", plan_specs[s], osmp_status_name(rc));
        FUZZ_CHECK(osmp_plan_check(plan, why, sizeof(why)) == OSMP_OK, "plan %s: %s", plan_specs[s], why);
        for (int kind = OSMP_GRAPH_PLAN; s == 0 && kind <= OSMP_GRAPH_RANKRING; kind++) {
            struct osmp_graph *g = NULL;
            rc = osmp_graph_create(t, place, n, root, (osmp_graph_kind_t)kind, plan, &g);
            FUZZ_CHECK(rc == OSMP_OK, "graph %s: %s", osmp_graph_kind_name((osmp_graph_kind_t)kind),
                       osmp_status_name(rc));
            int ring = kind == OSMP_GRAPH_RING || kind == OSMP_GRAPH_RANKRING;
            FUZZ_CHECK(g->nedges == (ring ? (n > 1 ? n : 0) : n - 1), "graph %s: %d edges for %d ranks",
                       osmp_graph_kind_name((osmp_graph_kind_t)kind), g->nedges, n);
            for (int e = 0; e < g->nedges; e++)
                FUZZ_CHECK(g->edges[e][0] >= 0 && g->edges[e][0] < n && g->edges[e][1] >= 0 &&
                               g->edges[e][1] < n,
                           "graph edge %d out of range", e);
            osmp_graph_destroy(g);
        }
        osmp_plan_destroy(plan);
    }
    free(place);
    free(cores);
    free(seen);
}

#endif
