/*
 * Algorithm selection for allreduce and barrier: the tree walks the plan; a
 * team that is one group may use the direct algorithms of flat.c instead.
 * OSMP_<OP>_ALG forces a choice (flat and kary:K pick the tree's base case).
 */
#include "coll.h"

/* Flat teams up to this size use the all-read allreduce for inline messages
 * and the direct barrier: each rank polls n-1 lines, cheap while n is small. */
#define DIRECT_SMALL_MAX_RANKS 16
/* From this size a flat team spreads the reduction over every rank. */
#define SLICED_MIN_BYTES 65536

int osmp__allreduce(osmp__team_t t, const void *in, void *out, size_t count, size_t esize, osmp__reduce_fn fn)
{
    size_t bytes = count * esize;
    int alg = t->radix_of[OSMP__OP_ALLREDUCE];
    int direct = alg == OSMP__ALG_DIRECT ||
                 (alg == -1 && t->size > 1 && osmp__flat_team(t) &&
                  (bytes <= OSMP_INLINE_MAX ? t->size <= DIRECT_SMALL_MAX_RANKS : bytes >= SLICED_MIN_BYTES));
    if (!direct) return osmp__tree_reduce(t, in, out, count, esize, fn, 0, 1);
    if (bytes <= OSMP_INLINE_MAX) return osmp__direct_allreduce(t, in, out, count, esize, fn);
    return osmp__sliced_allreduce(t, in, out, count, esize, fn);
}

int osmp__barrier(osmp__team_t t)
{
    int alg = t->radix_of[OSMP__OP_BARRIER];
    if (alg == OSMP__ALG_DIRECT || (alg == -1 && osmp__flat_team(t) && t->size <= DIRECT_SMALL_MAX_RANKS))
        return osmp__direct_barrier(t);
    return osmp__tree_barrier(t);
}
