/*
 * 16-bit floating point allreduce against float32 of the same bytes
 * (docs/measurements.md section 16): OSMP_BFLOAT16 and OSMP_FLOAT16 against
 * OSMP_FLOAT, interleaved round by round, each round the slowest rank's mean
 * time per call; prints the medians and their ratios to float32.
 *
 *   osmp-run -n N -- build/half-allreduce [BYTES] [ROUNDS] [CALLS]     (default 16 MiB, 15 rounds, 5 calls)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osmp.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 0) : 16u << 20;
    int rounds = argc > 2 ? atoi(argv[2]) : 15, calls = argc > 3 ? atoi(argv[3]) : 5;
    osmp_team_t t;
    if (osmp_init(&t) || rounds < 1 || calls < 1) return 1;
    static const osmp_dtype_t types[] = {OSMP_FLOAT, OSMP_BFLOAT16, OSMP_FLOAT16};
    static const char *const names[] = {"float32", "bfloat16", "float16"};
    enum { NT = 3 };
    uint16_t *in = malloc(bytes), *out = malloc(bytes);
    double *tm = malloc(sizeof(double) * NT * (size_t)rounds);
    if (!in || !out || !tm) return 1;
    /* small integers (0x3f80 = bfloat16 1.0, 0x3c00 = float16 1.0, 1.0f's upper half 0x3f80): finite sums */
    for (size_t i = 0; i < bytes / 2; i++) in[i] = i % 2 ? 0x3f80 : 0;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NT; k++) {
            osmp_dtype_t d = types[(k + r) % NT]; /* rotate which goes first */
            int slot = (k + r) % NT;
            size_t count = bytes / osmp_dtype_size(d);
            if (osmp_allreduce(t, in, out, count, d, OSMP_SUM)) return 1; /* warm */
            osmp_barrier(t);
            double t0 = now();
            for (int c = 0; c < calls; c++)
                if (osmp_allreduce(t, in, out, count, d, OSMP_SUM)) return 1;
            double mine = (now() - t0) / calls, slowest;
            osmp_allreduce(t, &mine, &slowest, 1, OSMP_DOUBLE, OSMP_MAX);
            tm[slot * rounds + r] = slowest;
        }
    if (osmp_team_rank(t) == 0) {
        double med[NT];
        for (int k = 0; k < NT; k++) {
            qsort(tm + k * rounds, (size_t)rounds, sizeof(double), cmp);
            med[k] = tm[k * rounds + rounds / 2];
        }
        printf("| %d participants, %zu B | median ms per call | ratio to float32 |\n|---|---:|---:|\n",
               osmp_team_size(t), bytes);
        for (int k = 0; k < NT; k++) printf("| %s | %.3f | %.2f |\n", names[k], 1e3 * med[k], med[k] / med[0]);
    }
    free(in), free(out), free(tm);
    return osmp_finalize() ? 1 : 0;
}
