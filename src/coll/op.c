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
    static const size_t sizes[OSMP_DTYPE_COUNT] = {1, 2, 4, 8, 1, 2, 4, 8, sizeof(float), sizeof(double)};
    return (int)d >= 0 && d < OSMP_DTYPE_COUNT ? sizes[d] : 0;
}

#define ARITH(name, T, U)                                                                                    \
    static void name##_sum(void *a, const void *b, size_t n)                                                 \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)((U)x[i] + (U)y[i]);                                        \
    }                                                                                                        \
    static void name##_prod(void *a, const void *b, size_t n)                                                \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)((U)x[i] * (U)y[i]);                                        \
    }                                                                                                        \
    static void name##_min(void *a, const void *b, size_t n)                                                 \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = y[i] < x[i] ? y[i] : x[i];                                     \
    }                                                                                                        \
    static void name##_max(void *a, const void *b, size_t n)                                                 \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = y[i] > x[i] ? y[i] : x[i];                                     \
    }

#define LOGIC(name, T)                                                                                       \
    static void name##_land(void *a, const void *b, size_t n)                                                \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)(x[i] && y[i]);                                             \
    }                                                                                                        \
    static void name##_lor(void *a, const void *b, size_t n)                                                 \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)(x[i] || y[i]);                                             \
    }                                                                                                        \
    static void name##_lxor(void *a, const void *b, size_t n)                                                \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)(!x[i] != !y[i]);                                           \
    }                                                                                                        \
    static void name##_band(void *a, const void *b, size_t n)                                                \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)(x[i] & y[i]);                                              \
    }                                                                                                        \
    static void name##_bor(void *a, const void *b, size_t n)                                                 \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)(x[i] | y[i]);                                              \
    }                                                                                                        \
    static void name##_bxor(void *a, const void *b, size_t n)                                                \
    {                                                                                                        \
        T *x = a;                                                                                            \
        const T *y = b;                                                                                      \
        for (size_t i = 0; i < n; i++) x[i] = (T)(x[i] ^ y[i]);                                              \
    }

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

#define INT_ROW(name)                                                                                        \
    {name##_sum, name##_prod, name##_min, name##_max, name##_land, name##_lor, name##_lxor, name##_band,       \
     name##_bor, name##_bxor}
#define FLOAT_ROW(name) {name##_sum, name##_prod, name##_min, name##_max, 0, 0, 0, 0, 0, 0}

static const osmp__reduce_fn kernels[OSMP_DTYPE_COUNT][OSMP_OP_COUNT] = {
    INT_ROW(i8), INT_ROW(i16), INT_ROW(i32), INT_ROW(i64), INT_ROW(u8),
    INT_ROW(u16), INT_ROW(u32), INT_ROW(u64), FLOAT_ROW(f32), FLOAT_ROW(f64),
};

int osmp__reduce_fn_get(osmp_dtype_t d, osmp_op_t op, osmp__reduce_fn *fn)
{
    if ((int)d < 0 || d >= OSMP_DTYPE_COUNT || (int)op < 0 || op >= OSMP_OP_COUNT) return OSMP_ERR_INVALID_ARG;
    if (!kernels[d][op]) return OSMP_ERR_TYPE;
    *fn = kernels[d][op];
    return OSMP_OK;
}

void osmp__reduce_alone_logical(void *buf, size_t count, size_t esize, osmp_op_t op, osmp__reduce_fn fn)
{
    /* Fold with the identity (1 for LAND, 0 otherwise): integers only, little-endian (see wait.c). */
    unsigned char id[64] = {0};
    size_t per = sizeof(id) / esize;
    for (size_t i = 0; op == OSMP_LAND && i < per; i++) id[i * esize] = 1;
    for (size_t i = 0; i < count; i += per) fn((char *)buf + i * esize, id, count - i < per ? count - i : per);
}
