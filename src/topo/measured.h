/*
 * Measured topology (topo layer, pure: no processes, no shared memory): a
 * core-to-core latency matrix (osmp-probe's measurement or a CSV of one), its
 * hierarchy of domains found by clustering, and that hierarchy as an hwloc
 * topology (Group objects + an "OSMPLatency" distances structure) that
 * osmp_topo_load reads like any other XML.
 *
 * A latency matrix is n x n doubles in nanoseconds, row-major, symmetric, 0 on
 * the diagonal; CPU i is the i-th allowed CPU in OS index order (the CSV's row i).
 */
#ifndef OSMP_TOPO_MEASURED_H
#define OSMP_TOPO_MEASURED_H

#include <hwloc.h>
#include <stddef.h>

#include "osmp.h"

/* The name of the hwloc distances structure osmp-probe writes and topo reads. */
#define OSMP__LATENCY_DIST_NAME "OSMPLatency"
/* Root info osmp-probe sets to the host it measured: such an XML, loaded on
 * that host, is this machine (binding and the current core work). */
#define OSMP__PROBE_HOST_INFO "OSMPProbeHost"
#define OSMP__LATENCY_MAX_CPUS 8192

/*
 * Parse the lower-triangular CSV of tests/data/latency (row i holds the latencies
 * of pairs (i, j < i), row 0 empty; blank fields after the triangle, a final
 * newline and CRLF line ends are allowed). On success *m is a malloc'ed n x n
 * symmetric matrix. Bad input (ragged rows, values above the diagonal, more
 * columns than rows, NaN, negative or zero, not a number, fewer than 2 CPUs):
 * OSMP_ERR_INVALID_ARG and one line in why naming the row, column and value.
 */
int osmp__latency_parse_csv(const char *text, size_t len, double **m, int *n, char *why, size_t why_len);

/* One level of the measured hierarchy: a partition of all n CPUs. */
struct osmp__mlevel {
    double latency_ns; /* median latency of pairs that first share a group at this level */
    int ngroups;
    int *group_of; /* [n]: group of each CPU; groups numbered in the order of their lowest CPU */
};

/* Invariants (osmp__mtree_check): nlevels >= 1; levels[0] is the leaf level,
 * levels[nlevels-1] the machine (one group); every level's partition refines
 * the next one and differs from it; the leaf level has a group of two or more. */
struct osmp__mtree {
    int n;
    int nlevels;
    struct osmp__mlevel *levels;
};

/* Cluster a latency matrix (see cluster.c for the method). n >= 2, every
 * off-diagonal entry finite and positive, else OSMP_ERR_INVALID_ARG with why. */
int osmp__latency_cluster(const double *m, int n, struct osmp__mtree **out, char *why, size_t why_len);
void osmp__mtree_destroy(struct osmp__mtree *t);
int osmp__mtree_check(const struct osmp__mtree *t, char *why, size_t why_len);
/* "group0", "group1", ... from the leaf; the last level is "machine". */
void osmp__mlevel_name(const struct osmp__mtree *t, int level, char *buf, size_t len);

/*
 * Write the measured topology as hwloc XML. hw: a loaded topology whose PUs the
 * matrix's CPUs are (cpus[i] = OS index of CPU i); the measured levels become
 * Group objects (a group with the cpuset of an existing object merges into it)
 * and the matrix the "OSMPLatency" distances between those PUs. host: the
 * machine measured (NULL for a matrix from elsewhere). Groups hwloc cannot
 * insert (they cross an object hwloc has) are counted in *conflicts and left out.
 */
int osmp__measured_export_xml(hwloc_topology_t hw, const int *cpus, const double *m, const struct osmp__mtree *t,
                              const char *host, const char *path, int *conflicts, char *why, size_t why_len);

/* Compare the measured hierarchy of cpus[] (OS indices) with hwloc's tree: every measured domain must be
 * an hwloc object (Package, Die, Group, NUMA node, L3, L2, Core) and every such object that splits the CPUs
 * a measured domain. Returns 1 if they agree, 0 if not, with one line saying which domain differs. */
int osmp__measured_compare(hwloc_topology_t hw, const int *cpus, const struct osmp__mtree *t, char *line,
                           size_t len);

/* The per-user cache of this machine's measured topology:
 * $XDG_CACHE_HOME/osmp/topology-<hostname>.xml, else ~/.cache/osmp/... */
int osmp__measured_cache_path(char *buf, size_t len, char *why, size_t why_len);

/* Load what OSMP_TOPOLOGY says: "" this machine, "synthetic:STRING", "measured"
 * (the cache above; a missing file is an error naming it and osmp-probe --save),
 * or an XML file. On failure osmp_topo_last_error() has the reason. */
int osmp__topo_load_knob(const char *value, osmp_topo_t *out);

/* A digest of what topology t says about the cores of a team (cores[r]: rank
 * r's logical core), for team creation to compare between participants, each
 * of which loaded its own (OSMP_TOPOLOGY, hwloc restricted to its cpuset): per
 * rank, the domain of every kind osmp_topo_domain_of gives (stand-ins
 * included), its ancestors and its PUs, which fix the plan's groups, virtual
 * splits, rungs and cache sizes; with pairs, also the latency of every pair
 * that the distance keys hold (measured, else the NUMA matrix), which MSTs
 * and rings compare. A core outside t gives a digest of that fact and t's
 * number of cores. */
uint64_t osmp__topo_cores_digest(osmp_topo_t t, const int *cores, int n, int pairs);

#endif
