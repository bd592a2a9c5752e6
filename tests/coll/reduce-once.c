/*
 * reduce-once: one allreduce and one reduce (root 0) of COUNT doubles, for
 * reading the transfer trace of a large reduction (OSMP_TRACE) without the
 * thousands of calls coll-check makes. Checks the result exactly: every input
 * is a small integer, so the sums are exact whatever the order.
 *
 *   OSMP_TRACE=PREFIX osmp-run -n N ... -- reduce-once [COUNT]   (default 131072: 1 MiB)
 *   tests/coll/trace-check.py PREFIX TOPOLOGY.xml
 */
#include <stdio.h>
#include <stdlib.h>

#include "osmp.h"

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : 131072;
    osmp_team_t t;
    if (osmp_init(&t)) return 1;
    int me = osmp_team_rank(t), n = osmp_team_size(t), bad = 0;
    double *in = malloc(sizeof(double) * (count ? count : 1)), *out = malloc(sizeof(double) * (count ? count : 1));
    if (!in || !out) return 1;
    for (size_t i = 0; i < count; i++) in[i] = (double)((size_t)me * 7 + i % 1000);
    double base = 7.0 * n * (n - 1) / 2;
    int rc = osmp_allreduce(t, in, out, count, OSMP_DOUBLE, OSMP_SUM);
    for (size_t i = 0; !rc && i < count; i++) bad |= out[i] != base + (double)n * (double)(i % 1000);
    if (!rc) rc = osmp_reduce(t, in, me == 0 ? out : NULL, count, OSMP_DOUBLE, OSMP_SUM, 0);
    for (size_t i = 0; !rc && me == 0 && i < count; i++) bad |= out[i] != base + (double)n * (double)(i % 1000);
    if (rc || bad) fprintf(stderr, "reduce-once: rank %d: %s\n", me, rc ? osmp_status_str(rc) : "wrong result");
    free(in);
    free(out);
    if (osmp_finalize()) return 1;
    return rc || bad;
}
