/* Hierarchy spec: parsing, formatting, and the default spec of a machine. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "plan_internal.h"

/* Far more parts than a domain has cores on the nodes OSMP targets; keeps the
 * part index within its 16 bits of a group key (plan.c's level_key). */
#define SPLIT_MAX 4096

int osmp_spec_parse(const char *spec, struct osmp_spec_level *levels, int *nlevels, char *err, size_t err_len)
{
    if (!spec || !levels || !nlevels) {
        osmp__why(err, err_len, "no spec");
        return OSMP_ERR_INVALID_ARG;
    }
    /* Levels go to the caller only once the whole spec is good (osmp.h's error contract). */
    struct osmp_spec_level parsed[OSMP_SPEC_MAX_LEVELS];
    int n = 0;
    const char *p = spec;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '\0' || strcmp(p, "flat") == 0) {
        *nlevels = 0;
        return OSMP_OK;
    }
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        const char *name = p;
        while (isalnum((unsigned char)*p)) p++;
        size_t len = (size_t)(p - name);
        if (len == 0) {
            osmp__why(err, err_len, "empty level at offset %d in hierarchy spec \"%s\"", (int)(name - spec), spec);
            return OSMP_ERR_SPEC;
        }
        int kind = osmp_domain_kind_parse(name, len);
        if (kind < 0 || kind == OSMP_DOMAIN_PU) {
            osmp__why(err, err_len,
                      "unknown level \"%.*s\" in hierarchy spec \"%s\" (known: core, l2, l3, numa, package, group, "
                      "machine)",
                      (int)len, name, spec);
            return OSMP_ERR_SPEC;
        }
        long split = 1;
        while (isspace((unsigned char)*p)) p++;
        if (*p == ':') {
            p++;
            char *end;
            if (!isdigit((unsigned char)*p)) {
                osmp__why(err, err_len, "split of \"%.*s\" in hierarchy spec \"%s\" must be a number", (int)len,
                          name, spec);
                return OSMP_ERR_SPEC;
            }
            split = strtol(p, &end, 10);
            if (split < 1 || split > SPLIT_MAX) {
                osmp__why(err, err_len, "split of \"%.*s\" in hierarchy spec \"%s\" must be in 1..%d", (int)len,
                          name, spec, SPLIT_MAX);
                return OSMP_ERR_SPEC;
            }
            p = end;
            while (isspace((unsigned char)*p)) p++;
        }
        if (n == OSMP_SPEC_MAX_LEVELS) {
            osmp__why(err, err_len, "hierarchy spec \"%s\" has more than %d levels", spec, OSMP_SPEC_MAX_LEVELS);
            return OSMP_ERR_SPEC;
        }
        parsed[n].kind = (osmp_domain_kind_t)kind;
        parsed[n].split = (int)split;
        n++;
        if (*p == '\0') break;
        if (*p != ',') {
            osmp__why(err, err_len, "unexpected '%c' at offset %d in hierarchy spec \"%s\"", *p, (int)(p - spec),
                      spec);
            return OSMP_ERR_SPEC;
        }
        p++;
    }
    memcpy(levels, parsed, sizeof(parsed[0]) * (size_t)n);
    *nlevels = n;
    return OSMP_OK;
}

int osmp__spec_level_format(const struct osmp_spec_level *l, char *buf, size_t len)
{
    if (l->split > 1) return snprintf(buf, len, "%s:%d", osmp_domain_kind_name(l->kind), l->split);
    return snprintf(buf, len, "%s", osmp_domain_kind_name(l->kind));
}

int osmp_spec_format(const struct osmp_spec_level *levels, int nlevels, char *buf, size_t len)
{
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < nlevels; i++) {
        char one[32];
        osmp__spec_level_format(&levels[i], one, sizeof(one));
        int w = snprintf(buf + (used < len ? used : len), used < len ? len - used : 0, "%s%s", i ? "," : "", one);
        used += (size_t)w;
    }
    return (int)used;
}

/* Two kinds split the cores the same way iff every core lands in domains with
 * the same core range (domains are contiguous ranges, see osmp.h). */
static int same_partition(osmp_topo_t t, osmp_domain_kind_t a, osmp_domain_kind_t b)
{
    for (int c = 0; c < t->ncores; c++) {
        const struct osmp_domain *x = &t->domain_of[a][c]->pub, *y = &t->domain_of[b][c]->pub;
        if (x->first_core != y->first_core || x->ncores != y->ncores) return 0;
    }
    return 1;
}

/* Number of distinct domains of kind `kind`, and the largest number of distinct
 * `below` units (domains of that kind, or cores if below < 0) inside one of them. */
static void count_units(osmp_topo_t t, int kind, int below, int *ndomains, int *max_units)
{
    *ndomains = 0;
    *max_units = 0;
    int c = 0;
    while (c < t->ncores) {
        /* Domains of a partition that is not nested (stand-ins) are still contiguous ranges. */
        const struct osmp_domain *d = kind < 0 ? &t->root->pub : &t->domain_of[kind][c]->pub;
        int end = d->first_core + d->ncores, units = 0;
        const struct osmp_domain *prev = NULL;
        for (int x = c; x < end; x++) {
            const struct osmp_domain *u = below < 0 ? NULL : &t->domain_of[below][x]->pub;
            if (below < 0 || u != prev) units++;
            prev = u;
        }
        (*ndomains)++;
        if (units > *max_units) *max_units = units;
        c = end;
    }
}

/* Mean number of cores per group of a level over the whole machine. */
static double mean_size(osmp_topo_t t, const struct osmp_spec_level *l)
{
    int nd, mu;
    count_units(t, l->kind == OSMP_DOMAIN_MACHINE ? -1 : (int)l->kind, -1, &nd, &mu);
    return (double)t->ncores / nd / l->split;
}

void osmp__spec_sort(osmp_topo_t t, struct osmp_spec_level *levels, int n)
{
    double size[OSMP_SPEC_MAX_LEVELS];
    for (int i = 0; i < n; i++) size[i] = mean_size(t, &levels[i]);
    for (int i = 1; i < n; i++) /* insertion sort: stable, n <= 16 */
        for (int j = i; j > 0 && size[j - 1] > size[j]; j--) {
            struct osmp_spec_level l = levels[j];
            levels[j] = levels[j - 1];
            levels[j - 1] = l;
            double s = size[j];
            size[j] = size[j - 1];
            size[j - 1] = s;
        }
}

/*
 * The degree of the virtual split of a domain of `units` units that is too
 * wide for one leader (the OSMP paper's "degree": the number of virtual domains
 * a socket is cut into). A leader serves its children one after another, and
 * the root leads both its part and the level of parts: a chunk waits for
 * (d - 1) + (ceil(units / d) - 1) children on the root's path. d minimizes
 * that; among equal d, the most parts wins, since smaller parts of consecutive
 * cores are closer together (mesh tiles, shared L2) and give more leaders to
 * share a reduction. On the paper's 28-core Cascade Lake socket this is 7
 * parts of 4 cores, the degree that won there; 20 cores: 5 parts of 4.
 */
static int split_degree(int units)
{
    int best = 1, cost = units - 1;
    for (int d = 2; d <= units / 2; d++) {
        int c = (d - 1) + ((units + d - 1) / d - 1);
        if (c <= cost) {
            best = d;
            cost = c;
        }
    }
    return best;
}

int osmp_plan_default_spec(osmp_topo_t t, char *buf, size_t len)
{
    if (!t || !buf) return OSMP_ERR_INVALID_ARG;
    /* Candidates from the leaf up; ties in size keep this order. */
    static const osmp_domain_kind_t order[] = {OSMP_DOMAIN_CORE, OSMP_DOMAIN_L2,      OSMP_DOMAIN_L3,
                                               OSMP_DOMAIN_NUMA, OSMP_DOMAIN_PACKAGE, OSMP_DOMAIN_GROUP};
    int chosen[8], nchosen = 0;
    double size[8];
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        osmp_domain_kind_t k = order[i];
        if (t->count[k] == 0) continue;
        /* The core level only matters where cores have several hardware threads. */
        if (k == OSMP_DOMAIN_CORE && t->count[OSMP_DOMAIN_PU] == t->count[OSMP_DOMAIN_CORE]) continue;
        int nd, mu;
        count_units(t, k, -1, &nd, &mu);
        if (nd == 1) continue; /* the whole machine: the implicit top */
        if (k != OSMP_DOMAIN_CORE && nd == t->ncores) continue;
        int dup = 0;
        for (int j = 0; j < nchosen; j++) dup |= same_partition(t, (osmp_domain_kind_t)chosen[j], k);
        if (dup) continue;
        /* insertion by mean domain size keeps small domains at the leaf */
        double s = (double)t->ncores / nd;
        int pos = nchosen;
        while (pos > 0 && size[pos - 1] > s) {
            chosen[pos] = chosen[pos - 1];
            size[pos] = size[pos - 1];
            pos--;
        }
        chosen[pos] = (int)k;
        size[pos] = s;
        nchosen++;
    }
    struct osmp_spec_level levels[OSMP_SPEC_MAX_LEVELS];
    int n = 0;
    for (int i = 0; i <= nchosen; i++) {
        int k = i < nchosen ? chosen[i] : OSMP_DOMAIN_MACHINE;
        int below = i > 0 ? chosen[i - 1] : -1;
        int nd, units;
        count_units(t, k == OSMP_DOMAIN_MACHINE ? -1 : k, below, &nd, &units);
        if (units > OSMP_PLAN_MAX_FANOUT) {
            levels[n].kind = (osmp_domain_kind_t)k;
            levels[n].split = split_degree(units);
            n++;
        }
        if (i < nchosen) {
            levels[n].kind = (osmp_domain_kind_t)k;
            levels[n].split = 1;
            n++;
        }
    }
    char text[256]; /* formatted here first: a failed call leaves buf alone */
    int w = n ? osmp_spec_format(levels, n, text, sizeof(text)) : snprintf(text, sizeof(text), "flat");
    if (w < 0 || (size_t)w >= len || (size_t)w >= sizeof(text)) return OSMP_ERR_RANGE;
    memcpy(buf, text, (size_t)w + 1);
    return OSMP_OK;
}
