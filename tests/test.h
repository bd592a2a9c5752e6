/*
 * Minimal assertion helpers for the unit tests. Each test file is one program
 * registered with ctest (with a timeout); a failed check prints where and what,
 * and the program exits non-zero after running the remaining tests.
 */
#ifndef OSMP_TEST_H
#define OSMP_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

static int test_failures;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                         \
            test_failures++;                                                                                 \
        }                                                                                                    \
    } while (0)

#define CHECK_INT(a, b)                                                                                      \
    do {                                                                                                     \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                                \
        if (va_ != vb_) {                                                                                    \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, va_, #b, vb_); \
            test_failures++;                                                                                 \
        }                                                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                                                      \
    do {                                                                                                     \
        const char *sa_ = (a), *sb_ = (b);                                                                   \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                                                         \
            fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,                \
                    sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                                             \
            test_failures++;                                                                                 \
        }                                                                                                    \
    } while (0)

/* Stop this test function when a precondition fails (the rest would crash). */
#define REQUIRE_OK(expr)                                                                                     \
    do {                                                                                                     \
        int rc_ = (expr);                                                                                    \
        if (rc_ != OSMP_OK) {                                                                                \
            fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, osmp_status_name(rc_));    \
            test_failures++;                                                                                 \
            return;                                                                                          \
        }                                                                                                    \
    } while (0)

#define RUN(test)                                                                                            \
    do {                                                                                                     \
        int before_ = test_failures;                                                                         \
        test();                                                                                              \
        fprintf(stderr, "%s %s\n", test_failures == before_ ? "ok  " : "FAIL", #test);                       \
    } while (0)

#define TEST_EXIT() (test_failures ? (fprintf(stderr, "%d check(s) failed\n", test_failures), 1) : 0)

/* Path of a topology from tests/data/topologies (set by CMake). */
static inline const char *topo_path(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s", OSMP_TOPOLOGIES_DIR, name);
    return buf;
}

/* Load a topology and run the invariant check every test must run on it. */
static inline osmp_topo_t load_checked(osmp_topo_source_t src, const char *what, unsigned flags)
{
    osmp_topo_t t = NULL;
    int rc = osmp_topo_load(src, what, flags, &t);
    if (rc != OSMP_OK) {
        fprintf(stderr, "cannot load %s: %s (%s)\n", what ? what : "this machine", osmp_status_name(rc),
                osmp_topo_last_error());
        test_failures++;
        return NULL;
    }
    char why[256];
    if (osmp_topo_check(t, why, sizeof(why)) != OSMP_OK) {
        fprintf(stderr, "topology %s violates an invariant: %s\n", what ? what : "this machine", why);
        test_failures++;
    }
    return t;
}

static inline osmp_topo_t load_xml(const char *name, unsigned flags)
{
    return load_checked(OSMP_TOPO_XML, topo_path(name), flags);
}

#endif
