/*
 * halo: a 2-D halo exchange (the program whose captured matrix bench/mapping
 * maps). A P x Q grid of ranks from MPI_Dims_create, non-periodic, each rank
 * owning a 512 x 128 block of doubles: every step sends its top and bottom rows
 * (128 doubles) and its left and right columns (512 doubles, a vector
 * datatype) to the four neighbours with MPI_Sendrecv, then an allreduce of the
 * residual. 20 steps.
 *
 *   OSMP_PROFILE=halo16.mat mpirun -n 16 --oversubscribe -x LD_PRELOAD=$PWD/build/libosmp_mpi.so \
 *       -x OSMP_PROFILE build/halo
 */
#include <mpi.h>
#include <stdlib.h>

#define NX 512 /* rows */
#define NY 128 /* columns */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n, dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Dims_create(n, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);
    double *a = calloc((size_t)(NX + 2) * (NY + 2), sizeof(double));
    MPI_Datatype column;
    MPI_Type_vector(NX, 1, NY + 2, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
#define A(i, j) a[(size_t)(i) * (NY + 2) + (j)]
    for (int step = 0; step < 20; step++) {
        MPI_Sendrecv(&A(1, 1), NY, MPI_DOUBLE, up, 0, &A(NX + 1, 1), NY, MPI_DOUBLE, down, 0, grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&A(NX, 1), NY, MPI_DOUBLE, down, 1, &A(0, 1), NY, MPI_DOUBLE, up, 1, grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&A(1, 1), 1, column, left, 2, &A(1, NY + 1), 1, column, right, 2, grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&A(1, NY), 1, column, right, 3, &A(1, 0), 1, column, left, 3, grid, MPI_STATUS_IGNORE);
        double r = 0, all;
        for (int i = 1; i <= NX; i++)
            for (int j = 1; j <= NY; j++) r += A(i, j) = 0.25 * (A(i - 1, j) + A(i + 1, j) + A(i, j - 1) + A(i, j + 1));
        MPI_Allreduce(&r, &all, 1, MPI_DOUBLE, MPI_SUM, grid);
    }
    MPI_Type_free(&column);
    MPI_Comm_free(&grid);
    free(a);
    MPI_Finalize();
    return 0;
}
