/*
 * 16-bit floating point reductions (src/coll/op_half.c): every instruction set
 * this CPU has gives the scalar path's bits, on every 16-bit value against
 * several partners and on results of every binary32 exponent; the scalar
 * conversions round as the compiler's _Float16 and as F16C do; exact values of
 * the four operations, rounding to nearest even, NaN and infinities; the
 * operations without meaning on floating point refused.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "test.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define X86 1
#endif

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#ifdef X86
__attribute__((target("f16c"))) static uint16_t f16c_narrow(float f)
{
    return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 0);
}
#endif

/* Reference binary32 -> binary16 rounding: the compiler's (libgcc's) where it has _Float16, and F16C's. */
static void test_f16_conversions(void)
{
    /* widening: every half, exact (NaN: quiet, payload kept) */
    for (uint32_t h = 0; h < 65536; h++) {
        float f = osmp__f16_to_f32((uint16_t)h);
        uint32_t e = h >> 10 & 0x1f, m = h & 0x3ff;
        if (e == 0x1f && m) {
            CHECK(isnan(f));
            CHECK_INT(fbits(f) >> 13 & 0x3ff, m | 0x200);
            continue;
        }
        double want = e == 0x1f ? INFINITY : e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
        if (h & 0x8000) want = -want;
        if ((double)f != want) {
            fprintf(stderr, "half 0x%04x widens to %a, not %a\n", h, (double)f, want);
            test_failures++;
            return;
        }
        /* and comes back */
        CHECK_INT(osmp__f32_to_f16(f), h);
    }
    /* narrowing: binary32 values of every exponent around the half range, each rounding case */
    unsigned long checked = 0;
    for (uint32_t e = 90; e <= 160; e++)
        for (uint32_t k = 0; k < 1u << 14; k++) {
            /* mantissas: the halfway patterns, their neighbours, and pseudo-random ones */
            uint32_t mant = k < 64 ? ((k & 7) << 20 | (k >> 3 & 1) << 12 | (k >> 4 & 1) << 13 | (k >> 5 & 1)) * 1u
                                   : (k * 2654435761u) >> 9;
            for (uint32_t s = 0; s < 2; s++) {
                float f = bitsf(s << 31 | e << 23 | (mant & 0x7fffff));
                uint16_t got = osmp__f32_to_f16(f);
#if defined(__FLT16_MAX__)
                _Float16 r = (_Float16)f;
                uint16_t want;
                memcpy(&want, &r, 2);
                if (got != want) {
                    fprintf(stderr, "%a narrows to 0x%04x, _Float16 says 0x%04x\n", (double)f, got, want);
                    test_failures++;
                    return;
                }
#endif
#ifdef X86
                if (__builtin_cpu_supports("f16c")) {
                    uint16_t hw = f16c_narrow(f);
                    if (got != hw) {
                        fprintf(stderr, "%a narrows to 0x%04x, F16C says 0x%04x\n", (double)f, got, hw);
                        test_failures++;
                        return;
                    }
                }
#endif
                checked++;
            }
        }
    CHECK(checked > 2000000);
    /* specials */
    CHECK_INT(osmp__f32_to_f16(65504.0f), 0x7bff);
    CHECK_INT(osmp__f32_to_f16(65519.996f), 0x7bff);
    CHECK_INT(osmp__f32_to_f16(65520.0f), 0x7c00); /* half way to 65536: even is infinity */
    CHECK_INT(osmp__f32_to_f16(-INFINITY), 0xfc00);
    CHECK_INT(osmp__f32_to_f16(0x1p-24f), 0x0001);
    CHECK_INT(osmp__f32_to_f16(0x1p-25f), 0x0000);  /* half way to the smallest subnormal: even is zero */
    CHECK_INT(osmp__f32_to_f16(0x1.8p-25f), 0x0001);
    CHECK_INT(osmp__f32_to_f16(-0.0f), 0x8000);
    CHECK_INT(osmp__f32_to_f16(1.0f + 0x1p-11f), 0x3c00);  /* half way: even (1.0) */
    CHECK_INT(osmp__f32_to_f16(1.0f + 0x3p-11f), 0x3c02);  /* half way: even (1 + 2^-9) */
    CHECK_INT(osmp__f32_to_f16(bitsf(0x7f800001)), 0x7e00); /* signalling NaN: quiet */
}

/* Bits of one operation on arrays (isa, dtype, op); n elements. */
static void apply(int isa, osmp_dtype_t d, osmp_op_t op, uint16_t *o, const uint16_t *a, const uint16_t *b, size_t n,
                  int three)
{
    osmp__reduce_fn fn;
    osmp__reduce_fn3 fn3;
    if (osmp__half_fns(d, op, isa, &fn, &fn3)) {
        fprintf(stderr, "no kernel for isa %d\n", isa);
        test_failures++;
        return;
    }
    if (three) {
        fn3(o, a, b, n);
    } else {
        memcpy(o, a, n * 2);
        fn(o, b, n);
    }
}

static void test_paths_agree(void)
{
    const size_t n = 65536 + 13; /* a tail past every vector width */
    uint16_t *a = malloc(n * 2), *b = malloc(n * 2), *ref = malloc(n * 2), *got = malloc(n * 2);
    CHECK(a && b && ref && got);
    int isas = 0;
    for (int isa = 0; isa < OSMP__HALF_ISAS; isa++) isas += osmp__half_isa_supported(isa);
    printf("test-half: %d instruction sets (best %d)\n", isas, osmp__half_isa());
    for (int round = 0; round < 6; round++) {
        /* every 16-bit value against partners: itself shifted, a multiplicative permutation, random */
        for (size_t i = 0; i < n; i++) {
            a[i] = (uint16_t)i;
            b[i] = round == 0   ? (uint16_t)i
                   : round == 1 ? (uint16_t)(i + 1)
                   : round == 2 ? (uint16_t)(i * 40503u)
                   : round == 3 ? (uint16_t)(i ^ 0x8000u) /* x + (-x) */
                                : (uint16_t)((i * 2654435761u + (uint32_t)round * 97u) >> 13);
        }
        for (int d = OSMP_FLOAT16; d <= OSMP_BFLOAT16; d++)
            for (int op = OSMP_SUM; op <= OSMP_MAX; op++)
                for (int three = 0; three < 2; three++) {
                    apply(OSMP__HALF_SCALAR, (osmp_dtype_t)d, (osmp_op_t)op, ref, a, b, n, three);
                    for (int isa = 1; isa < OSMP__HALF_ISAS; isa++) {
                        if (!osmp__half_isa_supported(isa)) continue;
                        apply(isa, (osmp_dtype_t)d, (osmp_op_t)op, got, a, b, n, three);
                        for (size_t i = 0; i < n; i++)
                            if (got[i] != ref[i]) {
                                fprintf(stderr, "isa %d dtype %d op %d: 0x%04x op 0x%04x = 0x%04x, scalar 0x%04x\n",
                                        isa, d, op, a[i], b[i], got[i], ref[i]);
                                test_failures++;
                                goto next;
                            }
                    next:;
                    }
                }
    }
    free(a), free(b), free(ref), free(got);
}

static uint16_t one(osmp_dtype_t d, osmp_op_t op, uint16_t x, uint16_t y)
{
    uint16_t o;
    apply(-1, d, op, &o, &x, &y, 1, 1);
    return o;
}

static void test_values(void)
{
    /* binary16: 3 + 5 = 8, 3 * 5 = 15, min, max, 2048 + 1 = 2048 (even), 2048 + 3 = 2052 (even) */
    CHECK_INT(one(OSMP_FLOAT16, OSMP_SUM, 0x4200, 0x4500), 0x4800);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_PROD, 0x4200, 0x4500), 0x4b80);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_MIN, 0x4200, 0xc500), 0xc500);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_MAX, 0x4200, 0xc500), 0x4200);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_SUM, 0x6800, 0x3c00), 0x6800);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_SUM, 0x6800, 0x4200), 0x6802);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_SUM, 0x7bff, 0x7bff), 0x7c00); /* overflow: infinity */
    CHECK_INT(one(OSMP_FLOAT16, OSMP_SUM, 0x7c00, 0xfc00), 0x7e00); /* inf - inf: the one NaN SUM makes */
    CHECK_INT(one(OSMP_FLOAT16, OSMP_PROD, 0xfe01, 0x7c00), 0x7e00);
    CHECK_INT(one(OSMP_FLOAT16, OSMP_MIN, 0x7e00, 0x3c00), 0x7e00);        /* NaN first: kept */
    CHECK_INT(one(OSMP_FLOAT16, OSMP_MIN, 0x3c00, 0x7e00), 0x3c00);        /* NaN second: not below */
    /* bfloat16: 3 + 5 = 8, 256 + 1 = 256 (even), 256 + 3 = 260 (even), 1 * 1 */
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_SUM, 0x4040, 0x40a0), 0x4100);
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_SUM, 0x4380, 0x3f80), 0x4380);
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_SUM, 0x4380, 0x4040), 0x4382);
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_PROD, 0x3f80, 0x3f80), 0x3f80);
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_MAX, 0xbf80, 0x3f80), 0x3f80);
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_SUM, 0x7f7f, 0x7f7f), 0x7f80);   /* overflow: infinity */
    CHECK_INT(one(OSMP_BFLOAT16, OSMP_MAX, 0x7f81, 0x3f80), 0x7fc1);   /* signalling NaN first: kept, quiet */
    /* the logical and bitwise operations have no meaning here */
    osmp__reduce_fn fn;
    for (int d = OSMP_FLOAT16; d <= OSMP_BFLOAT16; d++) {
        for (int op = OSMP_LAND; op < OSMP_OP_COUNT; op++)
            CHECK_INT(osmp__reduce_fn_get((osmp_dtype_t)d, (osmp_op_t)op, &fn), OSMP_ERR_TYPE);
        CHECK_INT(osmp_dtype_size((osmp_dtype_t)d), 2);
    }
    CHECK_INT(osmp__half_fns(OSMP_FLOAT16, OSMP_SUM, OSMP__HALF_ISAS, &fn, NULL), OSMP_ERR_INVALID_ARG);
}

int main(void)
{
    test_f16_conversions();
    test_paths_agree();
    test_values();
    return test_failures ? 1 : 0;
}
