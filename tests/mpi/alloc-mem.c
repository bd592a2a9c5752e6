/*
 * alloc-mem: MPI_Alloc_mem under libosmp_mpi returns memory that the other
 * processes of a collective read through a mapping (osmp_alloc), and
 * MPI_Free_mem takes it back; with OSMP_MPI_ALLOC_MEM=0 the memory is MPI's and
 * is read with CMA.
 *
 *   OSMP_SINGLE_COPY_MIN=0 OSMP_ALLGATHER_ALG=ring mpirun -n N alloc-mem mapped|cma
 *
 * Every rank checks each call's bytes, then the single copies it made
 * (osmp_copy_stats, looked up in the preloaded libosmp): all through a mapping
 * ("mapped") or all with CMA ("cma"), at least one per call that reads from
 * another rank. Exit status 0 when every check passed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stats { /* struct osmp_copy_stats */
    uint64_t mapped, mapped_bytes, cma, cma_bytes;
};

static int me, n, failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "alloc-mem: rank %d: %s: ", me, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

static unsigned char val(int a, int b, size_t i)
{
    return (unsigned char)(a * 37 + b * 11 + i * 5 + (i >> 10));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int want_mapped = argc > 1 && !strcmp(argv[1], "mapped");
    void (*get)(struct stats *) = (void (*)(struct stats *))dlsym(RTLD_DEFAULT, "osmp_copy_stats");
    CHECK(get != NULL, "osmp_copy_stats not found: is libosmp_mpi preloaded?");
    const int bytes = 65536 + 3; /* per rank; single copy everywhere with OSMP_SINGLE_COPY_MIN=0 */
    unsigned char *in, *out;
    CHECK(MPI_Alloc_mem((MPI_Aint)bytes * n, MPI_INFO_NULL, &in) == MPI_SUCCESS, "MPI_Alloc_mem");
    CHECK(MPI_Alloc_mem((MPI_Aint)bytes * n, MPI_INFO_NULL, &out) == MPI_SUCCESS, "MPI_Alloc_mem");
    void *none = NULL;
    CHECK(MPI_Alloc_mem(0, MPI_INFO_NULL, &none) == MPI_SUCCESS, "MPI_Alloc_mem of 0 bytes");
    CHECK(MPI_Free_mem(none) == MPI_SUCCESS, "MPI_Free_mem of 0 bytes");
    struct stats s0 = {0}, s1 = {0};
    int reads = 0; /* calls in which this rank must read another rank's buffer */
    if (get) get(&s0);
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < bytes; i++) in[i] = me == root ? val(1, root, (size_t)i) : 0;
        MPI_Bcast(in, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        for (int i = 0; i < bytes; i++)
            if (in[i] != val(1, root, (size_t)i)) {
                CHECK(0, "bcast root %d: byte %d", root, i);
                break;
            }
        for (int i = 0; i < bytes; i++) in[i] = val(2, me, (size_t)i);
        MPI_Gather(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        for (int r = 0; me == root && r < n; r++)
            for (int i = 0; i < bytes; i++)
                if (out[(size_t)r * bytes + i] != val(2, r, (size_t)i)) {
                    CHECK(0, "gather root %d: block %d byte %d", root, r, i);
                    r = n;
                    break;
                }
        for (size_t i = 0; i < (size_t)bytes * n; i++) in[i] = val(3, (int)(i / bytes), i % bytes);
        MPI_Scatter(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        for (int i = 0; i < bytes; i++)
            if (out[i] != val(3, me, (size_t)i)) {
                CHECK(0, "scatter root %d: byte %d", root, i);
                break;
            }
        reads += me != root;
    }
    for (int i = 0; i < bytes; i++) in[i] = val(4, me, (size_t)i);
    MPI_Allgather(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < bytes; i++)
            if (out[(size_t)r * bytes + i] != val(4, r, (size_t)i)) {
                CHECK(0, "allgather: block %d byte %d", r, i);
                r = n;
                break;
            }
    for (size_t i = 0; i < (size_t)bytes * n; i++) in[i] = val(5, me * n + (int)(i / bytes), i % bytes);
    MPI_Alltoall(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < bytes; i++)
            if (out[(size_t)r * bytes + i] != val(5, r * n + me, (size_t)i)) {
                CHECK(0, "alltoall: block %d byte %d", r, i);
                r = n;
                break;
            }
    reads += 2 * (n > 1);
    if (get) get(&s1);
    uint64_t mapped = s1.mapped - s0.mapped, cma = s1.cma - s0.cma;
    if (want_mapped)
        CHECK(mapped >= (uint64_t)reads && cma == 0, "%llu mapped, %llu CMA copies; want >= %d mapped, no CMA",
              (unsigned long long)mapped, (unsigned long long)cma, reads);
    else
        CHECK(cma >= (uint64_t)reads && mapped == 0, "%llu mapped, %llu CMA copies; want >= %d CMA, none mapped",
              (unsigned long long)mapped, (unsigned long long)cma, reads);
    CHECK(MPI_Free_mem(in) == MPI_SUCCESS && MPI_Free_mem(out) == MPI_SUCCESS, "MPI_Free_mem");
    printf("alloc-mem: rank %d: %llu mapped, %llu CMA copies, %d failures\n", me, (unsigned long long)mapped,
           (unsigned long long)cma, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
