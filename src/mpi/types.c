/*
 * libosmp_mpi: datatypes and operations (which MPI types and ops map to OSMP's),
 * and contiguous views of user buffers for data movement.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi/osmp_mpi.h"

/* ---------------------------------------------------------------- types */

/* Predefined datatypes OSMP knows, filled once after MPI_Init: handles are
 * compared directly, so the common case makes no MPI call. */
static struct {
    MPI_Datatype dt;
    int size;
    int odt;      /* osmp_dtype_t, or -1 for types that only move (bytes, chars, Fortran LOGICAL) */
    unsigned ops; /* bit per osmp_op_t: the operations MPI defines on this type */
} known[64];
static int nknown;

#define OPS_ARITH (1u << OSMP_SUM | 1u << OSMP_PROD | 1u << OSMP_MIN | 1u << OSMP_MAX)
#define OPS_BITWISE (1u << OSMP_BAND | 1u << OSMP_BOR | 1u << OSMP_BXOR)
#define OPS_LOGICAL (1u << OSMP_LAND | 1u << OSMP_LOR | 1u << OSMP_LXOR)

/* How a type maps to OSMP's, decided by its size where the language leaves it open. */
enum kind {
    C_INT,   /* a C integer: every operation */
    F_INT,   /* a Fortran INTEGER: no logical operations (MPI defines them on LOGICAL) */
    FLOATING, /* float or double by size: arithmetic and MIN/MAX */
    F16,     /* IEEE binary16 (MPIX_C_FLOAT16): arithmetic and MIN/MAX */
    BF16,    /* bfloat16 (MPIX_BFLOAT16): arithmetic and MIN/MAX */
    MOVE,    /* only moves */
};

static void add_known(MPI_Datatype dt, enum kind kind, int is_signed)
{
    int size;
    if (dt == MPI_DATATYPE_NULL || nknown == (int)(sizeof(known) / sizeof(known[0])) ||
        PMPI_Type_size(dt, &size) != MPI_SUCCESS)
        return;
    int odt = -1;
    unsigned ops = 0;
    if ((kind == C_INT || kind == F_INT) && (size == 1 || size == 2 || size == 4 || size == 8)) {
        odt = (is_signed ? (int)OSMP_INT8 : (int)OSMP_UINT8) + (size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3);
        ops = OPS_ARITH | OPS_BITWISE | (kind == C_INT ? OPS_LOGICAL : 0);
    } else if (kind == FLOATING && (size == (int)sizeof(float) || size == (int)sizeof(double))) {
        odt = size == (int)sizeof(float) ? OSMP_FLOAT : OSMP_DOUBLE;
        ops = OPS_ARITH;
    } else if ((kind == F16 || kind == BF16) && size == 2) {
        odt = kind == F16 ? OSMP_FLOAT16 : OSMP_BFLOAT16;
        ops = OPS_ARITH;
    }
    known[nknown].dt = dt;
    known[nknown].size = size;
    known[nknown].odt = odt;
    known[nknown].ops = ops;
    nknown++;
}

void osmp__mpi_types_init(void)
{
    add_known(MPI_DOUBLE, FLOATING, 1); /* most frequent first */
    add_known(MPI_INT, C_INT, 1);
    add_known(MPI_FLOAT, FLOATING, 1);
    add_known(MPI_LONG, C_INT, 1);
    add_known(MPI_BYTE, MOVE, 0);
    add_known(MPI_CHAR, MOVE, 0);
    add_known(MPI_UNSIGNED_CHAR, C_INT, 0);
    add_known(MPI_SIGNED_CHAR, C_INT, 1);
    add_known(MPI_SHORT, C_INT, 1);
    add_known(MPI_UNSIGNED_SHORT, C_INT, 0);
    add_known(MPI_UNSIGNED, C_INT, 0);
    add_known(MPI_UNSIGNED_LONG, C_INT, 0);
    add_known(MPI_LONG_LONG, C_INT, 1);
    add_known(MPI_UNSIGNED_LONG_LONG, C_INT, 0);
    add_known(MPI_INT8_T, C_INT, 1);
    add_known(MPI_INT16_T, C_INT, 1);
    add_known(MPI_INT32_T, C_INT, 1);
    add_known(MPI_INT64_T, C_INT, 1);
    add_known(MPI_UINT8_T, C_INT, 0);
    add_known(MPI_UINT16_T, C_INT, 0);
    add_known(MPI_UINT32_T, C_INT, 0);
    add_known(MPI_UINT64_T, C_INT, 0);
    /* Fortran's, as the C handles of the MPI library (MPI_DATATYPE_NULL where
     * the library was built without them: skipped). LOGICAL's true differs
     * between compilers: it only moves. */
    add_known(MPI_INTEGER, F_INT, 1);
    add_known(MPI_INTEGER1, F_INT, 1);
    add_known(MPI_INTEGER2, F_INT, 1);
    add_known(MPI_INTEGER4, F_INT, 1);
    add_known(MPI_INTEGER8, F_INT, 1);
    add_known(MPI_REAL, FLOATING, 1);
    add_known(MPI_REAL4, FLOATING, 1);
    add_known(MPI_REAL8, FLOATING, 1);
    add_known(MPI_DOUBLE_PRECISION, FLOATING, 1);
    add_known(MPI_LOGICAL, MOVE, 0);
    add_known(MPI_CHARACTER, MOVE, 0);
    /* MPICH's 16-bit floating point extensions, where the library has them */
#ifdef MPIX_C_FLOAT16
    add_known(MPIX_C_FLOAT16, F16, 1);
#endif
#ifdef MPIX_BFLOAT16
    add_known(MPIX_BFLOAT16, BF16, 1);
#endif
}

/* The entry of a known datatype, or -1. A program reduces one or two datatypes
 * over and over: the last hit of the thread is tried first. */
static int find_known(MPI_Datatype dt)
{
    static OSMP_MPI_TLS int last;
    if (last < nknown && known[last].dt == dt) return last;
    for (int i = 0; i < nknown; i++)
        if (known[i].dt == dt) return last = i;
    return -1;
}

OSMP_MPI_TLS MPI_Datatype osmp__mpi_last_dt;
OSMP_MPI_TLS int osmp__mpi_last_size;

int osmp__mpi_plain_size_slow(MPI_Datatype dt)
{
    osmp__mpi_setup();
    int i = find_known(dt);
    if (i >= 0) {
        osmp__mpi_last_dt = dt;
        osmp__mpi_last_size = known[i].size;
        return known[i].size;
    }
    /* Contiguous means: no lower bound, no holes, and the next element starts
     * right after this one. The pair types (MPI_DOUBLE_INT, ...) are named but
     * have holes and an extent above their size; both extents are checked. */
    int ni, na, nd, combiner, size;
    MPI_Aint lb, extent, tlb, textent;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || PMPI_Type_size(dt, &size) != MPI_SUCCESS || size <= 0 ||
        PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS || lb != 0 || extent != size ||
        PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS || tlb != 0 || textent != size)
        return -1;
    return size;
}

int osmp__mpi_dtype(MPI_Datatype dt, osmp_dtype_t *out, unsigned *ops)
{
    osmp__mpi_setup();
    int i = find_known(dt);
    if (i < 0 || known[i].odt < 0) return -1;
    *out = (osmp_dtype_t)known[i].odt;
    *ops = known[i].ops;
    return 0;
}

int osmp__mpi_op(MPI_Op op, unsigned ops, osmp_op_t *out)
{
    if (op == MPI_SUM) *out = OSMP_SUM;
    else if (op == MPI_PROD) *out = OSMP_PROD;
    else if (op == MPI_MIN) *out = OSMP_MIN;
    else if (op == MPI_MAX) *out = OSMP_MAX;
    else if (op == MPI_LAND) *out = OSMP_LAND;
    else if (op == MPI_LOR) *out = OSMP_LOR;
    else if (op == MPI_LXOR) *out = OSMP_LXOR;
    else if (op == MPI_BAND) *out = OSMP_BAND;
    else if (op == MPI_BOR) *out = OSMP_BOR;
    else if (op == MPI_BXOR) *out = OSMP_BXOR;
    else return -1;
    return ops >> *out & 1 ? 0 : -1; /* a pair MPI does not define: MPI raises the error */
}

/* ---------------------------------------------------------------- views */

long osmp__mpi_bytes_slow(MPI_Datatype dt, int count)
{
    int size = osmp__mpi_plain_size(dt);
    if (count < 0 || (size < 0 && (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS))) return -1;
    return (long)size * count;
}

/* Pack count elements of dt at buf into v (or unpack v into them). MPI_BOTTOM
 * with a datatype of absolute addresses is valid MPI, but MPICH 4.0.2 refuses a
 * NULL buffer (pmodels/mpich#6410): there the same bytes are described from
 * address 1 by a datatype shifted by -1. */
static void pack(const void *buf, int count, MPI_Datatype dt, void *v, long bytes, int unpack, MPI_Comm comm)
{
    int pos = 0;
    MPI_Datatype shifted = MPI_DATATYPE_NULL;
    if (buf == MPI_BOTTOM) {
        MPI_Aint minus_one = -1;
        if (PMPI_Type_create_struct(1, &count, &minus_one, &dt, &shifted) == MPI_SUCCESS &&
            PMPI_Type_commit(&shifted) == MPI_SUCCESS) {
            buf = (const char *)MPI_BOTTOM + 1;
            dt = shifted;
            count = 1;
        }
    }
    if (unpack)
        PMPI_Unpack(v, (int)bytes, &pos, (void *)(uintptr_t)buf, count, dt, comm);
    else
        PMPI_Pack(buf, count, dt, v, (int)bytes, &pos, comm);
    if (shifted != MPI_DATATYPE_NULL) PMPI_Type_free(&shifted);
}

/* The view of a datatype that is not plain (osmp_mpi.h): a buffer of its own. */
int osmp__mpi_view_packed(const void *buf, int count, MPI_Datatype dt, long bytes, int pack_it, MPI_Comm comm,
                          void **v)
{
    if (!(*v = malloc((size_t)bytes))) return OSMP_ERR_NO_MEMORY;
    if (pack_it) pack(buf, count, dt, *v, bytes, 0, comm);
    return OSMP_OK;
}

void osmp__mpi_unview_packed(void *v, void *buf, int count, MPI_Datatype dt, long bytes, int unpack, MPI_Comm comm)
{
    if (unpack) pack(buf, count, dt, v, bytes, 1, comm);
    free(v);
}

/* ---------------------------------------------------------------- vector views */

/* Where block r starts in the user's buffer. */
static const char *block_at(const struct osmp__mpi_vview *x, int r)
{
    return (const char *)x->buf + (MPI_Aint)x->displs[r] * x->extent;
}

int osmp__mpi_vopen_slow(struct osmp__mpi_vview *x, int n, int pack_it, MPI_Comm comm)
{
    int size = osmp__mpi_plain_size(x->dt), plain = size > 0;
    MPI_Aint lb;
    x->v = NULL;
    x->bc = n <= OSMP__MPI_VIEW_INLINE ? x->inline_bc : malloc(2 * sizeof(size_t) * (size_t)n);
    if (!x->bc) return OSMP_ERR_NO_MEMORY;
    x->bd = x->bc + n;
    x->extent = size; /* a plain type's extent is its size */
    if (!plain && (PMPI_Type_size(x->dt, &size) != MPI_SUCCESS ||
                   PMPI_Type_get_extent(x->dt, &lb, &x->extent) != MPI_SUCCESS))
        return OSMP_ERR_INVALID_ARG;
    int bad = osmp__mpi_vfill(x, n, size);
    if (bad & 1) return OSMP_ERR_INVALID_ARG;
    if (plain && !bad) { /* the blocks where they are (n beyond the inline room) */
        x->v = (void *)(uintptr_t)x->buf;
        return OSMP_OK;
    }
    size_t total = 0; /* packed, end to end */
    for (int r = 0; r < n; total += x->bc[r], r++)
        x->bd[r] = total;
    if (total > INT_MAX) return OSMP_ERR_RANGE; /* MPI_Pack positions are ints */
    if (!(x->v = malloc(total ? total : 1))) return OSMP_ERR_NO_MEMORY;
    x->packed = total;
    for (int r = 0; pack_it && r < n; r++) {
        int pos = (int)x->bd[r];
        if (x->counts[r]) PMPI_Pack(block_at(x, r), x->counts[r], x->dt, x->v, (int)total, &pos, comm);
    }
    return OSMP_OK;
}

void osmp__mpi_vclose_slow(struct osmp__mpi_vview *x, int n, int unpack, MPI_Comm comm)
{
    for (int r = 0; unpack && x->v && x->v != x->buf && r < n; r++) {
        int pos = (int)x->bd[r];
        if (x->counts[r])
            PMPI_Unpack(x->v, (int)x->packed, &pos, (void *)(uintptr_t)block_at(x, r), x->counts[r], x->dt, comm);
    }
    if (x->v != x->buf) free(x->v);
    if (x->bc != x->inline_bc) free(x->bc);
}

/* ---------------------------------------------------------------- views kept across runs (persist.c) */

static void side_pack(const struct osmp__mpi_side *d, int unpack, MPI_Comm comm)
{
    if (d->v && d->v != d->buf && d->bytes > 0) pack(d->buf, d->count, d->dt, d->v, d->bytes, unpack, comm);
}

static void vec_pack(const struct osmp__mpi_vview *x, int n, int unpack, MPI_Comm comm)
{
    if (!x->v || x->v == x->buf) return;
    for (int r = 0; r < n; r++) {
        int pos = (int)x->bd[r];
        if (!x->counts[r]) continue;
        if (unpack)
            PMPI_Unpack(x->v, (int)x->packed, &pos, (void *)(uintptr_t)block_at(x, r), x->counts[r], x->dt, comm);
        else
            PMPI_Pack(block_at(x, r), x->counts[r], x->dt, x->v, (int)x->packed, &pos, comm);
    }
}

void osmp__mpi_views_refresh(struct osmp__mpi_views *x, MPI_Comm comm)
{
    side_pack(&x->side[0], 0, comm);
    side_pack(&x->side[1], 0, comm);
    for (int i = 0; i < x->nvec; i++)
        vec_pack(&x->vec[i], x->n, 0, comm);
}

void osmp__mpi_views_unpack(struct osmp__mpi_views *x, MPI_Comm comm)
{
    side_pack(&x->side[1], 1, comm);
    for (int i = 0; i < x->nvec; i++)
        if (x->vec_unpack[i]) vec_pack(&x->vec[i], x->n, 1, comm);
}

/* ---------------------------------------------------------------- datatypes a request keeps (nb.c, persist.c) */

/* 1 when *dt is now our own copy of the program's derived datatype, 0 when it needs none (predefined: never
 * freed), -1 on failure. A contiguous type of one element has dt's type map, lower bound and extent, so it packs
 * and unpacks the same bytes; unlike MPI_Type_dup it copies none of the program's attributes (whose copy and
 * delete callbacks would see our copy come and go). */
static int keep_type(MPI_Datatype *dt)
{
    int ni, na, nd, combiner;
    MPI_Datatype own;
    if (PMPI_Type_get_envelope(*dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return -1;
    if (combiner == MPI_COMBINER_NAMED) return 0;
    if (PMPI_Type_contiguous(1, *dt, &own) != MPI_SUCCESS) return -1;
    if (PMPI_Type_commit(&own) != MPI_SUCCESS) {
        PMPI_Type_free(&own);
        return -1;
    }
    *dt = own;
    return 1;
}

int osmp__mpi_views_keep(struct osmp__mpi_views *x, int all)
{
    for (int i = 0; i < 2; i++) {
        struct osmp__mpi_side *d = &x->side[i];
        if ((all || i == 1) && d->v && d->v != d->buf && d->bytes > 0) { /* packed (side_pack's test) */
            int k = keep_type(&d->dt);
            if (k < 0) return OSMP_ERR_NO_MEMORY;
            x->owned |= (unsigned)k << i;
        }
    }
    for (int i = 0; i < x->nvec; i++) {
        struct osmp__mpi_vview *v = &x->vec[i];
        if ((all || x->vec_unpack[i]) && v->v && v->v != v->buf) { /* packed (vec_pack's test) */
            int k = keep_type(&v->dt);
            if (k < 0) return OSMP_ERR_NO_MEMORY;
            x->owned |= (unsigned)k << (2 + i);
        }
    }
    return OSMP_OK;
}

void osmp__mpi_views_release(struct osmp__mpi_views *x)
{
    for (int i = 0; i < 2; i++)
        if (x->owned >> i & 1) PMPI_Type_free(&x->side[i].dt);
    for (int i = 0; i < 2; i++)
        if (x->owned >> (2 + i) & 1) PMPI_Type_free(&x->vec[i].dt);
    x->owned = 0;
}
