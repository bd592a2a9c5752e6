/*
 * libosmp_mpi: applying a rank -> core mapping.
 *
 * OSMP_MAP=FILE (osmp-map --format cores: logical cores of this machine,
 * comma-separated, rank r on the r-th): inside MPI_Init / MPI_Init_thread, right
 * after the MPI library is up and before the program allocates anything, each
 * rank binds every thread of its process (the MPI library's progress threads
 * included) to the PUs of its core. The rank is the rank among the processes
 * of this node (MPI_COMM_TYPE_SHARED), which is the world rank on one node. A
 * file with fewer cores than ranks on the node, or a core this process may not
 * use, stops the job with one line naming it (MPI_Abort with code 2).
 *
 * MPI_Cart_create with reorder = 1: the Cartesian grid's neighbours (one edge
 * per neighbour along each dimension, both directions, weight 1, periodic
 * dimensions wrapped) are mapped by osmp-map's default algorithm (auto, see
 * src/plan/map.h) onto the cores the ranks of the old communicator run on
 * (sched_getcpu, gathered), and the new communicator numbers the processes in
 * that order: MPI_Comm_split with the grid position as key, then
 * PMPI_Cart_create without reordering. Every rank computes the same mapping
 * from the same gathered input. Ranks beyond the grid get MPI_COMM_NULL, as
 * from MPI. OSMP_MPI_DISABLE=1 leaves reorder to the MPI library.
 * MPI_Dist_graph_create(_adjacent): below.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/knobs.h"
#include "osmp_mpi.h"
#include "plan/map.h"

static osmp_topo_t machine; /* this machine, loaded once */

static osmp_topo_t this_machine(void)
{
    if (!machine && osmp_topo_load(OSMP_TOPO_THIS_MACHINE, NULL, 0, &machine) != OSMP_OK) machine = NULL;
    return machine;
}

/* The PUs of a cpuset string "0-3,8" into set. */
static void cpuset_of(const char *list, cpu_set_t *set)
{
    CPU_ZERO(set);
    for (const char *p = list; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (*end == '-') b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++) CPU_SET((int)c, set);
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;
    }
}

/* One line (one write: the ranks print at once and the first abort kills the
 * others), then the whole job stops. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(line, sizeof(line), "osmp-mpi: ");
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stderr);
    /* The launcher forwards stderr through its own processes, which the abort
     * stops: under load MPICH's hydra lost the line (mpi.mpich-4-map, CI). A
     * moment lets it pass on this error path. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    PMPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* Bind every thread of this process to the PUs of set. */
static int bind_all(const cpu_set_t *set)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return sched_setaffinity(0, sizeof(*set), set);
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (isdigit((unsigned char)e->d_name[0]) && sched_setaffinity(atoi(e->d_name), sizeof(*set), set)) rc = -1;
    closedir(d);
    return rc;
}

static void apply_map(void)
{
    const char *file = osmp__knob_str(OSMP_KNOB_MAP);
    if (!*file || osmp__mpi_setup() == 2) return;
    MPI_Comm node;
    int lr, ls;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &lr);
    PMPI_Comm_size(node, &ls);
    PMPI_Comm_free(&node);
    osmp_topo_t t = this_machine();
    if (!t) die("OSMP_MAP: cannot load this machine's topology");
    FILE *f = fopen(file, "r");
    if (!f) die("OSMP_MAP=%s: cannot read it", file);
    char text[65536];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = 0;
    size_t k = 0; /* the list without blanks and newlines */
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)text[i])) text[k++] = text[i];
    text[k] = 0;
    int nc = osmp_topo_ncores(t), cap = 16384, n = 0;
    int *cores = malloc(sizeof(int) * (size_t)cap);
    char err[256];
    if (!cores) die("OSMP_MAP=%s: out of memory", file);
    if (osmp_core_list_parse(text, nc, cores, cap, &n, err, sizeof(err)) != OSMP_OK) {
        die("OSMP_MAP=%s: %s (this process may use cores 0-%d)", file, err, nc - 1);
    }
    if (n < ls) die("OSMP_MAP=%s lists %d cores for %d ranks on this node", file, n, ls);
    cpu_set_t set;
    cpuset_of(osmp_topo_domain(t, OSMP_DOMAIN_CORE, cores[lr])->cpuset, &set);
    if (bind_all(&set)) die("OSMP_MAP=%s: cannot bind to core %d (not allowed?)", file, cores[lr]);
    free(cores);
}

/* No forwarding check before PMPI_Init: it would set up before MPI is up, and
 * these arguments are no handles; the running library's PMPI_Init comes first
 * in the lookup order (comm.c), and apply_map passes in a foreign program. */
EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) apply_map();
    return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) apply_map();
    return rc;
}

/* The logical core this process runs on (0 if the machine does not say). */
static int my_core(osmp_topo_t t)
{
    int cpu = sched_getcpu();
    for (int i = 0; i < osmp_topo_count(t, OSMP_DOMAIN_PU); i++) {
        const struct osmp_domain *pu = osmp_topo_domain(t, OSMP_DOMAIN_PU, i);
        if (pu->os_index == cpu) return pu->parent->logical_index;
    }
    return 0;
}

OSMP_MPI_ENTRY(int, MPI_Cart_create)(MPI_Comm old, int ndims, const int dims[], const int periods[], int reorder,
                           MPI_Comm *out)
{
    OSMP_MPI_ENTERED(MPI_Cart_create);
    int inter = 1, size, rank;
    long nn = 1;
    for (int d = 0; d < ndims; d++) nn *= dims[d] > 0 ? dims[d] : 0;
    osmp_topo_t t = reorder ? this_machine() : NULL;
    if (!t || ndims < 1 || !strcmp(osmp__knob_str(OSMP_KNOB_MPI_DISABLE), "1") ||
        PMPI_Comm_test_inter(old, &inter) != MPI_SUCCESS || inter || PMPI_Comm_size(old, &size) != MPI_SUCCESS ||
        nn < 1 || nn > size)
        return PMPI_Cart_create(old, ndims, dims, periods, reorder, out); /* MPI answers (or raises) */
    PMPI_Comm_rank(old, &rank);
    int n = (int)nn, mine = my_core(t);
    int *cores = malloc(sizeof(int) * (size_t)size), *slot_of = malloc(sizeof(int) * (size_t)n);
    double *mat = calloc((size_t)n * (size_t)n, sizeof(double));
    int ok = cores && slot_of && mat, all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, old);
    if (!all_ok) {
        free(cores), free(slot_of), free(mat);
        return PMPI_Cart_create(old, ndims, dims, periods, reorder, out);
    }
    PMPI_Allgather(&mine, 1, MPI_INT, cores, 1, MPI_INT, old);
    /* the grid's edges: row-major positions, as MPI_Cart_rank numbers them */
    for (int v = 0; v < n; v++) {
        long stride = 1;
        for (int d = ndims - 1; d >= 0; d--) {
            int c = (int)(v / stride % dims[d]);
            for (int step = -1; step <= 1; step += 2) {
                int c2 = c + step;
                if (c2 < 0 || c2 >= dims[d]) {
                    if (!periods[d] || dims[d] < 2) continue;
                    c2 = (c2 + dims[d]) % dims[d];
                }
                if (c2 == c) continue;
                mat[(size_t)v * n + (size_t)(v + (c2 - c) * stride)] += 1;
            }
            stride *= dims[d];
        }
    }
    struct osmp__map m;
    int key = n + rank; /* not in the grid: after every grid position */
    if (osmp__map_init(&m, t, cores, size, mat, n) == OSMP_OK) {
        if (osmp__map_run(&m, OSMP__MAP_AUTO, slot_of) == OSMP_OK)
            for (int v = 0; v < n; v++)
                if (slot_of[v] == rank) key = v;
        osmp__map_fini(&m);
    }
    free(cores), free(slot_of), free(mat);
    MPI_Comm ordered;
    int rc = PMPI_Comm_split(old, 0, key, &ordered);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Cart_create(ordered, ndims, dims, periods, 0, out);
    PMPI_Comm_free(&ordered);
    return rc;
}

/*
 * MPI_Dist_graph_create(_adjacent) with reorder = 1. The graph's vertices are
 * the ranks of the old communicator as the call names them; as for
 * MPI_Graph_create and MPI_Cart_create, vertex v becomes the process of new
 * rank v, chosen by the mapping (every declared edge weighs its weight, or 1
 * unweighted) onto the cores the ranks run on, and that process gets vertex
 * v's edges (its MPI_Dist_graph_neighbors answer with new ranks, which are the
 * vertices). The whole graph is gathered so that it can. The result is built
 * with PMPI_Dist_graph_create_adjacent without reordering.
 *   1. gather every rank's edges (u, v, weight) and whether it gave weights;
 *   2. map the graph onto the gathered cores; key = the vertex each rank takes;
 *   3. split in that order, hand each process its vertex's in and out edges.
 */
struct edge {
    int u, v, w;
};

/* 1-3 from this rank's edges (count `ne`); `weighted`: this rank gave weights. */
static int reorder_graph(MPI_Comm old, const struct edge *mine, int ne, int weighted, MPI_Info info, MPI_Comm *out)
{
    osmp_topo_t t = this_machine();
    int size, rank, rc;
    PMPI_Comm_size(old, &size);
    PMPI_Comm_rank(old, &rank);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int *cores = malloc(sizeof(int) * (size_t)size), *slot_of = malloc(sizeof(int) * (size_t)size);
    int mine2[3] = {3 * ne, t ? my_core(t) : 0, weighted}, *info3 = malloc(sizeof(int) * 3 * (size_t)size);
    if (!counts || !displs || !cores || !slot_of || !info3) { /* the others would wait in the gather */
        fprintf(stderr, "osmp-mpi: MPI_Dist_graph_create: out of memory\n");
        PMPI_Abort(old, MPI_ERR_NO_MEM);
    }
    PMPI_Allgather(mine2, 3, MPI_INT, info3, 3, MPI_INT, old); /* 1 */
    long total = 0;
    int any_weighted = 0;
    for (int k = 0; k < size; k++) {
        counts[k] = info3[3 * k];
        displs[k] = (int)total;
        total += counts[k];
        cores[k] = info3[3 * k + 1];
        any_weighted |= info3[3 * k + 2];
    }
    struct edge *all = malloc(sizeof(struct edge) * (size_t)(total / 3 + 1));
    double *mat = calloc((size_t)size * (size_t)size, sizeof(double));
    if (!all) {
        fprintf(stderr, "osmp-mpi: MPI_Dist_graph_create: out of memory\n");
        PMPI_Abort(old, MPI_ERR_NO_MEM);
    }
    PMPI_Allgatherv(mine, 3 * ne, MPI_INT, all, counts, displs, MPI_INT, old);
    long nall = total / 3;
    int key = rank;
    if (mat && t) { /* 2 */
        for (long e = 0; e < nall; e++)
            if (all[e].u >= 0 && all[e].u < size && all[e].v >= 0 && all[e].v < size && all[e].u != all[e].v)
                mat[(size_t)all[e].u * size + all[e].v] += any_weighted ? all[e].w : 1;
        struct osmp__map m;
        if (osmp__map_init(&m, t, cores, size, mat, size) == OSMP_OK) {
            if (osmp__map_run(&m, OSMP__MAP_AUTO, slot_of) == OSMP_OK)
                for (int v = 0; v < size; v++)
                    if (slot_of[v] == rank) key = v;
            osmp__map_fini(&m);
        }
    }
    MPI_Comm ordered;
    rc = PMPI_Comm_split(old, 0, key, &ordered); /* 3 */
    if (rc == MPI_SUCCESS) {
        int me;
        PMPI_Comm_rank(ordered, &me); /* = key: the vertex this process takes */
        int nin = 0, nout = 0;
        for (long e = 0; e < nall; e++) nin += all[e].v == me, nout += all[e].u == me;
        int *src = malloc(sizeof(int) * (size_t)(nin + 1)), *sw = malloc(sizeof(int) * (size_t)(nin + 1));
        int *dst = malloc(sizeof(int) * (size_t)(nout + 1)), *dw = malloc(sizeof(int) * (size_t)(nout + 1));
        int a = 0, b = 0;
        for (long e = 0; src && sw && dst && dw && e < nall; e++) {
            if (all[e].v == me) src[a] = all[e].u, sw[a++] = all[e].w;
            if (all[e].u == me) dst[b] = all[e].v, dw[b++] = all[e].w;
        }
        if (src && sw && dst && dw)
            rc = PMPI_Dist_graph_create_adjacent(ordered, nin, src, any_weighted ? sw : MPI_UNWEIGHTED, nout, dst,
                                                 any_weighted ? dw : MPI_UNWEIGHTED, info, 0, out);
        else
            rc = MPI_ERR_NO_MEM;
        free(src), free(sw), free(dst), free(dw);
        PMPI_Comm_free(&ordered);
    }
    free(counts), free(displs), free(cores), free(slot_of), free(info3), free(all), free(mat);
    return rc;
}

static int reorder_wanted(MPI_Comm old, int reorder)
{
    int inter = 1;
    return reorder && this_machine() && strcmp(osmp__knob_str(OSMP_KNOB_MPI_DISABLE), "1") &&
           PMPI_Comm_test_inter(old, &inter) == MPI_SUCCESS && !inter;
}

OSMP_MPI_ENTRY(int, MPI_Dist_graph_create_adjacent)(MPI_Comm old, int indegree, const int sources[],
    const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info,
    int reorder, MPI_Comm *out)
{
    OSMP_MPI_ENTERED(MPI_Dist_graph_create_adjacent);
    if (!reorder_wanted(old, reorder) || indegree < 0 || outdegree < 0)
        return PMPI_Dist_graph_create_adjacent(old, indegree, sources, sourceweights, outdegree, destinations,
                                               destweights, info, reorder, out);
    /* the out edges name every edge once (each is some rank's out edge) */
    int weighted = destweights != MPI_UNWEIGHTED;
    int rank;
    PMPI_Comm_rank(old, &rank);
    struct edge *e = malloc(sizeof(*e) * (size_t)(outdegree + 1));
    if (!e) return MPI_ERR_NO_MEM;
    for (int i = 0; i < outdegree; i++) e[i] = (struct edge){rank, destinations[i], weighted ? destweights[i] : 1};
    (void)sources, (void)sourceweights, (void)indegree;
    int rc = reorder_graph(old, e, outdegree, weighted, info, out);
    free(e);
    return rc;
}

OSMP_MPI_ENTRY(int, MPI_Dist_graph_create)(MPI_Comm old, int n, const int sources[], const int degrees[],
                                 const int destinations[], const int weights[], MPI_Info info, int reorder,
                                 MPI_Comm *out)
{
    OSMP_MPI_ENTERED(MPI_Dist_graph_create);
    if (!reorder_wanted(old, reorder) || n < 0)
        return PMPI_Dist_graph_create(old, n, sources, degrees, destinations, weights, info, reorder, out);
    int weighted = weights != MPI_UNWEIGHTED, ne = 0;
    for (int i = 0; i < n; i++) ne += degrees[i] > 0 ? degrees[i] : 0;
    struct edge *e = malloc(sizeof(*e) * (size_t)(ne + 1));
    if (!e) return MPI_ERR_NO_MEM;
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) e[k] = (struct edge){sources[i], destinations[k], weighted ? weights[k] : 1};
    int rc = reorder_graph(old, e, ne, weighted, info, out);
    free(e);
    return rc;
}
