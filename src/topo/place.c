/* Placement of participants on cores: policies and the core-list syntax. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "topo_internal.h"

/* Round-robin over the children at every level: the i-th core taken from each
 * child in turn, so consecutive entries sit in different subtrees as high up
 * the tree as possible. Writes d's cores into out, returns how many. */
static int scatter_order(const struct osmp_domain *d, int *out)
{
    if (d->kind == OSMP_DOMAIN_CORE) {
        out[0] = d->logical_index;
        return 1;
    }
    int *tmp = malloc(sizeof(int) * (size_t)d->ncores);
    int *start = malloc(sizeof(int) * (size_t)(d->nchildren + 1));
    if (!tmp || !start) {
        free(tmp);
        free(start);
        return -1;
    }
    start[0] = 0;
    for (int i = 0; i < d->nchildren; i++) {
        int got = scatter_order(d->children[i], tmp + start[i]);
        if (got < 0) {
            free(tmp);
            free(start);
            return -1;
        }
        start[i + 1] = start[i] + got;
    }
    int k = 0;
    for (int round = 0; k < d->ncores; round++)
        for (int i = 0; i < d->nchildren; i++)
            if (start[i] + round < start[i + 1]) out[k++] = tmp[start[i] + round];
    free(tmp);
    free(start);
    return k;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int osmp_topo_place(osmp_topo_t t, const char *policy, int n, int *cores, char *err, size_t err_len)
{
    if (!t || !cores || n < 0) {
        osmp__why(err, err_len, "invalid arguments");
        return OSMP_ERR_INVALID_ARG;
    }
    if (!policy) policy = "linear";
    int nc = t->ncores;
    int *order = malloc(sizeof(int) * (size_t)nc);
    if (!order) return OSMP_ERR_NO_MEMORY;
    int rc = OSMP_OK;
    if (strcmp(policy, "linear") == 0) {
        for (int c = 0; c < nc; c++) order[c] = c;
    } else if (strcmp(policy, "scatter") == 0) {
        if (scatter_order(&t->root->pub, order) != nc) rc = OSMP_ERR_NO_MEMORY;
    } else if (strcmp(policy, "numa") == 0) {
        /* NUMA domains (or their stand-ins) are contiguous core ranges in order. */
        int nd = 0, *next = malloc(sizeof(int) * (size_t)nc), *end = malloc(sizeof(int) * (size_t)nc);
        if (!next || !end) {
            rc = OSMP_ERR_NO_MEMORY;
        } else {
            for (int c = 0; c < nc;) {
                const struct osmp_domain *d = &t->domain_of[OSMP_DOMAIN_NUMA][c]->pub;
                next[nd] = c;
                end[nd] = d->first_core + d->ncores;
                c = end[nd++];
            }
            for (int k = 0; k < nc;)
                for (int i = 0; i < nd; i++)
                    if (next[i] < end[i]) order[k++] = next[i]++;
        }
        free(next);
        free(end);
    } else if (strncmp(policy, "random:", 7) == 0) {
        char *endp;
        errno = 0;
        unsigned long long seed = strtoull(policy + 7, &endp, 10);
        if (!isdigit((unsigned char)policy[7]) || *endp || errno) {
            osmp__why(err, err_len, "bad seed in \"%s\" (expected random:NUMBER)", policy);
            rc = OSMP_ERR_INVALID_ARG;
        } else {
            uint64_t s = seed;
            for (int c = 0; c < nc; c++) order[c] = c;
            for (int c = nc - 1; c > 0; c--) {
                int j = (int)(splitmix64(&s) % (uint64_t)(c + 1));
                int x = order[c];
                order[c] = order[j];
                order[j] = x;
            }
        }
    } else {
        osmp__why(err, err_len, "unknown placement \"%s\" (known: linear, scatter, numa, random:SEED)", policy);
        rc = OSMP_ERR_INVALID_ARG;
    }
    if (rc == OSMP_OK)
        for (int r = 0; r < n; r++) cores[r] = order[r % nc];
    free(order);
    return rc;
}

/* A non-negative decimal below INT_MAX at *p; advances p. -1 if none. */
static long parse_index(const char **p)
{
    if (!isdigit((unsigned char)**p)) return -1;
    long v = 0;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v > INT_MAX) v = INT_MAX; /* saturate: reported as out of range */
        (*p)++;
    }
    return v;
}

/* One pass over a core list: validates it and counts its entries into *n, and stores them in out
 * unless out is NULL. */
static int scan_core_list(const char *list, int ncores, int *out, int cap, int *n, char *err, size_t err_len)
{
    int k = 0;
    const char *p = list;
    for (;;) {
        const char *item = p;
        long lo = parse_index(&p), hi = lo;
        if (lo >= 0 && *p == '-') {
            p++;
            hi = parse_index(&p);
        }
        if (lo < 0 || hi < 0 || (*p != ',' && *p != '\0')) {
            osmp__why(err, err_len, "malformed core list \"%s\" at offset %d (expected e.g. 0-5,12,18-20)", list,
                      (int)(item - list));
            return OSMP_ERR_INVALID_ARG;
        }
        if (hi < lo) {
            osmp__why(err, err_len, "descending range %ld-%ld in core list \"%s\"", lo, hi, list);
            return OSMP_ERR_INVALID_ARG;
        }
        if (hi >= ncores) {
            osmp__why(err, err_len, "core %ld in core list is out of range: the machine has cores 0-%d", hi,
                      ncores - 1);
            return OSMP_ERR_RANGE;
        }
        for (long c = lo; c <= hi; c++) {
            if (k >= cap) {
                osmp__why(err, err_len, "core list \"%s\" has more than %d entries", list, cap);
                return OSMP_ERR_RANGE;
            }
            if (out) out[k] = (int)c;
            k++;
        }
        if (*p == '\0') break;
        p++;
    }
    *n = k;
    return OSMP_OK;
}

int osmp_core_list_parse(const char *list, int ncores, int *cores, int cap, int *n, char *err, size_t err_len)
{
    if (!list || !n || (cap > 0 && !cores)) {
        osmp__why(err, err_len, "invalid arguments");
        return OSMP_ERR_INVALID_ARG;
    }
    /* Validate first: the cores are written only when the whole list is good (osmp.h's error contract). */
    int k, rc = scan_core_list(list, ncores, NULL, cap, &k, err, err_len);
    if (rc == OSMP_OK) rc = scan_core_list(list, ncores, cores, cap, n, err, err_len);
    return rc;
}
