/*
 * Direct gather: every rank's data goes to one place, so there is nothing to
 * combine on the way and a tree would only add copies. The root reads each
 * rank's block directly.
 */
#include <string.h>

#include "coll/coll.h"

int osmp__gather_direct(osmp__coll_t t, const struct osmp__args *a);

/*
 * Gather protocol (slots), per chunk c (step base+1+c, ring slot c % depth):
 *   1. every rank but the root puts chunk c of its block in its up slot, publishes;
 *   2. the root copies each rank's chunk into place, then publishes (slots free).
 * Single copy:
 *   1. every rank exposes its buffer and publishes;
 *   2. the root copies each block from where it is, then publishes;
 *   3. the other ranks return once the root has published (it has read them).
 */
int osmp__gather_direct(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, root = a->root, rc = OSMP_OK;
    size_t bytes = a->count * a->esize;
    char *out = a->out;
    if (me == root && a->in != out + (size_t)root * bytes) memcpy(out + (size_t)root * bytes, a->in, bytes);
    uint64_t base = osmp__phase(t);
    if (a->single_copy) {
        uint64_t s = base + 1;
        if (me != root) {
            osmp__mb_chan(m, me, OSMP__UP)->addr = (uint64_t)(uintptr_t)a->in;
            osmp__mb_publish(m, OSMP__UP, s);     /* 1 */
            return osmp__mb_wait(m, root, OSMP__UP, s); /* 3 */
        }
        for (int r = 0; r < t->size; r++) { /* 2 */
            if (r == root) continue;
            if (osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
            const void *src = (const void *)(uintptr_t)osmp__mb_chan(m, r, OSMP__UP)->addr;
            if (osmp__copy_from(m->pids[r], m->local[r], out + (size_t)r * bytes, src, bytes)) rc = OSMP_ERR_SHM;
        }
        osmp__mb_publish(m, OSMP__UP, s);
        return rc;
    }
    size_t nchunks = (bytes + m->chunk - 1) / m->chunk;
    for (size_t c = 0; c < nchunks; c++) {
        uint64_t s = base + 1 + c;
        int slot = osmp__mb_ring(m, c);
        size_t off = c * m->chunk, n = bytes - off < m->chunk ? bytes - off : m->chunk;
        if (me != root) { /* 1 */
            char *dst = osmp__mb_claim(m, OSMP__UP, slot, &root, 1, OSMP__UP, s);
            if (!dst) return m->failed;
            memcpy(dst, (const char *)a->in + off, n);
            osmp__mb_publish(m, OSMP__UP, s);
            continue;
        }
        for (int r = 0; r < t->size; r++) { /* 2 */
            if (r == root) continue;
            if (osmp__mb_wait(m, r, OSMP__UP, s)) return m->failed;
            memcpy(out + (size_t)r * bytes + off, osmp__mb_slot(m, r, OSMP__UP, slot), n);
        }
        osmp__mb_publish(m, OSMP__UP, s);
    }
    return OSMP_OK;
}
