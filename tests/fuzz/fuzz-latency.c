/*
 * Latency matrices (osmp-probe --from-csv, src/topo/cluster.c): osmp__latency_parse_csv, then
 * osmp__latency_cluster on what it accepts. Input: the CSV text.
 */
#include <math.h>

#include "fuzz.h"
#include "topo/measured.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0; /* clustering is cubic in the CPUs: keep inputs small */
    char *text = fuzz_cstr(data, size);
    double *m = (double *)0x1;
    int n = -7;
    char why[200];
    memset(why, 'x', sizeof(why));
    int rc = osmp__latency_parse_csv(text, strlen(text), &m, &n, why, sizeof(why));
    if (rc != OSMP_OK) {
        FUZZ_CHECK(rc == OSMP_ERR_INVALID_ARG, "status %s", osmp_status_name(rc));
        fuzz_check_reason(why, sizeof(why), text);
        FUZZ_CHECK(m == (double *)0x1 && n == -7, "output written on failure");
        FUZZ_NOTE("rejected: %s", why);
        free(text);
        return 0;
    }
    FUZZ_CHECK(n >= 2 && n <= OSMP__LATENCY_MAX_CPUS, "%d CPUs", n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = m[(size_t)i * (size_t)n + (size_t)j];
            FUZZ_CHECK(v == m[(size_t)j * (size_t)n + (size_t)i], "not symmetric at %d, %d", i, j);
            FUZZ_CHECK(i == j ? v == 0 : isfinite(v) && v >= 0, "entry %d, %d is %g", i, j, v);
        }
    int all_zero = 1; /* 0 is below the timer's resolution; a matrix of nothing else has nothing to cluster */
    for (int i = 0; i < n * n; i++) all_zero &= m[i] == 0;
    struct osmp__mtree *t = NULL;
    rc = osmp__latency_cluster(m, n, &t, why, sizeof(why));
    FUZZ_CHECK(all_zero ? rc == OSMP_ERR_INVALID_ARG : rc == OSMP_OK, "a parsed matrix must cluster: %s", why);
    if (rc != OSMP_OK) {
        free(m);
        free(text);
        return 0;
    }
    FUZZ_CHECK(osmp__mtree_check(t, why, sizeof(why)) == OSMP_OK, "tree invariant: %s", why);
    FUZZ_NOTE("%d CPUs, %d levels", n, t->nlevels);
    osmp__mtree_destroy(t);
    free(m);
    free(text);
    return 0;
}
