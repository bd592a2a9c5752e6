/* Tree broadcast: down the plan's tree or the MST (a->radix), through the slots or by single copy. */
#include <string.h>

#include "coll/co.h"

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

/* Step 1 of the pipelined broadcast, its start: my buffer's address for my
 * children (0: my slots) in a mini line of mine (co->j). */
static inline void modes_take(osmp__coll_t t, struct osmp__co *co, const char *buf)
{
    const struct osmp__tree *tr = co->p.tree;
    co->j = osmp__mini_slot(osmp__minis_take(t, 1));
    if (tr->nchildren) {
        int all_local = 1;
        for (int i = 0; i < tr->nchildren; i++) all_local &= t->mb.local[tr->children[i]];
        co->p.exposed = all_local ? osmp__expose(buf) : osmp__expose_mapped(buf);
    }
}

static inline __attribute__((always_inline)) int bcast_tree(osmp__coll_t t, const struct osmp__args *a,
                                                            struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    struct osmp__pass *p = &co->p;
    char *buf = a->out;
    size_t bytes = a->count * a->esize, per;
    int rc;
    OSMP__CO_BEGIN(R, co);
    if ((rc = osmp__pass_init(p, t, a))) return rc;
    if (!a->single_copy) {
        if (bytes >= OSMP__EXPOSE_MIN) { /* 1 */
            modes_take(t, co, buf);
            if (p->tree->nchildren) {
                OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, co->j);
                char *mine = osmp__mb_claim(m, OSMP__DOWN, co->j, p->tree->children, p->tree->nchildren,
                                            OSMP__DOWN, p->base + 1);
                if (!mine) return m->failed;
                memcpy(mine, &p->exposed, sizeof(p->exposed));
                osmp__mb_publish_slot(m, OSMP__DOWN, co->j, p->base + 1);
            }
            if (p->tree->parent >= 0) {
                OSMP__AWAIT_SLOT(R, co, m, p->tree->parent, OSMP__DOWN, co->j, p->base + 1);
                memcpy(&p->from, osmp__mb_slot(m, p->tree->parent, OSMP__DOWN, co->j), sizeof(p->from));
            }
        }
        for (co->c = 0; co->c < p->nchunks; co->c++) OSMP__AWAIT_DOWN(R, co, rc, co->c, buf); /* 2 */
        for (co->i = 0; p->exposed && co->i < p->tree->nchildren; co->i++)                    /* 3 */
            OSMP__AWAIT(R, co, m, p->tree->children[co->i], OSMP__DOWN, p->base + p->nchunks);
        goto done;
    }
    osmp__mb_chan(m, t->rank, OSMP__DOWN)->addr = osmp__expose(buf);
    if (p->tree->parent < 0) {
        osmp__mb_publish(m, OSMP__DOWN, p->base + p->nchunks); /* 1 */
    } else {
        co->first = NULL; /* the parent's buffer */
        for (co->c = 0; co->c < p->nchunks; co->c = co->k) { /* 2 */
            OSMP__AWAIT(R, co, m, p->tree->parent, OSMP__DOWN, p->base + 1 + co->c);
            int par = p->tree->parent;
            if (!co->first) co->first = (const char *)(uintptr_t)osmp__mb_chan(m, par, OSMP__DOWN)->addr;
            /* A leaf copies every chunk its parent has at once (all of them from
             * the root): one system call instead of one per chunk. */
            co->k = co->c + 1;
            if (!p->tree->nchildren) {
                uint64_t have = osmp__mb_seen(m, par, OSMP__DOWN) - p->base;
                co->k = have > p->nchunks ? p->nchunks : have > co->k ? (size_t)have : co->k;
            }
            per = p->per_chunk * a->esize;
            size_t off = co->c * per, n = (co->k == p->nchunks ? bytes : co->k * per) - off;
            if (osmp__copy_from(m->pids[par], m->local[par], buf + off, co->first + off, n))
                return osmp__mb_fail(m, osmp__mb_copy_failed(m, par)); /* my children must not copy what I do not have */
            osmp__trace_copy(t, par, t->rank, n);
            osmp__mb_publish(m, OSMP__DOWN, p->base + co->k);
        }
    }
    for (co->i = 0; co->i < p->tree->nchildren; co->i++) /* 3 */
        OSMP__AWAIT(R, co, m, p->tree->children[co->i], OSMP__DOWN, p->base + p->nchunks);
done:
    OSMP__CO_END(R, co);
    return OSMP_OK;
}
OSMP__COMPILE_TWICE(osmp__bcast_tree, bcast_tree)
