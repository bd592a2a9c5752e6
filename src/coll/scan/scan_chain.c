/* Prefix reductions along a chain in rank order, pipelined chunk by chunk. */
#include <string.h>

#include "coll/co.h"

/*
 * Scan / exscan protocol, per chunk c (step base+1+c; ring slot c % depth, or
 * the mailbox line for a message that fits it):
 *   1. rank r > 0 waits for rank r-1's down step c: in its down slot, the
 *      reduction of ranks 0 .. r-1 (the prefix);
 *   2. my down slot gets the prefix combined with my input, prefix op input,
 *      in that order (rank 0: my input): the prefix of ranks 0 .. r;
 *   3. my output gets that (scan) or the prefix before me (exscan; rank 0's is
 *      left alone); step 2 read my input first, so in place works;
 *   4. publish down c: my slot holds the next prefix, and I have read rank r-1's.
 * The last rank's slot has no reader: it only holds the result while it is made.
 * Across waits (resumable form): the phase (co->s) and the chunk (co->c).
 */
static inline __attribute__((always_inline)) int chain(osmp__coll_t t, const struct osmp__args *a,
                                                       int exclusive, struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, next = me + 1;
    size_t e = a->esize, bytes = a->count * e;
    int inline_slot = bytes <= OSMP_INLINE_MAX;
    size_t per = inline_slot ? bytes : m->chunk / e * e;
#define SLOT_OF(c) (inline_slot ? OSMP__SLOT_INLINE : osmp__mb_ring(m, c))
    OSMP__CO_BEGIN(R, co);
    co->s = osmp__phase(t);
    for (co->c = 0; co->c * per < bytes; co->c++) {
        if (me > 0) OSMP__AWAIT(R, co, m, me - 1, OSMP__DOWN, co->s + 1 + co->c); /* 1 */
        OSMP__AWAIT_CLAIM(R, co, m, OSMP__DOWN, SLOT_OF(co->c));
        {
            uint64_t s = co->s + 1 + co->c;
            int slot = SLOT_OF(co->c);
            size_t off = co->c * per, len = bytes - off < per ? bytes - off : per;
            const char *prev = me > 0 ? osmp__mb_slot(m, me - 1, OSMP__DOWN, slot) : NULL;
            char *mine = osmp__mb_claim(m, OSMP__DOWN, slot, &next, next < t->size, OSMP__DOWN, s);
            if (!mine) return m->failed;
            if (prev) { /* 2 */
                memcpy(mine, prev, len);
                a->fn(mine, (const char *)a->in + off, len / e);
                osmp__trace_copy(t, me - 1, me, len);
                osmp__trace_reduce(t, 2 * len);
            } else {
                memcpy(mine, (const char *)a->in + off, len);
                osmp__trace_copy(t, me, me, len);
            }
            if (!exclusive) { /* 3 */
                memcpy((char *)a->out + off, mine, len);
                osmp__trace_copy(t, me, me, len);
            } else if (prev) {
                memcpy((char *)a->out + off, prev, len);
                osmp__trace_copy(t, me - 1, me, len);
            }
            osmp__mb_publish(m, OSMP__DOWN, s); /* 4 */
        }
    }
#undef SLOT_OF
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

static inline __attribute__((always_inline)) int scan_chain(osmp__coll_t t, const struct osmp__args *a,
                                                            struct osmp__co *co, const int R)
{
    return chain(t, a, 0, co, R);
}
OSMP__COMPILE_TWICE(osmp__scan_chain, scan_chain)

static inline __attribute__((always_inline)) int exscan_chain(osmp__coll_t t, const struct osmp__args *a,
                                                              struct osmp__co *co, const int R)
{
    return chain(t, a, 1, co, R);
}
OSMP__COMPILE_TWICE(osmp__exscan_chain, exscan_chain)
