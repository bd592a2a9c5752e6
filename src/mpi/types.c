/*
 * libosmp_mpi: datatypes and operations (which MPI types and ops map to OSMP's),
 * and contiguous views of user buffers for data movement.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mpi/osmp_mpi.h"

/* ---------------------------------------------------------------- types */

/* Predefined datatypes OSMP knows, filled once after MPI_Init: handles are
 * compared directly, so the common case makes no MPI call. */
static struct {
    MPI_Datatype dt;
    int size;
    int odt; /* osmp_dtype_t, or -1 for types that only move (bytes, chars) */
} known[32];
static int nknown;

#define BY_SIZE (-2) /* an integer type: the OSMP type follows its size and signedness */
#define MOVE_ONLY (-1)

static void add_known(MPI_Datatype dt, int odt, int is_signed)
{
    int size;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS) return;
    if (odt == BY_SIZE)
        odt = (is_signed ? (int)OSMP_INT8 : (int)OSMP_UINT8) + (size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3);
    known[nknown].dt = dt;
    known[nknown].size = size;
    known[nknown].odt = odt;
    nknown++;
}

void osmp__mpi_types_init(void)
{
    add_known(MPI_DOUBLE, OSMP_DOUBLE, 0); /* most frequent first */
    add_known(MPI_INT, BY_SIZE, 1);
    add_known(MPI_FLOAT, OSMP_FLOAT, 0);
    add_known(MPI_LONG, BY_SIZE, 1);
    add_known(MPI_BYTE, MOVE_ONLY, 0);
    add_known(MPI_CHAR, MOVE_ONLY, 0);
    add_known(MPI_UNSIGNED_CHAR, BY_SIZE, 0);
    add_known(MPI_SIGNED_CHAR, BY_SIZE, 1);
    add_known(MPI_SHORT, BY_SIZE, 1);
    add_known(MPI_UNSIGNED_SHORT, BY_SIZE, 0);
    add_known(MPI_UNSIGNED, BY_SIZE, 0);
    add_known(MPI_UNSIGNED_LONG, BY_SIZE, 0);
    add_known(MPI_LONG_LONG, BY_SIZE, 1);
    add_known(MPI_UNSIGNED_LONG_LONG, BY_SIZE, 0);
    add_known(MPI_INT8_T, BY_SIZE, 1);
    add_known(MPI_INT16_T, BY_SIZE, 1);
    add_known(MPI_INT32_T, BY_SIZE, 1);
    add_known(MPI_INT64_T, BY_SIZE, 1);
    add_known(MPI_UINT8_T, BY_SIZE, 0);
    add_known(MPI_UINT16_T, BY_SIZE, 0);
    add_known(MPI_UINT32_T, BY_SIZE, 0);
    add_known(MPI_UINT64_T, BY_SIZE, 0);
}

int osmp__mpi_plain_size(MPI_Datatype dt)
{
    osmp__mpi_setup();
    for (int i = 0; i < nknown; i++)
        if (known[i].dt == dt) return known[i].size;
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

int osmp__mpi_dtype(MPI_Datatype dt, osmp_dtype_t *out)
{
    osmp__mpi_setup();
    for (int i = 0; i < nknown; i++)
        if (known[i].dt == dt) {
            if (known[i].odt < 0) return -1;
            *out = (osmp_dtype_t)known[i].odt;
            return 0;
        }
    return -1;
}

int osmp__mpi_op(MPI_Op op, osmp_dtype_t dt, osmp_op_t *out)
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
    /* MPI defines logical and bitwise operations on integers only. */
    if ((dt == OSMP_FLOAT || dt == OSMP_DOUBLE) && *out > OSMP_MAX) return -1;
    return 0;
}

/* ---------------------------------------------------------------- views */

long osmp__mpi_bytes(MPI_Datatype dt, int count)
{
    int size = osmp__mpi_plain_size(dt);
    if (count < 0 || (size < 0 && (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS))) return -1;
    return (long)size * count;
}

/* A contiguous view of count elements of dt at buf, in *v: buf itself for a
 * plain datatype or no bytes at all (a NULL buffer with a zero count is valid
 * MPI); else a buffer of its own, packed from buf if `pack`. OSMP_OK, or
 * OSMP_ERR_NO_MEMORY. */
int osmp__mpi_view(const void *buf, int count, MPI_Datatype dt, long bytes, int pack, MPI_Comm comm, void **v)
{
    *v = (void *)(uintptr_t)buf;
    if (bytes == 0 || osmp__mpi_plain_size(dt) > 0) return OSMP_OK;
    if (!(*v = malloc((size_t)bytes))) return OSMP_ERR_NO_MEMORY;
    int pos = 0;
    if (pack) PMPI_Pack(buf, count, dt, *v, (int)bytes, &pos, comm);
    return OSMP_OK;
}

void osmp__mpi_unview(void *v, void *buf, int count, MPI_Datatype dt, long bytes, int unpack, MPI_Comm comm)
{
    int pos = 0;
    if (v == buf || !v) return;
    if (unpack) PMPI_Unpack(v, (int)bytes, &pos, buf, count, dt, comm);
    free(v);
}

