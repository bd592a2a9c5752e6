/* The tune table (tune.h, docs/tuning.md): reading it, and which one a team uses. */
#include "coll/tune.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/knobs.h"
#include "common/machine.h"
#include "common/util.h"

static uint64_t fnv(const char *s, uint64_t h)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void size_words(char *buf, size_t len, uint64_t b)
{
    if (b >= 1048576 && b % 1048576 == 0) snprintf(buf, len, "%" PRIu64 " MiB", b / 1048576);
    else snprintf(buf, len, "%" PRIu64 " KiB", b / 1024);
}

uint64_t osmp__tune_signature(osmp_topo_t topo, char *words, size_t len)
{
    static const osmp_domain_kind_t kinds[] = {OSMP_DOMAIN_GROUP, OSMP_DOMAIN_PACKAGE, OSMP_DOMAIN_NUMA,
                                               OSMP_DOMAIN_L3, OSMP_DOMAIN_L2};
    size_t n = (size_t)snprintf(words, len, "%d cores", osmp_topo_ncores(topo));
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && n < len; k++) {
        int count = osmp_topo_count(topo, kinds[k]);
        if (!count) continue;
        n += (size_t)snprintf(words + n, len - n, ", %d %s", count, osmp_domain_kind_name(kinds[k]));
        const struct osmp_domain *d = osmp_topo_domain(topo, kinds[k], 0);
        if (n < len && d && d->cache_bytes) {
            char sz[32];
            size_words(sz, sizeof(sz), d->cache_bytes);
            n += (size_t)snprintf(words + n, len - n, " of %s", sz);
        }
    }
    return fnv(words, 1469598103934665603ULL);
}

static int parse_bytes(const char *s, uint64_t *out)
{
    if (strcmp(s, "max") == 0) return *out = UINT64_MAX, 0;
    char *end;
    errno = 0;
    if (*s == '-') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = *end == 'K' ? 1024 : *end == 'M' ? 1048576 : *end == 'G' ? 1073741824 : 1;
    if (mul > 1) end++;
    if (errno || end == s || *end || v > UINT64_MAX / mul / 2) return -1;
    return *out = (uint64_t)v * mul, 0;
}

static int coll_of(const char *name)
{
    for (int k = 0; k < OSMP_COLL_COUNT; k++)
        if (strcmp(name, osmp_coll_name((osmp_coll_t)k)) == 0) return k;
    return -1;
}

/* One row (its words in w[0..n-1]) into r; 0, or -1 with why. */
static int parse_row(char w[][64], int n, struct osmp__tune_row *r, int (*valid)(int, const char *), char *why,
                     size_t why_len)
{
    char *end;
    int set = strcmp(w[0], "set") == 0;
    if (n != (set ? 4 : 5)) {
        osmp__why(why, why_len, set ? "expected set RANKS NAME VALUE"
                                    : "expected COLLECTIVE RANKS MIN_BYTES MAX_BYTES CHOICE or set RANKS NAME VALUE");
        return -1;
    }
    const char *ranks = w[1];
    if (strcmp(ranks, "*") != 0) {
        errno = 0;
        long m = strtol(ranks, &end, 10);
        if (errno || *end || end == ranks || m < 1 || m > 1 << 24) {
            osmp__why(why, why_len, "bad RANKS \"%s\" (a team size or *)", ranks);
            return -1;
        }
        r->ranks = (int)m;
    }
    r->coll = -1;
    if (set) {
        const char *name = w[2];
        uint64_t v;
        if (strncmp(name, "single_copy_min.", 16) == 0) {
            r->setting = OSMP__TUNE_SINGLE_COPY_MIN;
            r->coll = coll_of(name + 16);
            if (r->coll < 0) {
                osmp__why(why, why_len, "unknown collective \"%s\"", name + 16);
                return -1;
            }
        } else if (strcmp(name, "chunk") == 0) {
            r->setting = OSMP__TUNE_CHUNK;
        } else if (strcmp(name, "pipeline_depth") == 0) {
            r->setting = OSMP__TUNE_DEPTH;
        } else {
            osmp__why(why, why_len, "unknown setting \"%s\" (chunk, pipeline_depth, single_copy_min.COLLECTIVE)",
                      name);
            return -1;
        }
        int never = r->setting == OSMP__TUNE_SINGLE_COPY_MIN && strcmp(w[3], "never") == 0;
        if (!never && parse_bytes(w[3], &v)) {
            osmp__why(why, why_len, "bad value \"%s\"", w[3]);
            return -1;
        }
        if ((r->setting == OSMP__TUNE_CHUNK && (v < 64 || v > 16 << 20)) ||
            (r->setting == OSMP__TUNE_DEPTH && (v < 1 || v > 64))) {
            osmp__why(why, why_len, "%s %s out of range (chunk 64..16M, pipeline_depth 1..64)", name, w[3]);
            return -1;
        }
        r->value = never ? UINT64_MAX : v;
        return 0;
    }
    r->setting = OSMP__TUNE_RULE;
    r->coll = coll_of(w[0]);
    if (r->coll < 0) {
        osmp__why(why, why_len, "unknown collective \"%s\"", w[0]);
        return -1;
    }
    if (parse_bytes(w[2], &r->lo) || parse_bytes(w[3], &r->hi) || r->hi < r->lo) {
        osmp__why(why, why_len, "bad byte band \"%s %s\" (MIN <= MAX; K, M, G suffixes; max)", w[2], w[3]);
        return -1;
    }
    if (strlen(w[4]) >= sizeof(r->choice) || (strcmp(w[4], "mpi") != 0 && strcmp(w[4], "auto") != 0 && valid && !valid(r->coll, w[4]))) {
        osmp__why(why, why_len, "%s has no algorithm \"%s\" (osmp-topo --algorithms lists them; or mpi, auto)", w[0], w[4]);
        return -1;
    }
    snprintf(r->choice, sizeof(r->choice), "%s", w[4]);
    return 0;
}

struct osmp__tune *osmp__tune_parse(const char *text, const char *from, int (*valid)(int coll, const char *choice),
                                    int *bad_line, char *why, size_t why_len)
{
    struct osmp__tune *t = calloc(1, sizeof(*t) + OSMP__TUNE_ROWS_MAX * sizeof(struct osmp__tune_row));
    if (!t) {
        osmp__why(why, why_len, "no memory");
        return *bad_line = 0, NULL;
    }
    snprintf(t->from, sizeof(t->from), "%s", from);
    t->hash = fnv(text, 1469598103934665603ULL);
    int line = 0, have_sig = 0;
    for (const char *p = text; *p;) {
        line++;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char buf[512];
        if (len >= sizeof(buf)) {
            osmp__why(why, why_len, "line too long");
            goto bad;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (nl != NULL);
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char w[6][64];
        int n = 0;
        for (char *s = strtok(buf, " \t\r"); s && n < 6; s = strtok(NULL, " \t\r"), n++) {
            if (strlen(s) >= sizeof(w[0])) {
                osmp__why(why, why_len, "word too long");
                goto bad;
            }
            strcpy(w[n], s);
        }
        if (n == 0) continue;
        if (!have_sig) { /* topology SIGNATURE WORDS... */
            char *end;
            if (strcmp(w[0], "topology") || n < 3 || (t->sig = strtoull(w[1], &end, 16), *end)) {
                osmp__why(why, why_len, "expected the first line: topology SIGNATURE DESCRIPTION (osmp-tune writes it)");
                goto bad;
            }
            const char *d = strstr(p - len - (nl != NULL), w[1]) + strlen(w[1]); /* the words as written */
            d += strspn(d, " \t");
            snprintf(t->machine, sizeof(t->machine), "%.*s", (int)strcspn(d, "#\n\r"), d);
            for (size_t k = strlen(t->machine); k && (t->machine[k - 1] == ' ' || t->machine[k - 1] == '\t');)
                t->machine[--k] = '\0';
            have_sig = 1;
            continue;
        }
        if (t->nrows == OSMP__TUNE_ROWS_MAX) {
            osmp__why(why, why_len, "more than %d rows", OSMP__TUNE_ROWS_MAX);
            goto bad;
        }
        struct osmp__tune_row *r = &t->rows[t->nrows];
        *r = (struct osmp__tune_row){.line = line};
        if (parse_row(w, n, r, valid, why, why_len)) goto bad;
        if (r->setting == OSMP__TUNE_RULE) { /* each collective's bands for a size: from 0, one after the other */
            const struct osmp__tune_row *prev = NULL;
            for (int i = 0; i < t->nrows; i++)
                if (t->rows[i].setting == OSMP__TUNE_RULE && t->rows[i].coll == r->coll && t->rows[i].ranks == r->ranks)
                    prev = &t->rows[i];
            if (prev ? prev->hi == UINT64_MAX || r->lo != prev->hi + 1 : r->lo != 0) {
                osmp__why(why, why_len, "the bands of %s for %s ranks must start at 0 and follow each other (%s)",
                          w[0], w[1], prev ? "this one does not start after the last one" : "this one starts above 0");
                goto bad;
            }
        }
        t->nrows++;
    }
    if (!have_sig) {
        osmp__why(why, why_len, "no topology line (osmp-tune writes it first)");
        goto bad;
    }
    return t;
bad:
    free(t);
    *bad_line = line;
    return NULL;
}

int osmp__tune_alg(const struct osmp__tune_row *r, char *name, size_t len, int *radix)
{
    if (strcmp(r->choice, "mpi") == 0 || strcmp(r->choice, "auto") == 0) return 0;
    const char *colon = strchr(r->choice, ':');
    size_t n = colon ? (size_t)(colon - r->choice) : strlen(r->choice);
    snprintf(name, len, "%.*s", (int)n, r->choice);
    *radix = colon ? atoi(colon + 1) : 0;
    return 1;
}

/* ---- the process's table ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;
static struct osmp__tune *process_table; /* NULL: none, or damaged */
static char process_path[512], process_problem[1024]; /* why there is none, "" when absent by default */
static int problem_said;
static uint64_t refused_sig;                         /* a signature already refused aloud */

static char *read_text(const char *path, char *why, size_t why_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        osmp__why(why, why_len, "cannot open (%s)", strerror(errno));
        return NULL;
    }
    char *text = malloc(OSMP__TUNE_TEXT_MAX + 1);
    size_t n = text ? fread(text, 1, OSMP__TUNE_TEXT_MAX + 1, f) : 0;
    fclose(f);
    if (!text || n > OSMP__TUNE_TEXT_MAX) {
        osmp__why(why, why_len, text ? "larger than %d bytes" : "no memory", OSMP__TUNE_TEXT_MAX);
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

static void load(void)
{
    const char *knob = osmp__knob_str(OSMP_KNOB_TUNE_FILE);
    char why[200];
    int bad = 0, by_default = !*knob;
    if (strcmp(knob, "none") == 0) return;
    if (by_default) {
        if (osmp__cache_path("tune", "txt", process_path, sizeof(process_path), why, sizeof(why))) return;
        if (access(process_path, F_OK) != 0) return; /* nobody tuned this machine: the defaults, silently */
    } else {
        snprintf(process_path, sizeof(process_path), "%s", knob);
    }
    char *text = read_text(process_path, why, sizeof(why));
    if (text && !(process_table = osmp__tune_parse(text, process_path, osmp__tune_choice_valid, &bad, why, sizeof(why))))
        snprintf(process_problem, sizeof(process_problem), "tune table %s:%d: %s; using the defaults", process_path,
                 bad, why);
    else if (!text)
        snprintf(process_problem, sizeof(process_problem), "tune table %s: %s; using the defaults", process_path, why);
    free(text);
}

static int accepted(const struct osmp__tune *t, osmp_topo_t topo, char *why, size_t len)
{
    char words[160];
    uint64_t sig = osmp__tune_signature(topo, words, sizeof(words));
    if (sig == t->sig) return 1;
    osmp__why(why, len,
              "tune table %s was made on another machine: %s (topology %016" PRIx64 "); this one is %s (topology %016" PRIx64
              "): using the defaults (run osmp-tune here)",
              t->from, t->machine, t->sig, words, sig);
    return 0;
}

const struct osmp__tune *osmp__tune_for(osmp_topo_t topo, const char *text, struct osmp__tune **owned, int say)
{
    char why[700];
    *owned = NULL;
    if (text) {
        int bad;
        if (!*text) return NULL;
        struct osmp__tune *t = osmp__tune_parse(text, "(a team parameter)", osmp__tune_choice_valid, &bad, why, sizeof(why));
        if (!t && say) fprintf(stderr, "osmp: tune table (team parameter):%d: %s; using the defaults\n", bad, why);
        else if (t && !accepted(t, topo, why, sizeof(why)) && say) fprintf(stderr, "osmp: %s\n", why);
        else if (t && accepted(t, topo, why, sizeof(why))) return *owned = t;
        free(t);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (!loaded) load();
    loaded = 1;
    if (*process_problem && say && !problem_said) fprintf(stderr, "osmp: %s\n", process_problem);
    problem_said |= say;
    const struct osmp__tune *t = process_table;
    if (t && !accepted(t, topo, why, sizeof(why))) {
        if (say && refused_sig != t->sig + 1) fprintf(stderr, "osmp: %s\n", why); /* once per process */
        if (say) refused_sig = t->sig + 1;
        t = NULL;
    }
    pthread_mutex_unlock(&lock);
    return t;
}

void osmp__tune_describe(osmp_topo_t topo, char *line, size_t len)
{
    struct osmp__tune *unused;
    const struct osmp__tune *t = osmp__tune_for(topo, NULL, &unused, 0);
    char why[700];
    pthread_mutex_lock(&lock);
    if (t)
        snprintf(line, len, "tune table %s: in use (%d rows, made on this machine: %s)", t->from, t->nrows,
                 t->machine);
    else if (process_table && !accepted(process_table, topo, why, sizeof(why)))
        snprintf(line, len, "%s", why);
    else if (*process_problem)
        snprintf(line, len, "%s", process_problem);
    else if (!strcmp(osmp__knob_str(OSMP_KNOB_TUNE_FILE), "none"))
        snprintf(line, len, "tune table: none (OSMP_TUNE_FILE=none): the defaults");
    else
        snprintf(line, len, "tune table: none (%s does not exist; osmp-tune writes it): the defaults",
                 *process_path ? process_path : "the per-machine cache");
    pthread_mutex_unlock(&lock);
}
