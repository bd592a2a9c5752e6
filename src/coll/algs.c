/*
 * The algorithm tables of every collective (coll.h: osmp__<op>_algs), expanded
 * from the one list in algs.def: first every algorithm's declaration, both
 * forms (one that two collectives share, or that coll.h declares, is declared
 * again, which C allows), then the tables, each ended by a NULL name. Every
 * algorithm's resumable form, name_co (coll/co.h), is an ordinary reference:
 * an algorithm whose file does not define it fails to link.
 */
#include "coll/coll.h"

#define OSMP__ALGS(op, ...) __VA_ARGS__
#define OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)                                     \
    int run(osmp__coll_t t, const struct osmp__args *a);                                                     \
    int run##_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co);
#define OSMP__ALG_UPTO(name, run, max_block, radix, takes_radix, needs_single_copy, doc)                     \
    OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)                                         \
    size_t max_block(osmp__coll_t t);
#define OSMP__ALG_PARTS(name, run, radix, takes_radix, needs_single_copy, doc)                               \
    OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)
#include "coll/algs.def"
#undef OSMP__ALGS
#undef OSMP__ALG
#undef OSMP__ALG_UPTO
#undef OSMP__ALG_PARTS

#define OSMP__ALGS(op, ...) const struct osmp__alg osmp__##op##_algs[] = {__VA_ARGS__{0}};
#define OSMP__ALG_ROW(name, run, max_block, radix, takes_radix, needs_single_copy, parts, doc)               \
    {name, doc, run, radix, takes_radix, needs_single_copy, max_block, run##_co, parts},
#define OSMP__ALG_UPTO(name, run, max_block, radix, takes_radix, needs_single_copy, doc)                     \
    OSMP__ALG_ROW(name, run, max_block, radix, takes_radix, needs_single_copy, 0, doc)
#define OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)                                     \
    OSMP__ALG_ROW(name, run, NULL, radix, takes_radix, needs_single_copy, 0, doc)
#define OSMP__ALG_PARTS(name, run, radix, takes_radix, needs_single_copy, doc)                               \
    OSMP__ALG_ROW(name, run, NULL, radix, takes_radix, needs_single_copy, 1, doc)
#include "coll/algs.def"
#undef OSMP__ALGS
#undef OSMP__ALG
#undef OSMP__ALG_UPTO
#undef OSMP__ALG_PARTS
#undef OSMP__ALG_ROW
