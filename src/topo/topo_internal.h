/* topo internals shared by the topo and plan layers (pure: no processes, no shm). */
#ifndef OSMP_TOPO_INTERNAL_H
#define OSMP_TOPO_INTERNAL_H

#include <hwloc.h>

#include "osmp.h"

/* A domain with what only the library needs; pub comes first so the two convert. */
struct osmp__domain {
    struct osmp_domain pub;
    hwloc_obj_t hw;          /* the object it came from (the first NUMA node for a NUMA domain) */
    unsigned subtree_kinds;  /* bit k set if a domain of kind k lies in this subtree, itself included */
};

static inline struct osmp__domain *osmp__dom(const struct osmp_domain *d)
{
    return (struct osmp__domain *)d;
}

static inline struct osmp__domain *osmp__dom_parent(const struct osmp__domain *d)
{
    return d->pub.parent ? osmp__dom(d->pub.parent) : NULL;
}

struct osmp_topo {
    hwloc_topology_t hw;
    struct osmp__domain *root;
    int ncores;
    int count[OSMP_DOMAIN_KIND_COUNT];
    struct osmp__domain **by_kind[OSMP_DOMAIN_KIND_COUNT];   /* [kind][logical index] */
    struct osmp__domain **domain_of[OSMP_DOMAIN_KIND_COUNT]; /* [kind][core]: see osmp_topo_domain_of */
    uint32_t *numa_dist; /* count[NUMA]^2 latencies from hwloc, NULL if the machine reports none */
    uint32_t *core_lat;  /* ncores^2 measured latencies in ns (osmp-probe's "OSMPLatency"), NULL if none */
};

/* 0 if hwloc can be given this XML text, else -1 and a one-line reason (xmlcheck.c). */
int osmp__xml_check(const char *text, size_t size, char *why, size_t whylen);

#endif
