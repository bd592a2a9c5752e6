/*
 * Rank -> core mapping from a communication matrix (pure: no processes, no
 * shared memory; osmp-map, libosmp_mpi's reorder and the unit tests call it).
 *
 * The problem: n ranks, a traffic matrix (bytes rank i sent to rank j), and
 * nslots candidate places (logical cores of a topology, n <= nslots; a core
 * may repeat when ranks share cores). A mapping gives each rank a distinct
 * slot. Its cost is the sum over pairs of ranks of the bytes they exchange
 * (both directions) times the distance ladder rung between their cores
 * (osmp_topo_distance): the quantity every algorithm here minimizes and every
 * baseline is measured with.
 *
 * Algorithms (osmp__map_run):
 *  - packed       rank i on slot i (the cores in the order given);
 *  - round_robin  ranks dealt over the NUMA domains of the slots in turn (the
 *                 i-th free slot of each domain in order), as --map-by numa;
 *  - design1      Hashmi et al. (IPDPS 2020) Design-1: pairs of ranks by
 *                 decreasing traffic; an unplaced pair takes the closest pair
 *                 of free slots, a rank whose partner is placed the free slot
 *                 closest to it; ranks without traffic fill the rest in order;
 *  - design2      their NUMA-aware Design-2: the same greedy, but pairs with
 *                 both ranks unplaced go to the NUMA domains in turn (the
 *                 closest free pair inside the next domain with two free
 *                 slots), spreading the heavy pairs over the memory
 *                 controllers instead of filling one domain first;
 *  - bisect       recursive partitioning along the topology tree: at each
 *                 domain the ranks are cut into parts sized to its children
 *                 (filled in order), the parts grown greedily and refined by
 *                 Kernighan-Lin swaps on the cut (all pairs across two
 *                 children of one domain sit at the same rung), then one
 *                 child per part, down to cores; then swap refinement;
 *  - auto         the default: every algorithm above, each followed by
 *                 pairwise swap refinement on the full cost (rank with rank,
 *                 rank with free slot, until no swap lowers the cost), and the
 *                 cheapest kept (the first on ties, in the order above). Never
 *                 dearer than any of them, refined or not.
 */
#ifndef OSMP_PLAN_MAP_H
#define OSMP_PLAN_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "osmp.h"

#define OSMP__MAP_ALG_LIST(X)                                                                                \
    X(PACKED, "packed")                                                                                      \
    X(ROUND_ROBIN, "round_robin")                                                                            \
    X(DESIGN1, "design1")                                                                                    \
    X(DESIGN2, "design2")                                                                                    \
    X(BISECT, "bisect")                                                                                      \
    X(AUTO, "auto")

enum osmp__map_alg {
#define OSMP__MAP_ALG_ENUM(N, s) OSMP__MAP_##N,
    OSMP__MAP_ALG_LIST(OSMP__MAP_ALG_ENUM)
#undef OSMP__MAP_ALG_ENUM
        OSMP__MAP_NALGS
};

/* "design1", ...; NULL if out of range. */
const char *osmp__map_alg_name(int alg);
/* The algorithm named, -1 if none. */
int osmp__map_alg_parse(const char *name);

struct osmp__map_nbr {
    int rank;
    double w;
};

/* A prepared problem (osmp__map_init). */
struct osmp__map {
    osmp_topo_t topo;
    int n, nslots;
    int *cores;   /* [nslots] logical core of each slot */
    double *w;    /* [n*n] symmetric traffic: m[i][j] + m[j][i]; 0 on the diagonal */
    uint8_t *d;   /* [nslots*nslots] ladder rung between slots */
    int *numa;    /* [nslots] NUMA domain of each slot */
    int *nbr_start;             /* [n+1] CSR of the non-zero entries of w */
    struct osmp__map_nbr *nbrs; /* their ranks and weights */
};

/* Prepare: matrix[n*n] is row i = what rank i sent to rank j (any non-negative
 * numbers; the diagonal is ignored). OSMP_ERR_INVALID_ARG if n > nslots, n < 1,
 * or a core is out of range; OSMP_ERR_NO_MEMORY. */
int osmp__map_init(struct osmp__map *m, osmp_topo_t topo, const int *cores, int nslots, const double *matrix, int n);
void osmp__map_fini(struct osmp__map *m);

/* Cost of slot_of[rank] (distinct slots): sum over i < j of w[i][j] * rung. */
double osmp__map_cost(const struct osmp__map *m, const int *slot_of);

/* Run an algorithm: slot_of[n] gets each rank's slot (distinct). OSMP_OK or
 * OSMP_ERR_NO_MEMORY / OSMP_ERR_INVALID_ARG. */
int osmp__map_run(const struct osmp__map *m, int alg, int *slot_of);

/* Lower the cost by pairwise swaps (rank with rank, rank with a free slot)
 * until none helps; returns the number of swaps made, or a negative status. */
int osmp__map_refine(const struct osmp__map *m, int *slot_of);

/* Parse a traffic matrix: Open MPI's monitoring .mat layout (N lines of N
 * non-negative numbers separated by blanks) or, when the text has records
 * "I|E|S|R|C SRC DST BYTES bytes MSGS msgs ..." (a monitoring .prof file,
 * blank lines and # comments aside), those records summed per (SRC, DST).
 * *out (malloc'd, row-major) and *n on success; else OSMP_ERR_INVALID_ARG with
 * a one-line reason naming the line and the value in err. */
int osmp__map_parse_matrix(const char *text, double **out, int *n, char *err, size_t err_len);

#endif
