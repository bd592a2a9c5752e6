/*
 * Alltoall by single copy in rounds that spread the traffic between the
 * machine's top domains (the groups under the plan's last level: packages on
 * a multi-package machine) over time.
 *
 * Why not nearest peers first: every rank would do its cross-package reads in
 * the same late rounds, all links busy at once after an idle start. Why not the
 * rank-order rotation of "pairwise": with a cross-socket binding (rank r on
 * package r mod P), round k sends every reader of package A to package A + k,
 * so each round loads one link per package with all of its readers. Instead
 * rank (A, S) (domain A, S-th of its domain) reads in round (d, u) from rank
 * (A + d + S mod P, S + u mod m) (m = the largest domain): for each round
 * this maps readers to sources one to one (a Latin square), the readers of a
 * domain read from min(m, P) different domains and no domain serves more reads
 * than it has ranks, whatever the binding; over all P * m rounds each rank
 * reads every cell once (holes of smaller domains are skipped). 48 ranks
 * cross-socket on 8 packages of 6, rounds in lockstep: at most 1 reader per
 * (package, package) pair per round, against 6 for the rotation.
 */
#include <stdlib.h>

#include "common/fault.h"
#include "coll/co.h"

/* My reading order, into order[0 .. n-1]; 0 if it needed memory it did not get. */
static int schedule(osmp__coll_t t, int *order)
{
    const struct osmp_plan *plan = t->plan;
    int n = t->size, me = t->rank, top = plan->nlevels - 1, rc = 0, P = 1, m = 0, A, S = 0, k = 0;
    int *rep = osmp__malloc(sizeof(int) * (size_t)n), *lead = osmp__malloc(sizeof(int) * (size_t)n),
        *dom = osmp__malloc(sizeof(int) * (size_t)n), *cnt = NULL, *cell = NULL;
    if (!rep || !lead || !dom) goto out;
    for (int r = 0; r < n; r++) rep[r] = r;
    for (int i = 0; i < top; i++) { /* rep[r]: the level-(i+1) member above r */
        for (int g = 0; g < plan->levels[i].ngroups; g++)
            for (int x = 0; x < plan->levels[i].groups[g].nmembers; x++)
                lead[plan->levels[i].groups[g].members[x]] = plan->levels[i].groups[g].leader;
        for (int r = 0; r < n; r++) rep[r] = lead[rep[r]];
    }
    for (int r = 0; r < n; r++) dom[r] = 0;
    if (top >= 1) { /* several domains: the last level's members, in its (hardware) order */
        const struct osmp_plan_group *G = &plan->levels[top].groups[0];
        P = G->nmembers;
        for (int x = 0; x < P; x++) lead[G->members[x]] = x;
        for (int r = 0; r < n; r++) dom[r] = lead[rep[r]];
    }
    cnt = osmp__calloc((size_t)P, sizeof(int));
    if (!cnt) goto out;
    for (int r = 0; r < n; r++)
        if (++cnt[dom[r]] > m) m = cnt[dom[r]];
    cell = osmp__malloc(sizeof(int) * (size_t)P * (size_t)m);
    if (!cell) goto out;
    for (size_t c = 0; c < (size_t)P * (size_t)m; c++) cell[c] = -1;
    A = dom[me];
    for (int x = 0; x < P; x++) cnt[x] = 0;
    for (int r = 0; r < n; r++) { /* slots in rank order within a domain */
        if (r == me) S = cnt[dom[r]];
        cell[(size_t)dom[r] * (size_t)m + (size_t)cnt[dom[r]]++] = r;
    }
    for (int d = 0; d < P; d++)
        for (int u = 0; u < m; u++) {
            int r = cell[(size_t)((A + d + S) % P) * (size_t)m + (size_t)((S + u) % m)];
            if (r >= 0) order[k++] = r;
        }
    rc = k == n;
out:
    free(rep);
    free(lead);
    free(dom);
    free(cnt);
    free(cell);
    return rc;
}

/*
 * Protocol (single copy):
 *   1. every rank exposes its send buffer and publishes up;
 *   2. every rank copies block `me` of each rank's buffer into place, in its
 *      schedule's order (without memory for the schedule: rank order from the
 *      next rank, as "pairwise"), then publishes down;
 *   3. every rank returns once all have published down (nobody reads it any more).
 * Across waits (resumable form): the step (co->s), the schedule (co->p.scratch:
 * a request frees it if the call fails half way; NULL: rank order), the
 * round (co->i) and a failed copy (co->rc).
 */
static inline __attribute__((always_inline)) int alltoall_distance(osmp__coll_t t, const struct osmp__args *a,
                                                                   struct osmp__co *co, const int R)
{
    struct osmp__mbox *m = &t->mb;
    int me = t->rank, n = t->size;
    size_t bytes = a->count * a->esize;
#define PEER(k) (co->p.scratch ? ((const int *)(void *)co->p.scratch)[k] : (me + (k)) % n)
    OSMP__CO_BEGIN(R, co);
    co->rc = OSMP_OK;
    co->s = osmp__phase(t) + 1;
    co->p.scratch = osmp__malloc(sizeof(int) * (size_t)n);
    if (co->p.scratch && !schedule(t, (int *)(void *)co->p.scratch)) {
        free(co->p.scratch);
        co->p.scratch = NULL;
    }
    osmp__mb_chan(m, me, OSMP__UP)->addr = osmp__expose(a->in);
    osmp__mb_publish(m, OSMP__UP, co->s); /* 1 */
    for (co->i = 0; co->i < n; co->i++) { /* 2 */
        OSMP__AWAIT(R, co, m, PEER(co->i), OSMP__UP, co->s);
        int r = PEER(co->i);
        const char *src = (const char *)(uintptr_t)osmp__mb_chan(m, r, OSMP__UP)->addr;
        if (r == me)
            osmp__copy_own(t, (char *)a->out + (size_t)me * bytes, (const char *)a->in + (size_t)me * bytes, bytes);
        else if (bytes && osmp__copy_from(m->pids[r], m->local[r], (char *)a->out + (size_t)r * bytes,
                                          src + (size_t)me * bytes, bytes))
            co->rc = osmp__mb_copy_failed(m, r);
        osmp__trace_copy(t, r, me, bytes);
    }
    free(co->p.scratch);
    co->p.scratch = NULL;
    osmp__mb_publish(m, OSMP__DOWN, co->s);
    for (co->i = 0; co->i < n; co->i++) /* 3 */
        OSMP__AWAIT(R, co, m, co->i, OSMP__DOWN, co->s);
    OSMP__CO_END(R, co);
#undef PEER
    return co->rc;
}

/* A failed blocking call frees its schedule here, a request when it ends (team/request.c). */
static inline __attribute__((always_inline)) int alltoall_distance_run(osmp__coll_t t, const struct osmp__args *a,
                                                                       struct osmp__co *co, const int R)
{
    int rc = alltoall_distance(t, a, co, R);
    if (rc && !R) free(co->p.scratch);
    return rc;
}
OSMP__COMPILE_TWICE(osmp__alltoall_distance, alltoall_distance_run)
