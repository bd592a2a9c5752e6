/*
 * Reduction kernels: acc[i] = acc[i] op in[i] for every datatype and operation.
 * Signed integer sums and products run in the unsigned type of the same width,
 * so they wrap around (two's complement) instead of being undefined.
 */
#include <stdint.h>

#include "coll.h"

const char osmp_in_place_marker = 0;

size_t osmp_dtype_size(osmp_dtype_t d)
{
    static const size_t sizes[OSMP_DTYPE_COUNT] = {1, 2, 4, 8, 1, 2, 4, 8, sizeof(float), sizeof(double), 2, 2};
    return (int)d >= 0 && d < OSMP_DTYPE_COUNT ? sizes[d] : 0;
}

/* One kernel, two forms: fold b into a (a[i] = a[i] op b[i]), and into a third
 * array (o[i] = a[i] op b[i], the same bits: a tree's first fold writes my
 * part and my first child's straight into my result, without copying mine
 * there first). X is a's element, Y b's. */
#define KERNEL(fname, T, expr)                                                                               \
    static void fname(void *a, const void *b, size_t n)                                                      \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) {                                                                     \
            T X = x[i], Y = y[i];                                                                            \
            x[i] = (T)(expr);                                                                                \
        }                                                                                                    \
    }                                                                                                        \
    static void fname##3(void *o, const void *a, const void *b, size_t n)                                    \
    {                                                                                                        \
        T *z = o;                                                                                            \
        const T *x = a, *y = b;                                                                              \
        for (size_t i = 0; i < n; i++) {                                                                     \
            T X = x[i], Y = y[i];                                                                            \
            z[i] = (T)(expr);                                                                                \
        }                                                                                                    \
    }

#define ARITH(name, T, U)                                                                                    \
    KERNEL(name##_sum, T, (U)X + (U)Y)                                                                       \
    KERNEL(name##_prod, T, (U)X * (U)Y)                                                                      \
    KERNEL(name##_min, T, Y < X ? Y : X)                                                                     \
    KERNEL(name##_max, T, Y > X ? Y : X)

#define LOGIC(name, T)                                                                                       \
    KERNEL(name##_land, T, X && Y)                                                                           \
    KERNEL(name##_lor, T, X || Y)                                                                            \
    KERNEL(name##_lxor, T, !X != !Y)                                                                         \
    KERNEL(name##_band, T, X & Y)                                                                            \
    KERNEL(name##_bor, T, X | Y)                                                                             \
    KERNEL(name##_bxor, T, X ^ Y)

#define INTEGER(name, T, U) ARITH(name, T, U) LOGIC(name, T)
INTEGER(i8, int8_t, uint8_t)
INTEGER(i16, int16_t, uint16_t)
INTEGER(i32, int32_t, uint32_t)
INTEGER(i64, int64_t, uint64_t)
INTEGER(u8, uint8_t, uint8_t)
INTEGER(u16, uint16_t, uint16_t)
INTEGER(u32, uint32_t, uint32_t)
INTEGER(u64, uint64_t, uint64_t)
ARITH(f32, float, float)
ARITH(f64, double, double)

/* A table of kernels, one form (suffix s: none, or 3 for the three-array one). */
#define INT_ROW(name, s)                                                                                     \
    {name##_sum##s, name##_prod##s, name##_min##s, name##_max##s, name##_land##s, name##_lor##s,              \
     name##_lxor##s, name##_band##s, name##_bor##s, name##_bxor##s}
#define FLOAT_ROW(name, s) {name##_sum##s, name##_prod##s, name##_min##s, name##_max##s, 0, 0, 0, 0, 0, 0}
#define KERNELS(s)                                                                                           \
    {INT_ROW(i8, s),  INT_ROW(i16, s), INT_ROW(i32, s), INT_ROW(i64, s),   INT_ROW(u8, s),                     \
     INT_ROW(u16, s), INT_ROW(u32, s), INT_ROW(u64, s), FLOAT_ROW(f32, s), FLOAT_ROW(f64, s)}

static const osmp__reduce_fn kernels[OSMP_DTYPE_COUNT][OSMP_OP_COUNT] = KERNELS();
static const osmp__reduce_fn3 kernels3[OSMP_DTYPE_COUNT][OSMP_OP_COUNT] = KERNELS(3);

int osmp__reduce_fn_get(osmp_dtype_t d, osmp_op_t op, osmp__reduce_fn *fn)
{
    return osmp__reduce_fns_get(d, op, fn, NULL);
}

int osmp__reduce_fns_get(osmp_dtype_t d, osmp_op_t op, osmp__reduce_fn *fn, osmp__reduce_fn3 *fn3)
{
    if ((int)d < 0 || d >= OSMP_DTYPE_COUNT || (int)op < 0 || op >= OSMP_OP_COUNT) return OSMP_ERR_INVALID_ARG;
    if (__builtin_expect(kernels[d][op] != NULL, 1)) { /* (every call of a reduction asks: the table first) */
        *fn = kernels[d][op];
        if (fn3) *fn3 = kernels3[d][op];
        return OSMP_OK;
    }
    if (d == OSMP_FLOAT16 || d == OSMP_BFLOAT16) return osmp__half_fns(d, op, -1, fn, fn3); /* op_half.c */
    return OSMP_ERR_TYPE;
}

void osmp__reduce_alone_logical(void *buf, size_t count, size_t esize, osmp_op_t op, osmp__reduce_fn fn)
{
    /* Fold with the identity (1 for LAND, 0 otherwise): integers only, little-endian (see wait.c). */
    unsigned char id[64] = {0};
    size_t per = sizeof(id) / esize;
    for (size_t i = 0; op == OSMP_LAND && i < per; i++) id[i * esize] = 1;
    for (size_t i = 0; i < count; i += per) fn((char *)buf + i * esize, id, count - i < per ? count - i : per);
}
