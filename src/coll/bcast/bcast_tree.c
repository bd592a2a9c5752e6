/* Tree broadcast: down the plan's tree or the MST (a->radix), through the slots or by single copy. */
#include <string.h>

#include "coll/tree.h"

int osmp__bcast_tree(osmp__coll_t t, const struct osmp__args *a);

/*
 * Broadcast protocol (pipelined, through the slots or exposed buffers):
 *   1. (messages of OSMP__EXPOSE_MIN or more) each rank with children tells them,
 *      in a mini line of its own, whether they read its buffer in place (an
 *      osmp_alloc buffer, or any buffer when they all run in its process) or
 *      its slots, and learns the same from its parent. Each rank decides alone,
 *      so no rank needs to know another's memory, and the line, like a slot, is
 *      not rewritten before the children have read it (the chan's addr could
 *      be: a parent that stages may be two calls ahead);
 *   2. per chunk: down step from the root to the leaves (osmp__pass_down);
 *   3. a rank that exposed its buffer returns once its children have published
 *      the last chunk (they no longer read it).
 * Single copy (a->single_copy):
 *   1. the root exposes its buffer and publishes every chunk at once;
 *   2. each rank copies chunk by chunk straight from its parent's buffer, then
 *      exposes its own buffer to its children, publishing each chunk it has; a
 *      leaf copies every chunk published so far in one go (one system call);
 *   3. a rank with children returns once they have all published the last chunk
 *      (they no longer read its buffer).
 */
/* Below this the handshake of step 1 costs more than the copy it may save
 * (docs/measurements.md, "Mappable memory", I2). */
#define OSMP__EXPOSE_MIN 4096

/* Step 1 of the pipelined broadcast: my buffer's address for my children (0:
 * my slots) in a mini line of mine; my parent's in p->from. */
static int modes(osmp__coll_t t, struct osmp__pass *p, const char *buf)
{
    struct osmp__mbox *m = &t->mb;
    const struct osmp__tree *tr = p->tree;
    int line = osmp__mini_slot(osmp__minis_take(t, 1));
    uint64_t s = p->base + 1;
    if (tr->nchildren) {
        int all_local = 1;
        for (int i = 0; i < tr->nchildren; i++) all_local &= m->local[tr->children[i]];
        p->exposed = all_local ? osmp__expose(buf) : osmp__expose_mapped(buf);
        char *mine = osmp__mb_claim(m, OSMP__DOWN, line, tr->children, tr->nchildren, OSMP__DOWN, s);
        if (!mine) return m->failed;
        memcpy(mine, &p->exposed, sizeof(p->exposed));
        osmp__mb_publish_slot(m, OSMP__DOWN, line, s);
    }
    if (tr->parent >= 0) {
        if (osmp__mb_wait_slot(m, tr->parent, OSMP__DOWN, line, s)) return m->failed;
        memcpy(&p->from, osmp__mb_slot(m, tr->parent, OSMP__DOWN, line), sizeof(p->from));
    }
    return OSMP_OK;
}

int osmp__bcast_tree(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    struct osmp__pass p;
    char *buf = a->out;
    int rc = osmp__pass_init(&p, t, a);
    if (rc) return rc;
    if (!a->single_copy) {
        if (a->count * a->esize >= OSMP__EXPOSE_MIN && (rc = modes(t, &p, buf))) return rc; /* 1 */
        for (size_t c = 0; c < p.nchunks && !rc; c++) rc = osmp__pass_down(&p, c, buf); /* 2 */
        for (int i = 0; !rc && p.exposed && i < p.tree->nchildren; i++)                    /* 3 */
            if (osmp__mb_wait(m, p.tree->children[i], OSMP__DOWN, p.base + p.nchunks)) return m->failed;
        return rc;
    }
    osmp__mb_chan(m, t->rank, OSMP__DOWN)->addr = osmp__expose(buf);
    size_t bytes = a->count * a->esize, per = p.per_chunk * a->esize;
    if (p.tree->parent < 0) {
        osmp__mb_publish(m, OSMP__DOWN, p.base + p.nchunks); /* 1 */
    } else {
        int par = p.tree->parent;
        const char *src = NULL;
        for (size_t c = 0, k; c < p.nchunks; c = k) { /* 2 */
            if (osmp__mb_wait(m, par, OSMP__DOWN, p.base + 1 + c)) return m->failed;
            if (!src) src = (const char *)(uintptr_t)osmp__mb_chan(m, par, OSMP__DOWN)->addr;
            /* A leaf copies every chunk its parent has at once (all of them from
             * the root): one system call instead of one per chunk. */
            k = c + 1;
            if (!p.tree->nchildren) {
                uint64_t have = osmp__mb_seen(m, par, OSMP__DOWN) - p.base;
                k = have > p.nchunks ? p.nchunks : have > k ? (size_t)have : k;
            }
            size_t off = c * per, n = (k == p.nchunks ? bytes : k * per) - off;
            if (osmp__copy_from(m->pids[par], m->local[par], buf + off, src + off, n))
                return osmp__mb_fail(m, OSMP_ERR_COPY); /* my children must not copy what I do not have */
            osmp__trace_copy(t, par, t->rank, n);
            osmp__mb_publish(m, OSMP__DOWN, p.base + k);
        }
    }
    for (int i = 0; i < p.tree->nchildren; i++) /* 3 */
        if (osmp__mb_wait(m, p.tree->children[i], OSMP__DOWN, p.base + p.nchunks)) return m->failed;
    return rc;
}
