/* Tree broadcast: down the plan's tree or the MST (a->radix), through the slots or by single copy. */
#include "coll/tree.h"

int osmp__bcast_tree(osmp__coll_t t, const struct osmp__args *a);

/*
 * Broadcast protocol:
 *   1. (pipelined) per chunk: down step from the root to the leaves.
 * Single copy (a->single_copy):
 *   1. the root exposes its buffer and publishes every chunk at once;
 *   2. each rank copies chunk by chunk straight from its parent's buffer, then
 *      exposes its own buffer to its children, publishing each chunk it has;
 *   3. a rank with children returns once they have all published the last chunk
 *      (they no longer read its buffer).
 */
int osmp__bcast_tree(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    struct osmp__pass p;
    char *buf = a->out;
    int rc = osmp__pass_init(&p, t, a);
    if (rc) return rc;
    if (!a->single_copy) {
        for (size_t c = 0; c < p.nchunks && !rc; c++) rc = osmp__pass_down(&p, c, buf); /* 1 */
        return rc;
    }
    osmp__mb_chan(m, t->rank, OSMP__DOWN)->addr = osmp__expose(buf);
    size_t bytes = a->count * a->esize, per = p.per_chunk * a->esize;
    if (p.tree->parent < 0) {
        osmp__mb_publish(m, OSMP__DOWN, p.base + p.nchunks); /* 1 */
    } else {
        int par = p.tree->parent;
        const char *src = NULL;
        for (size_t c = 0; c < p.nchunks; c++) { /* 2 */
            if (osmp__mb_wait(m, par, OSMP__DOWN, p.base + 1 + c)) return m->failed;
            if (!src) src = (const char *)(uintptr_t)osmp__mb_chan(m, par, OSMP__DOWN)->addr;
            size_t off = c * per, n = bytes - off < per ? bytes - off : per;
            if (osmp__copy_from(m->pids[par], m->local[par], buf + off, src + off, n))
                return osmp__mb_fail(m, OSMP_ERR_COPY); /* my children must not copy what I do not have */
            osmp__trace_copy(t, par, t->rank, n);
            osmp__mb_publish(m, OSMP__DOWN, p.base + 1 + c);
        }
    }
    for (int i = 0; i < p.tree->nchildren; i++) /* 3 */
        if (osmp__mb_wait(m, p.tree->children[i], OSMP__DOWN, p.base + p.nchunks)) return m->failed;
    return rc;
}
