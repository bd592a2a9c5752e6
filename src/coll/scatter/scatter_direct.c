/* Direct scatter: the root hands each rank its block, nothing on the way. */
#include <string.h>

#include "coll/coll.h"

/*
 * Scatter protocol (slots), per chunk c and rank r (step base+1+c*n+r, the
 * root's k-th slot write, k counting the chunks it wrote in this phase):
 *   1. the root puts chunk c of block r in its down slot and publishes;
 *   2. rank r copies it out and publishes (the slot is free again).
 * Single copy:
 *   1. the root exposes its buffer and publishes;
 *   2. each rank copies its block from there and publishes;
 *   3. the root returns once every rank has published.
 */
int osmp__scatter_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = a->root, n = t->size, rc = OSMP_OK;
    size_t bytes = a->count * a->esize;
    const char *in = a->in;
    if (me == root && a->out != in + (size_t)root * bytes) memcpy(a->out, in + (size_t)root * bytes, bytes);
    uint64_t base = osmp__phase(t);
    if (a->single_copy) {
        uint64_t s = base + 1;
        if (me == root) {
            osmp__mb_chan(m, me, OSMP__DOWN)->addr = (uint64_t)(uintptr_t)in;
            osmp__mb_publish(m, OSMP__DOWN, s); /* 1 */
            for (int r = 0; r < n; r++)          /* 3 */
                if (r != root && osmp__mb_wait(m, r, OSMP__DOWN, s)) return m->failed;
            return OSMP_OK;
        }
        if (osmp__mb_wait(m, root, OSMP__DOWN, s)) return m->failed; /* 2 */
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, root, OSMP__DOWN)->addr;
        if (osmp__copy_from(m->pids[root], m->local[root], a->out, src + (size_t)me * bytes, bytes)) rc = OSMP_ERR_SHM;
        osmp__mb_publish(m, OSMP__DOWN, s);
        return rc;
    }
    size_t nchunks = (bytes + m->chunk - 1) / m->chunk;
    uint64_t k = 0; /* the root's slot writes so far */
    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * m->chunk, len = bytes - off < m->chunk ? bytes - off : m->chunk;
        for (int r = 0; r < n; r++) {
            if (r == root) continue;
            uint64_t s = base + 1 + c * (uint64_t)n + (uint64_t)r;
            int slot = osmp__mb_ring(m, k++);
            if (me == root) { /* 1 */
                char *dst = osmp__mb_claim(m, OSMP__DOWN, slot, &r, 1, OSMP__DOWN, s);
                if (!dst) return m->failed;
                memcpy(dst, in + (size_t)r * bytes + off, len);
                osmp__mb_publish(m, OSMP__DOWN, s);
            } else if (me == r) { /* 2 */
                if (osmp__mb_wait(m, root, OSMP__DOWN, s)) return m->failed;
                memcpy((char *)a->out + off, osmp__mb_slot(m, root, OSMP__DOWN, slot), len);
                osmp__mb_publish(m, OSMP__DOWN, s);
            }
        }
    }
    return OSMP_OK;
}
