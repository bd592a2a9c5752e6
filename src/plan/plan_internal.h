/* plan internals (pure layer). */
#ifndef OSMP_PLAN_INTERNAL_H
#define OSMP_PLAN_INTERNAL_H

#include "topo/topo_internal.h"

/* "l3" or "package:4" for one level; returns what snprintf returns. */
int osmp__spec_level_format(const struct osmp_spec_level *level, char *buf, size_t len);

/* Order spec levels from small to large domains (stable), so a spec listed
 * top-down, or for a machine where NUMA nodes hold packages, still nests. */
void osmp__spec_sort(osmp_topo_t topo, struct osmp_spec_level *levels, int nlevels);

#endif
