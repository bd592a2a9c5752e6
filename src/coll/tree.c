/*
 * Trees from the plan or the distance-aware MST, the distance-aware ring, and
 * the steps of the pipelined passes up and down the trees that the tree
 * algorithms of broadcast, reduce and allreduce are made of.
 *
 * A message of up to three lines' data (OSMP__MINI_LINES_MAX * OSMP__MINI_DATA
 * bytes) travels in the next mini lines of the sender (mailbox.h), each with
 * its own step counter, from an even index: one line latency per hop, as
 * in the mailbox line, but a root (a reduce leaf) may send tens of calls ahead
 * of its readers instead of waiting for them at every call. Larger messages
 * go through the ring slots, one chunk per step, so the levels of the tree
 * work on different chunks at once. Chunk c of a phase is step base + 1 + c
 * on every participant, and the ring slot after the last one the previous pass
 * took: a rank done with a call may run into the next ones while slow readers
 * still read the earlier slots (the claims keep it from overwriting what they
 * have not read), up to depth slots ahead. With mini lines the data is
 * published on the lines, and a rank that read its children's or its parent's
 * lines says so on its mailbox counter; with a slot one publication on the
 * mailbox says both.
 */
#include "common/fault.h"
#include "coll/co.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- trees */

static void tree_free(struct osmp__tree *tr)
{
    if (!tr) return;
    free(tr->children);
    free(tr->sub);
    free(tr->child_nsub);
    free(tr->before_nsub);
    free(tr);
}

/* The subtree fields of my tree, from every rank's parent (par) and children
 * lists (head/next, in the order children were added): a depth-first order of
 * the whole tree holds each subtree as one run. */
static int build_subtrees(struct osmp__tree *tr, int n, int me, int root, const int *par, const int *head,
                          const int *next)
{
    int *pre = osmp__malloc(sizeof(int) * (size_t)n), *stack = osmp__malloc(sizeof(int) * (size_t)n),
        *size = osmp__malloc(sizeof(int) * (size_t)n);
    int rc = -1, np = 0, sp = 0, at = 0, nb = 0;
    if (!pre || !stack || !size) goto out;
    stack[sp++] = root;
    while (sp) {
        int x = stack[--sp], first = sp;
        pre[np++] = x;
        size[x] = 1;
        for (int c = head[x]; c >= 0; c = next[c]) stack[sp++] = c;
        for (int i = first, j = sp - 1; i < j; i++, j--) { /* the first child comes off the stack first */
            int c = stack[i];
            stack[i] = stack[j];
            stack[j] = c;
        }
    }
    for (int i = np - 1; i > 0; i--) size[par[pre[i]]] += size[pre[i]];
    while (pre[at] != me) at++;
    tr->nsub = size[me];
    tr->sub = osmp__malloc(sizeof(int) * (size_t)size[me]);
    tr->child_nsub = osmp__malloc(sizeof(int) * (size_t)(tr->nchildren ? tr->nchildren : 1));
    for (int c = par[me] >= 0 ? head[par[me]] : -1; c >= 0 && c != me; c = next[c]) nb++;
    tr->before_nsub = osmp__malloc(sizeof(int) * (size_t)(nb ? nb : 1));
    if (!tr->sub || !tr->child_nsub || !tr->before_nsub) goto out;
    memcpy(tr->sub, pre + at, sizeof(int) * (size_t)size[me]);
    for (int i = 0; i < tr->nchildren; i++) tr->child_nsub[i] = size[tr->children[i]];
    tr->nbefore = 0;
    for (int c = par[me] >= 0 ? head[par[me]] : -1; c >= 0 && c != me; c = next[c])
        tr->before_nsub[tr->nbefore++] = size[c];
    rc = 0;
out:
    free(pre);
    free(stack);
    free(size);
    return rc;
}

/* My parent and children in the MST rooted at root; children nearest first, so
 * the chunks reach the cheap subtrees early while the far ones are still loading. */
static struct osmp__tree *build_mst(osmp__coll_t t, int root)
{
    struct osmp_graph *g;
    if (osmp_graph_create(t->topo, t->cores, t->size, root, OSMP_GRAPH_MST, NULL, &g) != OSMP_OK) return NULL;
    struct osmp__tree *tr = osmp__calloc(1, sizeof(*tr));
    uint32_t *key = osmp__malloc(sizeof(uint32_t) * (size_t)t->size);
    if (tr) tr->children = osmp__malloc(sizeof(int) * (size_t)t->size);
    if (!tr || !key || !tr->children) {
        if (tr) free(tr->children);
        free(tr);
        free(key);
        osmp_graph_destroy(g);
        return NULL;
    }
    tr->parent = -1;
    for (int e = 0; e < g->nedges; e++) {
        int from = g->edges[e][0], to = g->edges[e][1];
        if (to == t->rank) tr->parent = from;
        if (from != t->rank) continue;
        /* insertion sort: nearest first, then by rank, the same on every rank */
        uint32_t k = osmp_topo_distance_key(t->topo, t->cores[from], t->cores[to]);
        int i = tr->nchildren++;
        for (; i > 0 && (key[i - 1] > k || (key[i - 1] == k && tr->children[i - 1] > to)); i--) {
            key[i] = key[i - 1];
            tr->children[i] = tr->children[i - 1];
        }
        key[i] = k;
        tr->children[i] = to;
    }
    free(key);
    osmp_graph_destroy(g);
    return tr;
}

static struct osmp__tree *build_tree(osmp__coll_t t, int radix, int root)
{
    struct osmp_plan *plan;
    if (osmp_plan_create(t->topo, t->cores, t->size, t->hierarchy, root, &plan) != OSMP_OK) return NULL;
    int n = t->size;
    struct osmp__tree *tr = osmp__calloc(1, sizeof(*tr));
    int *order = osmp__malloc(sizeof(int) * (size_t)n), *par = osmp__malloc(sizeof(int) * (size_t)n),
        *head = osmp__malloc(sizeof(int) * (size_t)n), *tail = osmp__malloc(sizeof(int) * (size_t)n),
        *next = osmp__malloc(sizeof(int) * (size_t)n);
    if (!tr || !order || !par || !head || !tail || !next) goto fail;
    tr->parent = -1;
    tr->children = osmp__malloc(sizeof(int) * (size_t)n);
    if (!tr->children) goto fail;
    for (int r = 0; r < n; r++) par[r] = head[r] = tail[r] = next[r] = -1;
    for (int i = 0; i < plan->nlevels; i++)
        for (int g = 0; g < plan->levels[i].ngroups; g++) {
            const struct osmp_plan_group *G = &plan->levels[i].groups[g];
            int m = 0;
            order[m++] = G->leader;
            for (int x = 0; x < G->nmembers; x++)
                if (G->members[x] != G->leader) order[m++] = G->members[x];
            int k = radix > 0 ? radix : m;
            for (int p = 1; p < m; p++) {
                int c = order[p], pa = order[(p - 1) / k];
                par[c] = pa;
                if (tail[pa] < 0) head[pa] = c;
                else next[tail[pa]] = c;
                tail[pa] = c;
                if (c == t->rank) tr->parent = pa;
                if (pa == t->rank) tr->children[tr->nchildren++] = c;
            }
        }
    if (!build_subtrees(tr, n, t->rank, root, par, head, next)) goto out;
fail:
    tree_free(tr);
    tr = NULL;
out:
    free(order);
    free(par);
    free(head);
    free(tail);
    free(next);
    osmp_plan_destroy(plan);
    return tr;
}

const struct osmp__tree *osmp__tree_get(osmp__coll_t t, int radix, int root)
{
    struct osmp__arrangement *a = NULL;
    for (int i = 0; i < t->narr; i++)
        if (t->arr[i].radix == radix && t->arr[i].hierarchy == t->hierarchy) a = &t->arr[i];
    if (!a) {
        if (t->narr == OSMP__MAX_ARRANGEMENTS) return NULL;
        a = &t->arr[t->narr];
        a->trees = osmp__calloc((size_t)t->size, sizeof(*a->trees));
        if (!a->trees) return NULL;
        a->radix = radix;
        a->hierarchy = t->hierarchy;
        t->narr++;
    }
    int mst = radix == OSMP__RADIX_MST && t->size <= OSMP__GRAPH_RANKS_MAX;
    if (!a->trees[root]) a->trees[root] = mst ? build_mst(t, root) : build_tree(t, radix < 0 ? 0 : radix, root);
    return a->trees[root];
}

const int *osmp__ring_get(osmp__coll_t t)
{
    if (t->ring) return t->ring;
    int *ring = osmp__malloc(sizeof(int) * (size_t)t->size);
    if (!ring) return NULL;
    for (int r = 0; r < t->size; r++) ring[r] = r;
    if (t->size > 1 && t->size <= OSMP__GRAPH_RANKS_MAX) {
        struct osmp_graph *g;
        if (osmp_graph_create(t->topo, t->cores, t->size, 0, OSMP_GRAPH_RING, NULL, &g) != OSMP_OK) {
            free(ring);
            return NULL;
        }
        for (int e = 0; e + 1 < g->nedges; e++) ring[e + 1] = g->edges[e][1]; /* listed from rank 0 on */
        osmp_graph_destroy(g);
    }
    return t->ring = ring;
}

size_t *osmp__displs_get(osmp__coll_t t)
{
    if (!t->displs) t->displs = osmp__malloc(sizeof(size_t) * (size_t)t->size);
    return t->displs;
}

void osmp__trees_free(osmp__coll_t t)
{
    for (int i = 0; i < t->narr; i++) {
        for (int r = 0; t->arr[i].trees && r < t->size; r++)
            tree_free(t->arr[i].trees[r]);
        free(t->arr[i].trees);
    }
    t->narr = 0;
    free(t->ring);
    t->ring = NULL;
    free(t->displs);
    t->displs = NULL;
}

/* ---------------------------------------------------------------- passes */

int osmp__pass_init(struct osmp__pass *p, osmp__coll_t t, const struct osmp__args *a)
{
    p->t = t;
    p->scratch = NULL; /* (first: a failure below leaves nothing for the caller to free) */
    p->tree = osmp__tree_get(t, a->radix, a->root);
    if (!p->tree) return OSMP_ERR_NO_MEMORY;
    p->esize = a->esize;
    p->count = a->count;
    /* (an up pass folds line by line: no element may straddle two lines) */
    int lines = osmp__mini_lines(a->count * a->esize);
    p->lines = lines <= 1 || (lines <= OSMP__MINI_LINES_MAX && OSMP__MINI_DATA % a->esize == 0) ? lines : 0;
    p->per_chunk = p->lines ? a->count : t->mb.chunk / a->esize;
    p->nchunks = (a->count + p->per_chunk - 1) / p->per_chunk;
    if (p->lines) { /* messages of lines start at an even line: one more taken, skipped if need be */
        p->first_slot = osmp__minis_take(t, p->nchunks * (uint64_t)p->lines + (p->lines > 1));
        p->first_slot += p->lines > 1 && p->first_slot % 2;
    } else {
        p->first_slot = osmp__slots_take(t, p->nchunks);
    }
    p->base = osmp__phase(t);
    p->exposed = p->from = 0;
    p->once = 0;
    p->fn3 = a->fn3;
    return OSMP_OK;
}

/* Lines (1 for a ring slot) of chunk c's message, and the slot of its line j. */
static int lines_of(const struct osmp__pass *p)
{
    return p->lines ? p->lines : 1;
}
static int slot_of(const struct osmp__pass *p, size_t c, int j)
{
    if (p->lines) return osmp__mini_slot(p->first_slot + c * (uint64_t)p->lines + (uint64_t)j);
    return osmp__mb_ring(&p->t->mb, p->first_slot + c);
}
/* Bytes of a message of `bytes` in its line j (all of it in a ring slot). */
static size_t piece_of(const struct osmp__pass *p, size_t bytes, int j)
{
    return p->lines ? osmp__mini_piece(bytes, j) : bytes;
}

/* Up step c: my chunk goes where my subtree's result goes (my up slot or
 * lines, or the output at the root), each child's published chunk is combined
 * into it in the tree's fixed order, line by line (the first one together
 * with mine when there is a three-array kernel: one pass over the result
 * instead of a copy and a fold), then I publish. The fixed order makes a
 * floating-point result the same on every run and, broadcast from the root,
 * on every rank. */
static inline __attribute__((always_inline)) int pass_up(const struct osmp__pass *p, struct osmp__co_sub *sub,
                                                         size_t c, const char *in, char *out, osmp__reduce_fn fn,
                                                         const int R)
{
    struct osmp__mbox *m = &p->t->mb;
    osmp__coll_t t = p->t;
    uint64_t s = p->base + 1 + c;
    size_t off = c * p->per_chunk, n = p->count - off < p->per_chunk ? p->count - off : p->per_chunk;
    size_t bytes = n * p->esize;
    int L = lines_of(p), parent = p->tree->parent;
    const char *src = in + off * p->esize;
    OSMP__CO_BEGIN(R, sub);
    if (p->once && parent >= 0 && !p->tree->nchildren) { /* a leaf: every chunk is in place at once */
        if (c) return OSMP_OK;
        osmp__mb_chan(m, p->t->rank, OSMP__UP)->addr = osmp__expose(in);
        osmp__mb_publish(m, OSMP__UP, p->base + p->nchunks);
        return OSMP_OK;
    }
    for (sub->j = 0; sub->j < L; sub->j++) {
        if (parent < 0) {
            sub->dst[sub->j] = out + off * p->esize + (size_t)sub->j * OSMP__MINI_DATA;
            continue;
        }
        OSMP__AWAIT_CLAIM(R, sub, m, OSMP__UP, slot_of(p, c, sub->j));
        sub->dst[sub->j] = osmp__mb_claim(m, OSMP__UP, slot_of(p, c, sub->j), &p->tree->parent, 1, OSMP__UP, s);
        if (!sub->dst[sub->j]) return m->failed;
    }
    /* Mine goes into dst with my first child's fold, or is copied there first. */
    sub->pending = sub->dst[0] != src && p->tree->nchildren && p->fn3;
    if (sub->dst[0] != src && !sub->pending) {
        for (int j = 0; j < L; j++) {
            if (parent >= 0 && !p->tree->nchildren) /* (an inner rank folds its children into it next) */
                osmp__stage(p->t, sub->dst[j], src + (size_t)j * OSMP__MINI_DATA, piece_of(p, bytes, j));
            else
                memcpy(sub->dst[j], src + (size_t)j * OSMP__MINI_DATA, piece_of(p, bytes, j));
        }
        osmp__trace_copy(t, t->rank, t->rank, bytes);
    }
    for (sub->i = 0; sub->i < p->tree->nchildren; sub->i++) {
        if (L > 2) /* mailbox.h */
            __builtin_prefetch(osmp__mb_slot(m, p->tree->children[sub->i], OSMP__UP, slot_of(p, c, 0)));
        OSMP__AWAIT_SLOT(R, sub, m, p->tree->children[sub->i], OSMP__UP, slot_of(p, c, L - 1), s); /* the last line */
        int child = p->tree->children[sub->i];
        const char *v[OSMP__MINI_LINES_MAX] = {p->scratch};
        if (p->once && p->tree->child_nsub[sub->i] == 1) { /* a leaf's chunk, from its input */
            const char *from = (const char *)(uintptr_t)osmp__mb_chan(m, child, OSMP__UP)->addr + off * p->esize;
            if (osmp__copy_from(m->pids[child], m->local[child], p->scratch, from, bytes))
                return osmp__mb_fail(m, osmp__mb_copy_failed(m, child)); /* my result would miss it */
        } else {
            for (int j = 0; j < L; j++) v[j] = osmp__mb_slot(m, child, OSMP__UP, slot_of(p, c, j));
        }
        for (int j = 0; j < L; j++) {
            size_t k = piece_of(p, bytes, j) / p->esize;
            if (sub->pending)
                p->fn3(sub->dst[j], src + (size_t)j * OSMP__MINI_DATA, v[j], k);
            else
                fn(sub->dst[j], v[j], k);
        }
        sub->pending = 0;
        osmp__trace_copy(t, child, t->rank, bytes); /* read into my result */
    }
    if (p->tree->nchildren) osmp__trace_reduce(t, (size_t)(p->tree->nchildren + 1) * bytes);
    if (!p->lines) {
        osmp__mb_publish(m, OSMP__UP, s); /* my chunk is ready, my children's slots are free */
    } else {
        if (parent >= 0) osmp__mb_publish_minis(m, OSMP__UP, p->first_slot + c * (uint64_t)L, L, s);
        if (p->tree->nchildren) osmp__mb_publish(m, OSMP__UP, s);
    }
    OSMP__CO_END(R, sub);
    return OSMP_OK;
}

int osmp__pass_up(const struct osmp__pass *p, size_t c, const char *in, char *out, osmp__reduce_fn fn)
{
    struct osmp__co_sub sub;
    sub.dst[0] = NULL; /* (L >= 1: the compiler does not know) */
    return pass_up(p, &sub, c, in, out, fn, 0);
}

int osmp__pass_up_co(const struct osmp__pass *p, struct osmp__co_sub *sub, size_t c, const char *in, char *out,
                     osmp__reduce_fn fn)
{
    return pass_up(p, sub, c, in, out, fn, 1);
}

/* Down step c: take the chunk from the parent's slot or lines, or its buffer
 * where it exposed it (the root has it in `buf`), keep it, and pass it on
 * through my own slot or lines if I have children and did not expose mine.
 * Leaves publish too: that tells the parent its slot is free again, or that
 * they have read its chunk. */
static inline __attribute__((always_inline)) int pass_down(const struct osmp__pass *p, struct osmp__co_sub *sub,
                                                           size_t c, char *buf, const int R)
{
    struct osmp__mbox *m = &p->t->mb;
    uint64_t s = p->base + 1 + c;
    size_t off = c * p->per_chunk, n = p->count - off < p->per_chunk ? p->count - off : p->per_chunk;
    size_t bytes = n * p->esize;
    char *mine = buf + off * p->esize;
    int L = lines_of(p), parent = p->tree->parent;
    OSMP__CO_BEGIN(R, sub);
    if (parent >= 0) {
        if (L > 2) __builtin_prefetch(osmp__mb_slot(m, parent, OSMP__DOWN, slot_of(p, c, 0))); /* mailbox.h */
        OSMP__AWAIT_SLOT(R, sub, m, parent, OSMP__DOWN, slot_of(p, c, L - 1), s); /* the last line */
        if (p->from) {
            const char *src = (const char *)(uintptr_t)p->from + off * p->esize;
            if (osmp__copy_from(m->pids[parent], m->local[parent], mine, src, bytes))
                return osmp__mb_fail(m, osmp__mb_copy_failed(m, parent)); /* my children must not copy what I do not have */
        } else {
            for (int j = 0; j < L; j++)
                memcpy(mine + (size_t)j * OSMP__MINI_DATA, osmp__mb_slot(m, parent, OSMP__DOWN, slot_of(p, c, j)),
                       piece_of(p, bytes, j));
        }
        osmp__trace_copy(p->t, parent, p->t->rank, bytes);
    }
    if (p->tree->nchildren && !p->exposed) {
        for (sub->j = 0; sub->j < L; sub->j++) {
            OSMP__AWAIT_CLAIM(R, sub, m, OSMP__DOWN, slot_of(p, c, sub->j));
            char *dst = osmp__mb_claim(m, OSMP__DOWN, slot_of(p, c, sub->j), p->tree->children, p->tree->nchildren,
                                       OSMP__DOWN, s);
            if (!dst) return m->failed;
            osmp__stage(p->t, dst, mine + (size_t)sub->j * OSMP__MINI_DATA, piece_of(p, bytes, sub->j));
        }
        osmp__trace_copy(p->t, p->t->rank, p->t->rank, bytes);
        if (p->lines) osmp__mb_publish_minis(m, OSMP__DOWN, p->first_slot + c * (uint64_t)L, L, s);
    }
    if (!p->lines || parent >= 0) osmp__mb_publish(m, OSMP__DOWN, s); /* (also) my parent's line is free */
    OSMP__CO_END(R, sub);
    return OSMP_OK;
}

int osmp__pass_down(const struct osmp__pass *p, size_t c, char *buf)
{
    struct osmp__co_sub sub;
    return pass_down(p, &sub, c, buf, 0);
}

int osmp__pass_down_co(const struct osmp__pass *p, struct osmp__co_sub *sub, size_t c, char *buf)
{
    return pass_down(p, sub, c, buf, 1);
}
