/*
 * topo: the node as a tree of locality domains, built from hwloc.
 *
 * Pure layer: no processes, no shared memory. hwloc does the discovery and the
 * parsing (this machine, XML, synthetic); this file only translates hwloc's tree
 * into the kinds OSMP groups by, and answers distance questions.
 *
 * Translation rules:
 *  - Machine, Package, Group/Die, L3, L2, Core, PU become domains; every other
 *    object (L1, L4, instruction caches, Misc) is transparent: its children are
 *    attached to the nearest translated ancestor.
 *  - hwloc 2 hangs NUMA nodes beside the tree as memory children of the object
 *    whose cores are local to them. We put one NUMA domain between that object
 *    and its children (all NUMA nodes attached there, e.g. DDR + HBM, form one
 *    domain), so a NUMA node above packages (x3950) or inside one (sub-NUMA
 *    clustering) lands where the hardware says.
 *  - Objects without any usable core (a package whose cores are all outside the
 *    allowed cpuset) are left out: nothing can run there.
 */
#include "topo_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "measured.h"

static _Thread_local char last_error[256];

const char *osmp_topo_last_error(void)
{
    return last_error;
}

static const char *const kind_names[OSMP_DOMAIN_KIND_COUNT] = {"machine", "group", "package", "numa",
                                                               "l3",      "l2",    "core",    "pu"};

const char *osmp_domain_kind_name(osmp_domain_kind_t kind)
{
    if ((int)kind < 0 || kind >= OSMP_DOMAIN_KIND_COUNT) return NULL;
    return kind_names[kind];
}

int osmp_domain_kind_parse(const char *name, size_t len)
{
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
        if (strlen(kind_names[k]) == len && strncasecmp(kind_names[k], name, len) == 0) return k;
    return -1;
}

static const char *const rung_names[OSMP_DIST_RUNGS] = {"core",    "l2",    "l3",     "numa",
                                                         "package", "group", "machine"};

const char *osmp_dist_rung_name(int rung)
{
    if (rung < 0 || rung >= OSMP_DIST_RUNGS) return NULL;
    return rung_names[rung];
}

/* hwloc type -> our kind, or -1 for transparent objects. */
static int kind_of(hwloc_obj_t obj)
{
    switch (obj->type) {
    case HWLOC_OBJ_MACHINE:
        return OSMP_DOMAIN_MACHINE;
    case HWLOC_OBJ_GROUP:
    case HWLOC_OBJ_DIE:
        return OSMP_DOMAIN_GROUP;
    case HWLOC_OBJ_PACKAGE:
        return OSMP_DOMAIN_PACKAGE;
    case HWLOC_OBJ_L3CACHE:
        return OSMP_DOMAIN_L3;
    case HWLOC_OBJ_L2CACHE:
        return OSMP_DOMAIN_L2;
    case HWLOC_OBJ_CORE:
        return OSMP_DOMAIN_CORE;
    case HWLOC_OBJ_PU:
        return OSMP_DOMAIN_PU;
    default:
        return -1;
    }
}

/* First NUMA node among obj's memory children (possibly under memory-side caches). */
static hwloc_obj_t first_numa(hwloc_obj_t obj)
{
    for (hwloc_obj_t m = obj->memory_first_child; m; m = m->next_sibling) {
        if (m->type == HWLOC_OBJ_NUMANODE) return m;
        hwloc_obj_t inner = first_numa(m);
        if (inner) return inner;
    }
    return NULL;
}

static struct osmp__domain *new_domain(struct osmp_topo *t, osmp_domain_kind_t kind, hwloc_obj_t obj,
                                       struct osmp__domain *parent)
{
    struct osmp__domain *d = calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->pub.kind = kind;
    d->pub.os_index = (obj->os_index == HWLOC_UNKNOWN_INDEX) ? -1 : (int)obj->os_index;
    d->pub.parent = parent ? &parent->pub : NULL;
    d->pub.depth = parent ? parent->pub.depth + 1 : 0;
    d->hw = obj;
    if (hwloc_obj_type_is_cache(obj->type) && obj->attr) d->pub.cache_bytes = obj->attr->cache.size;
    if (hwloc_bitmap_list_asprintf(&d->pub.cpuset, obj->cpuset) < 0) {
        free(d);
        return NULL;
    }
    if (parent) {
        struct osmp_domain **c = realloc(parent->pub.children, sizeof(*c) * (size_t)(parent->pub.nchildren + 1));
        if (!c) {
            free(d->pub.cpuset);
            free(d);
            return NULL;
        }
        parent->pub.children = c;
        c[parent->pub.nchildren++] = &d->pub;
    }
    /* Pre-order numbering gives hwloc's logical order for each kind. */
    d->pub.logical_index = t->count[kind]++;
    return d;
}

static int build(struct osmp_topo *t, hwloc_obj_t obj, struct osmp__domain *parent, struct osmp__domain **out)
{
    if (hwloc_bitmap_iszero(obj->cpuset)) return OSMP_OK; /* no usable core here */
    int kind = kind_of(obj);
    struct osmp__domain *here = parent;
    if (kind >= 0) {
        here = new_domain(t, (osmp_domain_kind_t)kind, obj, parent);
        if (!here) return OSMP_ERR_NO_MEMORY;
        if (!parent) *out = here;
    }
    hwloc_obj_t numa = kind == OSMP_DOMAIN_PU ? NULL : first_numa(obj);
    if (numa) {
        struct osmp__domain *n = new_domain(t, OSMP_DOMAIN_NUMA, numa, here);
        if (!n) return OSMP_ERR_NO_MEMORY;
        free(n->pub.cpuset); /* a NUMA domain spans the cores local to it: its host's cpuset */
        n->pub.cpuset = NULL;
        if (hwloc_bitmap_list_asprintf(&n->pub.cpuset, obj->cpuset) < 0) return OSMP_ERR_NO_MEMORY;
        here = n;
    }
    for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling) {
        int rc = build(t, c, here, out);
        if (rc) return rc;
    }
    return OSMP_OK;
}

/* Post-order pass: core ranges, subtree kinds, per-kind tables. */
static void finish(struct osmp_topo *t, struct osmp__domain *d)
{
    t->by_kind[d->pub.kind][d->pub.logical_index] = d;
    d->subtree_kinds = 1u << d->pub.kind;
    if (d->pub.kind == OSMP_DOMAIN_CORE) {
        d->pub.first_core = d->pub.logical_index;
        d->pub.ncores = 1;
    } else {
        d->pub.first_core = -1;
        d->pub.ncores = 0;
    }
    for (int i = 0; i < d->pub.nchildren; i++) {
        struct osmp__domain *c = osmp__dom(d->pub.children[i]);
        finish(t, c);
        d->subtree_kinds |= c->subtree_kinds;
        if (d->pub.kind == OSMP_DOMAIN_CORE) continue;
        if (d->pub.first_core < 0) d->pub.first_core = c->pub.first_core;
        d->pub.ncores += c->pub.ncores;
    }
    if (d->pub.kind == OSMP_DOMAIN_PU && d->pub.parent) {
        d->pub.first_core = d->pub.parent->first_core >= 0 ? d->pub.parent->logical_index : -1;
        d->pub.ncores = 1;
    }
}

static void free_tree(struct osmp_domain *d)
{
    if (!d) return;
    for (int i = 0; i < d->nchildren; i++) free_tree(d->children[i]);
    free(d->children);
    free(d->cpuset);
    free(osmp__dom(d));
}

void osmp_topo_destroy(osmp_topo_t t)
{
    if (!t) return;
    free_tree(t->root ? &t->root->pub : NULL);
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) {
        free(t->by_kind[k]);
        free(t->domain_of[k]);
    }
    free(t->numa_dist);
    free(t->core_lat);
    if (t->hw) hwloc_topology_destroy(t->hw);
    free(t);
}

/* hwloc's latency matrices, re-indexed by our domains: the NUMA matrix by NUMA
 * domain (their first node), and osmp-probe's measured core-to-core matrix
 * ("OSMPLatency", between PUs) by core, a pair of cores taking their closest
 * pair of PUs. Entries are clamped to 16 bits (the distance key's field). */
static int load_distances(struct osmp_topo *t, int kind, const char *name, uint32_t **out)
{
    int n = t->count[kind];
    if (n < 2) return OSMP_OK;
    unsigned nr = 1;
    struct hwloc_distances_s *dist = NULL;
    int got = name ? hwloc_distances_get_by_name(t->hw, name, &nr, &dist, 0)
                   : hwloc_distances_get_by_type(t->hw, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                                 HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    if (got < 0 || nr == 0) return OSMP_OK; /* no matrix: the ladder alone orders pairs */
    uint32_t *d = malloc(sizeof(*d) * (size_t)n * (size_t)n);
    /* Each PU's row in the matrix, looked up once (hwloc_distances_obj_index is a linear search). */
    int npu = t->count[OSMP_DOMAIN_PU], *row = kind == OSMP_DOMAIN_CORE ? malloc(sizeof(int) * (size_t)npu) : NULL;
    if (!d || (kind == OSMP_DOMAIN_CORE && !row)) {
        free(d);
        free(row);
        hwloc_distances_release(t->hw, dist);
        return OSMP_ERR_NO_MEMORY;
    }
    for (int p = 0; row && p < npu; p++) row[p] = hwloc_distances_obj_index(dist, t->by_kind[OSMP_DOMAIN_PU][p]->hw);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            uint64_t v = UINT64_MAX;
            if (kind == OSMP_DOMAIN_NUMA) {
                int ia = hwloc_distances_obj_index(dist, t->by_kind[kind][a]->hw);
                int ib = hwloc_distances_obj_index(dist, t->by_kind[kind][b]->hw);
                if (ia >= 0 && ib >= 0) v = dist->values[(unsigned)ia * dist->nbobjs + (unsigned)ib];
            } else if (a != b) { /* cores: the closest pair of their PUs in the matrix */
                const struct osmp_domain *ca = &t->by_kind[kind][a]->pub, *cb = &t->by_kind[kind][b]->pub;
                for (int x = 0; x < ca->nchildren; x++)
                    for (int y = 0; y < cb->nchildren; y++) {
                        int ia = row[ca->children[x]->logical_index], ib = row[cb->children[y]->logical_index];
                        if (ia >= 0 && ib >= 0 && dist->values[(unsigned)ia * dist->nbobjs + (unsigned)ib] < v)
                            v = dist->values[(unsigned)ia * dist->nbobjs + (unsigned)ib];
                    }
            }
            d[a * n + b] = v == UINT64_MAX || a == b ? 0 : v > 0xffff ? 0xffff : (uint32_t)v;
        }
    /* A pair's distance is one number: hwloc accepts asymmetric matrices (firmware reports some, and an
     * edited XML file may hold anything), and trees built from both directions must agree. The mean
     * keeps the pair's round trip. */
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) d[a * n + b] = d[b * n + a] = (d[a * n + b] + d[b * n + a] + 1) / 2;
    hwloc_distances_release(t->hw, dist);
    free(row);
    *out = d;
    return OSMP_OK;
}

/* See osmp_topo_domain_of in osmp.h for the stand-in rule. Groups nest (POWER7:
 * boards of NUMA-sized groups); the outermost one is the board, the inner ones
 * usually repeat a NUMA node or cluster that has a kind of its own. */
static struct osmp__domain *compute_domain_of(struct osmp__domain *core, osmp_domain_kind_t kind)
{
    struct osmp__domain *outer_group = NULL;
    if (kind == OSMP_DOMAIN_GROUP)
        for (struct osmp__domain *d = core; d; d = osmp__dom_parent(d))
            if (d->pub.kind == OSMP_DOMAIN_GROUP) outer_group = d;
    if (outer_group) return outer_group;
    struct osmp__domain *standin = core;
    for (struct osmp__domain *d = core; d; d = osmp__dom_parent(d)) {
        if (d->pub.kind == kind) return d;
        if (d->subtree_kinds & (1u << kind)) break;
        standin = d;
    }
    return standin;
}

static int index_tables(struct osmp_topo *t)
{
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) {
        t->by_kind[k] = calloc((size_t)t->count[k] + 1, sizeof(*t->by_kind[k]));
        if (!t->by_kind[k]) return OSMP_ERR_NO_MEMORY;
    }
    finish(t, t->root);
    t->ncores = t->count[OSMP_DOMAIN_CORE];
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) {
        t->domain_of[k] = calloc((size_t)t->ncores + 1, sizeof(*t->domain_of[k]));
        if (!t->domain_of[k]) return OSMP_ERR_NO_MEMORY;
        for (int c = 0; c < t->ncores; c++)
            t->domain_of[k][c] = compute_domain_of(t->by_kind[OSMP_DOMAIN_CORE][c], (osmp_domain_kind_t)k);
    }
    int rc = load_distances(t, OSMP_DOMAIN_NUMA, NULL, &t->numa_dist);
    return rc ? rc : load_distances(t, OSMP_DOMAIN_CORE, OSMP__LATENCY_DIST_NAME, &t->core_lat);
}

int osmp_topo_is_this_machine(osmp_topo_t topo)
{
    return topo && hwloc_topology_is_thissystem(topo->hw);
}

/* Read the file whole and refuse what hwloc would abort on (xmlcheck.c). */
static int check_xml_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        osmp__why(last_error, sizeof(last_error), "cannot open %s: %s", path, strerror(errno));
        return OSMP_ERR_TOPO_LOAD;
    }
    size_t cap = 0, size = 0;
    char *text = NULL;
    int no_memory = 0;
    for (;;) {
        if (size == cap) {
            char *grown = realloc(text, cap ? 2 * cap : 1 << 16);
            if ((no_memory = !grown)) break;
            text = grown;
            cap = cap ? 2 * cap : 1 << 16;
        }
        size_t got = fread(text + size, 1, cap - size, f);
        if (!got) break;
        size += got;
    }
    int err = ferror(f);
    fclose(f);
    if (no_memory) {
        free(text);
        return OSMP_ERR_NO_MEMORY;
    }
    char why[160] = "";
    int rc = err ? -1 : osmp__xml_check(text, size, why, sizeof(why));
    free(text);
    if (err) osmp__why(last_error, sizeof(last_error), "cannot read %s", path);
    else if (rc) osmp__why(last_error, sizeof(last_error), "%s: %s", path, why);
    return rc ? OSMP_ERR_TOPO_LOAD : OSMP_OK;
}

/* hwloc's part of a load into t->hw; extra: more hwloc topology flags. */
static int hw_load(struct osmp_topo *t, osmp_topo_source_t source, const char *what, unsigned flags,
                   unsigned long extra)
{
    if (hwloc_topology_init(&t->hw) < 0) {
        t->hw = NULL;
        osmp__why(last_error, sizeof(last_error), "hwloc_topology_init failed");
        return OSMP_ERR_TOPO_LOAD;
    }
    /* I/O devices and L1 caches say nothing about sharing between cores. */
    hwloc_topology_set_io_types_filter(t->hw, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_flags(t->hw, extra | (flags & OSMP_TOPO_WHOLE_SYSTEM ? HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED : 0));
    if (source == OSMP_TOPO_XML) {
        /* hwloc reports a missing file only as EINVAL at load time; say what is wrong. */
        int rc = check_xml_file(what);
        if (rc) return rc;
        if (hwloc_topology_set_xml(t->hw, what) < 0) {
            osmp__why(last_error, sizeof(last_error), "%s: not a usable hwloc XML file", what);
            return OSMP_ERR_TOPO_LOAD;
        }
    } else if (source == OSMP_TOPO_SYNTHETIC) {
        if (hwloc_topology_set_synthetic(t->hw, what) < 0) {
            osmp__why(last_error, sizeof(last_error), "invalid hwloc synthetic description \"%s\"", what);
            return OSMP_ERR_TOPO_LOAD;
        }
    }
    if (hwloc_topology_load(t->hw) < 0) {
        if (source == OSMP_TOPO_XML)
            osmp__why(last_error, sizeof(last_error), "%s: not a valid hwloc XML topology", what);
        else
            osmp__why(last_error, sizeof(last_error), "hwloc could not load the topology: %s", strerror(errno));
        return OSMP_ERR_TOPO_LOAD;
    }
    return OSMP_OK;
}

/* osmp-probe's XML of the host we run on is this machine (binding, the current
 * core, the allowed CPUs of this process), not a machine to plan for. */
static int measured_here(hwloc_topology_t hw)
{
    const char *host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(hw), OSMP__PROBE_HOST_INFO);
    char me[256];
    if (!host || gethostname(me, sizeof(me)) < 0) return 0;
    me[sizeof(me) - 1] = '\0';
    return strcmp(host, me) == 0;
}

int osmp_topo_load(osmp_topo_source_t source, const char *what, unsigned flags, osmp_topo_t *out)
{
    last_error[0] = '\0';
    if (!out || (source != OSMP_TOPO_THIS_MACHINE && !what) || source > OSMP_TOPO_SYNTHETIC ||
        (flags & ~(unsigned)OSMP_TOPO_WHOLE_SYSTEM)) {
        osmp__why(last_error, sizeof(last_error), "invalid arguments to osmp_topo_load");
        return OSMP_ERR_INVALID_ARG;
    }
    struct osmp_topo *t = calloc(1, sizeof(*t));
    if (!t) return OSMP_ERR_NO_MEMORY;
    int rc = hw_load(t, source, what, flags, 0);
    if (!rc && source == OSMP_TOPO_XML && measured_here(t->hw)) {
        hwloc_topology_destroy(t->hw);
        rc = hw_load(t, source, what, flags,
                     HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM | HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES);
    }
    if (rc) goto fail;
    rc = build(t, hwloc_get_root_obj(t->hw), NULL, &t->root);
    if (rc) goto fail;
    if (!t->root || t->count[OSMP_DOMAIN_CORE] == 0) {
        rc = OSMP_ERR_TOPO_INVALID;
        osmp__why(last_error, sizeof(last_error), "the topology has no usable core");
        goto fail;
    }
    rc = index_tables(t);
    if (rc) goto fail;
    /* hwloc loads some malformed inputs (an XML Core whose PUs were dropped) into trees that break the
     * invariants everything above relies on: refuse them here rather than fail later. */
    char why[200];
    rc = osmp_topo_check(t, why, sizeof(why));
    if (rc) {
        osmp__why(last_error, sizeof(last_error), "%s%sthe topology violates an invariant: %s",
                  source == OSMP_TOPO_XML ? what : "", source == OSMP_TOPO_XML ? ": " : "", why);
        goto fail;
    }
    *out = t;
    return OSMP_OK;
fail:
    osmp_topo_destroy(t);
    return rc;
}

const struct osmp_domain *osmp_topo_root(osmp_topo_t t)
{
    return t ? &t->root->pub : NULL;
}

int osmp_topo_ncores(osmp_topo_t t)
{
    return t ? t->ncores : OSMP_ERR_INVALID_ARG;
}

int osmp_topo_count(osmp_topo_t t, osmp_domain_kind_t kind)
{
    if (!t || (int)kind < 0 || kind >= OSMP_DOMAIN_KIND_COUNT) return 0;
    return t->count[kind];
}

const struct osmp_domain *osmp_topo_domain(osmp_topo_t t, osmp_domain_kind_t kind, int index)
{
    if (!t || (int)kind < 0 || kind >= OSMP_DOMAIN_KIND_COUNT || index < 0 || index >= t->count[kind])
        return NULL;
    return &t->by_kind[kind][index]->pub;
}

const struct osmp_domain *osmp_topo_domain_of(osmp_topo_t t, int core, osmp_domain_kind_t kind)
{
    if (!t || core < 0 || core >= t->ncores || (int)kind < 0 || kind >= OSMP_DOMAIN_KIND_COUNT) return NULL;
    return &t->domain_of[kind][core]->pub;
}

/* Nearest real ancestor of a kind, NULL if the core has none. For a GROUP, only
 * groups that are not inside a package count (boards); dies and clusters are
 * ordered by the depth of the lowest common domain instead. */
static int inside_package(const struct osmp_domain *d)
{
    for (d = d->parent; d; d = d->parent)
        if (d->kind == OSMP_DOMAIN_PACKAGE) return 1;
    return 0;
}

static const struct osmp_domain *lowest_common(const struct osmp_domain *x, const struct osmp_domain *y)
{
    while (x->depth > y->depth) x = x->parent;
    while (y->depth > x->depth) y = y->parent;
    while (x != y) x = x->parent, y = y->parent;
    return x;
}

/* Does the lowest common domain lie inside a domain of this kind? Only groups
 * outside packages (boards) count as GROUP; a die or cluster inside a package
 * is ordered by the depth of the common domain instead (distance key). */
static int within(const struct osmp_domain *lcd, osmp_domain_kind_t kind)
{
    for (const struct osmp_domain *d = lcd; d; d = d->parent)
        if (d->kind == kind && (kind != OSMP_DOMAIN_GROUP || !inside_package(d))) return 1;
    return 0;
}

static int rung_of(const struct osmp_domain *a, const struct osmp_domain *b)
{
    if (a == b) return OSMP_DIST_CORE;
    const struct osmp_domain *lcd = lowest_common(a, b);
    if (within(lcd, OSMP_DOMAIN_L2)) return OSMP_DIST_L2;
    if (within(lcd, OSMP_DOMAIN_L3)) return OSMP_DIST_L3;
    if (within(lcd, OSMP_DOMAIN_PACKAGE)) return within(lcd, OSMP_DOMAIN_NUMA) ? OSMP_DIST_NUMA : OSMP_DIST_PACKAGE;
    /* Without package information a NUMA node is the closest thing to one (for either core: the
     * rung must not depend on which end asks). */
    if ((!within(a, OSMP_DOMAIN_PACKAGE) || !within(b, OSMP_DOMAIN_PACKAGE)) && within(lcd, OSMP_DOMAIN_NUMA))
        return OSMP_DIST_NUMA;
    if (within(lcd, OSMP_DOMAIN_GROUP)) return OSMP_DIST_GROUP;
    return OSMP_DIST_MACHINE;
}

/* The NUMA domain holding a core, NULL if none does. */
static const struct osmp_domain *numa_of(const struct osmp_domain *core)
{
    for (const struct osmp_domain *d = core; d; d = d->parent)
        if (d->kind == OSMP_DOMAIN_NUMA) return d;
    return NULL;
}

int osmp_topo_distance(osmp_topo_t t, int ca, int cb)
{
    if (!t || ca < 0 || cb < 0 || ca >= t->ncores || cb >= t->ncores) return OSMP_ERR_RANGE;
    return rung_of(&t->by_kind[OSMP_DOMAIN_CORE][ca]->pub, &t->by_kind[OSMP_DOMAIN_CORE][cb]->pub);
}

uint32_t osmp_topo_distance_key(osmp_topo_t t, int ca, int cb)
{
    if (!t || ca < 0 || cb < 0 || ca >= t->ncores || cb >= t->ncores) return UINT32_MAX;
    const struct osmp_domain *a = &t->by_kind[OSMP_DOMAIN_CORE][ca]->pub;
    const struct osmp_domain *b = &t->by_kind[OSMP_DOMAIN_CORE][cb]->pub;
    if (a == b) return 0;
    /* Measured core-to-core latency (osmp-probe) where the topology has it: it
     * sees what the NUMA matrix sees and more (CCX, SMT, a VM's hidden sockets). */
    uint32_t numa = 0;
    const struct osmp_domain *na = numa_of(a), *nb = numa_of(b);
    if (t->core_lat)
        numa = t->core_lat[ca * t->ncores + cb];
    else if (t->numa_dist && na && nb && na != nb)
        numa = t->numa_dist[na->logical_index * t->count[OSMP_DOMAIN_NUMA] + nb->logical_index];
    const struct osmp_domain *x = lowest_common(a, b);
    uint32_t shallowness = 255u - (uint32_t)(x->depth > 255 ? 255 : x->depth);
    return (uint32_t)rung_of(a, b) << 24 | numa << 8 | shallowness;
}

static uint64_t hash_domain(uint64_t h, const struct osmp_domain *d)
{
    h = osmp__hash(h, (uint64_t)d->kind << 32 | (uint32_t)d->depth);
    h = osmp__hash(h, (uint64_t)(uint32_t)d->logical_index << 32 | (uint32_t)d->os_index);
    h = osmp__hash(h, (uint64_t)(uint32_t)d->first_core << 32 | (uint32_t)d->ncores);
    return osmp__hash(h, d->cache_bytes);
}

uint64_t osmp__topo_cores_digest(osmp_topo_t t, const int *cores, int n, int pairs)
{
    uint64_t h = osmp__hash(OSMP__HASH_INIT, (uint64_t)t->ncores);
    for (int r = 0; r < n; r++)
        if (cores[r] < 0 || cores[r] >= t->ncores) return osmp__hash(h, UINT64_MAX);
    h = osmp__hash(h, (uint64_t)(t->core_lat != NULL) << 1 | (t->numa_dist != NULL));
    for (int r = 0; r < n; r++) {
        const struct osmp_domain *core = &t->by_kind[OSMP_DOMAIN_CORE][cores[r]]->pub;
        /* the kinds' domains (stand-ins included) and every ancestor: groups,
         * virtual splits, rungs and the depth of each pair's lowest common domain */
        for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) h = hash_domain(h, &t->domain_of[k][cores[r]]->pub);
        for (const struct osmp_domain *d = core->parent; d; d = d->parent) h = hash_domain(h, d);
        h = osmp__hash_str(h, core->cpuset ? core->cpuset : "");
    }
    if (!pairs) return h;
    int nn = t->count[OSMP_DOMAIN_NUMA];
    for (int a = 0; a < n; a++) /* the latencies inside distance keys (symmetric: load_distances) */
        for (int b = a + 1; b < n; b++) {
            int ca = cores[a], cb = cores[b];
            if (t->core_lat) {
                h = osmp__hash(h, t->core_lat[ca * t->ncores + cb]);
            } else if (t->numa_dist) {
                const struct osmp_domain *na = &t->domain_of[OSMP_DOMAIN_NUMA][ca]->pub,
                                         *nb = &t->domain_of[OSMP_DOMAIN_NUMA][cb]->pub;
                if (na->kind == OSMP_DOMAIN_NUMA && nb->kind == OSMP_DOMAIN_NUMA)
                    h = osmp__hash(h, t->numa_dist[na->logical_index * nn + nb->logical_index]);
            }
        }
    return h;
}

int osmp__topo_load_knob(const char *value, osmp_topo_t *out)
{
    if (!value || !*value) return osmp_topo_load(OSMP_TOPO_THIS_MACHINE, NULL, 0, out);
    if (strncmp(value, "synthetic:", 10) == 0) return osmp_topo_load(OSMP_TOPO_SYNTHETIC, value + 10, 0, out);
    if (strcmp(value, "measured") != 0) return osmp_topo_load(OSMP_TOPO_XML, value, 0, out);
    char path[4096], why[256];
    if (osmp__measured_cache_path(path, sizeof(path), why, sizeof(why))) {
        osmp__why(last_error, sizeof(last_error), "OSMP_TOPOLOGY=measured: %s", why);
        return OSMP_ERR_TOPO_LOAD;
    }
    if (access(path, R_OK) != 0) {
        osmp__why(last_error, sizeof(last_error),
                  "OSMP_TOPOLOGY=measured: no measured topology in %s (%s); run osmp-probe --save on this machine "
                  "to create it", path, strerror(errno));
        return OSMP_ERR_TOPO_LOAD;
    }
    return osmp_topo_load(OSMP_TOPO_XML, path, 0, out);
}
