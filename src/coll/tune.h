/*
 * The tune table (docs/tuning.md): rules measured on this machine by osmp-tune
 * that come before the selection table's own rows (select.c), and the
 * settings chosen with them. One text file per machine, in the cache that
 * osmp-probe --save uses, or OSMP_TUNE_FILE, or a team's own text
 * (OSMP_TEAM_PARAM_TUNE). A table made on another topology is refused.
 */
#ifndef OSMP_TUNE_H
#define OSMP_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "osmp.h"

/* Settings a table may give a team of its size. */
enum osmp__tune_setting {
    OSMP__TUNE_RULE = 0,            /* not a setting: COLLECTIVE RANKS MIN MAX CHOICE */
    OSMP__TUNE_CHUNK,               /* set RANKS chunk BYTES */
    OSMP__TUNE_DEPTH,               /* set RANKS pipeline_depth N */
    OSMP__TUNE_SINGLE_COPY_MIN      /* set RANKS single_copy_min.COLLECTIVE BYTES|never */
};

struct osmp__tune_row {
    int line;    /* in the text, for messages */
    int setting; /* enum osmp__tune_setting */
    int coll;    /* osmp_coll_t of a rule or of single_copy_min; -1 otherwise */
    int ranks;   /* the team size the row holds for; 0: any ('*') */
    uint64_t lo, hi;  /* a rule's bytes per block, inclusive */
    uint64_t value;   /* a setting's (UINT64_MAX: never) */
    char choice[24];  /* a rule's: an algorithm of the collective (kary:K), "auto" or "mpi" */
};

struct osmp__tune {
    char from[512];     /* the file, or "team parameter" */
    uint64_t sig;       /* the topology signature it was made on */
    char machine[160];  /* and that topology in words */
    uint64_t hash;      /* of the whole text: the participants of a team must agree */
    int nrows;
    struct osmp__tune_row rows[]; /* in the text's order */
};

#define OSMP__TUNE_ROWS_MAX 1024
#define OSMP__TUNE_TEXT_MAX (256 * 1024)

/* A topology's signature: a hash of the domains hwloc reports (how many of
 * each kind, cache sizes, cores), and the same in words. Two machines of the
 * same model have the same one. */
uint64_t osmp__tune_signature(osmp_topo_t topo, char *words, size_t len);

/* Parse a table. valid(coll, choice) says whether the collective has that
 * choice (NULL: anything goes). On a damaged table, NULL with its line and why. */
struct osmp__tune *osmp__tune_parse(const char *text, const char *from, int (*valid)(int coll, const char *choice),
                                    int *bad_line, char *why, size_t why_len);

/* The table a team on `topo` uses: `text` when given (a team parameter; ""
 * for none), else the process's (OSMP_TUNE_FILE, else the per-machine cache
 * file if it exists; parsed once). NULL when there is none, or it is damaged
 * or from another topology: where `say` (a team's rank 0), said on stderr
 * once per process and reason, in one line naming the file and its line, or
 * the file and both machines. Owned by the process (text: by the caller,
 * *owned, free with free()). */
const struct osmp__tune *osmp__tune_for(osmp_topo_t topo, const char *text, struct osmp__tune **owned, int say);
/* One line on which table a process on `topo` would use and why
 * (osmp-topo --algorithms). */
void osmp__tune_describe(osmp_topo_t topo, char *line, size_t len);

/* Does collective coll have this choice (an algorithm name, kary:K)? (select.c) */
int osmp__tune_choice_valid(int coll, const char *choice);

/* A rule's choice for the selection: the algorithm's name and radix (0: its
 * own). Returns 0 for "auto" (the selection table's choice) and "mpi" (the
 * same in the runtime; libosmp_mpi sends those calls to MPI before OSMP sees
 * them). */
int osmp__tune_alg(const struct osmp__tune_row *r, char *name, size_t len, int *radix);

#endif
