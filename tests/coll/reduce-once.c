/*
 * reduce-once: one allreduce and one reduce (root 0) of COUNT doubles, for
 * reading the transfer trace of a large reduction (OSMP_TRACE) without the
 * thousands of calls coll-check makes. Checks the result exactly: every input
 * is a small integer, so the sums are exact whatever the order.
 *
 * With "random" the inputs are doubles whose sums round, and rank 0 prints a
 * hash of the allreduce's bits (checked equal to the reduce's): runs with other
 * chunk sizes, pipeline depths or placements show whether the order of
 * combination changed.
 *
 *   OSMP_TRACE=PREFIX osmp-run -n N ... -- reduce-once [COUNT [random]]   (default 131072: 1 MiB)
 *   tests/coll/trace-check.py PREFIX TOPOLOGY.xml
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : 131072;
    int random = argc > 2 && strcmp(argv[2], "random") == 0;
    osmp_team_t t;
    if (osmp_init(&t)) return 1;
    int me = osmp_team_rank(t), n = osmp_team_size(t), bad = 0;
    size_t bytes = sizeof(double) * (count ? count : 1);
    double *in = malloc(bytes), *out = malloc(bytes), *out2 = malloc(bytes);
    if (!in || !out || !out2) return 1;
    uint64_t x = 0x9e3779b97f4a7c15u * (uint64_t)(me + 1);
    for (size_t i = 0; i < count; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = random ? (double)(x >> 11) / 9007199254740992.0 * (i % 2 ? 1e-3 : 1e3)
                       : (double)((size_t)me * 7 + i % 1000);
    }
    double base = 7.0 * n * (n - 1) / 2;
    int rc = osmp_allreduce(t, in, out, count, OSMP_DOUBLE, OSMP_SUM);
    for (size_t i = 0; !rc && !random && i < count; i++)
        bad |= out[i] != base + (double)n * (double)(i % 1000);
    if (!rc) rc = osmp_reduce(t, in, me == 0 ? out2 : NULL, count, OSMP_DOUBLE, OSMP_SUM, 0);
    if (!rc && me == 0) bad |= memcmp(out, out2, sizeof(double) * count) != 0;
    if (!rc && me == 0 && random) {
        uint64_t h = 14695981039346656037u;
        for (size_t i = 0; i < sizeof(double) * count; i++)
            h = (h ^ ((unsigned char *)out)[i]) * 1099511628211u;
        printf("reduce-once: %zu doubles, result hash %016llx\n", count, (unsigned long long)h);
    }
    if (rc || bad)
        fprintf(stderr, "reduce-once: rank %d: %s\n", me, rc ? osmp_status_str(rc) : "wrong result");
    free(in);
    free(out);
    free(out2);
    if (osmp_finalize()) return 1;
    return rc || bad;
}
