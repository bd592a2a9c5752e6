/* Tree reduce: up the plan's tree, pipelined. */
#include <stdlib.h>

#include "common/fault.h"
#include "coll/co.h"

/*
 * Reduce protocol, per chunk c (pipelined): 1. up step c: leaves publish their
 * chunk, inner ranks combine their children's chunks into theirs and publish,
 * the root combines into the output.
 * Single copy (a->single_copy: OSMP_SINGLE_COPY_MIN, or a far team whose
 * slots are not streamed; never between threads: select.c), where a staged
 * chunk would cross twice (the leaf taking its slot's lines back from its
 * parent's cache, the parent reading them) and a copy once (streaming stores
 * cross once too, so a far team that streams stages); for messages up to
 * ONCE_MAX only: beyond, the staged pipeline keeps leaf and parent busy at
 * once, where the single copy leaves all the work to the parent:
 *   1. a leaf exposes its input and publishes every chunk at once;
 *   2. up step c as above, but a parent copies a leaf child's chunk c once from
 *      its input into scratch and folds it from there (inner ranks still stage:
 *      their partial results would need buffers of the whole message);
 *   3. a leaf returns once its parent has published the last chunk: it has
 *      read all of my input.
 */
/* Balances the crossing single copy saves against the leaf's share of the
 * work it gives up (docs/measurements.md, "Reductions", D4-D5). */
#define ONCE_MAX ((size_t)512 * 1024)

static inline __attribute__((always_inline)) int reduce_tree(osmp__coll_t t, const struct osmp__args *a,
                                                             struct osmp__co *co, const int R)
{
    int rc;
    struct osmp__pass *p = &co->p;
    OSMP__CO_BEGIN(R, co);
    if ((rc = osmp__pass_init(p, t, a))) return rc;
    /* (subtree sizes say which children are leaves: the plan's trees have them, the MST none) */
    p->once = a->single_copy && !p->lines && a->count * a->esize <= ONCE_MAX && p->tree->child_nsub;
    {
        int leaf_children = 0;
        for (int i = 0; p->once && i < p->tree->nchildren; i++) leaf_children += p->tree->child_nsub[i] == 1;
        if (leaf_children && !(p->scratch = osmp__malloc(p->per_chunk * p->esize))) return OSMP_ERR_NO_MEMORY;
    }
    for (co->c = 0; co->c < p->nchunks; co->c++) {
        OSMP__AWAIT_UP(R, co, rc, co->c, a->in, a->out, a->fn); /* 1, 2 (a failure: the scratch is freed below, or by the request) */
    }
    free(p->scratch);
    p->scratch = NULL;
    if (p->once && p->tree->parent >= 0 && !p->tree->nchildren) /* 3 */
        OSMP__AWAIT(R, co, &t->mb, p->tree->parent, OSMP__UP, p->base + p->nchunks);
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

/* A failed blocking call frees its scratch here, a request when it ends (team/request.c). */
static inline __attribute__((always_inline)) int reduce_tree_run(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co, const int R)
{
    int rc = reduce_tree(t, a, co, R);
    if (rc && !R) free(co->p.scratch);
    return rc;
}
OSMP__COMPILE_TWICE(osmp__reduce_tree, reduce_tree_run)
