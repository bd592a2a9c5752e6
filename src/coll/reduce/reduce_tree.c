/* Tree reduce: up the plan's tree, pipelined. */
#include <stdlib.h>

#include "common/fault.h"
#include "coll/tree.h"

int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a);

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

int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a)
{
    struct osmp__pass p;
    int rc = osmp__pass_init(&p, t, a);
    if (rc) return rc;
    const struct osmp__tree *tr = p.tree;
    /* (subtree sizes say which children are leaves: the plan's trees have them, the MST none) */
    p.once = a->single_copy && !p.lines && a->count * a->esize <= ONCE_MAX && tr->child_nsub;
    int leaf_children = 0;
    for (int i = 0; p.once && i < tr->nchildren; i++) leaf_children += tr->child_nsub[i] == 1;
    if (leaf_children && !(p.scratch = osmp__malloc(p.per_chunk * p.esize))) return OSMP_ERR_NO_MEMORY;
    for (size_t c = 0; c < p.nchunks && !rc; c++) rc = osmp__pass_up(&p, c, a->in, a->out, a->fn); /* 1, 2 */
    free(p.scratch);
    if (!rc && p.once && tr->parent >= 0 && !tr->nchildren &&
        osmp__mb_wait(&t->mb, tr->parent, OSMP__UP, p.base + p.nchunks)) /* 3 */
        return t->mb.failed;
    return rc;
}
