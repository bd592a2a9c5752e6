/*
 * Core lists (osmp-run --cores, osmp-topo --cores; also hwloc cpuset strings in osmp-run):
 * osmp_core_list_parse, at several (ncores, cap) pairs, against a reference parser of the grammar
 * osmp.h documents. Input: the list text.
 */
#include <limits.h>

#include "fuzz.h"

#define SENTINEL (-77)
#define MAX_CAP 4096

/* The grammar: items "A" or "A-B" (decimal, A <= B) separated by single commas, nothing else. Errors in
 * item order: malformed or descending -> INVALID_ARG; a core >= ncores, or more than cap entries ->
 * RANGE. Returns the status; on success the expansion is in out[0..*n). */
static int reference(const char *s, int ncores, int cap, int *out, int *n)
{
    int k = 0;
    for (;;) {
        long v[2] = {-1, -1};
        for (int part = 0; part < 2; part++) {
            if (*s < '0' || *s > '9') return OSMP_ERR_INVALID_ARG;
            long x = 0;
            while (*s >= '0' && *s <= '9') {
                x = x * 10 + (*s++ - '0');
                if (x > INT_MAX) x = INT_MAX;
            }
            v[part] = x;
            if (part == 0 && *s != '-') break;
            if (part == 0) s++;
        }
        if (v[1] < 0) v[1] = v[0];
        if (*s != ',' && *s != '\0') return OSMP_ERR_INVALID_ARG;
        if (v[1] < v[0]) return OSMP_ERR_INVALID_ARG;
        if (v[1] >= ncores) return OSMP_ERR_RANGE;
        if (v[1] - v[0] >= (long)cap - k) return OSMP_ERR_RANGE;
        for (long c = v[0]; c <= v[1]; c++)
            out[k++] = (int)c;
        if (*s++ == '\0') break;
    }
    *n = k;
    return OSMP_OK;
}

static int want[MAX_CAP], sentinel[MAX_CAP];

static void one(const char *list, int ncores, int cap)
{
    /* Exactly cap entries, so that ASan sees a write past them; compared with memcmp to keep the
     * fuzzer's comparison tracing out of the loops. */
    int *got = malloc(sizeof(int) * (size_t)(cap ? cap : 1));
    FUZZ_CHECK(got != NULL, "out of memory");
    memcpy(got, sentinel, sizeof(int) * (size_t)cap);
    int n = SENTINEL, wn = -1;
    char err[128];
    memset(err, 'x', sizeof(err));
    int rc = osmp_core_list_parse(list, ncores, cap ? got : NULL, cap, &n, err, sizeof(err));
    int wrc = reference(list, ncores, cap, want, &wn);
    FUZZ_CHECK(rc == wrc, "\"%s\" (ncores %d, cap %d): %s, expected %s", list, ncores, cap,
               osmp_status_name(rc), osmp_status_name(wrc));
    if (rc != OSMP_OK) {
        fuzz_check_reason(err, sizeof(err), list);
        FUZZ_CHECK(n == SENTINEL, "\"%s\": n written on failure", list);
        FUZZ_CHECK(memcmp(got, sentinel, sizeof(int) * (size_t)cap) == 0,
                   "\"%s\" (ncores %d, cap %d): cores written on failure", list, ncores, cap);
    } else {
        FUZZ_CHECK(n == wn && n >= 1 && n <= cap, "\"%s\" (ncores %d, cap %d): n = %d, expected %d", list,
                   ncores, cap, n, wn);
        for (int i = 0; i < n; i++)
            FUZZ_CHECK(got[i] >= 0 && got[i] < ncores, "\"%s\": core %d of %d", list, got[i], ncores);
        FUZZ_CHECK(memcmp(got, want, sizeof(int) * (size_t)n) == 0, "\"%s\" (ncores %d, cap %d): other cores",
                   list, ncores, cap);
        FUZZ_CHECK(memcmp(got + n, sentinel, sizeof(int) * (size_t)(cap - n)) == 0, "\"%s\": written past n",
                   list);
    }
    free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    if (sentinel[0] != SENTINEL)
        for (int i = 0; i < MAX_CAP; i++)
            sentinel[i] = SENTINEL;
    char *list = fuzz_cstr(data, size);
    static const int params[][2] = {{16, 64}, {1, 1},  {4096, MAX_CAP}, {INT_MAX, 8},
                                    {128, 0}, {0, 16}, {7, 3}};
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
        one(list, params[i][0], params[i][1]);
    free(list);
    return 0;
}
