/*
 * osmp-topo: show a node's tree of locality domains, where participants sit, the
 * plan OSMP builds for them, distances, and the trees and rings collectives use.
 * Uses only the public API (include/osmp.h).
 *
 * Exit status: 0 on success, 2 on bad input (one line on stderr), 1 on an
 * internal failure.
 */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h" /* the algorithm tables, for --algorithms */
#include "coll/tune.h"
#include "common/knobs.h"
#include "topo/measured.h"
#include "osmp.h"
#include "traffic.h"
#include "cli.h"

const char osmp__tool[] = "osmp-topo";

#define MAX_PARTICIPANTS OSMP_GRAPH_MAX_RANKS /* trees and rings compare all pairs */

static const char usage[] =
    "usage: osmp-topo [--input FILE.xml | --synthetic STRING] [--whole-system]\n"
    "                 [-n N] [--cores LIST | --bind linear|scatter|numa|random:SEED]\n"
    "                 [--hierarchy SPEC] [--root R]\n"
    "                 [--show tree|groups|plan|distances|mst|ring|binomial|rankring]\n"
    "                 [--show traffic --trace PREFIX [--op OP] [--bytes N]]\n"
    "                 [--format text|json|dot] | --knobs | --algorithms | --signature\n"
    "\n"
    "  --input FILE.xml     load another machine from an hwloc XML file (lstopo out.xml)\n"
    "  --synthetic STRING   load an hwloc synthetic topology, e.g. \"pack:2 l3:4 core:8 pu:1\"\n"
    "  --whole-system       keep cores outside the allowed cpuset\n"
    "  -n N                 number of participants (default: the number of cores, or of --cores)\n"
    "  --cores LIST         logical core of each rank in order, ranges allowed: 0-5,12,18-20\n"
    "  --bind POLICY        place the N participants by policy instead (default linear)\n"
    "  --hierarchy SPEC     levels from the leaf up, e.g. l3,numa,package or package:4 (default auto)\n"
    "  --root R             root rank for the plan and trees (default 0)\n"
    "  --show WHAT          tree: the domains (default); groups: the plan's levels; plan: the plan as a\n"
    "                       tree; distances: the ladder rung of every pair; mst/ring: distance-aware\n"
    "                       broadcast tree / allgather ring; binomial/rankring: rank-order baselines;\n"
    "                       traffic: per call of a transfer trace (OSMP_TRACE=PREFIX), the bytes across\n"
    "                       packages, NUMA nodes and L3s and the busiest participants (topology: the run's)\n"
    "  --trace PREFIX       the trace files PREFIX.<rank>.jsonl (--show traffic)\n"
    "  --op OP, --bytes N   only the calls of this collective / with N bytes per block (--show traffic)\n"
    "  --format FMT         text (default), json or dot\n"
    "  --knobs              list every OSMP_* environment variable with its default and meaning\n"
    "  --algorithms         list every collective's algorithms, the selection table and the tune table in use\n"
    "  --signature          the topology line a tune table made on this machine starts with (docs/tuning.md)\n";

#define die_usage(...) osmp__tool_fail(2, __VA_ARGS__)

static void die_status(int rc, const char *what)
{
    fprintf(stderr, "osmp-topo: %s: %s\n", what, osmp_status_str(rc));
    exit(rc == OSMP_ERR_NO_MEMORY ? 1 : 2);
}

static int parse_int(const char *s, const char *opt, int lo, int hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) die_usage("%s expects an integer in %d..%d, got \"%s\"", opt, lo, hi, s);
    return (int)v;
}

enum show { SHOW_TREE, SHOW_GROUPS, SHOW_PLAN, SHOW_DISTANCES, SHOW_MST, SHOW_RING, SHOW_BINOMIAL, SHOW_RANKRING,
            SHOW_TRAFFIC };
enum format { FMT_TEXT, FMT_JSON, FMT_DOT };

struct ctx {
    osmp_topo_t topo;
    int n; /* 0: no participants given (tree only) */
    int *cores;
    int root;
    const char *spec;
    enum format fmt;
};

/* ---------------------------------------------------------------- tree */

static void ranks_on_core(const struct ctx *c, int core, FILE *f, const char *sep_first, const char *sep)
{
    const char *s = sep_first;
    for (int r = 0; r < c->n; r++)
        if (c->cores[r] == core) {
            fprintf(f, "%s%d", s, r);
            s = sep;
        }
}

static int core_has_rank(const struct ctx *c, int core)
{
    for (int r = 0; r < c->n; r++)
        if (c->cores[r] == core) return 1;
    return 0;
}

static void tree_text(const struct ctx *c, const struct osmp_domain *d, int indent)
{
    if (d->kind == OSMP_DOMAIN_PU) return; /* shown in the core's cpuset */
    printf("%*s%s L#%d", indent * 2, "", osmp_domain_kind_name(d->kind), d->logical_index);
    if (d->os_index >= 0 && d->kind != OSMP_DOMAIN_MACHINE) printf(" P#%d", d->os_index);
    if (d->kind == OSMP_DOMAIN_CORE) {
        printf(" (pu %s)", d->cpuset);
        if (core_has_rank(c, d->logical_index)) {
            printf(" ranks");
            ranks_on_core(c, d->logical_index, stdout, " ", ",");
        }
    } else {
        printf(" (cores %d-%d, pu %s)", d->first_core, d->first_core + d->ncores - 1, d->cpuset);
    }
    putchar('\n');
    for (int i = 0; i < d->nchildren; i++) tree_text(c, d->children[i], indent + 1);
}

static void tree_json(const struct ctx *c, const struct osmp_domain *d, int indent)
{
    printf("%*s{\"kind\": \"%s\", \"logical_index\": %d, \"os_index\": %d, \"cores\": [%d, %d], \"cpuset\": \"%s\"",
           indent * 2, "", osmp_domain_kind_name(d->kind), d->logical_index, d->os_index, d->first_core,
           d->first_core + d->ncores - 1, d->cpuset);
    if (d->kind == OSMP_DOMAIN_CORE) {
        printf(", \"ranks\": [");
        ranks_on_core(c, d->logical_index, stdout, "", ", ");
        printf("]}");
        return;
    }
    printf(", \"children\": [\n");
    for (int i = 0; i < d->nchildren; i++) {
        tree_json(c, d->children[i], indent + 1);
        printf("%s\n", i + 1 < d->nchildren ? "," : "");
    }
    printf("%*s]}", indent * 2, "");
}

static void tree_dot(const struct ctx *c, const struct osmp_domain *d)
{
    if (d->kind == OSMP_DOMAIN_PU) return;
    printf("  \"%s%d\" [label=\"%s L#%d", osmp_domain_kind_name(d->kind), d->logical_index,
           osmp_domain_kind_name(d->kind), d->logical_index);
    if (d->kind == OSMP_DOMAIN_CORE && core_has_rank(c, d->logical_index)) {
        printf("\\nranks");
        ranks_on_core(c, d->logical_index, stdout, " ", ",");
    }
    printf("\"];\n");
    for (int i = 0; i < d->nchildren; i++) {
        const struct osmp_domain *k = d->children[i];
        if (k->kind == OSMP_DOMAIN_PU) continue;
        printf("  \"%s%d\" -> \"%s%d\";\n", osmp_domain_kind_name(d->kind), d->logical_index,
               osmp_domain_kind_name(k->kind), k->logical_index);
        tree_dot(c, k);
    }
}

static void show_tree(const struct ctx *c)
{
    const struct osmp_domain *root = osmp_topo_root(c->topo);
    if (c->fmt == FMT_TEXT) {
        printf("%d cores, %d PUs:", osmp_topo_ncores(c->topo), osmp_topo_count(c->topo, OSMP_DOMAIN_PU));
        for (int k = OSMP_DOMAIN_GROUP; k < OSMP_DOMAIN_CORE; k++)
            if (osmp_topo_count(c->topo, k)) printf(" %d %s", osmp_topo_count(c->topo, k), osmp_domain_kind_name(k));
        printf("\n");
        tree_text(c, root, 0);
    } else if (c->fmt == FMT_JSON) {
        printf("{\"cores\": %d, \"pus\": %d, \"counts\": {", osmp_topo_ncores(c->topo),
               osmp_topo_count(c->topo, OSMP_DOMAIN_PU));
        for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
            printf("%s\"%s\": %d", k ? ", " : "", osmp_domain_kind_name(k), osmp_topo_count(c->topo, k));
        printf("},\n\"tree\":\n");
        tree_json(c, root, 0);
        printf("}\n");
    } else {
        printf("digraph topology {\n");
        tree_dot(c, root);
        printf("}\n");
    }
}

/* ---------------------------------------------------------------- plan */

static void print_int_list(const int *v, int n)
{
    for (int i = 0; i < n; i++) printf("%s%d", i ? ", " : "", v[i]);
}

static struct osmp_plan *make_plan(const struct ctx *c)
{
    struct osmp_plan *plan;
    int rc = osmp_plan_create(c->topo, c->cores, c->n, c->spec, c->root, &plan);
    if (rc) die_status(rc, "cannot build the plan");
    char why[256];
    if (osmp_plan_check(plan, why, sizeof(why))) {
        fprintf(stderr, "osmp-topo: internal error: %s\n", why);
        exit(1);
    }
    return plan;
}

static void spec_used(const struct ctx *c, char *buf, size_t len)
{
    if (!c->spec || strcmp(c->spec, "auto") == 0)
        osmp_plan_default_spec(c->topo, buf, len);
    else
        snprintf(buf, len, "%s", c->spec);
}

static void show_groups(const struct ctx *c)
{
    struct osmp_plan *plan = make_plan(c);
    char spec[256];
    spec_used(c, spec, sizeof(spec));
    if (c->fmt == FMT_TEXT) {
        printf("participants: %d, root %d, hierarchy \"%s\"\ncores:", c->n, c->root, spec);
        for (int r = 0; r < c->n; r++) printf(" %d", c->cores[r]);
        printf("\n");
        for (int i = 0; i < plan->nlevels; i++) {
            const struct osmp_plan_level *L = &plan->levels[i];
            printf("level %d %s: %d group%s\n", i, L->name, L->ngroups, L->ngroups == 1 ? "" : "s");
            for (int g = 0; g < L->ngroups; g++) {
                printf("  leader %d: ", L->groups[g].leader);
                print_int_list(L->groups[g].members, L->groups[g].nmembers);
                printf("\n");
            }
        }
    } else if (c->fmt == FMT_JSON) {
        printf("{\"participants\": %d, \"root\": %d, \"hierarchy\": \"%s\", \"cores\": [", c->n, c->root, spec);
        print_int_list(c->cores, c->n);
        printf("],\n \"levels\": [");
        for (int i = 0; i < plan->nlevels; i++) {
            const struct osmp_plan_level *L = &plan->levels[i];
            printf("%s\n  {\"name\": \"%s\", \"groups\": [", i ? "," : "", L->name);
            for (int g = 0; g < L->ngroups; g++) {
                printf("%s\n    {\"leader\": %d, \"members\": [", g ? "," : "", L->groups[g].leader);
                print_int_list(L->groups[g].members, L->groups[g].nmembers);
                printf("]}");
            }
            printf("]}");
        }
        printf("]}\n");
    } else {
        printf("digraph plan {\n");
        for (int i = 0; i < plan->nlevels; i++)
            for (int g = 0; g < plan->levels[i].ngroups; g++) {
                const struct osmp_plan_group *G = &plan->levels[i].groups[g];
                for (int x = 0; x < G->nmembers; x++)
                    if (G->members[x] != G->leader)
                        printf("  %d -> %d [label=\"%s\"];\n", G->leader, G->members[x], plan->levels[i].name);
            }
        printf("}\n");
    }
    osmp_plan_destroy(plan);
}

/* ---------------------------------------------------------------- distances */

static void show_distances(const struct ctx *c)
{
    if (c->fmt == FMT_DOT) die_usage("--format dot is not available for --show distances");
    if (c->fmt == FMT_TEXT) {
        printf("distance rungs:");
        for (int r = 0; r < OSMP_DIST_RUNGS; r++) printf(" %d=%s", r, osmp_dist_rung_name(r));
        printf("\n     ");
        for (int b = 0; b < c->n; b++) printf(" %3d", b);
        printf("\n");
        for (int a = 0; a < c->n; a++) {
            printf("%4d:", a);
            for (int b = 0; b < c->n; b++) printf(" %3d", osmp_topo_distance(c->topo, c->cores[a], c->cores[b]));
            printf("\n");
        }
        return;
    }
    printf("{\"participants\": %d, \"cores\": [", c->n);
    print_int_list(c->cores, c->n);
    printf("], \"rungs\": [");
    for (int r = 0; r < OSMP_DIST_RUNGS; r++) printf("%s\"%s\"", r ? ", " : "", osmp_dist_rung_name(r));
    printf("],\n \"distances\": [");
    for (int a = 0; a < c->n; a++) {
        printf("%s\n  [", a ? "," : "");
        for (int b = 0; b < c->n; b++) printf("%s%d", b ? ", " : "", osmp_topo_distance(c->topo, c->cores[a], c->cores[b]));
        printf("]");
    }
    printf("]}\n");
}

/* ---------------------------------------------------------------- graphs */

static void show_graph(const struct ctx *c, osmp_graph_kind_t kind)
{
    struct osmp_plan *plan = kind == OSMP_GRAPH_PLAN ? make_plan(c) : NULL;
    struct osmp_graph *g;
    int rc = osmp_graph_create(c->topo, c->cores, c->n, c->root, kind, plan, &g);
    if (rc) die_status(rc, "cannot build the graph");
    const char *name = osmp_graph_kind_name(kind);
    if (c->fmt == FMT_TEXT) {
        printf("%s: %d participants, root %d, depth %d, fanout %d\ncross edges:", name, c->n, c->root, g->depth,
               g->fanout);
        for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
            if (g->cross[k] >= 0) printf(" %s %d", osmp_domain_kind_name(k), g->cross[k]);
        printf("\nedges:");
        for (int e = 0; e < g->nedges; e++) printf(" %d->%d", g->edges[e][0], g->edges[e][1]);
        printf("\n");
    } else if (c->fmt == FMT_JSON) {
        printf("{\"kind\": \"%s\", \"participants\": %d, \"root\": %d, \"depth\": %d, \"fanout\": %d, \"cross\": {",
               name, c->n, c->root, g->depth, g->fanout);
        const char *sep = "";
        for (int k = 0; k < OSMP_DOMAIN_KIND_COUNT; k++)
            if (g->cross[k] >= 0) {
                printf("%s\"%s\": %d", sep, osmp_domain_kind_name(k), g->cross[k]);
                sep = ", ";
            }
        printf("},\n \"edges\": [");
        for (int e = 0; e < g->nedges; e++) printf("%s[%d, %d]", e ? ", " : "", g->edges[e][0], g->edges[e][1]);
        printf("]}\n");
    } else {
        printf("digraph %s {\n", name);
        for (int r = 0; r < c->n; r++) printf("  %d [label=\"%d\\ncore %d\"];\n", r, r, c->cores[r]);
        for (int e = 0; e < g->nedges; e++) printf("  %d -> %d;\n", g->edges[e][0], g->edges[e][1]);
        printf("}\n");
    }
    osmp_graph_destroy(g);
    osmp_plan_destroy(plan);
}

/* ---------------------------------------------------------------- main */

/* --algorithms: the tune table a team on topo uses, and its rules. */
static void tune_print(osmp_topo_t topo)
{
    char line[1024];
    osmp__tune_describe(topo, line, sizeof(line));
    printf("\n%s\n", line);
    struct osmp__tune *unused;
    const struct osmp__tune *tune = osmp__tune_for(topo, NULL, &unused, 0);
    if (!tune) return;
    printf("Tuned (before the selection table's rows, for teams of the size each names; after OSMP_<OP>_ALG):\n");
    for (int i = 0; i < tune->nrows; i++) {
        const struct osmp__tune_row *r = &tune->rows[i];
        char ranks[16];
        snprintf(ranks, sizeof(ranks), r->ranks ? "%d ranks" : "any size", r->ranks);
        if (r->setting == OSMP__TUNE_RULE) {
            char hi[32];
            snprintf(hi, sizeof(hi), r->hi == UINT64_MAX ? "max" : "%" PRIu64, r->hi);
            printf("  %-22s %-10s %10" PRIu64 " .. %-10s %-14s (line %d)\n", osmp_coll_name((osmp_coll_t)r->coll),
                   ranks, r->lo, hi, r->choice, r->line);
        } else {
            static const char *const names[] = {"", "chunk", "pipeline_depth", "single_copy_min"};
            char v[32];
            snprintf(v, sizeof(v), r->value == UINT64_MAX ? "never" : "%" PRIu64, r->value);
            printf("  set %-18s %-10s %s%s%s = %s (line %d)\n", "", ranks, names[r->setting],
                   r->coll >= 0 ? "." : "", r->coll >= 0 ? osmp_coll_name((osmp_coll_t)r->coll) : "", v, r->line);
        }
    }
}

int main(int argc, char **argv)
{
    const char *input = NULL, *synthetic = NULL, *cores_list = NULL, *bind = NULL, *spec = NULL;
    const char *show_s = "tree", *format_s = "text", *trace = NULL, *op = NULL;
    int n = -1, root = 0, whole = 0, algorithms = 0;
    long long bytes = -1;
    static const struct option opts[] = {{"input", required_argument, 0, 'i'},
                                         {"synthetic", required_argument, 0, 's'},
                                         {"whole-system", no_argument, 0, 'w'},
                                         {"cores", required_argument, 0, 'c'},
                                         {"bind", required_argument, 0, 'b'},
                                         {"hierarchy", required_argument, 0, 'H'},
                                         {"root", required_argument, 0, 'r'},
                                         {"show", required_argument, 0, 'S'},
                                         {"format", required_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {"knobs", no_argument, 0, 'k'},
                                         {"algorithms", no_argument, 0, 'a'},
                                         {"signature", no_argument, 0, 'g'},
                                         {"trace", required_argument, 0, 'T'},
                                         {"op", required_argument, 0, 'O'},
                                         {"bytes", required_argument, 0, 'B'},
                                         {0, 0, 0, 0}};
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":n:h", opts, NULL)) != -1) {
        switch (o) {
        case 'i': input = optarg; break;
        case 's': synthetic = optarg; break;
        case 'w': whole = 1; break;
        case 'n': n = parse_int(optarg, "-n", 1, MAX_PARTICIPANTS); break;
        case 'c': cores_list = optarg; break;
        case 'b': bind = optarg; break;
        case 'H': spec = optarg; break;
        case 'r': root = parse_int(optarg, "--root", 0, MAX_PARTICIPANTS - 1); break;
        case 'S': show_s = optarg; break;
        case 'f': format_s = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        case 'k': osmp_knobs_print(stdout); return 0;
        case 'a': algorithms = 1; break;
        case 'g': algorithms = 2; break;
        case 'T': trace = optarg; break;
        case 'O': op = optarg; break;
        case 'B': bytes = parse_int(optarg, "--bytes", 0, 1 << 30); break;
        case ':': die_usage("option %s needs an argument (see --help)", argv[optind - 1]);
        default: die_usage("unknown option %s (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) die_usage("unexpected argument \"%s\" (see --help)", argv[optind]);
    if (input && synthetic) die_usage("--input and --synthetic exclude each other");
    if (cores_list && bind) die_usage("--cores and --bind exclude each other");

    static const char *const shows[] = {"tree", "groups",   "plan",     "distances", "mst",
                                        "ring", "binomial", "rankring", "traffic"};
    int show = -1;
    for (int i = 0; i < (int)(sizeof(shows) / sizeof(shows[0])); i++)
        if (strcmp(show_s, shows[i]) == 0) show = i;
    if (show < 0)
        die_usage("unknown --show \"%s\" (tree, groups, plan, distances, mst, ring, binomial, rankring, traffic)",
                  show_s);
    if ((show == SHOW_TRAFFIC) != (trace != NULL)) die_usage("--show traffic and --trace PREFIX go together");
    if ((op || bytes >= 0) && !trace) die_usage("--op and --bytes select calls of --show traffic");
    if (trace && strcmp(format_s, "dot") == 0) die_usage("--format dot is not available for --show traffic");
    static const char *const formats[] = {"text", "json", "dot"};
    int fmt = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(format_s, formats[i]) == 0) fmt = i;
    if (fmt < 0) die_usage("unknown --format \"%s\" (text, json, dot)", format_s);

    struct ctx c = {.root = root, .spec = spec, .fmt = (enum format)fmt};
    osmp_topo_source_t src = input ? OSMP_TOPO_XML : synthetic ? OSMP_TOPO_SYNTHETIC : OSMP_TOPO_THIS_MACHINE;
    int rc = algorithms && !input && !synthetic /* the machine the runtime plans on */
                 ? osmp__topo_load_knob(osmp__knob_str(OSMP_KNOB_TOPOLOGY), &c.topo)
                 : osmp_topo_load(src, input ? input : synthetic, whole ? OSMP_TOPO_WHOLE_SYSTEM : 0, &c.topo);
    if (rc) die_usage("%s", osmp_topo_last_error()[0] ? osmp_topo_last_error() : osmp_status_str(rc));
    char why[256];
    if (osmp_topo_check(c.topo, why, sizeof(why))) {
        fprintf(stderr, "osmp-topo: internal error: topology invariant: %s\n", why);
        return 1;
    }
    int ncores = osmp_topo_ncores(c.topo);
    if (algorithms == 2) { /* the first line of a tune table made on this topology */
        char words[160];
        uint64_t sig = osmp__tune_signature(c.topo, words, sizeof(words));
        printf("topology %016" PRIx64 " %s\n", sig, words);
        osmp_topo_destroy(c.topo);
        return 0;
    }
    if (algorithms) {
        osmp__algs_print(stdout);
        tune_print(c.topo);
        osmp_topo_destroy(c.topo);
        return 0;
    }

    /* Participants: from --cores, else N placed by --bind; only the tree may go without. */
    if (show == SHOW_TRAFFIC) { /* the participants and their cores come from the trace */
        if (cores_list || bind || n > 0) die_usage("--show traffic takes the participants from the trace");
        rc = osmp_traffic_show(c.topo, trace, op, bytes, fmt == FMT_JSON, stdout, why, sizeof(why));
        osmp_topo_destroy(c.topo);
        if (rc) die_usage("%s", why);
        return 0;
    }
    int given = cores_list || bind || n > 0;
    if (given || show != SHOW_TREE) {
        c.cores = malloc(sizeof(int) * MAX_PARTICIPANTS);
        if (!c.cores) die_status(OSMP_ERR_NO_MEMORY, "participants");
        if (cores_list) {
            rc = osmp_core_list_parse(cores_list, ncores, c.cores, MAX_PARTICIPANTS, &c.n, why, sizeof(why));
            if (rc) die_usage("%s", why);
            if (n > 0 && n != c.n) die_usage("-n %d does not match the %d cores of --cores", n, c.n);
        } else {
            c.n = n > 0 ? n : ncores;
            rc = osmp_topo_place(c.topo, bind, c.n, c.cores, why, sizeof(why));
            if (rc) die_usage("%s", why);
        }
    }
    /* The tree without participants too: as the other views, which place one per core. */
    int nparts = c.cores ? c.n : ncores;
    if (c.root >= nparts) die_usage("--root %d is out of range for %d participants", c.root, nparts);
    if (spec && strcmp(spec, "auto") != 0) {
        struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
        int nl;
        if (osmp_spec_parse(spec, lv, &nl, why, sizeof(why))) die_usage("%s", why);
    }

    switch (show) {
    case SHOW_TREE: show_tree(&c); break;
    case SHOW_GROUPS: show_groups(&c); break;
    case SHOW_PLAN: show_graph(&c, OSMP_GRAPH_PLAN); break;
    case SHOW_DISTANCES: show_distances(&c); break;
    case SHOW_MST: show_graph(&c, OSMP_GRAPH_MST); break;
    case SHOW_RING: show_graph(&c, OSMP_GRAPH_RING); break;
    case SHOW_BINOMIAL: show_graph(&c, OSMP_GRAPH_BINOMIAL); break;
    case SHOW_RANKRING: show_graph(&c, OSMP_GRAPH_RANKRING); break;
    case SHOW_TRAFFIC: break;
    }
    free(c.cores);
    osmp_topo_destroy(c.topo);
    return 0;
}
