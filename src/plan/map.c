/* Rank -> core mapping: see map.h. */
#include "plan/map.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static const char *const alg_names[] = {
#define OSMP__MAP_ALG_NAME(N, s) s,
    OSMP__MAP_ALG_LIST(OSMP__MAP_ALG_NAME)
#undef OSMP__MAP_ALG_NAME
};

const char *osmp__map_alg_name(int alg)
{
    return alg >= 0 && alg < OSMP__MAP_NALGS ? alg_names[alg] : NULL;
}

int osmp__map_alg_parse(const char *name)
{
    for (int a = 0; a < OSMP__MAP_NALGS; a++)
        if (name && !strcmp(name, alg_names[a])) return a;
    return -1;
}

/* ---------------------------------------------------------------- problem */

void osmp__map_fini(struct osmp__map *m)
{
    free(m->cores);
    free(m->w);
    free(m->d);
    free(m->numa);
    free(m->nbr_start);
    free(m->nbrs);
    memset(m, 0, sizeof(*m));
}

int osmp__map_init(struct osmp__map *m, osmp_topo_t topo, const int *cores, int nslots, const double *matrix, int n)
{
    memset(m, 0, sizeof(*m));
    if (!topo || !cores || !matrix || n < 1 || n > nslots) return OSMP_ERR_INVALID_ARG;
    int nc = osmp_topo_ncores(topo);
    for (int s = 0; s < nslots; s++)
        if (cores[s] < 0 || cores[s] >= nc) return OSMP_ERR_INVALID_ARG;
    m->topo = topo;
    m->n = n;
    m->nslots = nslots;
    size_t nn = (size_t)n * (size_t)n, ss = (size_t)nslots * (size_t)nslots;
    m->cores = malloc(sizeof(int) * (size_t)nslots);
    m->w = calloc(nn, sizeof(double));
    m->d = malloc(ss);
    m->numa = malloc(sizeof(int) * (size_t)nslots);
    m->nbr_start = calloc((size_t)n + 1, sizeof(int));
    if (!m->cores || !m->w || !m->d || !m->numa || !m->nbr_start) goto nomem;
    memcpy(m->cores, cores, sizeof(int) * (size_t)nslots);
    for (int a = 0; a < nslots; a++) {
        m->numa[a] = osmp_topo_domain_of(topo, cores[a], OSMP_DOMAIN_NUMA)->logical_index;
        for (int b = 0; b < nslots; b++) m->d[(size_t)a * nslots + b] = (uint8_t)osmp_topo_distance(topo, cores[a], cores[b]);
    }
    size_t nnz = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) {
                m->w[(size_t)i * n + j] = matrix[(size_t)i * n + j] + matrix[(size_t)j * n + i];
                if (m->w[(size_t)i * n + j] != 0) nnz++;
            }
    m->nbrs = malloc(sizeof(*m->nbrs) * (nnz ? nnz : 1));
    if (!m->nbrs) goto nomem;
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        m->nbr_start[i] = (int)k;
        for (int j = 0; j < n; j++)
            if (m->w[(size_t)i * n + j] != 0) m->nbrs[k++] = (struct osmp__map_nbr){j, m->w[(size_t)i * n + j]};
    }
    m->nbr_start[n] = (int)k;
    return OSMP_OK;
nomem:
    osmp__map_fini(m);
    return OSMP_ERR_NO_MEMORY;
}

static inline unsigned dist(const struct osmp__map *m, int a, int b)
{
    return m->d[(size_t)a * m->nslots + b];
}

double osmp__map_cost(const struct osmp__map *m, const int *slot_of)
{
    double c = 0;
    for (int i = 0; i < m->n; i++)
        for (int k = m->nbr_start[i]; k < m->nbr_start[i + 1]; k++)
            if (m->nbrs[k].rank > i) c += m->nbrs[k].w * dist(m, slot_of[i], slot_of[m->nbrs[k].rank]);
    return c;
}

/* ---------------------------------------------------------------- baselines */

static void packed(const struct osmp__map *m, int *slot_of)
{
    for (int i = 0; i < m->n; i++) slot_of[i] = i;
}

/* Deal ranks over the NUMA domains in order of first appearance, taking the
 * next unused slot of each in turn. */
static int round_robin(const struct osmp__map *m, int *slot_of)
{
    int *order = malloc(sizeof(int) * (size_t)m->nslots), *next = calloc((size_t)m->nslots, sizeof(int));
    int *doms = malloc(sizeof(int) * (size_t)m->nslots);
    if (!order || !next || !doms) {
        free(order), free(next), free(doms);
        return OSMP_ERR_NO_MEMORY;
    }
    int nd = 0;
    for (int s = 0; s < m->nslots; s++) {
        int k = 0;
        while (k < nd && doms[k] != m->numa[s]) k++;
        if (k == nd) doms[nd++] = m->numa[s];
    }
    /* next[k]: index in the slot list from which domain k's next slot is searched */
    int r = 0;
    for (int round = 0; r < m->n; round++)
        for (int k = 0; k < nd && r < m->n; k++) {
            int s = next[k];
            while (s < m->nslots && m->numa[s] != doms[k]) s++;
            if (s == m->nslots) continue;
            slot_of[r++] = s;
            next[k] = s + 1;
        }
    free(order), free(next), free(doms);
    return OSMP_OK;
}

/* ---------------------------------------------------------------- greedy designs */

struct pair {
    int a, b;
    double w;
};

static int pair_cmp(const void *x, const void *y)
{
    const struct pair *p = x, *q = y;
    if (p->w != q->w) return p->w > q->w ? -1 : 1;
    if (p->a != q->a) return p->a - q->a;
    return p->b - q->b;
}

/* The pairs of ranks with traffic, heaviest first (ties by rank). */
static struct pair *sorted_pairs(const struct osmp__map *m, size_t *np)
{
    size_t k = 0;
    struct pair *p = malloc(sizeof(*p) * ((size_t)m->nbr_start[m->n] / 2 + 1));
    if (!p) return NULL;
    for (int i = 0; i < m->n; i++)
        for (int e = m->nbr_start[i]; e < m->nbr_start[i + 1]; e++)
            if (m->nbrs[e].rank > i) p[k++] = (struct pair){i, m->nbrs[e].rank, m->nbrs[e].w};
    qsort(p, k, sizeof(*p), pair_cmp);
    *np = k;
    return p;
}

/* The free slot closest to slot s (lowest index on ties); -1 if none. */
static int closest_free(const struct osmp__map *m, const char *used, int s)
{
    int best = -1;
    for (int t = 0; t < m->nslots; t++)
        if (!used[t] && (best < 0 || dist(m, s, t) < dist(m, s, best))) best = t;
    return best;
}

/* The closest pair of free slots, both in NUMA domain `numa` unless it is -1;
 * 0 if there is none. */
static int closest_free_pair(const struct osmp__map *m, const char *used, int numa, int *x, int *y)
{
    int found = 0;
    unsigned bd = 0;
    for (int a = 0; a < m->nslots; a++) {
        if (used[a] || (numa >= 0 && m->numa[a] != numa)) continue;
        for (int b = a + 1; b < m->nslots; b++) {
            if (used[b] || (numa >= 0 && m->numa[b] != numa)) continue;
            if (!found || dist(m, a, b) < bd) {
                found = 1, bd = dist(m, a, b), *x = a, *y = b;
                if (bd == 0) return 1;
            }
        }
    }
    return found;
}

static int greedy(const struct osmp__map *m, int numa_aware, int *slot_of)
{
    size_t np;
    struct pair *p = sorted_pairs(m, &np);
    char *used = calloc((size_t)m->nslots, 1);
    int *doms = malloc(sizeof(int) * (size_t)m->nslots);
    if (!p || !used || !doms) {
        free(p), free(used), free(doms);
        return OSMP_ERR_NO_MEMORY;
    }
    int nd = 0, turn = 0;
    for (int s = 0; s < m->nslots; s++) {
        int k = 0;
        while (k < nd && doms[k] != m->numa[s]) k++;
        if (k == nd) doms[nd++] = m->numa[s];
    }
    for (int i = 0; i < m->n; i++) slot_of[i] = -1;
    for (size_t k = 0; k < np; k++) {
        int a = p[k].a, b = p[k].b;
        if (slot_of[a] >= 0 && slot_of[b] >= 0) continue;
        if (slot_of[a] >= 0 || slot_of[b] >= 0) {
            int placed = slot_of[a] >= 0 ? a : b, other = placed == a ? b : a;
            slot_of[other] = closest_free(m, used, slot_of[placed]);
            used[slot_of[other]] = 1;
            continue;
        }
        int x = -1, y = -1, got = 0;
        if (numa_aware) /* the next domain in turn with two free slots */
            for (int tries = 0; tries < nd && !got; tries++) {
                got = closest_free_pair(m, used, doms[turn], &x, &y);
                turn = (turn + 1) % nd;
            }
        if (!got && !closest_free_pair(m, used, -1, &x, &y)) break; /* n <= nslots: cannot happen with 2 unplaced */
        slot_of[a] = x, slot_of[b] = y;
        used[x] = used[y] = 1;
    }
    int t = 0;
    for (int i = 0; i < m->n; i++) {
        if (slot_of[i] >= 0) continue;
        while (used[t]) t++;
        slot_of[i] = t;
        used[t] = 1;
    }
    free(p), free(used), free(doms);
    return OSMP_OK;
}

/* ---------------------------------------------------------------- bisection */

struct bis {
    const struct osmp__map *m;
    int *slot_of;
    int *part;    /* [n] scratch: part of each rank being split */
    int *mark;    /* [n] stamp of the split a rank takes part in */
    int stamp;
    double *conn; /* [n * maxparts] scratch: weight from a rank to each part */
};

static double w_of(const struct osmp__map *m, int i, int j)
{
    return m->w[(size_t)i * m->n + j];
}

/* Split ranks[0..nr) into nparts parts of the given sizes (sum = nr),
 * minimizing the weight cut between parts: grow each part but the last from a
 * seed (the unassigned rank least tied to the other unassigned ones), adding
 * the rank with the largest gain (weight into the part minus weight to the
 * rest), then Kernighan-Lin: the best swap of two ranks of different parts
 * while it lowers the cut. part[rank] gets 0..nparts-1. */
static void split(struct bis *b, const int *ranks, int nr, const int *sizes, int nparts)
{
    const struct osmp__map *m = b->m;
    int *part = b->part, *mark = b->mark, stamp = ++b->stamp;
    for (int i = 0; i < nr; i++) part[ranks[i]] = -1, mark[ranks[i]] = stamp;
    for (int p = 0; p + 1 < nparts; p++) {
        for (int have = 0; have < sizes[p]; have++) {
            int best = -1;
            double bg = 0;
            for (int i = 0; i < nr; i++) {
                int r = ranks[i];
                if (part[r] != -1) continue;
                double in = 0, out = 0;
                for (int e = m->nbr_start[r]; e < m->nbr_start[r + 1]; e++) {
                    if (mark[m->nbrs[e].rank] != stamp) continue; /* placed by an earlier split */
                    int q = part[m->nbrs[e].rank];
                    if (q == p) in += m->nbrs[e].w;
                    else if (q == -1) out += m->nbrs[e].w;
                }
                /* a seed (empty part): the least tied rank; later: the largest gain */
                double g = have == 0 ? -out : in - out;
                if (best < 0 || g > bg) best = r, bg = g;
            }
            part[best] = p;
        }
    }
    for (int i = 0; i < nr; i++)
        if (part[ranks[i]] == -1) part[ranks[i]] = nparts - 1;
    if (nparts < 2) return;
    /* conn[r][p]: weight from rank r to the ranks of part p */
    double *conn = b->conn;
    for (int i = 0; i < nr; i++) {
        int r = ranks[i];
        for (int p = 0; p < nparts; p++) conn[(size_t)r * nparts + p] = 0;
        for (int e = m->nbr_start[r]; e < m->nbr_start[r + 1]; e++) {
            int q = m->nbrs[e].rank;
            if (mark[q] == stamp) conn[(size_t)r * nparts + part[q]] += m->nbrs[e].w;
        }
    }
    for (int iter = 0; iter < 4 * nr; iter++) {
        double bg = 1e-9;
        int bx = -1, by = -1;
        for (int i = 0; i < nr; i++) {
            int x = ranks[i], px = part[x];
            for (int j = i + 1; j < nr; j++) {
                int y = ranks[j], py = part[y];
                if (px == py) continue;
                double g = conn[(size_t)x * nparts + py] - conn[(size_t)x * nparts + px] +
                           conn[(size_t)y * nparts + px] - conn[(size_t)y * nparts + py] - 2 * w_of(m, x, y);
                if (g > bg) bg = g, bx = x, by = y;
            }
        }
        if (bx < 0) break;
        int px = part[bx], py = part[by];
        for (int i = 0; i < nr; i++) {
            int r = ranks[i];
            double wx = w_of(m, r, bx), wy = w_of(m, r, by);
            conn[(size_t)r * nparts + px] += wy - wx;
            conn[(size_t)r * nparts + py] += wx - wy;
        }
        part[bx] = py, part[by] = px;
    }
}

/* Place ranks[0..nr) on the slots[0..ns) (nr <= ns) under domain d. */
static int place(struct bis *b, const struct osmp_domain *d, int *ranks, int nr, int *slots, int ns)
{
    if (nr == 0) return OSMP_OK;
    const struct osmp__map *m = b->m;
    int nk = d->kind == OSMP_DOMAIN_CORE ? 0 : d->nchildren;
    /* the children that hold slots, and their slots (slots are kept grouped by child) */
    int *cnt = calloc((size_t)nk + 1, sizeof(int)), *sizes = calloc((size_t)nk + 1, sizeof(int));
    int *tmp = malloc(sizeof(int) * (size_t)ns), *rtmp = malloc(sizeof(int) * (size_t)nr);
    int rc = OSMP_ERR_NO_MEMORY;
    if (!cnt || !sizes || !tmp || !rtmp) goto out;
    int used = 0, only = -1;
    for (int c = 0; c < nk; c++) {
        const struct osmp_domain *k = d->children[c];
        for (int s = 0; s < ns; s++)
            if (m->cores[slots[s]] >= k->first_core && m->cores[slots[s]] < k->first_core + k->ncores) {
                tmp[used++] = slots[s];
                cnt[c]++;
            }
        if (cnt[c]) only = only == -1 ? c : -2;
    }
    if (nk == 0 || used != ns) { /* a core (slots repeat it): any order */
        for (int i = 0; i < nr; i++) b->slot_of[ranks[i]] = slots[i];
        rc = OSMP_OK;
        goto out;
    }
    memcpy(slots, tmp, sizeof(int) * (size_t)ns);
    if (only >= 0) {
        rc = place(b, d->children[only], ranks, nr, slots, ns);
        goto out;
    }
    /* fill the children in order; only those that get ranks take part */
    int left = nr, np = 0;
    int *which = malloc(sizeof(int) * (size_t)nk);
    if (!which) goto out;
    for (int c = 0; c < nk && left; c++) {
        if (!cnt[c]) continue;
        int s = cnt[c] < left ? cnt[c] : left;
        sizes[np] = s;
        which[np++] = c;
        left -= s;
    }
    split(b, ranks, nr, sizes, np);
    int k = 0;
    for (int p = 0; p < np; p++)
        for (int i = 0; i < nr; i++)
            if (b->part[ranks[i]] == p) rtmp[k++] = ranks[i];
    memcpy(ranks, rtmp, sizeof(int) * (size_t)nr);
    int r0 = 0;
    rc = OSMP_OK;
    for (int p = 0; p < np && rc == OSMP_OK; p++) {
        int c = which[p], s0 = 0;
        for (int q = 0; q < c; q++) s0 += cnt[q];
        rc = place(b, d->children[c], ranks + r0, sizes[p], slots + s0, cnt[c]);
        r0 += sizes[p];
    }
    free(which);
out:
    free(cnt), free(sizes), free(tmp), free(rtmp);
    return rc;
}

static int bisect(const struct osmp__map *m, int *slot_of)
{
    int maxk = 1;
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
        for (int i = 0; i < osmp_topo_count(m->topo, k); i++) {
            int c = osmp_topo_domain(m->topo, k, i)->nchildren;
            if (c > maxk) maxk = c;
        }
    struct bis b = {m, slot_of, malloc(sizeof(int) * (size_t)m->n), calloc((size_t)m->n, sizeof(int)), 0,
                    malloc(sizeof(double) * (size_t)m->n * (size_t)maxk)};
    int *ranks = malloc(sizeof(int) * (size_t)m->n), *slots = malloc(sizeof(int) * (size_t)m->nslots);
    int rc = OSMP_ERR_NO_MEMORY;
    if (b.part && b.mark && b.conn && ranks && slots) {
        for (int i = 0; i < m->n; i++) ranks[i] = i;
        for (int s = 0; s < m->nslots; s++) slots[s] = s;
        rc = place(&b, osmp_topo_root(m->topo), ranks, m->n, slots, m->nslots);
    }
    free(b.part), free(b.mark), free(b.conn), free(ranks), free(slots);
    if (rc == OSMP_OK) rc = osmp__map_refine(m, slot_of) < 0 ? OSMP_ERR_NO_MEMORY : OSMP_OK;
    return rc;
}

/* ---------------------------------------------------------------- refinement */

/* Cost change if rank r moved from its slot to slot t, rank `other` (or -1)
 * moving from t to r's slot: only the pairs involving r or `other` change,
 * and the pair (r, other) keeps its distance. */
static double move_delta(const struct osmp__map *m, const int *slot_of, int r, int t, int other)
{
    int s = slot_of[r];
    double delta = 0;
    for (int e = m->nbr_start[r]; e < m->nbr_start[r + 1]; e++) {
        int k = m->nbrs[e].rank;
        if (k == other) continue;
        delta += m->nbrs[e].w * ((double)dist(m, t, slot_of[k]) - (double)dist(m, s, slot_of[k]));
    }
    if (other >= 0)
        for (int e = m->nbr_start[other]; e < m->nbr_start[other + 1]; e++) {
            int k = m->nbrs[e].rank;
            if (k == r) continue;
            delta += m->nbrs[e].w * ((double)dist(m, s, slot_of[k]) - (double)dist(m, t, slot_of[k]));
        }
    return delta;
}

int osmp__map_refine(const struct osmp__map *m, int *slot_of)
{
    int *rank_at = malloc(sizeof(int) * (size_t)m->nslots);
    if (!rank_at) return OSMP_ERR_NO_MEMORY;
    for (int s = 0; s < m->nslots; s++) rank_at[s] = -1;
    for (int i = 0; i < m->n; i++) rank_at[slot_of[i]] = i;
    int swaps = 0;
    /* Each pass tries every (rank, slot) and takes every swap that lowers the
     * cost by more than rounding; a pass without one ends it. The cost only
     * goes down, so this ends; the pass limit bounds the time on big inputs. */
    for (int pass = 0, improved = 1; improved && pass < 100; pass++) {
        improved = 0;
        for (int r = 0; r < m->n; r++) {
            if (m->nbr_start[r] == m->nbr_start[r + 1]) continue; /* no traffic: nothing to gain */
            for (int t = 0; t < m->nslots; t++) {
                if (t == slot_of[r]) continue;
                int other = rank_at[t];
                double dl = move_delta(m, slot_of, r, t, other);
                if (dl < -1e-9 * (1 + fabs(dl))) {
                    int s = slot_of[r];
                    slot_of[r] = t, rank_at[t] = r, rank_at[s] = other;
                    if (other >= 0) slot_of[other] = s;
                    swaps++, improved = 1;
                }
            }
        }
    }
    free(rank_at);
    return swaps;
}

/* ---------------------------------------------------------------- entry */

int osmp__map_run(const struct osmp__map *m, int alg, int *slot_of)
{
    switch (alg) {
    case OSMP__MAP_PACKED: packed(m, slot_of); return OSMP_OK;
    case OSMP__MAP_ROUND_ROBIN: return round_robin(m, slot_of);
    case OSMP__MAP_DESIGN1: return greedy(m, 0, slot_of);
    case OSMP__MAP_DESIGN2: return greedy(m, 1, slot_of);
    case OSMP__MAP_BISECT: return bisect(m, slot_of);
    case OSMP__MAP_AUTO: break;
    default: return OSMP_ERR_INVALID_ARG;
    }
    int *cand = malloc(sizeof(int) * (size_t)m->n);
    if (!cand) return OSMP_ERR_NO_MEMORY;
    double best = 0;
    int rc = OSMP_OK;
    for (int a = 0; a < OSMP__MAP_AUTO && rc == OSMP_OK; a++) {
        rc = osmp__map_run(m, a, cand);
        if (rc == OSMP_OK && osmp__map_refine(m, cand) < 0) rc = OSMP_ERR_NO_MEMORY;
        if (rc != OSMP_OK) break;
        double c = osmp__map_cost(m, cand);
        if (a == 0 || c < best) {
            best = c;
            memcpy(slot_of, cand, sizeof(int) * (size_t)m->n);
        }
    }
    free(cand);
    return rc;
}

/* ---------------------------------------------------------------- parsing */

/* One number of a .mat row: decimal, non-negative, finite. */
static int parse_number(const char **p, double *v, char *tok, size_t toklen)
{
    const char *s = *p;
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n])) n++;
    snprintf(tok, toklen, "%.*s", (int)(n < 40 ? n : 40), s);
    char *end;
    *v = strtod(s, &end);
    *p = s + n;
    if (end != s + n || n == 0 || !isfinite(*v)) return -1;
    for (size_t i = 0; i < n; i++) /* strtod takes hex, inf, nan: only plain decimals here */
        if (!strchr("0123456789.eE+-", s[i])) return -1;
    return *v < 0 ? -2 : 0;
}

static int is_prof(const char *text)
{
    for (const char *p = text; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (*p == '#') {
            while (*p && *p != '\n') p++;
            continue;
        }
        return strchr("IESRC", *p) && *p && (p[1] == ' ' || p[1] == '\t');
    }
    return 0;
}

static int parse_prof(const char *text, double **out, int *n, char *err, size_t err_len)
{
    struct rec {
        long src, dst;
        double bytes;
    } *recs = NULL;
    size_t nrec = 0, cap = 0;
    long maxr = -1;
    int line = 0;
    for (const char *p = text; *p; line++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) - 1 ? len : sizeof(buf) - 1), p);
        p = eol ? eol + 1 : p + len;
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        if (!*s || *s == '#') continue;
        char kind;
        long src, dst;
        unsigned long long bytes, msgs;
        int used = 0;
        if (sscanf(s, "%c %ld %ld %llu bytes %llu msgs%n", &kind, &src, &dst, &bytes, &msgs, &used) != 5 ||
            !strchr("IESRC", kind) || src < 0 || dst < 0 || src > 1000000 || dst > 1000000 || strchr(s, '-')) {
            s[strcspn(s, "\r")] = 0;
            osmp__why(err, err_len, "line %d: not a monitoring record \"KIND SRC DST BYTES bytes MSGS msgs\": \"%.60s\"",
                      line + 1, s);
            free(recs);
            return OSMP_ERR_INVALID_ARG;
        }
        if (nrec == cap) {
            cap = cap ? 2 * cap : 64;
            struct rec *r = realloc(recs, cap * sizeof(*r));
            if (!r) {
                free(recs);
                return OSMP_ERR_NO_MEMORY;
            }
            recs = r;
        }
        recs[nrec++] = (struct rec){src, dst, (double)bytes};
        if (src > maxr) maxr = src;
        if (dst > maxr) maxr = dst;
    }
    if (maxr < 0) {
        osmp__why(err, err_len, "no monitoring records");
        free(recs);
        return OSMP_ERR_INVALID_ARG;
    }
    int N = (int)maxr + 1;
    double *mat = calloc((size_t)N * (size_t)N, sizeof(double));
    if (!mat) {
        free(recs);
        return OSMP_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < nrec; i++) mat[(size_t)recs[i].src * N + recs[i].dst] += recs[i].bytes;
    free(recs);
    *out = mat;
    *n = N;
    return OSMP_OK;
}

int osmp__map_parse_matrix(const char *text, double **out, int *n, char *err, size_t err_len)
{
    *out = NULL;
    *n = 0;
    if (is_prof(text)) return parse_prof(text, out, n, err, err_len);
    double *mat = NULL;
    size_t cap = 0, count = 0;
    int cols = -1, rows = 0, line = 0;
    for (const char *p = text; *p; line++) {
        int here = 0;
        while (*p && *p != '\n') {
            if (isspace((unsigned char)*p)) {
                p++;
                continue;
            }
            double v;
            char tok[48];
            int r = parse_number(&p, &v, tok, sizeof(tok));
            if (r) {
                osmp__why(err, err_len, "line %d: %s \"%s\"", line + 1, r == -2 ? "negative value" : "not a number", tok);
                free(mat);
                return OSMP_ERR_INVALID_ARG;
            }
            if (count == cap) {
                cap = cap ? 2 * cap : 256;
                double *m2 = realloc(mat, cap * sizeof(double));
                if (!m2) {
                    free(mat);
                    return OSMP_ERR_NO_MEMORY;
                }
                mat = m2;
            }
            mat[count++] = v;
            here++;
        }
        if (*p == '\n') p++;
        if (!here) continue; /* blank lines (a trailing newline) */
        if (cols < 0) cols = here;
        if (here != cols) {
            osmp__why(err, err_len, "line %d: %d values, the first row has %d (ragged matrix)", line + 1, here, cols);
            free(mat);
            return OSMP_ERR_INVALID_ARG;
        }
        rows++;
    }
    if (rows == 0) {
        osmp__why(err, err_len, "empty matrix");
        free(mat);
        return OSMP_ERR_INVALID_ARG;
    }
    if (rows != cols) {
        osmp__why(err, err_len, "%d rows of %d values: a matrix of N lines of N numbers expected", rows, cols);
        free(mat);
        return OSMP_ERR_INVALID_ARG;
    }
    *out = mat;
    *n = rows;
    return OSMP_OK;
}
