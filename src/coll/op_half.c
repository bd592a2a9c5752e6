/*
 * Reductions on 16-bit floating point (OSMP_FLOAT16, OSMP_BFLOAT16).
 *
 * Every combine converts both operands to binary32, operates there and rounds
 * the result to the 16-bit type, to nearest even (osmp.h says where along a
 * reduction). MIN and MAX choose an operand as the float kernels do (the first
 * one unless the second compares below / above it, so NaN is kept where it is
 * first) and take it through the same conversion, so a signalling NaN comes out
 * quiet on every path; a NaN that SUM or PROD makes is the positive quiet one
 * (canon: which operand's NaN an addition passes on is up to the compiler).
 *
 * Three paths give the same bits: scalar C, AVX2 + F16C (8 elements at once)
 * and AVX-512F (16), chosen once at run time by what the CPU has
 * (osmp__half_isa). binary16 converts with F16C's instructions on the vector
 * paths and with the integer code below on the scalar one, which does what
 * they do: exact widening, NaN quieted with its payload's top bits kept,
 * rounding to nearest even with subnormal results and overflow to infinity.
 * bfloat16 converts with the same integer arithmetic on every path: AVX-512
 * BF16's VCVTNEPS2BF16 flushes subnormal inputs to zero, which the scalar
 * path would then have to do too, and rounding is a few integer operations per
 * element against memory traffic of 4 bytes (tests/unit/test-half.c compares
 * the paths on every 16-bit input and on binary32 results of every exponent).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "coll.h"

/* ------------------------------------------------------------ conversions */

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

float osmp__f16_to_f32(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = h >> 10 & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return bits_f32(s | 0x7f800000u | m << 13 | (m ? 0x400000u : 0)); /* inf; NaN made quiet */
    if (e) return bits_f32(s | (e + 112u) << 23 | m << 13);
    float v = (float)m * 0x1p-24f; /* subnormal or zero: exact */
    return s ? -v : v;
}

uint16_t osmp__f32_to_f16(float f)
{
    uint32_t u = f32_bits(f), s = u >> 16 & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | (a >> 13 & 0x3ffu)); /* NaN: quiet, top payload bits */
    if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u); /* from 65520 (half way past 65504, odd): infinity */
    if (a >= 0x38800000u) /* normal: round the 13 bits dropped to nearest even, then rebias the exponent */
        return (uint16_t)(s | (a + 0xfffu + (a >> 13 & 1u) - 0x38000000u) >> 13);
    uint32_t e = a >> 23;
    if (e < 102) return (uint16_t)s; /* below 2^-25 (half the smallest subnormal, even): zero */
    /* subnormal: m units of 2^-24 = mant * 2^(e - 126), rounded to nearest even (1024: the smallest normal) */
    uint32_t mant = (a & 0x7fffffu) | 0x800000u, shift = 126 - e, m = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    m += rem > halfway || (rem == halfway && (m & 1u));
    return (uint16_t)(s | m);
}

static inline float bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(u >> 16 | 0x40u); /* NaN: quiet */
    return (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

/* ------------------------------------------------------------ scalar path */

enum { HSUM, HPROD, HMIN, HMAX, HOPS };

/* Which NaN an addition passes on depends on the operands' order, which the
 * compiler may swap: SUM and PROD give one NaN, positive and quiet. */
#define CANON_NAN 0x7fc00000u
static inline float canon(float r)
{
    return r != r ? bits_f32(CANON_NAN) : r;
}

static inline float op32(int op, float x, float y)
{
    switch (op) {
    case HSUM: return canon(x + y);
    case HPROD: return canon(x * y);
    case HMIN: return y < x ? y : x;
    default: return y > x ? y : x;
    }
}

/* o[i] = a[i] op b[i], i from `from` (o may be a) */
static inline void scalar_run(int bf, int op, uint16_t *o, const uint16_t *a, const uint16_t *b, size_t from,
                              size_t n)
{
    for (size_t i = from; i < n; i++)
        o[i] = bf ? f32_to_bf16(op32(op, bf16_to_f32(a[i]), bf16_to_f32(b[i])))
                  : osmp__f32_to_f16(op32(op, osmp__f16_to_f32(a[i]), osmp__f16_to_f32(b[i])));
}

/* ------------------------------------------------------------ vector paths */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HALF_X86 1

#define AVX2 __attribute__((target("avx2,f16c,fma")))
#define AVX512 __attribute__((target("avx512f,f16c")))

AVX2 static inline __m256 canon256(__m256 r)
{
    return _mm256_blendv_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32((int)CANON_NAN)), _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}

/* (a compare that keeps the first operand on NaN, as op32: y < x, y > x, ordered) */
AVX2 static inline __m256 op256(int op, __m256 x, __m256 y)
{
    switch (op) {
    case HSUM: return canon256(_mm256_add_ps(x, y));
    case HPROD: return canon256(_mm256_mul_ps(x, y));
    case HMIN: return _mm256_blendv_ps(x, y, _mm256_cmp_ps(y, x, _CMP_LT_OQ));
    default: return _mm256_blendv_ps(x, y, _mm256_cmp_ps(y, x, _CMP_GT_OQ));
    }
}

AVX2 static inline __m256 bf16x8_to_f32(__m128i h)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

AVX2 static inline __m128i f32x8_to_bf16(__m256 f)
{
    __m256i u = _mm256_castps_si256(f);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
    __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, q, nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

AVX2 static void avx2_run(int bf, int op, uint16_t *o, const uint16_t *a, const uint16_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + i)), y = _mm_loadu_si128((const __m128i *)(b + i));
        __m128i r = bf ? f32x8_to_bf16(op256(op, bf16x8_to_f32(x), bf16x8_to_f32(y)))
                       : _mm256_cvtps_ph(op256(op, _mm256_cvtph_ps(x), _mm256_cvtph_ps(y)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(o + i), r);
    }
    scalar_run(bf, op, o, a, b, i, n);
}

AVX512 static inline __m512 canon512(__m512 r)
{
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), _mm512_castsi512_ps(_mm512_set1_epi32((int)CANON_NAN)));
}

AVX512 static inline __m512 op512(int op, __m512 x, __m512 y)
{
    switch (op) {
    case HSUM: return canon512(_mm512_add_ps(x, y));
    case HPROD: return canon512(_mm512_mul_ps(x, y));
    case HMIN: return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, x, _CMP_LT_OQ), x, y);
    default: return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, x, _CMP_GT_OQ), x, y);
    }
}

AVX512 static inline __m512 bf16x16_to_f32(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

AVX512 static inline __m256i f32x16_to_bf16(__m512 f)
{
    __m512i u = _mm512_castps_si512(f);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

AVX512 static void avx512_run(int bf, int op, uint16_t *o, const uint16_t *a, const uint16_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(a + i)), y = _mm256_loadu_si256((const __m256i *)(b + i));
        __m256i r = bf ? f32x16_to_bf16(op512(op, bf16x16_to_f32(x), bf16x16_to_f32(y)))
                       : _mm512_cvtps_ph(op512(op, _mm512_cvtph_ps(x), _mm512_cvtph_ps(y)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_si256((__m256i *)(o + i), r);
    }
    scalar_run(bf, op, o, a, b, i, n);
}
#endif

/* ------------------------------------------------------------ kernels */

static void run(int isa, int bf, int op, void *o, const void *a, const void *b, size_t n)
{
#ifdef HALF_X86
    if (isa == OSMP__HALF_AVX512) avx512_run(bf, op, o, a, b, n);
    else if (isa == OSMP__HALF_AVX2) avx2_run(bf, op, o, a, b, n);
    else
#endif
        scalar_run(bf, op, o, a, b, 0, n);
    (void)isa;
}

#ifdef HALF_X86
#include <cpuid.h>
/* (clang 14's __builtin_cpu_supports does not know "f16c": CPUID leaf 1 says; the AVX state it needs is the
 * OS's, which "avx2" checks) */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && (c & bit_FMA);
}
#endif

int osmp__half_isa_supported(int isa)
{
#ifdef HALF_X86
    if (isa == OSMP__HALF_AVX512) return __builtin_cpu_supports("avx512f") && has_f16c();
    if (isa == OSMP__HALF_AVX2) return __builtin_cpu_supports("avx2") && has_f16c();
#endif
    return isa == OSMP__HALF_SCALAR;
}

static int isa_best = OSMP__HALF_SCALAR;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static void find_isa(void)
{
    for (int i = OSMP__HALF_SCALAR; i < OSMP__HALF_ISAS; i++)
        if (osmp__half_isa_supported(i)) isa_best = i;
}

static int best_isa(void)
{
    pthread_once(&isa_once, find_isa);
    return isa_best;
}

int osmp__half_isa(void)
{
    return best_isa();
}

/* One function per (isa, type, op, form): the kernel tables hold plain pointers. */
#define HALF_FN(isa, bf, op, name)                                                                           \
    static void name(void *a, const void *b, size_t n) { run(isa, bf, op, a, a, b, n); }                      \
    static void name##3(void *o, const void *a, const void *b, size_t n) { run(isa, bf, op, o, a, b, n); }
#define HALF_OPS(isa, bf, p) \
    HALF_FN(isa, bf, HSUM, p##_sum) HALF_FN(isa, bf, HPROD, p##_prod) HALF_FN(isa, bf, HMIN, p##_min) \
    HALF_FN(isa, bf, HMAX, p##_max)
#define HALF_ISA(isa, p) HALF_OPS(isa, 0, p##_f16) HALF_OPS(isa, 1, p##_bf16)
HALF_ISA(OSMP__HALF_SCALAR, scalar)
HALF_ISA(OSMP__HALF_AVX2, avx2)
HALF_ISA(OSMP__HALF_AVX512, avx512)

#define ROW(p, s) {p##_sum##s, p##_prod##s, p##_min##s, p##_max##s}
#define ISA_ROWS(p, s) {ROW(p##_f16, s), ROW(p##_bf16, s)}
static const osmp__reduce_fn fns[OSMP__HALF_ISAS][2][HOPS] = {ISA_ROWS(scalar, ), ISA_ROWS(avx2, ),
                                                               ISA_ROWS(avx512, )};
static const osmp__reduce_fn3 fns3[OSMP__HALF_ISAS][2][HOPS] = {ISA_ROWS(scalar, 3), ISA_ROWS(avx2, 3),
                                                                ISA_ROWS(avx512, 3)};

int osmp__half_fns(osmp_dtype_t d, osmp_op_t op, int isa, osmp__reduce_fn *fn, osmp__reduce_fn3 *fn3)
{
    if ((d != OSMP_FLOAT16 && d != OSMP_BFLOAT16) || (int)op < 0 || op >= OSMP_OP_COUNT) return OSMP_ERR_INVALID_ARG;
    if (op > OSMP_MAX) return OSMP_ERR_TYPE;
    if (isa < 0) isa = best_isa();
    if (isa >= OSMP__HALF_ISAS || !osmp__half_isa_supported(isa)) return OSMP_ERR_INVALID_ARG;
    int bf = d == OSMP_BFLOAT16;
    if (fn) *fn = fns[isa][bf][op];
    if (fn3) *fn3 = fns3[isa][bf][op];
    return OSMP_OK;
}
