/*
 * Trees and rings over a team's participants, and their metrics.
 *
 * Distance-aware ones follow Ma, Herault, Bosilca, Dongarra, "Process
 * distance-aware adaptive MPI collective communications" (IEEE Cluster 2011):
 * a Kruskal minimum spanning tree for broadcast and a greedy degree-2 clustering
 * for the allgather ring. The rank-order binomial tree and ring are what MPI
 * libraries build; they are here as the baseline the metrics compare against.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

const char *osmp_graph_kind_name(osmp_graph_kind_t kind)
{
    static const char *const names[] = {"plan", "mst", "ring", "binomial", "rankring"};
    if ((int)kind < 0 || kind > OSMP_GRAPH_RANKRING) return NULL;
    return names[kind];
}

struct pair {
    uint32_t dist;
    int away_from_root; /* 0 if the edge touches the root: such edges sort first (MST only) */
    int a, b;           /* a < b */
};

static int cmp_pair(const void *x, const void *y)
{
    const struct pair *p = x, *q = y;
    if (p->dist != q->dist) return p->dist < q->dist ? -1 : 1;
    if (p->away_from_root != q->away_from_root) return p->away_from_root - q->away_from_root;
    if (p->a != q->a) return p->a - q->a;
    return p->b - q->b;
}

static int uf_find(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* All pairs, sorted by distance key, then (MST) root edges first, then by ranks. */
static struct pair *sorted_pairs(osmp_topo_t t, const int *cores, int n, int root, int root_first, size_t *np)
{
    size_t count = (size_t)n * (size_t)(n - 1) / 2, k = 0;
    struct pair *p = malloc(sizeof(*p) * (count ? count : 1));
    if (!p) return NULL;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            p[k].dist = osmp_topo_distance_key(t, cores[a], cores[b]);
            p[k].away_from_root = root_first ? !(a == root || b == root) : 0;
            p[k].a = a;
            p[k].b = b;
            k++;
        }
    qsort(p, count, sizeof(*p), cmp_pair);
    *np = count;
    return p;
}

/* Orient an undirected tree away from the root, listing edges in BFS order. */
static int orient(int n, int root, int (*und)[2], int (*out)[2])
{
    int *adj_start = calloc((size_t)n + 1, sizeof(int)), *adj = malloc(sizeof(int) * (size_t)(2 * n));
    int *queue = malloc(sizeof(int) * (size_t)n);
    char *seen = calloc((size_t)n, 1);
    int rc = OSMP_ERR_NO_MEMORY;
    if (!adj_start || !adj || !queue || !seen) goto out;
    for (int e = 0; e < n - 1; e++) adj_start[und[e][0] + 1]++, adj_start[und[e][1] + 1]++;
    for (int v = 0; v < n; v++) adj_start[v + 1] += adj_start[v];
    int *fill = queue; /* reuse as write cursors before the BFS */
    for (int v = 0; v < n; v++) fill[v] = adj_start[v];
    for (int e = 0; e < n - 1; e++) {
        adj[fill[und[e][0]]++] = und[e][1];
        adj[fill[und[e][1]]++] = und[e][0];
    }
    int head = 0, tail = 0, k = 0;
    queue[tail++] = root;
    seen[root] = 1;
    while (head < tail) {
        int v = queue[head++];
        for (int i = adj_start[v]; i < adj_start[v + 1]; i++)
            if (!seen[adj[i]]) {
                seen[adj[i]] = 1;
                out[k][0] = v;
                out[k][1] = adj[i];
                k++;
                queue[tail++] = adj[i];
            }
    }
    rc = k == n - 1 ? OSMP_OK : OSMP_ERR_PLAN_INVALID;
out:
    free(adj_start);
    free(adj);
    free(queue);
    free(seen);
    return rc;
}

/* Kruskal's joining over the sorted pairs: the closest pair of ranks in
 * different components joins them, until one component is left. The MST (und:
 * its n-1 edges in that order) takes every such pair, root edges first among
 * equals; the ring's greedy clustering (nb) only pairs of path ends, so that
 * each component stays a path: each rank's neighbours into nb, how many into
 * deg (zeroed by the caller). */
static int join_closest(osmp_topo_t t, const int *cores, int n, int root, int (*und)[2], int (*nb)[2],
                        int *deg)
{
    size_t np;
    struct pair *p = sorted_pairs(t, cores, n, root, !nb, &np);
    int *uf = malloc(sizeof(int) * (size_t)n);
    int rc = OSMP_ERR_NO_MEMORY;
    if (!p || !uf) goto out;
    for (int v = 0; v < n; v++) uf[v] = v;
    int k = 0;
    for (size_t i = 0; i < np && k < n - 1; i++) {
        int a = p[i].a, b = p[i].b;
        if (nb && (deg[a] == 2 || deg[b] == 2)) continue;
        int ra = uf_find(uf, a), rb = uf_find(uf, b);
        if (ra == rb) continue;
        uf[ra] = rb;
        if (nb) {
            nb[a][deg[a]++] = b;
            nb[b][deg[b]++] = a;
        } else {
            und[k][0] = a;
            und[k][1] = b;
        }
        k++;
    }
    rc = OSMP_OK;
out:
    free(p);
    free(uf);
    return rc;
}

static int build_mst(osmp_topo_t t, const int *cores, int n, int root, struct osmp_graph *g)
{
    int(*und)[2] = malloc(sizeof(*und) * (size_t)n);
    int rc = und ? join_closest(t, cores, n, root, und, NULL, NULL) : OSMP_ERR_NO_MEMORY;
    if (rc == OSMP_OK) {
        rc = orient(n, root, und, g->edges);
        g->nedges = n - 1;
    }
    free(und);
    return rc;
}

static int build_ring(osmp_topo_t t, const int *cores, int n, int root, struct osmp_graph *g)
{
    int *deg = calloc((size_t)n, sizeof(int));
    int(*nb)[2] = malloc(sizeof(*nb) * (size_t)n); /* neighbours on the path/ring */
    int rc = OSMP_ERR_NO_MEMORY;
    if (!deg || !nb) goto out;
    /* 1. Greedy clustering: the closest pair of path ends in different paths. */
    rc = join_closest(t, cores, n, root, NULL, nb, deg);
    if (rc != OSMP_OK) goto out;
    /* 2. Close the single remaining path into a ring (its two ends have degree 1). */
    int ends[2], ne = 0;
    for (int v = 0; v < n && ne < 2; v++)
        if (deg[v] < 2) ends[ne++] = v;
    if (ne == 2) {
        nb[ends[0]][deg[ends[0]]++] = ends[1];
        nb[ends[1]][deg[ends[1]]++] = ends[0];
    }
    /* 3. Walk it from the root towards its lower-ranked neighbour. */
    int prev = root, cur = nb[root][0] < nb[root][1] ? nb[root][0] : nb[root][1];
    g->edges[0][0] = root;
    g->edges[0][1] = cur;
    for (int e = 1; e < n; e++) {
        int next = nb[cur][0] == prev ? nb[cur][1] : nb[cur][0];
        g->edges[e][0] = cur;
        g->edges[e][1] = next;
        prev = cur;
        cur = next;
    }
    g->nedges = n;
    rc = cur == root ? OSMP_OK : OSMP_ERR_PLAN_INVALID;
out:
    free(deg);
    free(nb);
    return rc;
}

/* MPICH/Open MPI binomial: relative rank v's parent is v with its lowest set bit cleared. */
static void build_binomial(int n, int root, struct osmp_graph *g)
{
    for (int v = 1; v < n; v++) {
        int parent = v & (v - 1);
        g->edges[v - 1][0] = (parent + root) % n;
        g->edges[v - 1][1] = (v + root) % n;
    }
    g->nedges = n - 1;
}

static void build_rankring(int n, struct osmp_graph *g)
{
    for (int r = 0; r < n; r++) {
        g->edges[r][0] = r;
        g->edges[r][1] = (r + 1) % n;
    }
    g->nedges = n;
}

static int build_from_plan(const struct osmp_plan *plan, struct osmp_graph *g)
{
    int k = 0;
    for (int i = 0; i < plan->nlevels; i++)
        for (int gi = 0; gi < plan->levels[i].ngroups; gi++) {
            const struct osmp_plan_group *G = &plan->levels[i].groups[gi];
            for (int x = 0; x < G->nmembers; x++)
                if (G->members[x] != G->leader) {
                    if (k >= plan->nranks - 1) return OSMP_ERR_PLAN_INVALID;
                    g->edges[k][0] = G->leader;
                    g->edges[k][1] = G->members[x];
                    k++;
                }
        }
    g->nedges = k;
    return k == plan->nranks - 1 ? OSMP_OK : OSMP_ERR_PLAN_INVALID;
}

static int tree_metrics(struct osmp_graph *g)
{
    int n = g->nranks;
    int *depth = malloc(sizeof(int) * (size_t)n), *kids = calloc((size_t)n, sizeof(int));
    if (!depth || !kids) {
        free(depth);
        free(kids);
        return OSMP_ERR_NO_MEMORY;
    }
    for (int v = 0; v < n; v++) depth[v] = -1;
    depth[g->root] = 0;
    /* Edges of our trees are listed parent before child except the plan's, whose
     * levels go leaf first: relax until stable (at most depth rounds). */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int e = 0; e < g->nedges; e++)
            if (depth[g->edges[e][0]] >= 0 && depth[g->edges[e][1]] != depth[g->edges[e][0]] + 1) {
                depth[g->edges[e][1]] = depth[g->edges[e][0]] + 1;
                changed = 1;
            }
    }
    g->depth = 0;
    g->fanout = 0;
    for (int e = 0; e < g->nedges; e++) kids[g->edges[e][0]]++;
    int rc = OSMP_OK;
    for (int v = 0; v < n; v++) {
        if (depth[v] < 0) rc = OSMP_ERR_PLAN_INVALID; /* not a tree from the root */
        if (depth[v] > g->depth) g->depth = depth[v];
        if (kids[v] > g->fanout) g->fanout = kids[v];
    }
    free(depth);
    free(kids);
    return rc;
}

int osmp_graph_create(osmp_topo_t t, const int *cores, int n, int root, osmp_graph_kind_t kind,
                      const struct osmp_plan *plan, struct osmp_graph **out)
{
    if (!t || !cores || !out || n < 1 || (int)kind < 0 || kind > OSMP_GRAPH_RANKRING) return OSMP_ERR_INVALID_ARG;
    if (root < 0 || root >= n) return OSMP_ERR_RANGE;
    if ((kind == OSMP_GRAPH_MST || kind == OSMP_GRAPH_RING) && n > OSMP_GRAPH_MAX_RANKS) return OSMP_ERR_RANGE;
    if (kind == OSMP_GRAPH_PLAN && (!plan || plan->nranks != n || plan->root != root)) return OSMP_ERR_INVALID_ARG;
    for (int r = 0; r < n; r++)
        if (cores[r] < 0 || cores[r] >= t->ncores) return OSMP_ERR_RANGE;
    struct osmp_graph *g = calloc(1, sizeof(*g));
    if (!g) return OSMP_ERR_NO_MEMORY;
    g->edges = malloc(sizeof(*g->edges) * (size_t)n);
    if (!g->edges) {
        free(g);
        return OSMP_ERR_NO_MEMORY;
    }
    g->kind = kind;
    g->nranks = n;
    g->root = root;
    int rc = OSMP_OK;
    int ring = kind == OSMP_GRAPH_RING || kind == OSMP_GRAPH_RANKRING;
    if (n > 1) {
        switch (kind) {
        case OSMP_GRAPH_PLAN:
            rc = build_from_plan(plan, g);
            break;
        case OSMP_GRAPH_MST:
            rc = build_mst(t, cores, n, root, g);
            break;
        case OSMP_GRAPH_RING:
            rc = build_ring(t, cores, n, root, g);
            break;
        case OSMP_GRAPH_BINOMIAL:
            build_binomial(n, root, g);
            break;
        case OSMP_GRAPH_RANKRING:
            build_rankring(n, g);
            break;
        }
    }
    if (rc == OSMP_OK) {
        if (ring) {
            g->depth = n - 1;
            g->fanout = n > 1 ? 1 : 0;
        } else {
            rc = tree_metrics(g);
        }
    }
    for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++) {
        /* Kinds the machine lacks, the machine itself and PUs (participants sit on cores) are not reported. */
        g->cross[k] = -1;
        if (t->count[k] == 0 || k == OSMP_DOMAIN_MACHINE || k == OSMP_DOMAIN_PU) continue;
        g->cross[k] = 0;
        for (int e = 0; e < g->nedges; e++)
            g->cross[k] += t->domain_of[k][cores[g->edges[e][0]]] != t->domain_of[k][cores[g->edges[e][1]]];
    }
    if (rc) {
        osmp_graph_destroy(g);
        return rc;
    }
    *out = g;
    return OSMP_OK;
}

void osmp_graph_destroy(struct osmp_graph *g)
{
    if (!g) return;
    free(g->edges);
    free(g);
}
