/* Rendezvous allgather: write my record, barrier, read all, barrier (so the
 * records may be overwritten by the next call). */
#include "rendezvous.h"

#include <stdio.h>
#include <string.h>

#include "osmp.h"

_Static_assert(OSMP__RV_RECORD_MAX % sizeof(osmp_atomic32_t) == 0, "the counters after the records are aligned");

size_t osmp__rv_bytes(int size, size_t maxlen)
{
    return sizeof(struct osmp__rv) + (size_t)size * (maxlen + sizeof(osmp_atomic32_t));
}

static osmp_atomic32_t *entered(struct osmp__rv *rv)
{
    return (osmp_atomic32_t *)(void *)(rv->data + (size_t)rv->size * rv->maxlen);
}

void osmp__rv_init(struct osmp__rv *rv, int size, size_t maxlen)
{
    memset(rv, 0, osmp__rv_bytes(size, maxlen));
    rv->size = (uint32_t)size;
    rv->maxlen = (uint32_t)maxlen; /* both callers: OSMP__RV_RECORD_MAX, a multiple of the counters' size */
}

struct rv_wait {
    struct osmp__rv *rv;
    int64_t deadline;
};

static int rv_check(void *ctx)
{
    const struct rv_wait *w = ctx;
    if (osmp__load32(&w->rv->lost)) return OSMP_ERR_PEER_LOST;
    if (w->deadline && osmp__now_ns() > w->deadline) return OSMP_ERR_TIMEOUT;
    return OSMP_OK;
}

/* Sense by generation: the last to arrive resets the count, then opens the next generation. */
int osmp__rv_barrier(struct osmp__rv *rv, const struct osmp__wait_policy *wait, int64_t deadline)
{
    uint64_t g = osmp__load_acquire(&rv->gen);
    if (osmp__fetch_add(&rv->arrived, 1) + 1 == rv->size) {
        osmp__store_relaxed(&rv->arrived, 0);
        osmp__publish(&rv->gen, &rv->waiters, g + 1);
        return OSMP_OK;
    }
    struct rv_wait w = {rv, deadline};
    return osmp__wait_reached(&rv->gen, &rv->waiters, g + 1, wait, rv_check, &w, NULL);
}

int osmp__rv_allgather(struct osmp__rv *rv, int rank, const void *send, void *recv, size_t len,
                       const struct osmp__wait_policy *wait, int64_t deadline)
{
    if (len > rv->maxlen || rank < 0 || (uint32_t)rank >= rv->size) return OSMP_ERR_INVALID_ARG;
    memcpy(rv->data + (size_t)rank * rv->maxlen, send, len);
    osmp_atomic32_t *in = entered(rv);
    uint32_t mine = osmp__fetch_add32(&in[rank], 1) + 1;
    int rc = osmp__rv_barrier(rv, wait, deadline);
    if (rc == OSMP_ERR_TIMEOUT) { /* name who never came; the first to time out says it */
        char who[256];
        int n = 0, missing = 0;
        for (uint32_t r = 0; r < rv->size; r++) {
            if (osmp__load32(&in[r]) >= mine) continue;
            if (n < (int)sizeof(who) - 16) n += snprintf(who + n, sizeof(who) - (size_t)n, "%s%u", missing ? ", " : "", r);
            missing++;
        }
        if (missing && osmp__cas32(&rv->said, 0, 1))
            fprintf(stderr, "osmp: rank %d: joining timed out (OSMP_JOIN_TIMEOUT): %d rank(s) never arrived: %s%s\n",
                    rank, missing, who, n >= (int)sizeof(who) - 16 ? ", ..." : "");
    }
    if (rc) return rc;
    for (uint32_t r = 0; r < rv->size; r++) memcpy((char *)recv + r * len, rv->data + r * rv->maxlen, len);
    return osmp__rv_barrier(rv, wait, deadline);
}
