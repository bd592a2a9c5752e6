/*
 * osmp-probe: this machine's topology measured (Hashmi et al., MCTOP): the
 * one-way cache-line latency between every pair of allowed CPUs, the hierarchy
 * of domains clustered from it (src/topo/cluster.c), and an hwloc XML with that
 * hierarchy as Group objects and the matrix as distances, which osmp-topo,
 * osmp-run and OSMP_TOPOLOGY load like any other topology.
 *
 * Measuring one pair (a, b): a thread pinned on a writes an odd number into a
 * cache line of its own, a thread pinned on b waits for it and writes the next
 * (even) number, a waits for that: one round trip moves the line twice. One
 * repetition times `iters` round trips with the clock read outside the loop
 * (one-way latency = time / 2 iters); the first repetition warms the line and
 * the threads up and is dropped. The pair's latency is the median of `reps`
 * repetitions; when their interquartile range exceeds 10 % of the median (an
 * interrupt, another process on one of the CPUs), the pair is measured again
 * (up to 2 times) and the calmest run is kept. The waiting loops spin without
 * a pause instruction: on recent x86 cores one pause lasts up to 40 ns, as
 * long as the latency being measured.
 *
 * Parallel pairs (--parallel N) run on disjoint CPUs at the same time. Default
 * 1: pairs measured together share the L3, the mesh or the socket link that
 * carries their lines (and the home agents that order them), so cross-die and
 * cross-socket values come out higher and a level's gap narrows; sequential,
 * a 256-CPU machine (32,640 pairs) takes about 2 minutes at the defaults
 * (10 x 1000 round trips of 50-200 ns each per pair), once per machine (--save).
 *
 * Exit status: 0 on success, 2 on bad input (one line on stderr), 1 on an
 * internal failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic.h"
#include "osmp.h"
#include "topo/measured.h"
#include "cli.h"

const char osmp__tool[] = "osmp-probe";

static const char usage[] =
    "usage: osmp-probe [--from-csv FILE.csv] [--format text|json] [--out FILE.csv] [--out-xml FILE.xml]\n"
    "                  [--save] [--reps N] [--iters N] [--parallel N] [--progress]\n"
    "\n"
    "Measures the one-way cache-line latency between every pair of allowed CPUs of this machine (or reads\n"
    "such a matrix), clusters it into nested levels of domains and prints them on stdout.\n"
    "\n"
    "  --from-csv FILE   cluster this lower-triangular CSV (ns; row i holds the pairs (i, j < i)) instead of\n"
    "                    measuring; its XML is a flat machine of one core per row, P#i = row i\n"
    "  --format FMT      text (default): the tree of groups with each level's latency;\n"
    "                    json: {\"levels\": [{\"name\", \"latency_ns\", \"groups\": [[cpu, ...], ...]}, ...]},\n"
    "                    leaf level first, the last one the whole machine; CPUs are OS indices (P#; with\n"
    "                    --from-csv, row numbers)\n"
    "  --out FILE.csv    write the matrix as a lower-triangular CSV (the format of --from-csv; row i is the\n"
    "                    i-th allowed CPU in OS index order)\n"
    "  --out-xml FILE    write an hwloc XML: this machine's topology (or the flat one of --from-csv) with a\n"
    "                    Group object per measured domain and the matrix as the distances \"OSMPLatency\";\n"
    "                    load it with osmp-topo --input, osmp-run --topology or OSMP_TOPOLOGY=FILE\n"
    "  --save            write that XML where OSMP_TOPOLOGY=measured finds it:\n"
    "                    $XDG_CACHE_HOME/osmp/topology-HOST.xml, else ~/.cache/osmp/topology-HOST.xml\n"
    "  --reps N          repetitions per pair, the median is kept (default 9, 3..1000)\n"
    "  --iters N         round trips per repetition (default 1000, 10..1000000)\n"
    "  --parallel N      pairs measured at once on disjoint CPUs (default 1: concurrent pairs share the\n"
    "                    interconnect and disturb each other's cross-die latencies)\n"
    "  --progress        show the progress bar and the time left (default: only when stderr is a terminal)\n"
    "  --help            this text\n"
    "\n"
    "stderr says how long the measurement took and whether hwloc's tree of this machine agrees with the\n"
    "measured one. Exit status 0, 2 on bad input (one line), 1 on an internal failure.\n";

#define die_usage(...) osmp__tool_fail(2, __VA_ARGS__)

#define die_internal(...) osmp__tool_fail(1, __VA_ARGS__)

static int parse_int(const char *s, const char *opt, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
        die_usage("%s expects an integer in %d..%d, got \"%s\"", opt, lo, hi, s);
    return (int)v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- measuring */

#define STOP UINT64_MAX /* odd: the answering thread sees it as a request and leaves */
#define SPREAD_MAX 0.10
#define PAGE 4096 /* mmap rounds up to the real page size */
#define RETRIES 2

struct pair_job {
    int a, b; /* OS indices of the two CPUs */
    int iters, reps;
    osmp_atomic64_t *line; /* alone on a page of its own, first touched by `ask` (below) */
    osmp_atomic64_t published; /* the line's address, once `ask` has made it */
    double *samples;
    double latency; /* ns, one way */
    int remeasured;
};

/* b: answer every odd value with the next even one until STOP. */
static void *answer(void *arg)
{
    struct pair_job *j = arg;
    uint64_t addr;
    while ((addr = osmp__load_acquire(&j->published)) == 0) osmp__cpu_relax();
    j->line = (osmp_atomic64_t *)(uintptr_t)addr;
    for (;;) {
        uint64_t v;
        while (((v = osmp__load_acquire(j->line)) & 1) == 0) {
        }
        if (v == STOP) break;
        osmp__store_release(j->line, v + 1);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* a: the repetitions, the median and the spread; again when the spread is large. */
static void *ask(void *arg)
{
    struct pair_job *j = arg;
    /* A fresh page touched first here: its memory (and the directory entry that orders the line) is on
     * a's NUMA node. One line reused for every pair would live where the first pair ran, and pairs on
     * another socket would pay the trip to it (in tests/data/latency/amd-epyc-7r13-48c.csv two CCXs of the
     * second socket are as far apart as two sockets, 200 ns). */
    void *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        j->latency = -1;
        return NULL; /* the answering thread stays: the caller exits */
    }
    osmp_atomic64_t *line = page;
    atomic_init(line, 0);
    osmp__store_release(&j->published, (uint64_t)(uintptr_t)line);
    uint64_t v = 1;
    double best = 0, best_spread = INFINITY;
    for (int attempt = 0; attempt <= RETRIES; attempt++) {
        for (int r = -1; r < j->reps; r++) {
            double t0 = now_s();
            for (int k = 0; k < j->iters; k++, v += 2) {
                osmp__store_release(line, v);
                while (osmp__load_acquire(line) != v + 1) {
                }
            }
            double t1 = now_s();
            if (r >= 0) j->samples[r] = (t1 - t0) * 1e9 / (2.0 * j->iters);
        }
        qsort(j->samples, (size_t)j->reps, sizeof(double), cmp_double);
        int h = j->reps / 2;
        double med = j->reps % 2 ? j->samples[h] : (j->samples[h - 1] + j->samples[h]) / 2;
        double spread = (j->samples[(3 * j->reps) / 4] - j->samples[j->reps / 4]) / med;
        if (spread < best_spread) best = med, best_spread = spread;
        if (best_spread <= SPREAD_MAX) break;
        if (attempt < RETRIES) j->remeasured = 1;
    }
    j->latency = best;
    j->line = line;
    osmp__store_release(line, STOP);
    return NULL;
}

static int spawn_on(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_attr_init(&attr);
    int rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    if (!rc) rc = pthread_create(th, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

static void progress_bar(long done, long total, double elapsed)
{
    int width = 30, fill = (int)(width * done / total);
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    double left = done ? elapsed / (double)done * (double)(total - done) : 0;
    fprintf(stderr, "\rosmp-probe: [%s] %3d%% %ld/%ld pairs, %s%.0f s left ", bar, (int)(100 * done / total), done,
            total, done ? "" : "~", left);
    fflush(stderr);
}

/* The latency matrix of cpus[0..n), n x n. */
static double *measure(const int *cpus, int n, int reps, int iters, int parallel, int progress)
{
    long total = (long)n * (n - 1) / 2;
    double *m = calloc((size_t)n * (size_t)n, sizeof(double));
    int (*todo)[2] = malloc(sizeof(*todo) * (size_t)total);
    struct pair_job *jobs = calloc((size_t)parallel, sizeof(*jobs));
    pthread_t *th = calloc((size_t)parallel * 2, sizeof(*th));
    char *busy = calloc((size_t)n, 1);
    if (!m || !todo || !jobs || !th || !busy) die_internal("out of memory");
    for (int p = 0; p < parallel; p++) {
        jobs[p].samples = malloc(sizeof(double) * (size_t)reps);
        if (!jobs[p].samples) die_internal("out of memory");
    }
    long ntodo = 0, done = 0, remeasured = 0;
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) todo[ntodo][0] = i, todo[ntodo][1] = j, ntodo++;
    double start = now_s(), shown = 0;
    if (progress) progress_bar(0, total, 0);
    while (ntodo > 0) {
        /* A batch: up to `parallel` pending pairs on CPUs no other pair of the batch uses. */
        int nb = 0;
        memset(busy, 0, (size_t)n);
        long keep = 0;
        for (long x = 0; x < ntodo; x++) {
            int i = todo[x][0], j = todo[x][1];
            if (nb < parallel && !busy[i] && !busy[j]) {
                busy[i] = busy[j] = 1;
                struct pair_job *jb = &jobs[nb++];
                jb->a = i;
                jb->b = j;
                jb->iters = iters;
                jb->reps = reps;
                jb->remeasured = 0;
                jb->line = NULL;
                atomic_init(&jb->published, 0);
            } else {
                todo[keep][0] = i, todo[keep][1] = j, keep++;
            }
        }
        ntodo = keep;
        for (int p = 0; p < nb; p++) {
            int rc = spawn_on(&th[2 * p], cpus[jobs[p].b], answer, &jobs[p]);
            if (!rc) rc = spawn_on(&th[2 * p + 1], cpus[jobs[p].a], ask, &jobs[p]);
            if (rc) die_internal("cannot run a thread on CPU %d or %d: %s", cpus[jobs[p].a], cpus[jobs[p].b], strerror(rc));
        }
        for (int p = 0; p < nb; p++) {
            pthread_join(th[2 * p + 1], NULL);
            struct pair_job *jb = &jobs[p];
            if (jb->latency < 0) die_internal("cannot map a page for CPUs %d and %d: %s", cpus[jb->a], cpus[jb->b], strerror(errno));
            pthread_join(th[2 * p], NULL);
            munmap((void *)jb->line, PAGE);
            m[(size_t)jb->a * (size_t)n + (size_t)jb->b] = m[(size_t)jb->b * (size_t)n + (size_t)jb->a] = jb->latency;
            remeasured += jb->remeasured;
        }
        done += nb;
        double t = now_s();
        if (progress && (t - shown > 0.1 || ntodo == 0)) {
            progress_bar(done, total, t - start);
            shown = t;
        }
    }
    if (progress) fputc('\n', stderr);
    fprintf(stderr,
            "osmp-probe: measured %ld pair%s of %d CPUs in %.3f s (median of %d x %d round trips per pair, %ld "
            "re-measured, --parallel %d)\n",
            total, total == 1 ? "" : "s", n, now_s() - start, reps, iters, remeasured, parallel);
    for (int p = 0; p < parallel; p++) {
        free(jobs[p].samples);
    }
    free(jobs);
    free(th);
    free(busy);
    free(todo);
    return m;
}

/* ---------------------------------------------------------------- output */

/* CPUs of group g as a list with ranges: 0-7,16-23 (cpus: the label of each CPU). */
static void group_list(char *buf, size_t len, const int *group_of, int n, int g, const int *label)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < len; i++) {
        if (group_of[i] != g) continue;
        int j = i;
        while (j + 1 < n && group_of[j + 1] == g && label[j + 1] == label[j] + 1) j++;
        int w = j > i ? snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", label[i], label[j])
                      : snprintf(buf + at, len - at, "%s%d", at ? "," : "", label[i]);
        if (w < 0) break;
        at += (size_t)w;
        i = j;
    }
}

static int group_size(const struct osmp__mlevel *L, int n, int g, int *first)
{
    int size = 0;
    *first = -1;
    for (int i = 0; i < n; i++)
        if (L->group_of[i] == g) {
            if (*first < 0) *first = i;
            size++;
        }
    return size;
}

static void text_subtree(const struct osmp__mtree *t, int level, int g, int indent, const int *label, char *buf,
                         size_t len)
{
    group_list(buf, len, t->levels[level].group_of, t->n, g, label);
    printf("%*s", indent * 2, "");
    int first, size = group_size(&t->levels[level], t->n, g, &first);
    /* A domain that is also one of the level below (EPYC 7R13's CCXs on the socket level) on one line. */
    for (;;) {
        char name[32];
        osmp__mlevel_name(t, level, name, sizeof(name));
        printf("%s %.1f ns", name, t->levels[level].latency_ns);
        if (level == 0) break;
        int h = t->levels[level - 1].group_of[first], f;
        if (group_size(&t->levels[level - 1], t->n, h, &f) != size) break;
        printf(" = ");
        level--;
        g = h;
    }
    printf(": %s\n", buf);
    if (level == 0) return;
    const struct osmp__mlevel *L = &t->levels[level], *B = &t->levels[level - 1];
    /* The groups below, in the order of their lowest CPU; single CPUs are shown in their parent's list. */
    for (int h = 0; h < B->ngroups; h++) {
        int f, hs = group_size(B, t->n, h, &f);
        if (L->group_of[f] == g && hs > 1) text_subtree(t, level - 1, h, indent + 1, label, buf, len);
    }
}

static void print_text(const struct osmp__mtree *t, const int *label)
{
    printf("%d CPUs, %d level%s from the leaf:", t->n, t->nlevels, t->nlevels == 1 ? "" : "s");
    for (int l = 0; l < t->nlevels; l++) {
        char name[32];
        osmp__mlevel_name(t, l, name, sizeof(name));
        printf(" %s (%d group%s, %.1f ns)", name, t->levels[l].ngroups, t->levels[l].ngroups == 1 ? "" : "s",
               t->levels[l].latency_ns);
    }
    printf("\n");
    size_t len = (size_t)t->n * 12 + 16;
    char *buf = malloc(len);
    if (!buf) die_internal("out of memory");
    text_subtree(t, t->nlevels - 1, 0, 0, label, buf, len);
    free(buf);
}

static void print_json(const struct osmp__mtree *t, const int *label)
{
    printf("{\"levels\": [");
    for (int l = 0; l < t->nlevels; l++) {
        const struct osmp__mlevel *L = &t->levels[l];
        char name[32];
        osmp__mlevel_name(t, l, name, sizeof(name));
        printf("%s\n  {\"name\": \"%s\", \"latency_ns\": %.1f, \"groups\": [", l ? "," : "", name, L->latency_ns);
        for (int g = 0; g < L->ngroups; g++) {
            printf("%s[", g ? ", " : "");
            const char *sep = "";
            for (int i = 0; i < t->n; i++)
                if (L->group_of[i] == g) {
                    printf("%s%d", sep, label[i]);
                    sep = ", ";
                }
            printf("]");
        }
        printf("]}");
    }
    printf("]}\n");
}

static void write_csv(const char *path, const double *m, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) die_usage("cannot write %s: %s", path, strerror(errno));
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            if (j) fputc(',', f);
            if (j < i) fprintf(f, "%.3f", m[(size_t)i * (size_t)n + (size_t)j]);
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0) die_usage("cannot write %s: %s", path, strerror(errno));
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die_usage("cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) die_internal("out of memory");
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= ((size_t)1 << 31)) die_usage("%s: too large for a latency matrix", path);
        cap *= 2;
        buf = realloc(buf, cap);
    }
    if (ferror(f)) die_usage("cannot read %s: %s", path, strerror(errno));
    fclose(f);
    *len = n;
    return buf;
}

/* mkdir -p of the directory part of path. */
static void make_parent_dirs(const char *path)
{
    char *dir = strdup(path);
    if (!dir) die_internal("out of memory");
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) die_usage("cannot create %s: %s", dir, strerror(errno));
        *p = '/';
    }
    free(dir);
}

/* ---------------------------------------------------------------- hwloc */

static hwloc_topology_t load_hw(const char *synthetic)
{
    hwloc_topology_t hw;
    if (hwloc_topology_init(&hw) < 0) die_internal("hwloc_topology_init failed");
    hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (synthetic && hwloc_topology_set_synthetic(hw, synthetic) < 0) die_internal("hwloc refused \"%s\"", synthetic);
    if (hwloc_topology_load(hw) < 0) die_internal("hwloc could not load the topology: %s", strerror(errno));
    return hw;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    const char *from_csv = NULL, *out_csv = NULL, *out_xml = NULL, *format_s = "text";
    int save = 0, reps = 9, iters = 1000, parallel = 1, progress = -1, measure_opts = 0;
    static const struct option opts[] = {{"from-csv", required_argument, 0, 'c'}, {"format", required_argument, 0, 'f'},
                                         {"out", required_argument, 0, 'o'},      {"out-xml", required_argument, 0, 'x'},
                                         {"save", no_argument, 0, 's'},           {"reps", required_argument, 0, 'r'},
                                         {"iters", required_argument, 0, 'i'},    {"parallel", required_argument, 0, 'p'},
                                         {"progress", no_argument, 0, 'P'},       {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (o) {
        case 'c': from_csv = optarg; break;
        case 'f': format_s = optarg; break;
        case 'o': out_csv = optarg; break;
        case 'x': out_xml = optarg; break;
        case 's': save = 1; break;
        case 'r': reps = parse_int(optarg, "--reps", 3, 1000), measure_opts = 1; break;
        case 'i': iters = parse_int(optarg, "--iters", 10, 1000000), measure_opts = 1; break;
        case 'p': parallel = parse_int(optarg, "--parallel", 1, OSMP__LATENCY_MAX_CPUS / 2), measure_opts = 1; break;
        case 'P': progress = 1, measure_opts = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        case ':': die_usage("option %s needs an argument (see --help)", argv[optind - 1]);
        default: die_usage("unknown option %s (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) die_usage("unexpected argument \"%s\" (see --help)", argv[optind]);
    int json = strcmp(format_s, "json") == 0;
    if (!json && strcmp(format_s, "text") != 0) die_usage("unknown --format \"%s\" (text, json)", format_s);
    if (from_csv && save) die_usage("--save stores this machine's measurement: it excludes --from-csv");
    if (from_csv && measure_opts) die_usage("--reps, --iters, --parallel and --progress apply to a measurement, not to --from-csv");
    char save_path[4096], why[512];
    if (save && osmp__measured_cache_path(save_path, sizeof(save_path), why, sizeof(why))) die_usage("%s", why);

    double *m;
    int n, *cpus;
    if (from_csv) {
        size_t len;
        char *text = read_file(from_csv, &len);
        int rc = osmp__latency_parse_csv(text, len, &m, &n, why, sizeof(why));
        free(text);
        if (rc == OSMP_ERR_NO_MEMORY) die_internal("out of memory");
        if (rc) die_usage("%s: %s", from_csv, why);
        cpus = malloc(sizeof(int) * (size_t)n);
        if (!cpus) die_internal("out of memory");
        for (int i = 0; i < n; i++) cpus[i] = i;
    } else {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) != 0) die_internal("sched_getaffinity: %s", strerror(errno));
        n = CPU_COUNT(&set);
        if (n < 2) die_usage("this process may run on %d CPU: measuring needs at least 2", n);
        cpus = malloc(sizeof(int) * (size_t)n);
        if (!cpus) die_internal("out of memory");
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < n; c++)
            if (CPU_ISSET(c, &set)) cpus[k++] = c;
        if (progress < 0) progress = isatty(2);
        m = measure(cpus, n, reps, iters, parallel, progress);
    }

    struct osmp__mtree *tree;
    int rc = osmp__latency_cluster(m, n, &tree, why, sizeof(why));
    if (rc == OSMP_ERR_NO_MEMORY) die_internal("out of memory");
    if (rc) die_usage("%s%s%s", from_csv ? from_csv : "", from_csv ? ": " : "", why);
    if (osmp__mtree_check(tree, why, sizeof(why))) die_internal("internal error: %s", why);
    if (json)
        print_json(tree, cpus);
    else
        print_text(tree, cpus);
    fflush(stdout);
    if (out_csv) write_csv(out_csv, m, n);

    hwloc_topology_t hw = NULL;
    if (!from_csv) {
        hw = load_hw(NULL);
        char line[512];
        osmp__measured_compare(hw, cpus, tree, line, sizeof(line));
        fprintf(stderr, "osmp-probe: %s\n", line);
    }
    const char *xml_paths[2] = {out_xml, save ? save_path : NULL};
    for (int k = 0; k < 2; k++) {
        if (!xml_paths[k]) continue;
        /* A fresh topology per file: groups inserted into one must not leak into the other. */
        if (hw) hwloc_topology_destroy(hw);
        char synth[64];
        snprintf(synth, sizeof(synth), "core:%d pu:1", n);
        hw = load_hw(from_csv ? synth : NULL);
        char host[256] = "";
        if (!from_csv && gethostname(host, sizeof(host)) < 0) die_internal("gethostname: %s", strerror(errno));
        host[sizeof(host) - 1] = '\0';
        if (k == 1) make_parent_dirs(xml_paths[k]);
        int conflicts;
        rc = osmp__measured_export_xml(hw, cpus, m, tree, from_csv ? NULL : host, xml_paths[k], &conflicts, why,
                                       sizeof(why));
        if (rc == OSMP_ERR_NO_MEMORY) die_internal("out of memory");
        if (rc) die_usage("%s", why);
        if (conflicts)
            fprintf(stderr, "osmp-probe: %d measured group%s cross hwloc's objects and are not in %s\n", conflicts,
                    conflicts == 1 ? "" : "s", xml_paths[k]);
        if (k == 1) fprintf(stderr, "osmp-probe: saved %s (OSMP_TOPOLOGY=measured uses it)\n", xml_paths[k]);
    }
    if (hw) hwloc_topology_destroy(hw);
    osmp__mtree_destroy(tree);
    free(m);
    free(cpus);
    return 0;
}
