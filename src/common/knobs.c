/* The knob table (see knobs.h) and its printer. */
#include "knobs.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "osmp.h"
#include "util.h"

static const struct {
    const char *name, *dflt, *doc;
} table[] = {
#define OSMP__KNOB_ROW(name, dflt, doc) {"OSMP_" #name, dflt, doc},
    OSMP_KNOB_MAP(OSMP__KNOB_ROW)
#undef OSMP__KNOB_ROW
#define OSMP__KNOB_ALG_ROW(NAME, name, flags)                                                                \
    {"OSMP_" #NAME "_ALG", "auto", #name ": auto (the selection table) or an algorithm osmp-topo --algorithms lists"},
        OSMP_COLL_MAP(OSMP__KNOB_ALG_ROW)
#undef OSMP__KNOB_ALG_ROW
#define OSMP__KNOB_HIER_ROW(NAME, name, flags)                                                               \
    {"OSMP_HIERARCHY_" #NAME, "", #name ": its own hierarchy spec (empty: OSMP_HIERARCHY's)"},
            OSMP_COLL_MAP(OSMP__KNOB_HIER_ROW)
#undef OSMP__KNOB_HIER_ROW
};
_Static_assert(sizeof(table) / sizeof(table[0]) == OSMP_KNOB_COUNT, "one row per knob");

/* The environment's knobs, read once at the first use of any: a program that
 * changes its environment later (setenv between teams, or a library that does)
 * cannot give the participants of one process different settings, and every
 * entry point (libosmp_mpi, osmp_init, team creation) sees the same values. */
static char *seen[OSMP_KNOB_COUNT];
static pthread_once_t seen_once = PTHREAD_ONCE_INIT;

void osmp__knobs_reread(void)
{
    for (int k = 0; k < OSMP_KNOB_COUNT; k++) {
        const char *v = getenv(table[k].name);
        free(seen[k]);
        seen[k] = v && *v ? strdup(v) : NULL; /* out of memory: the default */
    }
}

const char *osmp__knob_str(enum osmp_knob k)
{
    pthread_once(&seen_once, osmp__knobs_reread);
    return seen[k] ? seen[k] : table[k].dflt;
}

long osmp__knob_long(enum osmp_knob k, long lo, long hi, char *err, size_t err_len)
{
    const char *s = osmp__knob_str(k);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        osmp__why(err, err_len, "%s=\"%s\" must be an integer in %ld..%ld", table[k].name, s, lo, hi);
        return -1;
    }
    return v;
}

static osmp_atomic32_t said[OSMP_KNOB_COUNT]; /* the one line about a bad value, once per knob */

void osmp__knob_bad(enum osmp_knob k, const char *why)
{
    if (osmp__fetch_add32(&said[k], 1) == 0)
        fprintf(stderr, "osmp: %s; using the default %s\n", why, *table[k].dflt ? table[k].dflt : "\"\"");
}

long osmp__knob_long_or_default(enum osmp_knob k, long lo, long hi)
{
    char err[160];
    long v = osmp__knob_long(k, lo, hi, err, sizeof(err));
    if (v >= 0 && lo >= 0) return v;
    if (lo < 0) { /* -1 is a legal value there: decide by parsing again */
        const char *s = osmp__knob_str(k);
        char *end;
        errno = 0;
        v = strtol(s, &end, 10);
        if (!errno && end != s && !*end && v >= lo && v <= hi) return v;
    }
    long d = strtol(table[k].dflt, NULL, 10);
    if (osmp__fetch_add32(&said[k], 1) == 0)
        fprintf(stderr, "osmp: %s=\"%s\" is not an integer in %ld..%ld; using the default %ld\n", table[k].name,
                osmp__knob_str(k), lo, hi, d);
    return d;
}

const char *osmp__knob_name(enum osmp_knob k)
{
    return table[k].name;
}

const char *osmp__knob_default(enum osmp_knob k)
{
    return table[k].dflt;
}

void osmp_knobs_print(FILE *f)
{
    for (int k = 0; k < OSMP_KNOB_COUNT; k++) {
        const char *v = getenv(table[k].name);
        fprintf(f, "%-34s default %-8s %s%s%s%s\n", table[k].name, *table[k].dflt ? table[k].dflt : "\"\"",
                table[k].doc, v ? " [set: " : "", v ? v : "", v ? "]" : "");
    }
}
