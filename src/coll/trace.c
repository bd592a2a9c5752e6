/* The transfer trace: see trace.h. */
#include "coll/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic.h"

struct osmp__trace_pair {
    int src, dst;
    uint64_t bytes;
};

struct osmp__trace {
    FILE *f;
    uint64_t call; /* the call in progress: K of the trace */
    int depth;     /* begin/end nesting (a composition's parts are one call) */
    int runs;      /* osmp__run nesting in the call: 1 while its own algorithm runs */
    osmp_coll_t op;
    char alg[40];
    int root;
    int resumable; /* the call ran its algorithm's resumable form (a request) */
    uint64_t bytes;
    struct osmp__trace_pair *pairs;
    size_t npairs, cap;
    uint64_t reduced;
    uint64_t streamed;
    int rank;
    uint64_t *acc; /* OSMP_TEAM_PARAM_TRAFFIC: the caller's counters, or NULL */
    int size;
};

int osmp__trace_base(const char *prefix, char *base, size_t len)
{
    static osmp_atomic32_t teams;
    base[0] = 0;
    if (!prefix || !*prefix) return OSMP_OK;
    char first[4096];
    if ((size_t)snprintf(first, sizeof(first), "%s.0.jsonl", prefix) >= sizeof(first) || strlen(prefix) + 40 > len) {
        fprintf(stderr, "osmp: OSMP_TRACE prefix too long\n");
        return OSMP_ERR_KNOB;
    }
    int fd = open(first, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
        close(fd);
        snprintf(base, len, "%s", prefix);
        return OSMP_OK;
    }
    if (errno != EEXIST) {
        fprintf(stderr, "osmp: OSMP_TRACE: cannot create %s: %s\n", first, strerror(errno));
        return OSMP_ERR_KNOB;
    }
    snprintf(base, len, "%s.%ld-%u", prefix, (long)getpid(), osmp__fetch_add32(&teams, 1));
    return OSMP_OK;
}

int osmp__trace_open(struct osmp__trace **out, const char *base, int rank, int size, int core)
{
    *out = NULL;
    if (!base || !*base) return OSMP_OK;
    struct osmp__trace *tr = calloc(1, sizeof(*tr));
    char name[4200];
    snprintf(name, sizeof(name), "%s.%d.jsonl", base, rank);
    if (!tr || !(tr->f = fopen(name, "w"))) {
        fprintf(stderr, "osmp: OSMP_TRACE: cannot create %s: %s\n", name, tr ? strerror(errno) : "out of memory");
        free(tr);
        return OSMP_ERR_KNOB;
    }
    tr->rank = rank;
    fprintf(tr->f, "{\"kind\": \"team\", \"rank\": %d, \"size\": %d, \"core\": %d}\n", rank, size, core);
    *out = tr;
    return OSMP_OK;
}

int osmp__trace_sink(struct osmp__trace **tr, uint64_t *acc, int rank, int size)
{
    if (!*tr && !(*tr = calloc(1, sizeof(**tr)))) return OSMP_ERR_NO_MEMORY;
    (*tr)->rank = rank;
    (*tr)->acc = acc;
    (*tr)->size = size;
    return OSMP_OK;
}

void osmp__trace_close(struct osmp__trace *tr)
{
    if (!tr) return;
    if (tr->f) fclose(tr->f);
    free(tr->pairs);
    free(tr);
}

void osmp__trace_begin_(struct osmp__trace *tr, osmp_coll_t c)
{
    if (tr->depth++) return;
    tr->op = c;
    tr->runs = 0;
    tr->alg[0] = 0;
    tr->root = 0;
    tr->resumable = 0;
    tr->bytes = 0;
    tr->npairs = 0;
    tr->reduced = 0;
    tr->streamed = 0;
}

void osmp__trace_end_(struct osmp__trace *tr)
{
    if (--tr->depth) return;
    if (tr->acc) {
        size_t n = (size_t)tr->size;
        for (size_t i = 0; i < tr->npairs; i++) {
            const struct osmp__trace_pair *p = &tr->pairs[i];
            if (p->src < 0 || p->dst < 0 || p->src >= tr->size || p->dst >= tr->size) continue;
            tr->acc[(size_t)p->src * n + (size_t)p->dst] += p->bytes;
            tr->acc[n * n + (size_t)p->src * n + (size_t)p->dst]++;
        }
    }
    if (!tr->f) {
        tr->call++;
        return;
    }
    const char *op = osmp_coll_name(tr->op);
    fprintf(tr->f,
            "{\"call\": %llu, \"op\": \"%s\", \"kind\": \"call\", \"alg\": \"%s\", \"root\": %d, \"bytes\": %llu%s}\n",
            (unsigned long long)tr->call, op, tr->alg[0] ? tr->alg : "none", tr->root, (unsigned long long)tr->bytes,
            tr->resumable ? ", \"resumable\": true" : "");
    for (size_t i = 0; i < tr->npairs; i++)
        fprintf(tr->f, "{\"call\": %llu, \"op\": \"%s\", \"kind\": \"copy\", \"src\": %d, \"dst\": %d, \"n\": %llu}\n",
                (unsigned long long)tr->call, op, tr->pairs[i].src, tr->pairs[i].dst,
                (unsigned long long)tr->pairs[i].bytes);
    if (tr->reduced)
        fprintf(tr->f, "{\"call\": %llu, \"op\": \"%s\", \"kind\": \"reduce\", \"rank\": %d, \"n\": %llu}\n",
                (unsigned long long)tr->call, op, tr->rank, (unsigned long long)tr->reduced);
    if (tr->streamed)
        fprintf(tr->f, "{\"call\": %llu, \"op\": \"%s\", \"kind\": \"stream\", \"rank\": %d, \"n\": %llu}\n",
                (unsigned long long)tr->call, op, tr->rank, (unsigned long long)tr->streamed);
    tr->call++;
}

void osmp__trace_copy_(struct osmp__trace *tr, int src, int dst, size_t bytes)
{
    if (!bytes || !tr->depth) return;
    /* Calls touch few pairs, and mostly the last one again (chunk after chunk). */
    for (size_t i = tr->npairs; i-- > 0;)
        if (tr->pairs[i].src == src && tr->pairs[i].dst == dst) {
            tr->pairs[i].bytes += bytes;
            return;
        }
    if (tr->npairs == tr->cap) {
        size_t cap = tr->cap ? 2 * tr->cap : 16;
        struct osmp__trace_pair *p = realloc(tr->pairs, cap * sizeof(*p));
        if (!p) return; /* a trace short of memory drops the pair; the call itself goes on */
        tr->pairs = p;
        tr->cap = cap;
    }
    tr->pairs[tr->npairs++] = (struct osmp__trace_pair){src, dst, bytes};
}

void osmp__trace_alg_(struct osmp__trace *tr, const char *alg, int radix, int root, size_t bytes)
{
    if (!tr->depth) return;
    tr->runs++;
    if (tr->alg[0]) return;
    snprintf(tr->alg, sizeof(tr->alg), radix > 0 ? "%s:%d" : "%s", alg, radix);
    tr->root = root;
    tr->bytes = bytes;
}

void osmp__trace_resumable_(struct osmp__trace *tr)
{
    tr->resumable = 1;
}

void osmp__trace_run_end_(struct osmp__trace *tr)
{
    if (tr->runs) tr->runs--;
}

void osmp__trace_handover_(struct osmp__trace *tr, const char *alg)
{
    if (tr->depth && tr->runs == 1) snprintf(tr->alg, sizeof(tr->alg), "%s", alg);
}

void osmp__trace_reduce_(struct osmp__trace *tr, size_t bytes)
{
    if (tr->depth) tr->reduced += bytes;
}

void osmp__trace_stream_(struct osmp__trace *tr, size_t bytes)
{
    if (tr->depth) tr->streamed += bytes;
}
