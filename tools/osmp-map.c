/*
 * osmp-map: a rank -> core mapping from a communication matrix, for a launcher
 * (Open MPI rankfile, MPICH hydra, Slurm), for osmp-run --cores, or for
 * libosmp_mpi's OSMP_MAP. The algorithms live in src/plan/map.c.
 *
 * Exit status: 0 on success, 2 on bad input (one line on stderr), 1 on an
 * internal failure.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osmp.h"
#include "plan/map.h"
#include "cli.h"

const char osmp__tool[] = "osmp-map";

static const char usage[] =
    "usage: osmp-map --matrix FILE [--input FILE.xml | --synthetic STRING] [--whole-system]\n"
    "                [--cores LIST] [--algorithm NAME] [--format cores|rankfile|hydra|slurm|json]\n"
    "                [--host NAME]\n"
    "\n"
    "Places N ranks on N of the given cores so that ranks that exchange many bytes sit close:\n"
    "the cost of a mapping is the sum over pairs of ranks of the bytes they exchange (both\n"
    "directions) times the distance ladder rung of their cores (osmp-topo --show distances).\n"
    "\n"
    "  --matrix FILE        the traffic: N lines of N non-negative numbers, row i = bytes rank i sent\n"
    "                       to each rank (Open MPI monitoring's .mat layout, OSMP_PROFILE's output),\n"
    "                       or an Open MPI monitoring .prof file (its records summed per pair)\n"
    "  --input FILE.xml     map onto another machine (an hwloc XML file); default: this machine\n"
    "  --synthetic STRING   map onto an hwloc synthetic topology, e.g. \"pack:2 l3:4 core:8 pu:1\"\n"
    "  --whole-system       keep cores outside the allowed cpuset\n"
    "  --cores LIST         the logical cores to use, e.g. 0-15,32-47 (default: every core); at\n"
    "                       least N, each at most once\n"
    "  --algorithm NAME     auto (default: the cheapest of all below, each refined by swaps),\n"
    "                       bisect (recursive partitioning along the topology tree, refined),\n"
    "                       design1, design2 (Hashmi et al.'s greedy designs), packed, round_robin\n"
    "  --format FMT         cores (default): the cores of ranks 0..N-1, for osmp-run --cores and\n"
    "                       OSMP_MAP; rankfile: Open MPI's (mpirun --rankfile F), \"rank R=HOST\n"
    "                       slot=CORE\" with logical cores; hydra: MPICH's \"-bind-to user:P,...\" and\n"
    "                       slurm: srun's \"--cpu-bind=map_cpu:P,...\", both with the OS index of\n"
    "                       each core's first PU; json: {\"cores\", \"cost\", \"baselines\"} with the\n"
    "                       cost of packed, round_robin, design1 and design2 (unrefined)\n"
    "  --host NAME          the host name in a rankfile (default: this machine's)\n"
    "  --help               this text\n";

#define die_usage(...) osmp__tool_fail(2, __VA_ARGS__)

static void die_internal(const char *what, int rc)
{
    fprintf(stderr, "osmp-map: %s: %s\n", what, osmp_status_str(rc));
    exit(1);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) die_usage("cannot read --matrix %s", path);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if (len + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) die_internal("reading the matrix", OSMP_ERR_NO_MEMORY);
    buf[len] = 0;
    if (strlen(buf) != len) die_usage("%s: not a text file (NUL byte)", path);
    return buf;
}

static void print_cost(double c)
{
    if (c < 9e15 && c == (double)(long long)c) printf("%lld", (long long)c);
    else printf("%.17g", c);
}

enum format { FMT_CORES, FMT_RANKFILE, FMT_HYDRA, FMT_SLURM, FMT_JSON };

int main(int argc, char **argv)
{
    const char *matrix = NULL, *xml = NULL, *synthetic = NULL, *cores_arg = NULL, *host = NULL;
    int alg = OSMP__MAP_AUTO, whole = 0;
    enum format fmt = FMT_CORES;
    static const struct option opts[] = {
        {"matrix", required_argument, 0, 'm'}, {"input", required_argument, 0, 'i'},
        {"synthetic", required_argument, 0, 's'}, {"whole-system", no_argument, 0, 'w'},
        {"cores", required_argument, 0, 'c'}, {"algorithm", required_argument, 0, 'a'},
        {"format", required_argument, 0, 'f'}, {"host", required_argument, 0, 'H'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    opterr = 0;
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (o) {
        case 'm': matrix = optarg; break;
        case 'i': xml = optarg; break;
        case 's': synthetic = optarg; break;
        case 'w': whole = 1; break;
        case 'c': cores_arg = optarg; break;
        case 'H': host = optarg; break;
        case 'a':
            alg = osmp__map_alg_parse(optarg);
            if (alg < 0) die_usage("unknown --algorithm \"%s\" (auto, bisect, design1, design2, packed, round_robin)", optarg);
            break;
        case 'f':
            if (!strcmp(optarg, "cores")) fmt = FMT_CORES;
            else if (!strcmp(optarg, "rankfile")) fmt = FMT_RANKFILE;
            else if (!strcmp(optarg, "hydra")) fmt = FMT_HYDRA;
            else if (!strcmp(optarg, "slurm")) fmt = FMT_SLURM;
            else if (!strcmp(optarg, "json")) fmt = FMT_JSON;
            else die_usage("unknown --format \"%s\" (cores, rankfile, hydra, slurm, json)", optarg);
            break;
        case 'h': fputs(usage, stdout); return 0;
        default:
            if (optopt) die_usage("option -%c needs an argument or is unknown (--help)", optopt);
            die_usage("unknown option or missing argument: %s (--help)", argv[optind - 1]);
        }
    }
    if (optind < argc) die_usage("unexpected argument \"%s\" (--help)", argv[optind]);
    if (!matrix) die_usage("--matrix FILE is required (--help)");
    if (xml && synthetic) die_usage("--input and --synthetic exclude each other");

    char *text = read_file(matrix), err[256];
    double *mat;
    int n, rc = osmp__map_parse_matrix(text, &mat, &n, err, sizeof(err));
    free(text);
    if (rc == OSMP_ERR_NO_MEMORY) die_internal("reading the matrix", rc);
    if (rc) die_usage("%s: %s", matrix, err);

    osmp_topo_t topo;
    rc = osmp_topo_load(xml ? OSMP_TOPO_XML : synthetic ? OSMP_TOPO_SYNTHETIC : OSMP_TOPO_THIS_MACHINE,
                        xml ? xml : synthetic, whole ? OSMP_TOPO_WHOLE_SYSTEM : 0, &topo);
    if (rc) die_usage("cannot load the topology: %s", osmp_topo_last_error());
    int nc = osmp_topo_ncores(topo), ns = nc;
    int *cores = malloc(sizeof(int) * (size_t)nc), *slot_of = malloc(sizeof(int) * (size_t)n);
    if (!cores || !slot_of) die_internal("mapping", OSMP_ERR_NO_MEMORY);
    if (cores_arg) {
        rc = osmp_core_list_parse(cores_arg, nc, cores, nc, &ns, err, sizeof(err));
        if (rc) die_usage("--cores %s: %s", cores_arg, err);
        for (int a = 0; a < ns; a++)
            for (int b = a + 1; b < ns; b++)
                if (cores[a] == cores[b]) die_usage("--cores %s: core %d listed twice", cores_arg, cores[a]);
    } else {
        for (int c = 0; c < nc; c++) cores[c] = c;
    }
    if (n > ns) die_usage("%s: %d ranks but %d cores to place them on", matrix, n, ns);

    struct osmp__map m;
    rc = osmp__map_init(&m, topo, cores, ns, mat, n);
    if (rc) die_internal("mapping", rc);
    rc = osmp__map_run(&m, alg, slot_of);
    if (rc) die_internal("mapping", rc);

    switch (fmt) {
    case FMT_CORES:
        for (int r = 0; r < n; r++) printf("%s%d", r ? "," : "", cores[slot_of[r]]);
        printf("\n");
        break;
    case FMT_RANKFILE: {
        char hn[256] = "localhost";
        if (!host && gethostname(hn, sizeof(hn)) == 0) hn[sizeof(hn) - 1] = 0;
        for (int r = 0; r < n; r++) printf("rank %d=%s slot=%d\n", r, host ? host : hn, cores[slot_of[r]]);
        break;
    }
    case FMT_HYDRA:
    case FMT_SLURM:
        printf("%s", fmt == FMT_HYDRA ? "-bind-to user:" : "--cpu-bind=map_cpu:");
        for (int r = 0; r < n; r++)
            printf("%s%d", r ? "," : "", osmp_topo_domain(topo, OSMP_DOMAIN_CORE, cores[slot_of[r]])->children[0]->os_index);
        printf("\n");
        break;
    case FMT_JSON: {
        printf("{\"cores\": [");
        for (int r = 0; r < n; r++) printf("%s%d", r ? ", " : "", cores[slot_of[r]]);
        printf("], \"cost\": ");
        print_cost(osmp__map_cost(&m, slot_of));
        printf(", \"baselines\": {");
        static const int base[] = {OSMP__MAP_PACKED, OSMP__MAP_ROUND_ROBIN, OSMP__MAP_DESIGN1, OSMP__MAP_DESIGN2};
        for (int k = 0; k < 4; k++) {
            rc = osmp__map_run(&m, base[k], slot_of);
            if (rc) die_internal("mapping", rc);
            printf("%s\"%s\": ", k ? ", " : "", osmp__map_alg_name(base[k]));
            print_cost(osmp__map_cost(&m, slot_of));
        }
        printf("}}\n");
        break;
    }
    }
    osmp__map_fini(&m);
    osmp_topo_destroy(topo);
    free(cores), free(slot_of), free(mat);
    return 0;
}
