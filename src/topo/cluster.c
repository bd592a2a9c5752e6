/*
 * The hierarchy of domains hidden in a core-to-core latency matrix, and the CSV
 * format such matrices come in. Pure: no processes, no shared memory.
 *
 * Method: top-down splitting at the highest clean gap.
 *   1. A group of CPUs (first: all of them) sorts the latencies of its pairs.
 *   2. Going down from the largest value, a gap between consecutive values lo <
 *      hi is significant when hi >= 1.3 lo and hi - lo >= 1 ns. At the first
 *      significant gap whose threshold lo splits the group cleanly (below) the
 *      group is cut into the connected components of "latency <= lo", counting
 *      a close pair only if the two see mostly the same CPUs within lo (a pair
 *      close by accident, as a coarse timer gives, must not join two domains).
 *   3. Each part is split the same way; a group without a clean gap is a leaf
 *      domain (its CPUs are as close to each other as the measurement tells).
 *   4. Level d of the result is the partition made by the groups at depth d of
 *      that tree (leaf domains carried down), deepest first; the root, the
 *      machine, is the last level.
 * Clean: at least two components; within each, at most 5% of the pairs above lo
 * (a measurement disturbed by an interrupt only ever comes out slower, so a few
 * high pairs inside a domain must not hide it); and not a split into a few
 * small groups and mostly single CPUs (one pair measured faster than the rest
 * of a flat mesh is not a level).
 * Why this and not a global gap search over the merge heights (MCTOP sorts all
 * latencies once): each split only looks at its own group's values, so noise on
 * one CPU (one SMT pair slower than the others) cannot create a level of its
 * own, and going from the top keeps every coarser level (sockets) before finer
 * gaps (CCX) are looked at.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "measured.h"

/* GAP_RATIO lies between the gap from one real level to the next (1.6x and more)
 * and the largest gap among the mesh distances inside one level (under 1.2x). */
#define GAP_RATIO 1.3
#define GAP_MIN_NS 1.0
#define DIRTY_FRACTION 0.05

/* ---------------------------------------------------------------- CSV */

/* One field [s, e) of a row: blank, or a finite positive number. Returns 0 if blank, 1 if a value, -1 bad. */
static int parse_field(const char *s, const char *e, double *v, int row, int col, char *why, size_t why_len)
{
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    if (s == e) return 0;
    char buf[64];
    size_t l = (size_t)(e - s);
    if (l >= sizeof(buf)) {
        osmp__why(why, why_len, "row %d column %d: \"%.20s...\" is not a number", row, col, s);
        return -1;
    }
    memcpy(buf, s, l);
    buf[l] = '\0';
    char *end;
    double x = strtod(buf, &end);
    if (*end || end == buf) {
        osmp__why(why, why_len, "row %d column %d: \"%s\" is not a number", row, col, buf);
        return -1;
    }
    if (!isfinite(x)) {
        osmp__why(why, why_len, "row %d column %d: \"%s\" is not a finite latency", row, col, buf);
        return -1;
    }
    if (x < 0) { /* 0 happens: measurements below the timer's resolution (nviennot's Ryzen 9 5900X) */
        osmp__why(why, why_len, "row %d column %d: latency %s must not be negative", row, col, buf);
        return -1;
    }
    *v = x;
    return 1;
}

int osmp__latency_parse_csv(const char *text, size_t len, double **out, int *nout, char *why, size_t why_len)
{
    if (!text || !out || !nout) return OSMP_ERR_INVALID_ARG;
    /* Rows: lines, a final newline and trailing blank lines ignored. */
    size_t end = len;
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) end--;
    if (end == 0) {
        osmp__why(why, why_len, "no latency in it: a matrix of 0 or 1 CPU (clustering needs at least 2)");
        return OSMP_ERR_INVALID_ARG;
    }
    int n = 1;
    for (size_t i = 0; i < end; i++)
        if (text[i] == '\n' && ++n > OSMP__LATENCY_MAX_CPUS) {
            osmp__why(why, why_len, "more than %d rows", OSMP__LATENCY_MAX_CPUS);
            return OSMP_ERR_INVALID_ARG;
        }
    if (n < 2) {
        osmp__why(why, why_len, "1 CPU: a latency matrix needs at least 2 rows");
        return OSMP_ERR_INVALID_ARG;
    }
    double *m = calloc((size_t)n * (size_t)n, sizeof(*m));
    if (!m) return OSMP_ERR_NO_MEMORY;
    const char *p = text, *stop = text + end;
    for (int row = 0; row < n; row++) {
        const char *eol = memchr(p, '\n', (size_t)(stop - p));
        if (!eol) eol = stop;
        const char *le = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
        int col = 0;
        for (const char *f = p;; col++) {
            const char *fe = memchr(f, ',', (size_t)(le - f));
            if (!fe) fe = le;
            if (col >= n) {
                osmp__why(why, why_len, "row %d has more than %d columns: the matrix is %d x %d (one row per CPU)",
                          row, n, n, n);
                goto bad;
            }
            const char *fs = f;
            while (fs < fe && (*fs == ' ' || *fs == '\t')) fs++;
            if (fs < fe && col >= row) { /* before its value: a square matrix has zeros there */
                osmp__why(why, why_len,
                          "row %d column %d holds a value: only pairs below the diagonal (column < row) belong in "
                          "the lower-triangular CSV", row, col);
                goto bad;
            }
            double v = 0;
            int got = parse_field(f, fe, &v, row, col, why, why_len);
            if (got < 0) goto bad;
            if (!got && col < row) {
                osmp__why(why, why_len, "row %d column %d is empty: row %d needs %d latencies", row, col, row, row);
                goto bad;
            }
            if (got) m[(size_t)row * (size_t)n + (size_t)col] = m[(size_t)col * (size_t)n + (size_t)row] = v;
            if (fe == le) break;
            f = fe + 1;
        }
        if (col + 1 < row) {
            osmp__why(why, why_len, "row %d has %d columns, expected %d latencies (ragged CSV)", row, col + 1, row);
            goto bad;
        }
        p = eol < stop ? eol + 1 : stop;
    }
    *out = m;
    *nout = n;
    return OSMP_OK;
bad:
    free(m);
    return OSMP_ERR_INVALID_ARG;
}

/* ---------------------------------------------------------------- clustering */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int uf_find(int *parent, int x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Scratch for splitting one group of k CPUs. */
struct scratch {
    double *vals; /* k(k-1)/2 */
    int *uf, *comp, *size, *dirty;
};

/* Do i and j (both within lo of each other) see mostly the same CPUs within lo?
 * Members of one domain do; a pair that is close by accident (a timer step:
 * nviennot's Ryzen 9 7950X reads 10.3 ns between CPUs of different cores, as
 * between some SMT siblings) joins two groups that share nobody else. */
static int same_neighbours(const double *m, int n, const int *cpus, int k, double lo, int i, int j)
{
    int common = 0, either = 0;
    for (int x = 0; x < k; x++) {
        int a = x == i || m[(size_t)cpus[i] * (size_t)n + (size_t)cpus[x]] <= lo;
        int b = x == j || m[(size_t)cpus[j] * (size_t)n + (size_t)cpus[x]] <= lo;
        common += a && b;
        either += a || b;
    }
    return 2 * common >= either;
}

/* Components of "latency <= lo" among cpus[0..k); part[i] in 0..nparts-1 in
 * order of first appearance. Returns nparts if the split is clean, else 0. */
static int try_split(const double *m, int n, const int *cpus, int k, double lo, int *part, struct scratch *s)
{
    for (int i = 0; i < k; i++) s->uf[i] = i;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < i; j++)
            if (m[(size_t)cpus[i] * (size_t)n + (size_t)cpus[j]] <= lo && same_neighbours(m, n, cpus, k, lo, i, j)) {
                int a = uf_find(s->uf, i), b = uf_find(s->uf, j);
                if (a != b) s->uf[a] = b;
            }
    int nparts = 0;
    for (int i = 0; i < k; i++) s->comp[i] = -1;
    for (int i = 0; i < k; i++) {
        int r = uf_find(s->uf, i);
        if (s->comp[r] < 0) {
            s->comp[r] = nparts;
            s->size[nparts] = 0;
            s->dirty[nparts] = 0;
            nparts++;
        }
        part[i] = s->comp[r];
        s->size[part[i]]++;
    }
    if (nparts < 2) return 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < i; j++)
            if (part[i] == part[j] && m[(size_t)cpus[i] * (size_t)n + (size_t)cpus[j]] > lo) s->dirty[part[i]]++;
    int singles = 0, largest = 0;
    for (int c = 0; c < nparts; c++) {
        long pairs = (long)s->size[c] * (s->size[c] - 1) / 2;
        if (s->dirty[c] > (long)(DIRTY_FRACTION * (double)pairs)) return 0;
        if (s->size[c] == 1) singles++;
        if (s->size[c] > largest) largest = s->size[c];
    }
    if (largest >= 2 && 2 * singles > k) return 0;
    return nparts;
}

/* Split cpus[0..k) at its highest clean gap: part[] and the number of parts, 0 if none. */
static int split_group(const double *m, int n, const int *cpus, int k, int *part, struct scratch *s)
{
    long nv = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < i; j++) s->vals[nv++] = m[(size_t)cpus[i] * (size_t)n + (size_t)cpus[j]];
    qsort(s->vals, (size_t)nv, sizeof(double), cmp_double);
    for (long v = nv - 2; v >= 0; v--) {
        double lo = s->vals[v], hi = s->vals[v + 1];
        if (hi < GAP_RATIO * lo || hi - lo < GAP_MIN_NS) continue;
        int parts = try_split(m, n, cpus, k, lo, part, s);
        if (parts) return parts;
    }
    return 0;
}

struct node {
    int first, count, parent, splits; /* CPUs order[first .. first+count) */
    double latency;                   /* median of the pairs whose smallest common group this is */
    int cls, level;
};

void osmp__mtree_destroy(struct osmp__mtree *t)
{
    if (!t) return;
    for (int l = 0; l < t->nlevels; l++) free(t->levels[l].group_of);
    free(t->levels);
    free(t);
}

static int cluster_positive(const double *m, int n, struct osmp__mtree **out);

/* Zeros are latencies below the timer's resolution (nviennot's Ryzen 9 5900X
 * matrix reads 0, 25 and 26.7 ns inside one CCD): they count as the smallest
 * latency measured, so that they fall in with their neighbours instead of
 * making a level of their own (a gap ratio to 0 is infinite). */
int osmp__latency_cluster(const double *m, int n, struct osmp__mtree **out, char *why, size_t why_len)
{
    if (!m || !out) return OSMP_ERR_INVALID_ARG;
    if (n < 2 || n > OSMP__LATENCY_MAX_CPUS) {
        osmp__why(why, why_len, "%d CPUs: clustering needs 2 to %d", n, OSMP__LATENCY_MAX_CPUS);
        return OSMP_ERR_INVALID_ARG;
    }
    double least = INFINITY;
    int zeros = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            double v = m[(size_t)i * (size_t)n + (size_t)j];
            if (!isfinite(v) || v < 0) {
                osmp__why(why, why_len, "latency between CPUs %d and %d is %g: expected a finite value >= 0", i, j,
                          v);
                return OSMP_ERR_INVALID_ARG;
            }
            if (v > 0 && v < least) least = v;
            zeros += v == 0;
        }
    if (!isfinite(least)) {
        osmp__why(why, why_len, "every latency is 0: nothing to cluster");
        return OSMP_ERR_INVALID_ARG;
    }
    if (!zeros) return cluster_positive(m, n, out);
    double *c = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (!c) return OSMP_ERR_NO_MEMORY;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++) c[k] = m[k] > 0 ? m[k] : least;
    int rc = cluster_positive(c, n, out);
    free(c);
    return rc;
}

/* The clustering proper, on a matrix of positive latencies. */
static int cluster_positive(const double *m, int n, struct osmp__mtree **out)
{
    int rc = OSMP_ERR_NO_MEMORY;
    struct scratch s = {0};
    size_t np = (size_t)n * (size_t)(n - 1) / 2;
    s.vals = malloc(np * sizeof(double));
    s.uf = malloc(sizeof(int) * (size_t)n);
    s.comp = malloc(sizeof(int) * (size_t)n);
    s.size = malloc(sizeof(int) * (size_t)n);
    s.dirty = malloc(sizeof(int) * (size_t)n);
    int *order = malloc(sizeof(int) * (size_t)n), *part = malloc(sizeof(int) * (size_t)n);
    int *tmp = malloc(sizeof(int) * (size_t)n);
    struct node *nodes = malloc(sizeof(*nodes) * (size_t)(2 * n)); /* a tree with n leaves and >= 2 children per split */
    struct osmp__mtree *t = calloc(1, sizeof(*t));
    double *lat = NULL;
    if (!s.vals || !s.uf || !s.comp || !s.size || !s.dirty || !order || !part || !tmp || !nodes || !t) goto done;

    /* 1-3: breadth-first splitting; a node's CPUs are order[first .. first+count), ascending. */
    for (int i = 0; i < n; i++) order[i] = i;
    int nnodes = 1;
    nodes[0] = (struct node){0, n, -1, 0, 0, 0, 0};
    for (int x = 0; x < nnodes; x++) {
        struct node *nd = &nodes[x];
        if (nd->count < 2) continue;
        int *cpus = order + nd->first;
        int parts = split_group(m, n, cpus, nd->count, part, &s);
        if (!parts) continue;
        nd->splits = 1;
        int at = 0;
        for (int c = 0; c < parts; c++) {
            int start = at;
            for (int i = 0; i < nd->count; i++)
                if (part[i] == c) tmp[at++] = cpus[i];
            if (at - start >= 2) nodes[nnodes++] = (struct node){nd->first + start, at - start, x, 0, 0, 0, 0};
        }
        memcpy(cpus, tmp, sizeof(int) * (size_t)nd->count);
    }
    /* 4. Levels. A group's latency: the median of its pairs that share no smaller group. Sorted by it,
     * groups fall into classes at the same gap ratio; neighbouring classes neither of which holds an
     * ancestor of the other merge (noise on one CPU, such as one SMT pair far slower than the others,
     * must not make a level of one group); then each group gets a level above its subgroups'. */
    int *owner = malloc(sizeof(int) * (size_t)n); /* the child of the current node holding a CPU, -1: none */
    int *by_lat = malloc(sizeof(int) * (size_t)nnodes);
    lat = malloc(sizeof(double) * np);
    char *mark = calloc((size_t)nnodes, 1);
    if (!owner || !by_lat || !lat || !mark) {
        free(owner);
        free(by_lat);
        free(mark);
        goto done;
    }
    for (int x = 0; x < nnodes; x++) {
        const struct node *nd = &nodes[x];
        for (int i = 0; i < nd->count; i++) owner[order[nd->first + i]] = -1;
        for (int c = x + 1; c < nnodes; c++)
            if (nodes[c].parent == x)
                for (int i = 0; i < nodes[c].count; i++) owner[order[nodes[c].first + i]] = c;
        long nl = 0;
        for (int i = 0; i < nd->count; i++)
            for (int j = 0; j < i; j++) {
                int a = order[nd->first + i], b = order[nd->first + j];
                if (owner[a] < 0 || owner[a] != owner[b]) lat[nl++] = m[(size_t)a * (size_t)n + (size_t)b];
            }
        qsort(lat, (size_t)nl, sizeof(double), cmp_double);
        nodes[x].latency = nl % 2 ? lat[nl / 2] : (lat[nl / 2 - 1] + lat[nl / 2]) / 2;
        by_lat[x] = x;
    }
    for (int i = 1; i < nnodes; i++) /* insertion sort: a few hundred groups */
        for (int j = i; j > 0 && nodes[by_lat[j]].latency < nodes[by_lat[j - 1]].latency; j--) {
            int tmp_i = by_lat[j];
            by_lat[j] = by_lat[j - 1];
            by_lat[j - 1] = tmp_i;
        }
    int ncls = 0;
    for (int i = 0; i < nnodes; i++) {
        if (i > 0 && nodes[by_lat[i]].latency >= GAP_RATIO * nodes[by_lat[i - 1]].latency) ncls++;
        nodes[by_lat[i]].cls = ncls;
    }
    ncls++;
    for (int k = 0; k + 1 < ncls;) {
        int related = 0;
        for (int dir = 0; dir < 2 && !related; dir++) { /* an ancestor in class k + 1, or (noise) in class k */
            int up = dir ? k : k + 1, down = dir ? k + 1 : k;
            for (int x = 0; x < nnodes; x++) mark[x] = nodes[x].cls == up;
            for (int x = 0; x < nnodes && !related; x++)
                if (nodes[x].cls == down)
                    for (int y = nodes[x].parent; y >= 0 && !related; y = nodes[y].parent) related = mark[y];
        }
        if (related) {
            k++;
            continue;
        }
        for (int x = 0; x < nnodes; x++)
            if (nodes[x].cls > k) nodes[x].cls--;
        ncls--;
    }
    /* Children come after their parent in breadth-first order: walk backwards. */
    for (int x = nnodes - 1; x >= 0; x--) {
        if (nodes[x].level < nodes[x].cls) nodes[x].level = nodes[x].cls;
        if (nodes[x].parent >= 0 && nodes[nodes[x].parent].level < nodes[x].level + 1)
            nodes[nodes[x].parent].level = nodes[x].level + 1;
    }
    /* Renumber the levels used: 0 .. nlevels-1. */
    int top = nodes[0].level, nlevels = 0;
    int *renum = malloc(sizeof(int) * (size_t)(top + 1));
    if (!renum) {
        free(owner);
        free(by_lat);
        free(mark);
        goto done;
    }
    for (int v = 0; v <= top; v++) {
        renum[v] = -1;
        for (int x = 0; x < nnodes && renum[v] < 0; x++)
            if (nodes[x].level == v) renum[v] = nlevels++;
    }
    for (int x = 0; x < nnodes; x++) nodes[x].level = renum[nodes[x].level];
    free(renum);
    free(by_lat);
    free(mark);
    t->levels = calloc((size_t)nlevels, sizeof(*t->levels));
    if (!t->levels) {
        free(owner);
        goto done;
    }
    t->n = n;
    t->nlevels = nlevels;
    for (int v = 0; v < nlevels; v++) {
        struct osmp__mlevel *L = &t->levels[v];
        L->group_of = malloc(sizeof(int) * (size_t)n);
        if (!L->group_of) {
            free(owner);
            goto done;
        }
        /* A CPU's group: the largest group at this level or below holding it (levels grow towards the root). */
        for (int i = 0; i < n; i++) owner[i] = -1;
        for (int x = nnodes - 1; x >= 0; x--)
            if (nodes[x].level <= v)
                for (int i = 0; i < nodes[x].count; i++) owner[order[nodes[x].first + i]] = x;
        for (int i = 0; i < n; i++) L->group_of[i] = -1;
        for (int i = 0; i < n; i++) {
            if (L->group_of[i] >= 0) continue;
            for (int j = i; j < n; j++)
                if (j == i || (owner[i] >= 0 && owner[j] == owner[i])) L->group_of[j] = L->ngroups;
            L->ngroups++;
        }
    }
    /* A level's latency: the median over the pairs whose smallest common group lies on it. */
    for (int v = 0; v < nlevels; v++) {
        long nl = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                if (t->levels[v].group_of[i] == t->levels[v].group_of[j] &&
                    (v == 0 || t->levels[v - 1].group_of[i] != t->levels[v - 1].group_of[j]))
                    lat[nl++] = m[(size_t)i * (size_t)n + (size_t)j];
        qsort(lat, (size_t)nl, sizeof(double), cmp_double);
        t->levels[v].latency_ns = nl == 0 ? 0 : nl % 2 ? lat[nl / 2] : (lat[nl / 2 - 1] + lat[nl / 2]) / 2;
    }
    free(owner);
    *out = t;
    t = NULL;
    rc = OSMP_OK;
done:
    osmp__mtree_destroy(t);
    free(s.vals);
    free(s.uf);
    free(s.comp);
    free(s.size);
    free(s.dirty);
    free(order);
    free(part);
    free(tmp);
    free(nodes);
    free(lat);
    return rc;
}

int osmp__mtree_check(const struct osmp__mtree *t, char *why, size_t why_len)
{
    if (!t || t->n < 2 || t->nlevels < 1 || !t->levels) {
        osmp__why(why, why_len, "no tree, fewer than 2 CPUs or no level");
        return OSMP_ERR_TOPO_INVALID;
    }
    int n = t->n;
    for (int l = 0; l < t->nlevels; l++) {
        const struct osmp__mlevel *L = &t->levels[l];
        int next = 0;
        for (int i = 0; i < n; i++) {
            int g = L->group_of[i];
            if (g < 0 || g >= L->ngroups || g > next) {
                osmp__why(why, why_len, "level %d: CPU %d in group %d (groups must be numbered by lowest CPU)", l, i, g);
                return OSMP_ERR_TOPO_INVALID;
            }
            if (g == next) next++;
        }
        if (next != L->ngroups) {
            osmp__why(why, why_len, "level %d: %d groups, %d used", l, L->ngroups, next);
            return OSMP_ERR_TOPO_INVALID;
        }
        if (l + 1 < t->nlevels) {
            const struct osmp__mlevel *U = &t->levels[l + 1];
            if (U->ngroups >= L->ngroups) {
                osmp__why(why, why_len, "level %d has %d groups, level %d %d: each level must be coarser", l,
                          L->ngroups, l + 1, U->ngroups);
                return OSMP_ERR_TOPO_INVALID;
            }
            for (int i = 0; i < n; i++)
                for (int j = 0; j < i; j++)
                    if (L->group_of[i] == L->group_of[j] && U->group_of[i] != U->group_of[j]) {
                        osmp__why(why, why_len, "level %d does not refine level %d: CPUs %d and %d", l, l + 1, j, i);
                        return OSMP_ERR_TOPO_INVALID;
                    }
        }
    }
    if (t->levels[t->nlevels - 1].ngroups != 1) {
        osmp__why(why, why_len, "the last level must be the machine (one group)");
        return OSMP_ERR_TOPO_INVALID;
    }
    if (t->levels[0].ngroups == n) {
        osmp__why(why, why_len, "the leaf level has only single CPUs");
        return OSMP_ERR_TOPO_INVALID;
    }
    return OSMP_OK;
}

void osmp__mlevel_name(const struct osmp__mtree *t, int level, char *buf, size_t len)
{
    if (level == t->nlevels - 1)
        snprintf(buf, len, "machine");
    else
        snprintf(buf, len, "group%d", level);
}
