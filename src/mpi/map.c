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
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void die(const char *fmt, const char *a, long x, long y) __attribute__((noreturn));
static void die(const char *fmt, const char *a, long x, long y)
{
    fprintf(stderr, "osmp-mpi: ");
    fprintf(stderr, fmt, a, x, y);
    fputc('\n', stderr);
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
    if (!t) die("OSMP_MAP: cannot load this machine's topology%s", "", 0, 0);
    FILE *f = fopen(file, "r");
    if (!f) die("OSMP_MAP=%s: cannot read it", file, 0, 0);
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
    if (!cores) die("OSMP_MAP=%s: out of memory", file, 0, 0);
    if (osmp_core_list_parse(text, nc, cores, cap, &n, err, sizeof(err)) != OSMP_OK) {
        fprintf(stderr, "osmp-mpi: OSMP_MAP=%s: %s (this process may use cores 0-%d)\n", file, err, nc - 1);
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (n < ls) die("OSMP_MAP=%s lists %ld cores for %ld ranks on this node", file, n, ls);
    cpu_set_t set;
    cpuset_of(osmp_topo_domain(t, OSMP_DOMAIN_CORE, cores[lr])->cpuset, &set);
    if (bind_all(&set)) die("OSMP_MAP=%s: cannot bind to core %ld (not allowed?)", file, cores[lr], 0);
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

EXPORT int MPI_Cart_create(MPI_Comm old, int ndims, const int dims[], const int periods[], int reorder,
                           MPI_Comm *out)
{
    OSMP_MPI_FORWARD_IF_FOREIGN(MPI_Cart_create);
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
