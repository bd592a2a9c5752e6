/*
 * The algorithm tables of every collective (coll.h: osmp__<op>_algs), expanded
 * from the one list in algs.def: first every algorithm's declaration (one that
 * two collectives share, or that coll.h declares, is declared again, which C
 * allows), then the tables, each ended by a NULL name. An algorithm's
 * resumable form, name_co (coll/co.h), is declared weak: where its file does
 * not define one (not converted yet), the table's co is NULL.
 */
#include "coll/coll.h"

#define OSMP__ALGS(op, ...) __VA_ARGS__
#define OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)                                     \
    int run(osmp__coll_t t, const struct osmp__args *a);                                                     \
    int run##_co(osmp__coll_t t, const struct osmp__args *a, struct osmp__co *co) __attribute__((weak));
#define OSMP__ALG_UPTO(name, run, max_block, radix, takes_radix, needs_single_copy, doc)                     \
    OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)                                         \
    size_t max_block(osmp__coll_t t);
#include "coll/algs.def"
#undef OSMP__ALGS
#undef OSMP__ALG
#undef OSMP__ALG_UPTO

#define OSMP__ALGS(op, ...) const struct osmp__alg osmp__##op##_algs[] = {__VA_ARGS__{0}};
#define OSMP__ALG_UPTO(name, run, max_block, radix, takes_radix, needs_single_copy, doc)                     \
    {name, doc, run, radix, takes_radix, needs_single_copy, max_block, run##_co},
#define OSMP__ALG(name, run, radix, takes_radix, needs_single_copy, doc)                                     \
    OSMP__ALG_UPTO(name, run, NULL, radix, takes_radix, needs_single_copy, doc)
#include "coll/algs.def"
#undef OSMP__ALGS
#undef OSMP__ALG
#undef OSMP__ALG_UPTO
