/* osmp_topo_check: the invariants written above struct osmp_domain in osmp.h. */
#include <stdlib.h>

#include "common/util.h"
#include "topo_internal.h"

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        osmp__why(why, len, __VA_ARGS__);                                                                    \
        return OSMP_ERR_TOPO_INVALID;                                                                        \
    } while (0)

static int check_domain(const struct osmp_topo *t, const struct osmp_domain *d, int *next_index, int *numa_above,
                        char *why, size_t len)
{
    const char *name = osmp_domain_kind_name(d->kind);
    if (!name) FAIL("domain with invalid kind %d", (int)d->kind);
    if (d->logical_index != next_index[d->kind])
        FAIL("%s logical index %d, expected %d in depth-first order", name, d->logical_index, next_index[d->kind]);
    next_index[d->kind]++;
    if (t->by_kind[d->kind][d->logical_index] != osmp__dom(d))
        FAIL("%s %d is not in the per-kind table", name, d->logical_index);
    if (d->parent ? d->depth != d->parent->depth + 1 : d->depth != 0)
        FAIL("%s %d has depth %d, parent depth %d", name, d->logical_index, d->depth,
             d->parent ? d->parent->depth : -1);
    if ((d->kind == OSMP_DOMAIN_MACHINE) != (d->parent == NULL))
        FAIL("%s %d: only the root may be the machine", name, d->logical_index);
    if (d->kind == OSMP_DOMAIN_NUMA) {
        if (*numa_above) FAIL("numa %d lies inside another NUMA domain", d->logical_index);
        *numa_above = 1;
    }
    hwloc_bitmap_t own = hwloc_bitmap_alloc(), sum = hwloc_bitmap_alloc();
    int rc = OSMP_OK;
    if (!own || !sum || hwloc_bitmap_list_sscanf(own, d->cpuset) < 0) {
        rc = OSMP_ERR_NO_MEMORY;
        osmp__why(why, len, "cannot parse cpuset of %s %d", name, d->logical_index);
        goto out;
    }
    if (d->kind == OSMP_DOMAIN_PU) {
        if (d->nchildren || !d->parent || d->parent->kind != OSMP_DOMAIN_CORE) {
            rc = OSMP_ERR_TOPO_INVALID;
            osmp__why(why, len, "pu %d must be a leaf under a core", d->logical_index);
        } else if (hwloc_bitmap_weight(own) != 1) {
            rc = OSMP_ERR_TOPO_INVALID;
            osmp__why(why, len, "pu %d has cpuset %s", d->logical_index, d->cpuset);
        }
        goto out;
    }
    if (d->kind == OSMP_DOMAIN_CORE && (d->first_core != d->logical_index || d->ncores != 1)) {
        rc = OSMP_ERR_TOPO_INVALID;
        osmp__why(why, len, "core %d covers cores [%d,+%d)", d->logical_index, d->first_core, d->ncores);
        goto out;
    }
    if (d->nchildren == 0) {
        rc = OSMP_ERR_TOPO_INVALID;
        osmp__why(why, len, "%s %d has no children (every branch must end in a PU)", name, d->logical_index);
        goto out;
    }
    int next_core = d->first_core;
    for (int i = 0; i < d->nchildren && rc == OSMP_OK; i++) {
        const struct osmp_domain *c = d->children[i];
        if (c->parent != d) {
            rc = OSMP_ERR_TOPO_INVALID;
            osmp__why(why, len, "child %d of %s %d has another parent", i, name, d->logical_index);
            break;
        }
        if ((d->kind == OSMP_DOMAIN_CORE) != (c->kind == OSMP_DOMAIN_PU)) {
            rc = OSMP_ERR_TOPO_INVALID;
            osmp__why(why, len, "%s %d has a %s child", name, d->logical_index, osmp_domain_kind_name(c->kind));
            break;
        }
        if (d->kind != OSMP_DOMAIN_CORE) {
            if (c->first_core != next_core) {
                rc = OSMP_ERR_TOPO_INVALID;
                osmp__why(why, len, "cores of %s %d are not contiguous at child %d", name, d->logical_index, i);
                break;
            }
            next_core += c->ncores;
        }
        int sub_numa = *numa_above;
        rc = check_domain(t, c, next_index, &sub_numa, why, len);
        if (rc) break;
        hwloc_bitmap_t cs = hwloc_bitmap_alloc();
        if (!cs || hwloc_bitmap_list_sscanf(cs, c->cpuset) < 0) {
            hwloc_bitmap_free(cs);
            rc = OSMP_ERR_NO_MEMORY;
            break;
        }
        if (!hwloc_bitmap_isincluded(cs, own) || hwloc_bitmap_intersects(cs, sum)) {
            rc = OSMP_ERR_TOPO_INVALID;
            osmp__why(why, len, "cpuset %s of child %d of %s %d is outside %s or overlaps a sibling", c->cpuset, i,
                      name, d->logical_index, d->cpuset);
        }
        hwloc_bitmap_or(sum, sum, cs);
        hwloc_bitmap_free(cs);
    }
    if (rc == OSMP_OK && d->kind != OSMP_DOMAIN_CORE && next_core != d->first_core + d->ncores) {
        rc = OSMP_ERR_TOPO_INVALID;
        osmp__why(why, len, "children of %s %d cover %d cores, not %d", name, d->logical_index,
                  next_core - d->first_core, d->ncores);
    }
    if (rc == OSMP_OK && !hwloc_bitmap_isequal(sum, own)) {
        rc = OSMP_ERR_TOPO_INVALID;
        osmp__why(why, len, "children of %s %d do not cover its cpuset %s", name, d->logical_index, d->cpuset);
    }
out:
    hwloc_bitmap_free(own);
    hwloc_bitmap_free(sum);
    return rc;
}

int osmp_topo_check(osmp_topo_t t, char *why, size_t len)
{
    if (!t || !t->root) FAIL("no topology");
    int next_index[OSMP_DOMAIN_KIND_COUNT] = {0};
    int numa_above = 0;
    int rc = check_domain(t, &t->root->pub, next_index, &numa_above, why, len);
    if (rc) return rc;
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
        if (next_index[k] != t->count[k])
            FAIL("%d %s domains in the tree, %d counted", next_index[k], osmp_domain_kind_name(k), t->count[k]);
    if (t->count[OSMP_DOMAIN_MACHINE] != 1) FAIL("%d machine domains", t->count[OSMP_DOMAIN_MACHINE]);
    if (t->root->pub.ncores != t->ncores || t->ncores < 1) FAIL("root covers %d of %d cores", t->root->pub.ncores, t->ncores);
    for (int c = 0; c < t->ncores; c++)
        for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) {
            const struct osmp_domain *d = &t->domain_of[k][c]->pub;
            if (c < d->first_core || c >= d->first_core + d->ncores)
                FAIL("domain_of(core %d, %s) does not contain the core", c, osmp_domain_kind_name(k));
        }
    return OSMP_OK;
}
