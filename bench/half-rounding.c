/*
 * Where a 16-bit floating point sum rounds (docs/measurements.md section 16):
 * n contributions combined as a binary tree (the shape of the plan's groups
 * and of the sliced allreduce's steps), either rounding every combine to the
 * 16-bit type (partials travel as 16 bits: what OSMP does) or keeping the
 * partials in binary32 and rounding once at the end (partials travel as 32
 * bits). Error against the exact sum of the 16-bit inputs, in units of the
 * 16-bit type's ulp at the sum of the inputs' magnitudes (the scale of any
 * summation's error bound; at the result itself cancellation makes it
 * meaningless), mean and largest over the elements; inputs normal (0, 1).
 *
 *   build/bench/half-rounding [ELEMENTS]     (the kernels are the library's: src/coll/op_half.c)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll/coll.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double gauss(void) /* Box-Muller on splitmix64 */
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        u[k] = ((z ^ (z >> 31)) >> 11) * 0x1p-53 + 0x1p-54;
    }
    return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static float widen(int bf, uint16_t h)
{
    if (!bf) return osmp__f16_to_f32(h);
    uint32_t u = (uint32_t)h << 16;
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}

static uint16_t narrow(int bf, float f)
{
    if (!bf) return osmp__f32_to_f16(f);
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

/* ulp of the 16-bit type at |x| */
static double ulp(int bf, double x)
{
    int e;
    frexp(fabs(x) > 0 ? fabs(x) : 1e-30, &e);
    double u = ldexp(1.0, e - (bf ? 8 : 11));
    double tiny = bf ? 0x1p-133 : 0x1p-24;
    return u > tiny ? u : tiny;
}

int main(int argc, char **argv)
{
    size_t m = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
    static const int ns[] = {8, 16, 64, 128, 256};
    osmp__reduce_fn sum[2];
    if (osmp__half_fns(OSMP_FLOAT16, OSMP_SUM, -1, &sum[0], NULL) ||
        osmp__half_fns(OSMP_BFLOAT16, OSMP_SUM, -1, &sum[1], NULL))
        return 1;
    printf("| type | n | rounded at every combine: mean / max ulp | binary32 partials, rounded once: mean / max ulp |\n");
    printf("|---|---:|---:|---:|\n");
    for (int bf = 0; bf < 2; bf++)
        for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
            int n = ns[k];
            size_t all = (size_t)n * m;
            uint16_t *h = malloc(sizeof(uint16_t) * all);
            float *f = malloc(sizeof(float) * all);
            double *exact = calloc(m, sizeof(double)), *mag = calloc(m, sizeof(double));
            if (!h || !f || !exact || !mag) return 1;
            for (size_t i = 0; i < all; i++) h[i] = narrow(bf, (float)gauss());
            for (size_t i = 0; i < all; i++) f[i] = widen(bf, h[i]), exact[i % m] += f[i], mag[i % m] += fabs(f[i]);
            /* binary tree: at distance d, rank r (a multiple of 2d) takes in rank r + d */
            for (int d = 1; d < n; d *= 2)
                for (int r = 0; r + d < n; r += 2 * d) {
                    sum[bf](h + (size_t)r * m, h + (size_t)(r + d) * m, m); /* the library's kernel */
                    for (size_t e = 0; e < m; e++) f[(size_t)r * m + e] += f[(size_t)(r + d) * m + e];
                }
            double mean[2] = {0, 0}, most[2] = {0, 0};
            for (size_t e = 0; e < m; e++) {
                double u = ulp(bf, mag[e]);
                double err[2] = {fabs(widen(bf, h[e]) - exact[e]) / u, fabs(widen(bf, narrow(bf, f[e])) - exact[e]) / u};
                for (int w = 0; w < 2; w++) {
                    mean[w] += err[w] / (double)m;
                    if (err[w] > most[w]) most[w] = err[w];
                }
            }
            printf("| %s | %d | %.2f / %.1f | %.2f / %.1f |\n", bf ? "bfloat16" : "float16", n, mean[0], most[0], mean[1],
                   most[1]);
            free(h), free(f), free(exact), free(mag);
        }
    return 0;
}
