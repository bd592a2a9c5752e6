/*
 * Tree collectives: broadcast, reduce, allreduce and barrier along the team's
 * plan, with a base case per group (flat, or a k-ary tree of the members).
 *
 * Data path. Every participant owns a region of the team segment with two
 * mailboxes (up: towards the root, down: away from it). A mailbox is one cache
 * line holding a step counter and, for messages up to OSMP_INLINE_MAX bytes, the
 * data itself, so a small collective moves one line per hop. Larger messages go
 * through a ring of `depth` slots of `chunk` bytes per mailbox, one chunk per
 * step, so the levels of the tree work on different chunks at once (pipeline).
 * Large broadcasts are copied once, straight from the parent's buffer.
 *
 * Steps. Every operation uses the next steps of the team (the same numbers on
 * every participant, since all call the same operations with the same counts);
 * a participant publishes "step s done" on a mailbox only after its data for s
 * is in place and its inputs for s are consumed. A slot is written again only
 * after the consumers of its previous content have published that step.
 */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/* Asked while sleeping on `rank`: has anyone given up on the team, or has
 * `rank` died? A dead peer is noticed within a few milliseconds; its loss is
 * then written into the team's shared line, so that everyone else (also those
 * waiting on live peers that will never publish again) gives up within one
 * more millisecond. */
struct peer_wait {
    osmp__team_t t;
    int rank;
    unsigned naps;
};

static int peer_check(void *ctx)
{
    struct peer_wait *w = ctx;
    osmp__team_t t = w->t;
    osmp_atomic32_t *lost = &osmp__region(t, 0)->shared.lost;
    if (osmp__load32(lost)) return OSMP_ERR_PEER_LOST;
    /* Threads of this process die with it; other processes are polled every 4 naps. */
    if (t->local[w->rank] || ++w->naps % 4 || osmp__live_alive(t->pids[w->rank])) return OSMP_OK;
    osmp__cas32(lost, 0, (uint32_t)w->rank + 1);
    return OSMP_ERR_PEER_LOST;
}

int osmp__wait_peer(osmp__team_t t, int rank, int dir, uint64_t step)
{
    struct osmp__chan *c = &osmp__region(t, rank)->chan[dir];
    struct peer_wait w = {t, rank, 0};
    int rc = osmp__wait_reached(&c->seq, &c->waiters, step, &t->wait, peer_check, &w);
    if (rc) t->failed = rc;
    return rc;
}

void osmp__publish_own(osmp__team_t t, int dir, uint64_t step)
{
    struct osmp__chan *c = &osmp__region(t, t->rank)->chan[dir];
    osmp__publish(&c->seq, &c->waiters, step);
}

char *osmp__claim(osmp__team_t t, int dir, uint64_t step, int inline_slot, const int *consumers, int n,
                  int signal_dir, uint64_t signal_step)
{
    struct osmp__slot_rec *rec = &t->rec[dir][inline_slot ? t->depth : (int)(step % (uint64_t)t->depth)];
    for (int i = 0; rec->written && i < rec->nconsumers; i++)
        if (osmp__wait_peer(t, rec->consumers[i], rec->dir, rec->seq)) return NULL;
    rec->written = 1;
    rec->seq = signal_step;
    rec->dir = signal_dir;
    rec->nconsumers = n;
    if (n == 1) {
        rec->one = consumers[0];
        rec->consumers = &rec->one;
    } else {
        rec->consumers = consumers;
    }
    return inline_slot ? osmp__region(t, t->rank)->chan[dir].inline_data : osmp__ring(t, t->rank, dir, step);
}

static const char *peer_data(osmp__team_t t, int rank, int dir, uint64_t step, int inline_slot)
{
    return inline_slot ? osmp__region(t, rank)->chan[dir].inline_data : osmp__ring(t, rank, dir, step);
}

/* ---------------------------------------------------------------- trees */

/* Base case per operation and size when no OSMP_<OP>_ALG forces one: radix 0 is
 * flat (the leader talks to every member), k > 0 a k-ary tree of the members.
 * Large reductions use a binary tree so that more members share the reduction
 * work and the leader's bandwidth; small ones want the fewest hops. */
static const struct {
    enum osmp__coll_op op;
    size_t max_bytes;
    int radix;
} selection[] = {
    {OSMP__OP_BARRIER, SIZE_MAX, 0},    {OSMP__OP_BCAST, SIZE_MAX, 0},
    {OSMP__OP_REDUCE, 65535, 0},        {OSMP__OP_REDUCE, SIZE_MAX, 2},
    {OSMP__OP_ALLREDUCE, 65535, 0},     {OSMP__OP_ALLREDUCE, SIZE_MAX, 2},
};

static struct osmp__tree *build_tree(osmp__team_t t, int radix, int root)
{
    struct osmp_plan *plan;
    if (osmp_plan_create(t->topo, t->cores, t->size, t->hierarchy, root, &plan) != OSMP_OK) return NULL;
    struct osmp__tree *tr = calloc(1, sizeof(*tr));
    int *order = malloc(sizeof(int) * (size_t)t->size);
    if (!tr || !order) goto fail;
    tr->parent = -1;
    tr->children = malloc(sizeof(int) * (size_t)t->size);
    if (!tr->children) goto fail;
    for (int i = 0; i < plan->nlevels; i++)
        for (int g = 0; g < plan->levels[i].ngroups; g++) {
            const struct osmp_plan_group *G = &plan->levels[i].groups[g];
            int m = 0;
            order[m++] = G->leader;
            for (int x = 0; x < G->nmembers; x++)
                if (G->members[x] != G->leader) order[m++] = G->members[x];
            int k = radix > 0 ? radix : m;
            for (int p = 1; p < m; p++) {
                int par = order[(p - 1) / k];
                if (order[p] == t->rank) tr->parent = par;
                if (par == t->rank) tr->children[tr->nchildren++] = order[p];
            }
        }
    free(order);
    osmp_plan_destroy(plan);
    return tr;
fail:
    if (tr) free(tr->children);
    free(tr);
    free(order);
    osmp_plan_destroy(plan);
    return NULL;
}

const struct osmp__tree *osmp__tree_get(osmp__team_t t, enum osmp__coll_op op, size_t bytes, int root)
{
    int radix = t->radix_of[op];
    for (size_t i = 0; radix < 0 && i < sizeof(selection) / sizeof(selection[0]); i++)
        if (selection[i].op == op && bytes <= selection[i].max_bytes) radix = selection[i].radix;
    struct osmp__arrangement *a = NULL;
    for (int i = 0; i < t->narr; i++)
        if (t->arr[i].radix == radix) a = &t->arr[i];
    if (!a) {
        if (t->narr == OSMP__MAX_ARRANGEMENTS) return NULL;
        a = &t->arr[t->narr];
        a->trees = calloc((size_t)t->size, sizeof(*a->trees));
        if (!a->trees) return NULL;
        a->radix = radix;
        t->narr++;
    }
    if (!a->trees[root]) a->trees[root] = build_tree(t, radix, root);
    return a->trees[root];
}

/* ---------------------------------------------------------------- steps */

struct pass {
    osmp__team_t t;
    const struct osmp__tree *tree;
    uint64_t base;
    size_t esize, count, per_chunk; /* elements */
    int inline_slot;
};

/* 1. Up: copy my chunk to where my subtree's result goes (my up slot, or the
 *    output at the root), combine each child's published chunk into it in the
 *    tree's fixed order, then publish. The fixed order makes a floating-point
 *    result the same on every run and, broadcast from the root, on every rank. */
static int up_step(const struct pass *p, size_t c, const char *in, char *out, osmp__reduce_fn fn)
{
    osmp__team_t t = p->t;
    uint64_t s = p->base + 1 + c;
    size_t off = c * p->per_chunk, n = p->count - off < p->per_chunk ? p->count - off : p->per_chunk;
    char *dst = p->tree->parent < 0 ? out + off * p->esize
                                    : osmp__claim(t, OSMP__UP, s, p->inline_slot, &p->tree->parent, 1, OSMP__UP, s);
    if (!dst) return t->failed;
    if (dst != in + off * p->esize) memcpy(dst, in + off * p->esize, n * p->esize);
    for (int i = 0; i < p->tree->nchildren; i++) {
        if (osmp__wait_peer(t, p->tree->children[i], OSMP__UP, s)) return t->failed;
        fn(dst, peer_data(t, p->tree->children[i], OSMP__UP, s, p->inline_slot), n);
    }
    osmp__publish_own(t, OSMP__UP, s);
    return OSMP_OK;
}

/* 2. Down: take the chunk from the parent's slot (the root has it in `buf`), keep
 *    it, and pass it on through my own slot if I have children. Leaves publish
 *    too: that tells the parent its slot is free again. */
static int down_step(const struct pass *p, size_t c, char *buf)
{
    osmp__team_t t = p->t;
    uint64_t s = p->base + 1 + c;
    size_t off = c * p->per_chunk, n = p->count - off < p->per_chunk ? p->count - off : p->per_chunk;
    char *mine = buf + off * p->esize;
    if (p->tree->parent >= 0) {
        if (osmp__wait_peer(t, p->tree->parent, OSMP__DOWN, s)) return t->failed;
        memcpy(mine, peer_data(t, p->tree->parent, OSMP__DOWN, s, p->inline_slot), n * p->esize);
    }
    if (p->tree->nchildren) {
        char *dst = osmp__claim(t, OSMP__DOWN, s, p->inline_slot, p->tree->children, p->tree->nchildren,
                                OSMP__DOWN, s);
        if (!dst) return t->failed;
        memcpy(dst, mine, n * p->esize);
    }
    osmp__publish_own(t, OSMP__DOWN, s);
    return OSMP_OK;
}

static int init_pass(struct pass *p, osmp__team_t t, enum osmp__coll_op op, size_t count, size_t esize, int root)
{
    size_t bytes = count * esize;
    p->t = t;
    p->tree = osmp__tree_get(t, op, bytes, root);
    if (!p->tree) return OSMP_ERR_NO_MEMORY;
    p->esize = esize;
    p->count = count;
    p->inline_slot = bytes <= OSMP_INLINE_MAX;
    p->per_chunk = p->inline_slot ? count : t->chunk / esize;
    p->base = t->step;
    return OSMP_OK;
}

/*
 * Broadcast protocol:
 *   1. (pipelined) per chunk: down step from the root to the leaves (down_step).
 *   Single copy, for large messages when every pair can read the other's memory:
 *   1. the root exposes its buffer and publishes every chunk at once;
 *   2. each rank copies chunk by chunk straight from its parent's buffer, then
 *      exposes its own buffer to its children, publishing each chunk it has;
 *   3. a rank with children returns once they have all published the last chunk
 *      (they no longer read its buffer).
 */
int osmp__tree_bcast(osmp__team_t t, void *buf, size_t count, size_t esize, int root)
{
    struct pass p;
    int rc = init_pass(&p, t, OSMP__OP_BCAST, count, esize, root);
    if (rc) return rc;
    size_t nchunks = (count + p.per_chunk - 1) / p.per_chunk;
    t->step += nchunks;
    if (!(t->single_copy && count * esize >= t->single_copy_min)) {
        for (size_t c = 0; c < nchunks && !rc; c++) rc = down_step(&p, c, buf);
        return rc;
    }
    struct osmp__chan *mine = &osmp__region(t, t->rank)->chan[OSMP__DOWN];
    mine->addr = (uint64_t)(uintptr_t)buf;
    if (p.tree->parent < 0) {
        osmp__publish_own(t, OSMP__DOWN, p.base + nchunks); /* 1 */
    } else {
        int par = p.tree->parent;
        const char *src = NULL;
        for (size_t c = 0; c < nchunks; c++) { /* 2 */
            if (osmp__wait_peer(t, par, OSMP__DOWN, p.base + 1 + c)) return t->failed;
            if (!src) src = (const char *)(uintptr_t)osmp__region(t, par)->chan[OSMP__DOWN].addr;
            size_t off = c * p.per_chunk * esize, n = count * esize - off;
            if (n > p.per_chunk * esize) n = p.per_chunk * esize;
            if (osmp__copy_from(t->pids[par], t->local[par], (char *)buf + off, src + off, n)) rc = OSMP_ERR_SHM;
            osmp__publish_own(t, OSMP__DOWN, p.base + 1 + c);
        }
    }
    for (int i = 0; i < p.tree->nchildren; i++) /* 3 */
        if (osmp__wait_peer(t, p.tree->children[i], OSMP__DOWN, p.base + nchunks)) return t->failed;
    return rc;
}

/*
 * Reduce / allreduce protocol, per chunk c (pipelined):
 *   1. up step c: leaves publish their chunk, inner ranks combine their children's
 *      chunks into theirs and publish, the root combines into the output;
 *   2. (allreduce) down step c - lag: the root's result travels back down as in a
 *      broadcast, `lag` chunks behind the up steps so both directions stay busy.
 * Every rank of an allreduce receives the root's bytes: results are identical.
 */
int osmp__tree_reduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize, osmp__reduce_fn fn,
                      int root, int all)
{
    struct pass p;
    int rc = init_pass(&p, t, all ? OSMP__OP_ALLREDUCE : OSMP__OP_REDUCE, count, esize, root);
    if (rc) return rc;
    size_t nchunks = (count + p.per_chunk - 1) / p.per_chunk;
    t->step += nchunks;
    size_t lag = all ? (size_t)(t->depth > 1 ? t->depth / 2 : 1) : 0;
    if (lag > nchunks) lag = nchunks;
    for (size_t c = 0; c < nchunks + lag && !rc; c++) {
        if (c < nchunks) rc = up_step(&p, c, in, out, fn);
        if (!rc && all && c >= lag) rc = down_step(&p, c - lag, out);
    }
    return rc;
}

/* Barrier protocol: 1. up: wait for every child, publish; 2. down: wait for the
 * parent, publish. One step, no data. */
int osmp__tree_barrier(osmp__team_t t)
{
    const struct osmp__tree *tree = osmp__tree_get(t, OSMP__OP_BARRIER, 0, 0);
    if (!tree) return OSMP_ERR_NO_MEMORY;
    uint64_t s = ++t->step;
    for (int i = 0; i < tree->nchildren; i++)
        if (osmp__wait_peer(t, tree->children[i], OSMP__UP, s)) return t->failed;
    osmp__publish_own(t, OSMP__UP, s);
    if (tree->parent >= 0 && osmp__wait_peer(t, tree->parent, OSMP__DOWN, s)) return t->failed;
    osmp__publish_own(t, OSMP__DOWN, s);
    return OSMP_OK;
}
