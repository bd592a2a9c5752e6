/*
 * The measured hierarchy as an hwloc topology, and where this machine's lives.
 * Pure: hwloc objects and files, no processes, no shared memory.
 *
 * hwloc already knows how to hold everything osmp-probe finds: a level of
 * domains is a set of Group objects (hwloc merges a group into an existing
 * object with the same CPUs, e.g. a measured SMT pair into its Core, and refuses
 * one that crosses an object it has), and the matrix is a distances structure
 * between PUs. hwloc's own grouping from distances (HWLOC_DISTANCES_ADD_FLAG_GROUP)
 * is not used: it groups by a fixed accuracy on raw values, where measured
 * latencies need the gap test of cluster.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/machine.h"
#include "common/util.h"
#include "measured.h"

int osmp__measured_export_xml(hwloc_topology_t hw, const int *cpus, const double *m, const struct osmp__mtree *t,
                              const char *host, const char *path, int *conflicts, char *why, size_t why_len)
{
    int n = t->n, rc = OSMP_ERR_NO_MEMORY;
    *conflicts = 0;
    hwloc_obj_t *pus = calloc((size_t)n, sizeof(*pus));
    hwloc_uint64_t *values = malloc(sizeof(*values) * (size_t)n * (size_t)n);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!pus || !values || !set) goto out;
    for (int i = 0; i < n; i++) {
        pus[i] = hwloc_get_pu_obj_by_os_index(hw, (unsigned)cpus[i]);
        if (!pus[i]) {
            rc = OSMP_ERR_INVALID_ARG;
            osmp__why(why, why_len, "CPU %d (P#%d) is not in the topology", i, cpus[i]);
            goto out;
        }
    }
    /* Every level but the machine, coarse first (the order does not matter to hwloc). */
    for (int l = t->nlevels - 2; l >= 0; l--) {
        const struct osmp__mlevel *L = &t->levels[l];
        char lat[32];
        snprintf(lat, sizeof(lat), "%.1f", L->latency_ns);
        for (int g = 0; g < L->ngroups; g++) {
            hwloc_bitmap_zero(set);
            for (int i = 0; i < n; i++)
                if (L->group_of[i] == g) hwloc_bitmap_set(set, (unsigned)cpus[i]);
            if (hwloc_bitmap_weight(set) < 2) continue;
            hwloc_obj_t grp = hwloc_topology_alloc_group_object(hw);
            if (!grp) goto out;
            grp->cpuset = hwloc_bitmap_dup(set);
            grp->subtype = strdup("Measured");
            hwloc_obj_t got = hwloc_topology_insert_group_object(hw, grp);
            if (!got) {
                (*conflicts)++;
                continue;
            }
            if (got->type == HWLOC_OBJ_GROUP && got->subtype && strcmp(got->subtype, "Measured") == 0)
                hwloc_obj_add_info(got, "OSMPLatencyNs", lat);
        }
    }
    /* Whole nanoseconds: the rung's refinement key holds 16 bits of them (topo.c). */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = m[(size_t)i * (size_t)n + (size_t)j];
            values[(size_t)i * (size_t)n + (size_t)j] = i == j ? 0 : v < 1 ? 1 : (hwloc_uint64_t)(v + 0.5);
        }
    hwloc_distances_add_handle_t h = hwloc_distances_add_create(
        hw, OSMP__LATENCY_DIST_NAME, HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    if (!h || hwloc_distances_add_values(hw, h, (unsigned)n, pus, values, 0) < 0 ||
        hwloc_distances_add_commit(hw, h, 0) < 0) {
        rc = OSMP_ERR_TOPO_INVALID;
        osmp__why(why, why_len, "hwloc refused the latency matrix as distances: %s", strerror(errno));
        goto out;
    }
    if (host) hwloc_obj_add_info(hwloc_get_root_obj(hw), OSMP__PROBE_HOST_INFO, host);
    if (hwloc_topology_export_xml(hw, path, 0) < 0) {
        rc = OSMP_ERR_INVALID_ARG;
        osmp__why(why, why_len, "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    rc = OSMP_OK;
out:
    free(pus);
    free(values);
    hwloc_bitmap_free(set);
    return rc;
}

int osmp__measured_cache_path(char *buf, size_t len, char *why, size_t why_len)
{
    return osmp__cache_path("topology", "xml", buf, len, why, why_len);
}

/* The CPUs of measured group g of level l, as OS indices. */
static void group_set(hwloc_bitmap_t set, const int *cpus, const struct osmp__mtree *t, int l, int g)
{
    hwloc_bitmap_zero(set);
    for (int i = 0; i < t->n; i++)
        if (t->levels[l].group_of[i] == g) hwloc_bitmap_set(set, (unsigned)cpus[i]);
}

int osmp__measured_compare(hwloc_topology_t hw, const int *cpus, const struct osmp__mtree *t, char *line,
                           size_t len)
{
    int n = t->n, agree = 1;
    hwloc_bitmap_t cpuset = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
    if (!cpuset || !set || !mine) {
        osmp__why(line, len, "out of memory comparing with hwloc");
        agree = -1;
        goto out;
    }
    char a[256], b[64];
    for (int i = 0; i < n; i++) hwloc_bitmap_set(cpuset, (unsigned)cpus[i]);
    /* The kinds topo groups by (src/topo/topo.c); other objects say nothing about sharing. */
    static const hwloc_obj_type_t types[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_DIE,     HWLOC_OBJ_GROUP, HWLOC_OBJ_NUMANODE,
                                             HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_CORE};
    const int ntypes = (int)(sizeof(types) / sizeof(types[0]));
    /* 1. Every measured domain is an hwloc object (restricted to the measured CPUs). */
    for (int l = 0; l + 1 < t->nlevels && agree; l++)
        for (int g = 0; g < t->levels[l].ngroups && agree; g++) {
            group_set(mine, cpus, t, l, g);
            if (hwloc_bitmap_weight(mine) < 2) continue;
            int found = 0;
            for (int k = 0; k < ntypes && !found; k++)
                for (int x = 0; x < hwloc_get_nbobjs_by_type(hw, types[k]) && !found; x++) {
                    hwloc_bitmap_and(set, hwloc_get_obj_by_type(hw, types[k], (unsigned)x)->cpuset, cpuset);
                    found = hwloc_bitmap_isequal(set, mine);
                }
            if (!found) {
                osmp__mlevel_name(t, l, b, sizeof(b));
                hwloc_bitmap_list_snprintf(a, sizeof(a), mine);
                osmp__why(line, len,
                          "hwloc and the measurement disagree: CPUs %s form a measured domain (%s, %.1f ns) that "
                          "hwloc's tree does not have",
                          a, b, t->levels[l].latency_ns);
                agree = 0;
            }
        }
    /* 2. Every hwloc object that splits the measured CPUs is a measured domain. */
    for (int k = 0; k < ntypes && agree; k++)
        for (int x = 0; x < hwloc_get_nbobjs_by_type(hw, types[k]) && agree; x++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(hw, types[k], (unsigned)x);
            hwloc_bitmap_and(set, o->cpuset, cpuset);
            int w = hwloc_bitmap_weight(set);
            if (w < 2 || w >= n) continue;
            int found = 0;
            for (int l = 0; l + 1 < t->nlevels && !found; l++)
                for (int g = 0; g < t->levels[l].ngroups && !found; g++) {
                    group_set(mine, cpus, t, l, g);
                    found = hwloc_bitmap_isequal(set, mine);
                }
            if (!found) {
                hwloc_obj_type_snprintf(b, sizeof(b), o, 0);
                hwloc_bitmap_list_snprintf(a, sizeof(a), set);
                osmp__why(line, len,
                          "hwloc and the measurement disagree: hwloc's %s L#%u (CPUs %s) is not a measured domain "
                          "(no latency gap around it)",
                          b, o->logical_index, a);
                agree = 0;
            }
        }
    if (agree) osmp__why(line, len, "hwloc's tree of this machine and the measured one agree");
out:
    hwloc_bitmap_free(cpuset);
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(mine);
    return agree;
}
