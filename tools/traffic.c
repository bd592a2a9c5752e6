/*
 * osmp-topo --show traffic: read the transfer trace of a run (OSMP_TRACE=PREFIX,
 * src/coll/trace.h) and say, per call, how many bytes crossed each level of the
 * machine and who was busiest. The trace names team ranks; its first line per
 * file gives the rank's core, which the topology (the run's --input/--synthetic)
 * maps to domains.
 */
#include "traffic.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The levels reported, outermost first. */
static const osmp_domain_kind_t kinds[] = {OSMP_DOMAIN_PACKAGE, OSMP_DOMAIN_NUMA, OSMP_DOMAIN_L3};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

struct call {
    int seen;
    char op[32], alg[40];
    int root;
    uint64_t bytes;
    uint64_t moved;         /* copied between two different participants */
    uint64_t cross[NKINDS]; /* of which between different domains of kinds[k] */
    uint64_t *in, *out, *reduced; /* per rank: received from others, read by others, inputs combined */
    int *nsrc;              /* per rank: distinct other participants it received from */
};

struct trace {
    int n;
    int *cores;
    struct call *calls;
    size_t ncalls;
};

/* The value of "key" in one of the trace's own lines (flat JSON objects). */
static int get_u64(const char *line, const char *key, uint64_t *v)
{
    char pat[40];
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    char *end;
    errno = 0;
    *v = strtoull(p + strlen(pat), &end, 10);
    return errno || end == p + strlen(pat) ? -1 : 0;
}

static int get_str(const char *line, const char *key, char *buf, size_t len)
{
    char pat[40];
    snprintf(pat, sizeof(pat), "\"%s\": \"", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (!q || (size_t)(q - p) >= len) return -1;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = 0;
    return 0;
}

static struct call *call_at(struct trace *t, uint64_t k)
{
    if (k >= t->ncalls) {
        size_t n = t->ncalls ? t->ncalls : 64;
        while (n <= k) n *= 2;
        struct call *c = realloc(t->calls, n * sizeof(*c));
        if (!c) return NULL;
        memset(c + t->ncalls, 0, (n - t->ncalls) * sizeof(*c));
        t->calls = c;
        t->ncalls = n;
    }
    struct call *c = &t->calls[k];
    if (!c->in) {
        c->in = calloc((size_t)t->n, sizeof(*c->in));
        c->out = calloc((size_t)t->n, sizeof(*c->out));
        c->reduced = calloc((size_t)t->n, sizeof(*c->reduced));
        c->nsrc = calloc((size_t)t->n, sizeof(*c->nsrc));
        if (!c->in || !c->out || !c->reduced || !c->nsrc) return NULL;
    }
    return c;
}

static FILE *open_rank(const char *prefix, int r, char *name, size_t len, char *err, size_t errlen)
{
    snprintf(name, len, "%s.%d.jsonl", prefix, r);
    FILE *f = fopen(name, "r");
    if (!f) snprintf(err, errlen, "cannot read %s: %s", name, strerror(errno));
    return f;
}

/* One participant's file: its copies, reductions and calls. */
static int read_rank(struct trace *t, osmp_topo_t topo, const char *prefix, int r, char *err, size_t errlen)
{
    char name[4200], line[512];
    FILE *f = open_rank(prefix, r, name, sizeof(name), err, errlen);
    if (!f) return -1;
    uint64_t lineno = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof(line), f)) {
        lineno++;
        char kind[16];
        uint64_t k, v, s, d;
        if (get_str(line, "kind", kind, sizeof(kind))) goto bad;
        if (strcmp(kind, "team") == 0 || strcmp(kind, "settings") == 0) continue;
        if (get_u64(line, "call", &k)) goto bad;
        struct call *c = call_at(t, k);
        if (!c) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        if (strcmp(kind, "call") == 0) {
            if (!c->seen || r == 0) {
                if (get_str(line, "op", c->op, sizeof(c->op)) || get_str(line, "alg", c->alg, sizeof(c->alg)) ||
                    get_u64(line, "root", &v))
                    goto bad;
                c->root = (int)v;
                if (get_u64(line, "bytes", &c->bytes)) goto bad;
            }
            c->seen = 1;
        } else if (strcmp(kind, "copy") == 0) {
            if (get_u64(line, "src", &s) || get_u64(line, "dst", &d) || get_u64(line, "n", &v) ||
                s >= (uint64_t)t->n || d >= (uint64_t)t->n)
                goto bad;
            if (s == d) continue;
            c->moved += v;
            c->in[d] += v;
            c->out[s] += v;
            c->nsrc[d]++; /* a pair is one line per call, in the file of the participant that copied */
            for (size_t i = 0; i < NKINDS; i++) {
                const struct osmp_domain *a = osmp_topo_domain_of(topo, t->cores[s], kinds[i]);
                const struct osmp_domain *b = osmp_topo_domain_of(topo, t->cores[d], kinds[i]);
                if (a && b && a != b) c->cross[i] += v;
            }
        } else if (strcmp(kind, "reduce") == 0) {
            if (get_u64(line, "n", &v)) goto bad;
            c->reduced[r] += v;
        }
        continue;
    bad:
        snprintf(err, errlen, "%s:%" PRIu64 ": not a line of an OSMP trace", name, lineno);
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* Rank 0's first line gives the team size; every file's gives its core. */
static int read_cores(struct trace *t, osmp_topo_t topo, const char *prefix, char *err, size_t errlen)
{
    for (int r = 0; r == 0 || r < t->n; r++) {
        char name[4200], line[512];
        FILE *f = open_rank(prefix, r, name, sizeof(name), err, errlen);
        if (!f) return -1;
        uint64_t rank, size, core;
        int ok = fgets(line, sizeof(line), f) && !get_u64(line, "rank", &rank) && !get_u64(line, "size", &size) &&
                 !get_u64(line, "core", &core) && rank == (uint64_t)r && size >= 1 && size <= 1 << 20;
        fclose(f);
        if (!ok) {
            snprintf(err, errlen, "%s: does not start with the team line of an OSMP trace", name);
            return -1;
        }
        if (r == 0) {
            t->n = (int)size;
            if (!(t->cores = calloc(size, sizeof(int)))) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        } else if (size != (uint64_t)t->n) {
            snprintf(err, errlen, "%s: team of %" PRIu64 ", rank 0's is of %d", name, size, t->n);
            return -1;
        }
        if (core >= (uint64_t)osmp_topo_ncores(topo)) {
            snprintf(err, errlen, "%s: core %" PRIu64 " is not in this topology (give the run's --input)", name, core);
            return -1;
        }
        t->cores[r] = (int)core;
    }
    return 0;
}

static int max_at(const uint64_t *v, int n)
{
    int m = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[m]) m = i;
    return m;
}

int osmp_traffic_show(osmp_topo_t topo, const char *prefix, const char *op, long long bytes, int json, FILE *out,
                      char *err, size_t errlen)
{
    struct trace t = {0};
    int rc = read_cores(&t, topo, prefix, err, errlen);
    for (int r = 0; !rc && r < t.n; r++) rc = read_rank(&t, topo, prefix, r, err, errlen);
    if (json && !rc) fprintf(out, "{\"participants\": %d, \"calls\": [", t.n);
    int first = 1;
    for (size_t k = 0; !rc && k < t.ncalls; k++) {
        struct call *c = &t.calls[k];
        if (!c->seen || (op && strcmp(op, c->op) != 0) || (bytes >= 0 && c->bytes != (uint64_t)bytes)) continue;
        int busy = max_at(c->in, t.n), feed = max_at(c->out, t.n), red = max_at(c->reduced, t.n), src = 0;
        for (int i = 1; i < t.n; i++)
            if (c->nsrc[i] > c->nsrc[src]) src = i;
        if (json) {
            fprintf(out, "%s\n  {\"call\": %zu, \"op\": \"%s\", \"alg\": \"%s\", \"root\": %d, \"bytes\": %" PRIu64
                         ", \"moved\": %" PRIu64 ", \"cross\": {",
                    first ? "" : ",", k, c->op, c->alg, c->root, c->bytes, c->moved);
            for (size_t i = 0; i < NKINDS; i++)
                fprintf(out, "%s\"%s\": %" PRIu64, i ? ", " : "", osmp_domain_kind_name(kinds[i]), c->cross[i]);
            fprintf(out, "}, \"busiest\": {\"rank\": %d, \"bytes\": %" PRIu64 "}, \"busiest_source\": {\"rank\": %d, "
                         "\"bytes\": %" PRIu64 "}, \"most_reduced\": {\"rank\": %d, \"bytes\": %" PRIu64 "}, "
                         "\"most_sources\": {\"rank\": %d, \"count\": %d}, \"received\": [",
                    busy, c->in[busy], feed, c->out[feed], red, c->reduced[red], src, c->nsrc[src]);
            for (int i = 0; i < t.n; i++) fprintf(out, "%s%" PRIu64, i ? ", " : "", c->in[i]);
            fprintf(out, "], \"sources\": [");
            for (int i = 0; i < t.n; i++) fprintf(out, "%s%d", i ? ", " : "", c->nsrc[i]);
            fprintf(out, "]}");
        } else {
            fprintf(out, "call %zu: %s (%s, root %d, %" PRIu64 " B per rank): %" PRIu64 " B between participants", k,
                    c->op, c->alg, c->root, c->bytes, c->moved);
            for (size_t i = 0; i < NKINDS; i++)
                fprintf(out, "%s %s %" PRIu64, i ? "," : "; across", osmp_domain_kind_name(kinds[i]), c->cross[i]);
            fprintf(out, "\n  busiest: rank %d received %" PRIu64 " B, others read %" PRIu64 " B from rank %d; rank %d "
                         "heard from %d others",
                    busy, c->in[busy], c->out[feed], feed, src, c->nsrc[src]);
            if (c->reduced[red]) fprintf(out, "; rank %d combined %" PRIu64 " B of inputs", red, c->reduced[red]);
            fputc('\n', out);
        }
        first = 0;
    }
    if (json && !rc) fprintf(out, "\n]}\n");
    for (size_t k = 0; k < t.ncalls; k++) {
        free(t.calls[k].in);
        free(t.calls[k].out);
        free(t.calls[k].reduced);
        free(t.calls[k].nsrc);
    }
    free(t.calls);
    free(t.cores);
    return rc;
}
