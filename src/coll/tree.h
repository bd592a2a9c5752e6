/* The steps of a pipelined pass over a base-case tree (tree.c), for the tree
 * algorithms of broadcast, reduce and allreduce; and the entry of the
 * algorithms that move every rank's block along the plan's tree. */
#ifndef OSMP_COLL_TREE_H
#define OSMP_COLL_TREE_H

#include "coll/coll.h"

struct osmp__pass {
    osmp__coll_t t;
    const struct osmp__tree *tree;
    uint64_t base;                           /* the phase */
    size_t esize, count, per_chunk, nchunks; /* elements */
    /* Mini lines per message (up to OSMP__MINI_LINES_MAX, mailbox.h: the message is one chunk), or
     * 0: the ring slots, chunk c through slot (first_slot + c) % depth. */
    int lines;
    uint64_t first_slot; /* with mini lines, message c's are first_slot + c * lines ... */
    /* Down passes that expose (bcast; 0 elsewhere): my buffer as my children
     * read it in place instead of through my slots, and my parent's (0: I
     * stage through my slots; my parent stages through its). */
    uint64_t exposed, from;
    /* Up passes by single copy (reduce_tree.c; 0 elsewhere): leaves expose their
     * input instead of staging it, and their parent copies each chunk once into
     * `scratch` (a chunk's bytes) before folding it in. */
    int once;
    char *scratch;
    /* Up passes: the kernel that folds my chunk and my first child's into my
     * result at once, instead of copying mine there first (NULL: copy, fold). */
    osmp__reduce_fn3 fn3;
};

/* The tree of a->radix rooted at a->root, the chunking, and a new phase. */
int osmp__pass_init(struct osmp__pass *p, osmp__coll_t t, const struct osmp__args *a);
/* Chunk c towards the root, combined with fn on the way (out: the root's result). */
int osmp__pass_up(const struct osmp__pass *p, size_t c, const char *in, char *out, osmp__reduce_fn fn);
/* Chunk c away from the root, into buf on every rank: from the parent's slot,
 * or from its buffer (p->from); passed on through my slot unless p->exposed. */
int osmp__pass_down(const struct osmp__pass *p, size_t c, char *buf);

#endif
