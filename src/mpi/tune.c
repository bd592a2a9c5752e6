/*
 * libosmp_mpi: the tune table. Where the MPI library answers a call faster
 * than OSMP on this machine (an operation, a communicator size, a band of
 * message sizes), the call goes to MPI (reason R_TUNED). The table comes from
 * OSMP_TUNE_FILE (osmp-bench --tune writes one), else the built-in one below.
 *
 * Format (docs/mpi.md "Tune table"): one rule a line, '#' starts a comment,
 *   OPERATION  MAX_RANKS  MIN_BYTES  MAX_BYTES  osmp|mpi
 * OPERATION is a name of osmp_coll_name (allreduce, bcast, ...); MAX_RANKS a
 * communicator size or '*' (any); MIN_BYTES, MAX_BYTES inclusive, with an
 * optional K or M suffix, MAX_BYTES also 'max'. Bytes are what osmp-bench
 * calls the size: the buffer of bcast, count x datatype size of the reductions,
 * one rank's block of gather, scatter, allgather and alltoall; 0 for barrier.
 * The first rule whose operation matches, whose MAX_RANKS is at least the
 * communicator's size and whose band holds the size decides; no rule: OSMP.
 * Every rank reads the same file and sees the same size and bytes, so every
 * rank takes the same decision (as the other reasons to pass require).
 */
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/knobs.h"
#include "mpi/osmp_mpi.h"

/* The built-in tables, one per MPI library (each wins at different sizes):
 * osmp-bench --tune on 2 ranks bound to cores, several runs merged by majority
 * (single runs send narrow bands to MPI by chance); docs/measurements.md has the
 * commands. Their rules name 2 ranks only, so larger communicators stay on OSMP;
 * on another machine, run --tune there and point OSMP_TUNE_FILE at the result. */
static const char builtin[] =
#if defined(OPEN_MPI)
#include "mpi/tune-default-ompi.inc"
#else
#include "mpi/tune-default-mpich.inc"
#endif
    ;

#define MAX_RULES 256

struct rule {
    int max_ranks; /* INT_MAX: any */
    long lo, hi;   /* inclusive */
    int to_mpi;
};

static struct rule rules[OSMP_COLL_COUNT][MAX_RULES / 4];
static int nrules[OSMP_COLL_COUNT];
static osmp_atomic32_t loaded;
static int any_mpi; /* fast path: no rule sends anything to MPI */

static int parse_bytes(const char *s, long *out)
{
    if (strcmp(s, "max") == 0) return *out = LONG_MAX, 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < 0) return -1;
    long mul = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
    if (mul > 1) end++;
    if (*end || v > LONG_MAX / mul) return -1;
    return *out = v * mul, 0;
}

/* Parse the table text; on the first bad line, set *bad_line and return -1
 * (the rules read so far are dropped by the caller). */
static int parse(const char *text, int *bad_line, char *why, size_t why_len)
{
    memset(nrules, 0, sizeof(nrules));
    int line = 0;
    const char *p = text;
    while (*p) {
        line++;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char buf[256];
        if (len >= sizeof(buf)) {
            snprintf(why, why_len, "line too long");
            return *bad_line = line, -1;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p = nl ? nl + 1 : p + len;
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char op[64], ranks[32], lo[32], hi[32], choice[16], extra[2];
        int n = sscanf(buf, "%63s %31s %31s %31s %15s %1s", op, ranks, lo, hi, choice, extra);
        if (n <= 0) continue; /* blank or comment */
        if (n != 5) {
            snprintf(why, why_len, "expected OPERATION MAX_RANKS MIN_BYTES MAX_BYTES osmp|mpi");
            return *bad_line = line, -1;
        }
        int c = -1;
        for (int k = 0; k < OSMP_COLL_COUNT; k++)
            if (strcmp(op, osmp_coll_name((osmp_coll_t)k)) == 0) c = k;
        struct rule r = {INT_MAX, 0, 0, 0};
        char *end;
        if (c < 0) {
            snprintf(why, why_len, "unknown operation \"%s\"", op);
            return *bad_line = line, -1;
        }
        if (strcmp(ranks, "*") != 0) {
            errno = 0;
            long m = strtol(ranks, &end, 10);
            if (errno || *end || end == ranks || m < 1 || m > INT_MAX) {
                snprintf(why, why_len, "bad MAX_RANKS \"%s\" (a size >= 1 or *)", ranks);
                return *bad_line = line, -1;
            }
            r.max_ranks = (int)m;
        }
        if (parse_bytes(lo, &r.lo) || parse_bytes(hi, &r.hi) || r.hi < r.lo) {
            snprintf(why, why_len, "bad byte band \"%s %s\" (MIN <= MAX, K/M suffix, max)", lo, hi);
            return *bad_line = line, -1;
        }
        if (strcmp(choice, "mpi") && strcmp(choice, "osmp")) {
            snprintf(why, why_len, "bad choice \"%s\" (osmp or mpi)", choice);
            return *bad_line = line, -1;
        }
        r.to_mpi = strcmp(choice, "mpi") == 0;
        if (nrules[c] == MAX_RULES / 4) {
            snprintf(why, why_len, "more than %d rules for %s", MAX_RULES / 4, op);
            return *bad_line = line, -1;
        }
        rules[c][nrules[c]++] = r;
    }
    return 0;
}

static void print_band(FILE *f, long b)
{
    if (b == LONG_MAX) fprintf(f, "max");
    else if (b >= 1048576 && b % 1048576 == 0) fprintf(f, "%ld MiB", b / 1048576);
    else if (b >= 1024 && b % 1024 == 0) fprintf(f, "%ld KiB", b / 1024);
    else fprintf(f, "%ld B", b);
}

static void load(void)
{
    int rank = 0; /* messages once per job, from world rank 0: every rank reads the same file */
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *path = osmp__knob_str(OSMP_KNOB_TUNE_FILE), *from = "built-in";
    char *text = NULL, why[160];
    int bad = 0, none = strcmp(path, "none") == 0;
    if (*path && !none) {
        FILE *f = fopen(path, "r");
        if (!f) {
            if (rank == 0)
                fprintf(stderr, "osmp-mpi: OSMP_TUNE_FILE=%s: cannot open (%s); using the built-in table\n", path,
                    strerror(errno));
        } else {
            size_t cap = 1 << 16, n = 0;
            text = malloc(cap + 1);
            if (text) n = fread(text, 1, cap, f);
            if (text && n == cap) {
                if (rank == 0)
                    fprintf(stderr, "osmp-mpi: OSMP_TUNE_FILE=%s: larger than %zu bytes; using the built-in table\n",
                        path, cap);
                free(text);
                text = NULL;
            } else if (text) {
                text[n] = '\0';
                from = path;
            }
            fclose(f);
        }
    }
    if (none) {
        memset(nrules, 0, sizeof(nrules));
        from = "none";
    } else if (text && parse(text, &bad, why, sizeof(why))) {
        if (rank == 0) fprintf(stderr, "osmp-mpi: %s:%d: %s; using the built-in table\n", path, bad, why);
        from = "built-in";
        text = (free(text), NULL);
    }
    if (!text && !none && parse(builtin, &bad, why, sizeof(why))) { /* a test (tune.builtin) keeps this from happening */
        fprintf(stderr, "osmp-mpi: the built-in tune table, line %d: %s\n", bad, why);
        memset(nrules, 0, sizeof(nrules));
    }
    free(text);
    any_mpi = 0;
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
        for (int k = 0; k < nrules[c]; k++) any_mpi |= rules[c][k].to_mpi;
    if (rank != 0 || atoi(osmp__knob_str(OSMP_KNOB_VERBOSE)) <= 0) return;
    fprintf(stderr, "osmp-mpi: tune table %s:%s\n", from, any_mpi ? "" : " every eligible call on OSMP");
    for (int c = 0; c < OSMP_COLL_COUNT; c++)
        for (int k = 0; k < nrules[c]; k++) {
            struct rule *r = &rules[c][k];
            fprintf(stderr, "osmp-mpi:   %-22s ", osmp_coll_name((osmp_coll_t)c));
            if (r->max_ranks == INT_MAX) fprintf(stderr, "any size,      ");
            else fprintf(stderr, "up to %4d ranks, ", r->max_ranks);
            print_band(stderr, r->lo);
            fprintf(stderr, " .. ");
            print_band(stderr, r->hi);
            fprintf(stderr, ": %s\n", r->to_mpi ? "MPI" : "OSMP");
        }
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

OSMP_MPI_TLS struct osmp__mpi_band osmp__mpi_band[OSMP_COLL_COUNT];

int osmp__mpi_tuned_slow(osmp_coll_t c, long bytes, int size)
{
    if (__builtin_expect(!osmp__load32(&loaded), 0)) {
        pthread_mutex_lock(&load_lock);
        if (!osmp__load32(&loaded)) {
            load();
            osmp__store32(&loaded, 1);
        }
        pthread_mutex_unlock(&load_lock);
    }
    /* The band (osmp_mpi.h): the matching rule's, less the ranges of the
     * earlier rules that apply to this size (bytes lies outside each of them). */
    long lo = LONG_MIN, hi = LONG_MAX;
    int to_mpi = 0;
    for (int k = 0; any_mpi && k < nrules[c]; k++) {
        const struct rule *r = &rules[c][k];
        if (size > r->max_ranks) continue;
        if (bytes >= r->lo && bytes <= r->hi) {
            to_mpi = r->to_mpi;
            if (r->lo > lo) lo = r->lo;
            if (r->hi < hi) hi = r->hi;
            break;
        }
        if (bytes < r->lo && r->lo - 1 < hi) hi = r->lo - 1;
        if (bytes > r->hi && r->hi + 1 > lo) lo = r->hi + 1;
    }
    osmp__mpi_band[c] = (struct osmp__mpi_band){size, to_mpi, lo, hi};
    return to_mpi;
}
