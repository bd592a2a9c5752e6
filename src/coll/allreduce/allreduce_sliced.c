/*
 * Sliced reductions (allreduce and reduce): every member of a group reduces one
 * slice of each chunk, so the reduction work and the memory traffic are spread
 * over the whole team instead of one leader per group (OSMP, XHC). "sliced"
 * treats the team as one group (selection: flat teams, large messages);
 * "hsliced" follows the plan level by level (hierarchical teams, large
 * messages). On a flat team the two are the same algorithm.
 *
 * Why every participant slices at every level (rather than only the leaders
 * above the leaf level): a group at level L spans the participants S below it
 * (its subtree, ascending ranks), and each of them owns 1/|S| of the chunk at
 * that level. Each of the g domains of a group then takes in (g-1)/g of the
 * vector on the way up and as much on the way down, as between leaders, but
 * through every core of the domain at once rather than one leader's link; and
 * the combining work per participant is the vector over its leaf group's size
 * plus 1/|S| of it per level above. Slicing among the leaders only would move
 * the same bytes across domains but have each leader combine a whole vector
 * again at every level above the leaf (48 ranks in 8 packages of 6: 2 MiB of a
 * 1 MiB vector per leader, against 1.17 MiB for every rank here).
 *
 * Order of combination, and what is guaranteed. Element e of the result is, at
 * level 0, each group's members' inputs folded in ascending rank order; at
 * level L, each group's children (the level L-1 groups its members lead)
 * folded in ascending order of their leaders; a group of one passes its
 * child's value on. The order is a function of the plan (root 0) only, never
 * of the chunk size, pipeline depth, slice boundaries, root, or who computes
 * which slice. Hence: results are bitwise identical on every participant, the
 * same for allreduce and for reduce at every root, and the same run to run for
 * a given team and placement. Placements that give the same groups of ranks
 * give the same bits; placements that group the ranks differently may round
 * floating-point sums differently (a hierarchical order cannot be a fixed
 * function of ranks alone without giving up the hierarchy). One group (flat
 * teams, "sliced") is ascending rank order: independent of placement.
 */
#include <stdlib.h>
#include <string.h>

#include "common/fault.h"
#include "coll/co.h"

int osmp__allreduce_tree(osmp__coll_t t, const struct osmp__args *a);
int osmp__reduce_tree(osmp__coll_t t, const struct osmp__args *a);
int osmp__allreduce_tree_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);
int osmp__reduce_tree_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);

/*
 * Sliced reduction protocol, per chunk c (ring slot c % depth; steps below):
 *   1. claim both my slots (everyone has published "done" for the chunk that
 *      used them last), copy my input but for my own slice of my lowest
 *      non-trivial level into my up slot, publish up sc;
 *   2. for each level L non-trivial for me, leaf first: fold my slice of my
 *      level-L group's children, in folding order, into my down slot (a rank's
 *      input from its up slot or my own buffer, a group's partial from the
 *      owners of its slices at the level it lives at), publish up sc+1+L. At
 *      the top the slice is final. (Allreduce on one level: I fold into my
 *      output's slice and copy it into my down slot from there);
 *   3. depth/2 chunks later (I fold the next chunks' slices meanwhile; at
 *      depth 1 at once), allreduce: for each level L non-trivial for me, from
 *      the top down, copy the final values of my level-L slice from the owners
 *      at my next level up over the partial I no longer need (its one reader
 *      there has read it before that owner published), publish down; then
 *      copy the whole chunk from the owners of my lowest level into the
 *      output. Reduce: only the root copies the chunk, from the top's owners;
 *   4. publish down sc+2NL+1: I have read everything of chunk c.
 * Each element is folded once, in the order stated at the top of the file.
 *
 * Steps of chunk c: sc = base + 1 + c * (2 NL + 2), NL the view's levels;
 *   up   sc            my input is in my up slot
 *   up   sc + 1 + L    my partial of level L is in my down slot (L non-trivial for me)
 *   down sc + 2NL - L  my final values of level L (L below the top) replaced that partial
 *   down sc + 2NL + 1  I have read everything of this chunk: both my slots may be rewritten
 * My down slot holds my slice of each non-trivial level, lowest first, each
 * with room for K / |S| + 1 elements; K, the elements per chunk, is the most
 * that lets every participant's slices fit. Which participants read a slot
 * shifts with the length of the chunk (the last one is shorter), so a slot is
 * rewritten once every participant is done with the chunk it held: one line
 * per peer read at each claim, as the flat sliced algorithm always did.
 */

/* A group of one level of the view, as the algorithm needs it. */
struct sl_group {
    int nsub; /* its subtree: the participants below it, ascending */
    int *sub;
    int nchild;     /* its children, in folding order (ascending leaders) */
    int *child_lev; /* where a child's partial lives: the highest non-trivial level below (-1: a rank's input)
                     */
    int *child_rep; /* a rank of the child's subtree (its leader) */
};

/* The slicing of one view of the team (one group, or the plan's levels). */
struct osmp__slicing {
    const struct osmp_plan *plan; /* built from (NULL: one group) */
    int nlevels, size;
    int *ngroups;
    struct sl_group **groups; /* [level][group] */
    int *grp, *pos;   /* [level * size + rank]: the group above rank, the rank's place in its subtree */
    double load;      /* max over ranks of sum over their non-trivial levels of 1 / |subtree| */
    int nmine, *mine; /* my non-trivial levels, ascending (the top one last) */
};

static void slicing_free(struct osmp__slicing *s)
{
    if (!s) return;
    for (int L = 0; s->groups && L < s->nlevels; L++) {
        for (int g = 0; s->groups[L] && g < s->ngroups[L]; g++) {
            free(s->groups[L][g].sub);
            free(s->groups[L][g].child_lev);
            free(s->groups[L][g].child_rep);
        }
        free(s->groups[L]);
    }
    free(s->groups);
    free(s->ngroups);
    free(s->grp);
    free(s->pos);
    free(s->mine);
    free(s);
}

void osmp__slicings_free(osmp__coll_t t)
{
    for (int i = 0; i < 2; i++) {
        slicing_free(t->slicing[i]);
        t->slicing[i] = NULL;
    }
}

static int nontrivial(const struct osmp__slicing *s, int L, int rank)
{
    return s->groups[L][s->grp[L * s->size + rank]].nchild > 1;
}

/* Built from the plan (hier) or as one group of everyone; NULL on no memory.
 * Every participant builds the same from the same plan. */
static struct osmp__slicing *slicing_build(osmp__coll_t t, int hier)
{
    const struct osmp_plan *plan = t->plan;
    int n = t->size, NL = hier ? plan->nlevels : 1;
    struct osmp__slicing *s = osmp__calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->nlevels = NL;
    s->plan = hier ? plan : NULL;
    s->size = n;
    s->ngroups = osmp__calloc((size_t)NL, sizeof(int));
    s->groups = osmp__calloc((size_t)NL, sizeof(*s->groups));
    s->grp = osmp__malloc(sizeof(int) * (size_t)NL * (size_t)n);
    s->pos = osmp__malloc(sizeof(int) * (size_t)NL * (size_t)n);
    s->mine = osmp__malloc(sizeof(int) * (size_t)NL);
    int *lead = osmp__malloc(sizeof(int) * (size_t)n);   /* at the level below: rank -> the group it leads */
    int *member = osmp__malloc(sizeof(int) * (size_t)n); /* at this level: rank -> the group it is a member of */
    if (!s->ngroups || !s->groups || !s->grp || !s->pos || !s->mine || !lead || !member) goto fail;
    for (int L = 0; L < NL; L++) {
        int ng = hier ? plan->levels[L].ngroups : 1;
        s->ngroups[L] = ng;
        s->groups[L] = osmp__calloc((size_t)ng, sizeof(struct sl_group));
        if (!s->groups[L]) goto fail;
        for (int g = 0; g < ng; g++) {
            struct sl_group *G = &s->groups[L][g];
            int nm = hier ? plan->levels[L].groups[g].nmembers : n;
            G->nchild = nm;
            G->child_lev = osmp__malloc(sizeof(int) * (size_t)nm);
            G->child_rep = osmp__malloc(sizeof(int) * (size_t)nm);
            if (!G->child_lev || !G->child_rep) goto fail;
            for (int i = 0; i < nm; i++) {
                int r = hier ? plan->levels[L].groups[g].members[i] : i;
                member[r] = g;
                G->child_rep[i] = r;
                if (L == 0) {
                    G->child_lev[i] = -1;
                } else {
                    const struct sl_group *C = &s->groups[L - 1][lead[r]];
                    G->child_lev[i] = C->nchild > 1 ? L - 1 : C->child_lev[0];
                }
            }
        }
        for (int r = 0; r < n;
             r++) /* the level-L group above r: the one its level-(L-1) group's leader joins */
            s->grp[L * n + r] =
                L == 0 ? member[r] : member[plan->levels[L - 1].groups[s->grp[(L - 1) * n + r]].leader];
        for (int g = 0; g < ng; g++) {
            struct sl_group *G = &s->groups[L][g];
            G->sub = osmp__malloc(sizeof(int) * (size_t)n);
            if (!G->sub) goto fail;
        }
        for (int r = 0; r < n; r++) { /* ascending r: subtrees come out sorted */
            struct sl_group *G = &s->groups[L][s->grp[L * n + r]];
            s->pos[L * n + r] = G->nsub;
            G->sub[G->nsub++] = r;
        }
        for (int g = 0; hier && g < ng; g++)
            lead[plan->levels[L].groups[g].leader] = g;
    }
    for (int r = 0; r < n; r++) {
        double load = 0;
        for (int L = 0; L < NL; L++)
            if (nontrivial(s, L, r)) {
                load += 1.0 / s->groups[L][s->grp[L * n + r]].nsub;
                if (r == t->rank) s->mine[s->nmine++] = L;
            }
        if (load > s->load) s->load = load;
    }
    free(lead);
    free(member);
    return s;
fail:
    free(lead);
    free(member);
    slicing_free(s);
    return NULL;
}

/* ---------------------------------------------------------------- one call */

/* The first element of slice p of s of a chunk of k elements (slice p ends where p + 1 begins). */
static size_t lo_of(size_t k, int s, int p)
{
    return k * (size_t)p / (size_t)s;
}

struct call {
    osmp__coll_t t;
    const struct osmp__args *a;
    const struct osmp__slicing *s;
    size_t K;    /* elements per chunk */
    uint64_t sc; /* the chunk's first step */
    int slot;
    size_t off, k; /* the chunk: first element, elements */
    int in_out;    /* my slice is folded in my output, then staged into my down slot */
};

/*
 * The steps below are sub-machines (coll/co.h) of the call's body: each keeps
 * its place in a struct osmp__co_sub (a level's fold, its loop over the
 * group's children in sub->j, in co->sub; the gather inside it, its loop over
 * the owners in sub->i, in co->sub2) and is compiled into both forms with the
 * body. Everything else a step uses is a function of the call and the chunk,
 * recomputed at each entry.
 */

static uint64_t st_partial(const struct call *c, int L)
{
    return c->sc + 1 + (uint64_t)L;
}

static uint64_t st_final(const struct call *c, int L)
{
    return L == c->s->nlevels - 1 ? st_partial(c, L) : c->sc + 2 * (uint64_t)c->s->nlevels - (uint64_t)L;
}

static uint64_t st_done(const struct call *c)
{
    return c->sc + 2 * (uint64_t)c->s->nlevels + 1;
}

/* Where rank y keeps its level-L slice in its down slot (elements): its slices
 * of lower non-trivial levels come first, each with room for K / |S| + 1. */
static size_t buf_of(const struct call *c, int L, int y)
{
    const struct osmp__slicing *s = c->s;
    size_t at = 0;
    for (int l = 0; l < L; l++)
        if (nontrivial(s, l, y)) at += c->K / (size_t)s->groups[l][s->grp[l * s->size + y]].nsub + 1;
    return at;
}

/* The part [*x, *y) of [lo, hi) that the p-th owner of G's slices holds; 0 if none. */
static int span(const struct call *c, const struct sl_group *G, int p, size_t lo, size_t hi, size_t *x, size_t *y)
{
    size_t ylo = lo_of(c->k, G->nsub, p), yhi = lo_of(c->k, G->nsub, p + 1);
    *x = ylo > lo ? ylo : lo;
    *y = yhi < hi ? yhi : hi;
    return *x < *y;
}

/* Move elements [lo, hi) of the chunk, as held by the owners of level L's
 * slices in group G (once they have published `step` up or down), into dst
 * (element lo at dst): copied (fold 0), folded in with fn (1), or copied but
 * for my own slice, which is there already (2). The owner in sub->i. */
static inline __attribute__((always_inline)) int gather(const struct call *c, const struct sl_group *G, int L,
                                                        int dir, uint64_t step, size_t lo, size_t hi, char *dst,
                                                        int fold, struct osmp__co_sub *sub, const int R)
{
    osmp__coll_t t = c->t;
    struct osmp__mbox *m = &t->mb;
    size_t e = c->a->esize, k = c->k, x, y;
    int owner;
    OSMP__CO_BEGIN(R, sub);
    sub->i = (int)(lo * (size_t)G->nsub / k); /* the owner of lo, or just before it */
    while (sub->i + 1 < G->nsub && lo_of(k, G->nsub, sub->i + 1) <= lo)
        sub->i++;
    for (; sub->i < G->nsub && lo_of(k, G->nsub, sub->i) < hi; sub->i++) {
        if (!span(c, G, sub->i, lo, hi, &x, &y) || (G->sub[sub->i] == t->rank && fold == 2)) continue;
        if (G->sub[sub->i] != t->rank) OSMP__AWAIT(R, sub, m, G->sub[sub->i], dir, step);
        span(c, G, sub->i, lo, hi, &x, &y);
        owner = G->sub[sub->i];
        const char *src = osmp__mb_slot(m, owner, OSMP__DOWN, c->slot) +
                          (buf_of(c, L, owner) + x - lo_of(k, G->nsub, sub->i)) * e;
        if (fold == 1)
            c->a->fn(dst + (x - lo) * e, src, y - x);
        else
            memcpy(dst + (x - lo) * e, src, (y - x) * e);
        osmp__trace_copy(t, owner, t->rank, (y - x) * e);
    }
    OSMP__CO_END(R, sub);
    return OSMP_OK;
}

/* Step 1 of chunk c. */
static inline __attribute__((always_inline)) int up_input(const struct call *c, struct osmp__co_sub *sub,
                                                          const int R)
{
    osmp__coll_t t = c->t;
    struct osmp__mbox *m = &t->mb;
    const struct osmp__slicing *s = c->s;
    const struct osmp__args *a = c->a;
    int me = t->rank, n = t->size, L0 = s->mine[0];
    size_t e = a->esize, k = c->k;
    const struct sl_group *G0 = &s->groups[L0][s->grp[L0 * n + me]];
    size_t lo = lo_of(k, G0->nsub, s->pos[L0 * n + me]), hi = lo_of(k, G0->nsub, s->pos[L0 * n + me] + 1);
    const char *in = (const char *)a->in + c->off * e;
    char *up;
    OSMP__CO_BEGIN(R, sub);
    OSMP__AWAIT_CLAIM(R, sub, m, OSMP__UP, c->slot);
    OSMP__AWAIT_CLAIM(R, sub, m, OSMP__DOWN, c->slot);
    if (!(up = osmp__mb_claim(m, OSMP__UP, c->slot, t->peers, n - 1, OSMP__DOWN, st_done(c)))) return m->failed;
    if (!osmp__mb_claim(m, OSMP__DOWN, c->slot, t->peers, n - 1, OSMP__DOWN, st_done(c))) return m->failed;
    osmp__stage(t, up, in, lo * e); /* the others' slices only: I read mine in place */
    osmp__stage(t, up + hi * e, in + hi * e, (k - hi) * e);
    osmp__trace_copy(t, me, me, (k - (hi - lo)) * e);
    osmp__mb_publish(m, OSMP__UP, c->sc);
    OSMP__CO_END(R, sub);
    return OSMP_OK;
}

/* Do child j of G and the next one go into my slice in one pass (fn3): the
 * first two, both ranks' inputs. */
static int paired(const struct call *c, const struct sl_group *G, int j)
{
    return j == 0 && G->nchild > 1 && G->child_lev[1] < 0 && c->a->fn3;
}

/* Step 2 of chunk c at my i-th non-trivial level: child j in sub->j, a
 * child's gather in sub2. */
static inline __attribute__((always_inline)) int up_level(const struct call *c, int i, struct osmp__co_sub *sub,
                                                          struct osmp__co_sub *sub2, const int R)
{
    osmp__coll_t t = c->t;
    struct osmp__mbox *m = &t->mb;
    const struct osmp__slicing *s = c->s;
    const struct osmp__args *a = c->a;
    int me = t->rank, n = t->size, rc, y, y1;
    size_t e = a->esize;
    char *down = osmp__mb_slot(m, me, OSMP__DOWN, c->slot);
    const char *in = (const char *)a->in + c->off * e;
    int L = s->mine[i];
    const struct sl_group *G = &s->groups[L][s->grp[L * n + me]];
    size_t lo = lo_of(c->k, G->nsub, s->pos[L * n + me]), hi = lo_of(c->k, G->nsub, s->pos[L * n + me] + 1);
    char *acc = c->in_out ? (char *)a->out + (c->off + lo) * e : down + buf_of(c, L, me) * e;
#define LEV (G->child_lev[sub->j])
#define CHILD (&s->groups[LEV][s->grp[LEV * n + G->child_rep[sub->j]]])
    OSMP__CO_BEGIN(R, sub);
    for (sub->j = 0; sub->j < G->nchild && hi > lo; sub->j++) {
        if (LEV >= 0) {
            OSMP__AWAIT_SUB(R, sub, rc,
                            gather(c, CHILD, LEV, OSMP__UP, st_partial(c, LEV), lo, hi, acc, sub->j > 0, sub2, R));
            continue;
        }
        if (G->child_rep[sub->j] != me) OSMP__AWAIT(R, sub, m, G->child_rep[sub->j], OSMP__UP, c->sc);
        if (paired(c, G, sub->j) && G->child_rep[1] != me) OSMP__AWAIT(R, sub, m, G->child_rep[1], OSMP__UP, c->sc);
        y = G->child_rep[sub->j];
        const char *v = (y == me ? in : osmp__mb_slot(m, y, OSMP__UP, c->slot)) + lo * e;
        osmp__trace_copy(t, y, me, (hi - lo) * e);
        if (paired(c, G, sub->j)) { /* the first two inputs into the slice in one pass, not a copy then a fold */
            y1 = G->child_rep[1];
            a->fn3(acc, v, (y1 == me ? in : osmp__mb_slot(m, y1, OSMP__UP, c->slot)) + lo * e, hi - lo);
            osmp__trace_copy(t, y1, me, (hi - lo) * e);
            sub->j++;
        } else if (sub->j > 0) {
            a->fn(acc, v, hi - lo);
        } else if (acc != v) { /* (in place, rank 0's first child is its own output) */
            memcpy(acc, v, (hi - lo) * e);
        }
    }
    if (c->in_out) {
        osmp__stage(t, down + buf_of(c, L, me) * e, acc, (hi - lo) * e);
        osmp__trace_copy(t, me, me, (hi - lo) * e);
    }
    osmp__trace_reduce(t, (size_t)G->nchild * (hi - lo) * e);
    osmp__mb_publish(m, OSMP__UP, st_partial(c, L));
    OSMP__CO_END(R, sub);
#undef LEV
#undef CHILD
    return OSMP_OK;
}

/* Step 3 of chunk c (allreduce) at my i-th non-trivial level, i below the top
 * (its gather in sub: the step's only wait). */
static inline __attribute__((always_inline)) int down_level(const struct call *c, int i, struct osmp__co_sub *sub,
                                                            const int R)
{
    osmp__coll_t t = c->t;
    const struct osmp__slicing *s = c->s;
    int me = t->rank, n = t->size, L = s->mine[i], U = s->mine[i + 1], rc;
    const struct sl_group *G = &s->groups[L][s->grp[L * n + me]];
    size_t lo = lo_of(c->k, G->nsub, s->pos[L * n + me]), hi = lo_of(c->k, G->nsub, s->pos[L * n + me] + 1);
    const struct sl_group *GU = &s->groups[U][s->grp[U * n + me]];
    char *down = osmp__mb_slot(&t->mb, me, OSMP__DOWN, c->slot);
    int dir = U == s->nlevels - 1 ? OSMP__UP : OSMP__DOWN;
    if (hi > lo &&
        (rc = gather(c, GU, U, dir, st_final(c, U), lo, hi, down + buf_of(c, L, me) * c->a->esize, 0, sub, R)))
        return rc;
    osmp__mb_publish(&t->mb, OSMP__DOWN, st_final(c, L));
    return OSMP_OK;
}

/* The end of step 3 (allreduce: the whole chunk into my output; reduce: the
 * root's), and step 4 (the gather in sub). */
static inline __attribute__((always_inline)) int down_out(const struct call *c, int all, struct osmp__co_sub *sub,
                                                          const int R)
{
    osmp__coll_t t = c->t;
    const struct osmp__slicing *s = c->s;
    const struct osmp__args *a = c->a;
    int me = t->rank, NL = s->nlevels, L0 = s->mine[0];
    char *out = (char *)a->out + c->off * a->esize;
    int rc = OSMP_OK;
    if (all)
        rc = gather(c, &s->groups[L0][s->grp[L0 * t->size + me]], L0, L0 == NL - 1 ? OSMP__UP : OSMP__DOWN,
                    st_final(c, L0), 0, c->k, out, c->in_out ? 2 : 0, sub, R);
    else if (me == a->root)
        rc = gather(c, &s->groups[NL - 1][0], NL - 1, OSMP__UP, st_final(c, NL - 1), 0, c->k, out, 0, sub, R);
    if (rc) return rc;
    osmp__mb_publish(&t->mb, OSMP__DOWN, st_done(c)); /* 4 */
    return OSMP_OK;
}

/* The units of loop turn i: chunk i's steps 1 and 2 (i < nchunks), then chunk
 * i - lag's step 3 (i >= lag): 1 + nmine units up, nmine units down
 * (nmine - 1 levels and down_out). Unit u of turn i for c and d, each a
 * sub-machine in sub (and sub2). */
static inline __attribute__((always_inline)) int unit(const struct call *c, const struct call *d, int all, size_t i,
                                                      size_t nchunks, size_t lag, int u, struct osmp__co_sub *sub,
                                                      struct osmp__co_sub *sub2, const int R)
{
    int nm = c->s->nmine;
    if (u <= nm) {
        if (i >= nchunks) return OSMP_OK;
        return u == 0 ? up_input(c, sub, R) : up_level(c, u - 1, sub, sub2, R);
    }
    if (i < lag) return OSMP_OK;
    u -= nm + 1; /* 0 .. nm - 1: levels nm - 2 down to 0 (allreduce), then the output */
    if (u < nm - 1) return all ? down_level(d, nm - 2 - u, sub, R) : OSMP_OK;
    return down_out(d, all, sub, R);
}

static void at(struct call *c, uint64_t base, uint64_t stride, size_t i)
{
    c->sc = base + 1 + i * stride;
    c->slot = osmp__mb_ring(&c->t->mb, i);
    c->off = i * c->K;
    c->k = c->a->count - c->off < c->K ? c->a->count - c->off : c->K;
}

/* The call's chunking: K (0: slots too small, the tree instead). */
static size_t chunk_elems(osmp__coll_t t, const struct osmp__args *a, const struct osmp__slicing *s)
{
    /* The largest chunk whose slices of every level fit one slot beside each
     * other (the same on every participant: from the plan). */
    size_t C = t->mb.chunk / a->esize;
    if (C <= (size_t)s->nlevels + 1) return 0;
    double fit = (double)(C - (size_t)s->nlevels - 1) / s->load;
    size_t K = fit >= (double)C ? C : (size_t)fit;
    return K < 1 ? 1 : K;
}

/* The slicing for this call (hier: the plan's levels), built on first use. */
static const struct osmp__slicing *slicing_of(osmp__coll_t t, int hier)
{
    if (hier && t->slicing[1] && t->slicing[1]->plan != t->plan) { /* reduce and allreduce with specs of their own */
        slicing_free(t->slicing[1]);
        t->slicing[1] = NULL;
    }
    if (!t->slicing[hier]) t->slicing[hier] = slicing_build(t, hier);
    return t->slicing[hier];
}

/*
 * The body, both forms. Across its waits the resumable form keeps the phase
 * (co->base), the loop turn (co->c) and unit (co->j), the unit's sub-machines
 * (co->sub, co->sub2), and in co->bits 2 once handed over to the tree (co->p
 * and the rest of co, co->pc included, then the tree's).
 */
static inline __attribute__((always_inline)) int sliced(osmp__coll_t t, const struct osmp__args *a, int hier,
                                                        int all, struct osmp__co *co, const int R)
{
    size_t e = a->esize, count = a->count;
    int rc;
    if (t->size == 1) {
        if (a->out != a->in) memcpy(a->out, a->in, count * e);
        osmp__trace_copy(t, 0, 0, a->out != a->in ? count * e : 0);
        return OSMP_OK;
    }
    if (R && (co->bits & 2)) return all ? osmp__allreduce_tree_co(t, a, co) : osmp__reduce_tree_co(t, a, co);
    if (!hier || osmp__flat_team(t)) hier = 0; /* one group either way: share its slicing */
    const struct osmp__slicing *s = slicing_of(t, hier);
    if (!s) return OSMP_ERR_NO_MEMORY;
    struct call c = {t, a, s, chunk_elems(t, a, s), 0, 0, 0, 0, 0};
    if (!c.K) { /* slots too small for that: the tree instead */
        osmp__trace_handover(t, "flat"); /* (sliced takes no radix: a->radix is 0) */
        if (!R) return all ? osmp__allreduce_tree(t, a) : osmp__reduce_tree(t, a);
        co->bits = 2;
        return all ? osmp__allreduce_tree_co(t, a, co) : osmp__reduce_tree_co(t, a, co);
    }
    size_t nchunks = (count + c.K - 1) / c.K;
    uint64_t stride = 2 * (uint64_t)s->nlevels + 2;
    if (nchunks >= (OSMP__PHASE_STEPS - 1) / stride) return OSMP_ERR_RANGE;
    /* Down steps run `lag` chunks behind the up steps, so that a participant
     * folds the next chunks while the top level finishes this one. A slot is
     * claimed again `depth` chunks later, after the down steps that free it. */
    size_t lag = (size_t)(t->mb.depth / 2);
    if (lag > nchunks) lag = nchunks;
    /* One level, allreduce: I fold my slice into my output and stage it from
     * there (step 2) rather than fold into my slot and copy it out, so the
     * slot is written by a plain copy that osmp__stage may stream (a far
     * team's slots cross between caches). In place, a later child's input would be read
     * after the first fold overwrote it: only for the first one or two. */
    c.in_out = all && s->nlevels == 1 && (a->in != a->out || t->rank < (a->fn3 ? 2 : 1));
    struct call d = c;
    int nunits = 2 * s->nmine + 1;
    if (R && co->pc) { /* resumed inside loop turn co->c: its chunks */
        at(&c, co->base, stride, co->c);
        if (co->c >= lag) at(&d, co->base, stride, co->c - lag);
    }
    OSMP__CO_BEGIN(R, co);
    co->base = osmp__phase(t);
    for (co->c = 0; co->c < nchunks + lag; co->c++) {
        at(&c, co->base, stride, co->c);
        if (co->c >= lag) at(&d, co->base, stride, co->c - lag);
        for (co->j = 0; co->j < nunits; co->j++)
            OSMP__AWAIT_SUB(R, co, rc, unit(&c, &d, all, co->c, nchunks, lag, co->j, &co->sub, &co->sub2, R));
    }
    OSMP__CO_END(R, co);
    return OSMP_OK;
}

/* The four entry points: (all)reduce, sliced as one group or by the plan's levels. */
#define SLICED(name, hier, all)                                                                              \
    static inline __attribute__((always_inline)) int name(osmp__coll_t t, const struct osmp__args *a,        \
                                                          struct osmp__co *co, const int R)                 \
    {                                                                                                        \
        return sliced(t, a, hier, all, co, R);                                                               \
    }                                                                                                        \
    OSMP__COMPILE_TWICE(osmp__##name, name)
SLICED(allreduce_sliced, 0, 1)
SLICED(allreduce_hsliced, 1, 1)
SLICED(reduce_sliced, 0, 0)
SLICED(reduce_hsliced, 1, 0)
