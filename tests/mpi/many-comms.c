/*
 * Many communicators (issue 16): 10,000 creations by dup and split (in comm
 * order and reversed), freed in random order, with an allreduce and a bcast
 * checked on each new one. Asserts the bound on what OSMP holds:
 *  - no OSMP segment name of this process in /dev/shm between calls;
 *  - the segments this process maps and the teams libosmp_mpi holds
 *    (osmp_mpi_stat "teams") stay at or below --max-teams, however many
 *    communicators are alive;
 *  - resident memory grows by less than --rss-bound KiB (default 16 MiB) between the first checkpoint and
 *    the last (0: not checked; under AddressSanitizer freed memory waits in its quarantine);
 *  - /dev/shm holds at most --shm-bound KiB (default 64 MiB) more than after MPI_Init at every checkpoint
 *    (every process's segments together: tmpfs's own count);
 *  - with --expect-osmp, calls ran on OSMP; with --expect-capped, some went to MPI.
 * --live N: up to N communicators alive at once (default 40).
 * Every rank draws the same random sequence, so the creations and frees are collective.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>


static int rank, size, failures;

#define CHECK(cond, ...)                                                                                      \
    do {                                                                                                      \
        if (!(cond)) {                                                                                        \
            fprintf(stderr, "many-comms: rank %d: ", rank);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                                     \
            fprintf(stderr, "\n");                                                                            \
            if (++failures > 10) MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                                     \
    } while (0)

static unsigned long long rng = 88172645463325252ULL;
static unsigned draw(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* Names in /dev/shm that a team created by this process left there. */
static int my_segment_names(void)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "osmp-%d-", (int)getpid());
    DIR *d = opendir("/dev/shm");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* Distinct OSMP segments mapped by this process, and its resident set in KiB. */
static int mapped_segments(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], seen[64][80];
    int n = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "/dev/shm/osmp-");
        if (!p) continue;
        p[strcspn(p, " \n")] = '\0';
        int dup = 0;
        for (int i = 0; i < n && !dup; i++) dup = strncmp(seen[i], p, sizeof(seen[i]) - 1) == 0;
        if (!dup && n < 64) snprintf(seen[n++], sizeof(seen[0]), "%s", p);
    }
    if (f) fclose(f);
    return n;
}

/* KiB in use in /dev/shm, whoever holds them */
static long shm_used_kib(void)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v)) return 0;
    return (long)((v.f_blocks - v.f_bfree) * (unsigned long)v.f_frsize / 1024);
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

static void use(MPI_Comm c, int iter)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    long in[3] = {r + 1, iter, (long)r * r}, out[3];
    MPI_Allreduce(in, out, 3, MPI_LONG, MPI_SUM, c);
    long want[3] = {(long)n * (n + 1) / 2, (long)n * iter, (long)(n - 1) * n * (2 * n - 1) / 6};
    CHECK(memcmp(out, want, sizeof(out)) == 0, "iteration %d: allreduce %ld %ld %ld, expected %ld %ld %ld", iter,
          out[0], out[1], out[2], want[0], want[1], want[2]);
    int root = iter % n;
    int v[4] = {r == root ? iter : -1, r == root ? root : -1, 7, r == root ? -iter : 0};
    MPI_Bcast(v, 4, MPI_INT, root, c);
    CHECK(v[0] == iter && v[1] == root && v[2] == 7 && v[3] == -iter, "iteration %d: bcast from %d got %d %d", iter,
          root, v[0], v[1]);
}

int main(int argc, char **argv)
{
    int creations = 10000, max_teams = 8, expect_osmp = 0, expect_capped = 0;
    int POOL = 40; /* live communicators at most: far below the MPI libraries' context ids */
    long rss_bound = 16 * 1024, shm_bound = 64 * 1024;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--creations") == 0 && i + 1 < argc) creations = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-teams") == 0 && i + 1 < argc) max_teams = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rss-bound") == 0 && i + 1 < argc) rss_bound = atol(argv[++i]);
        else if (strcmp(argv[i], "--shm-bound") == 0 && i + 1 < argc) shm_bound = atol(argv[++i]);
        else if (strcmp(argv[i], "--live") == 0 && i + 1 < argc) POOL = atoi(argv[++i]);
        else if (strcmp(argv[i], "--expect-osmp") == 0) expect_osmp = 1;
        else if (strcmp(argv[i], "--expect-capped") == 0) expect_capped = 1;
        else {
            fprintf(stderr, "usage: many-comms [--creations N] [--live N] [--max-teams N] [--rss-bound KIB] [--shm-bound KIB] "
                            "[--expect-osmp] [--expect-capped]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int (*stat)(const char *, long *, long *) = (int (*)(const char *, long *, long *))dlsym(RTLD_DEFAULT, "osmp_mpi_stat");
    if (POOL < 1) POOL = 1;
    MPI_Comm *pool = malloc(sizeof(MPI_Comm) * (size_t)POOL);
    int live = 0, created = 0, most_live = 0;
    long rss_first = -1, rss_last = -1, shm_base = shm_used_kib(), shm_most = 0;
    for (int it = 1; created < creations; it++) {
        if (live < POOL && (live == 0 || draw(100) < 55)) {
            MPI_Comm c, parent = live && draw(2) ? pool[draw((unsigned)live)] : MPI_COMM_WORLD;
            int prank;
            MPI_Comm_rank(parent, &prank);
            switch (draw(3)) {
            case 0: MPI_Comm_dup(parent, &c); break;
            case 1: MPI_Comm_split(parent, prank % 2, prank, &c); break;
            default: MPI_Comm_split(parent, prank % 3 == 0, -prank, &c); break; /* reversed order */
            }
            use(c, it);
            pool[live++] = c;
            created++;
        } else {
            unsigned k = draw((unsigned)live);
            MPI_Comm_free(&pool[k]);
            pool[k] = pool[--live];
        }
        if (live > most_live) most_live = live;
        if (it % 500 == 0 || created == creations) {
            long teams = 0, made = 0;
            if (stat) stat("teams", &teams, &made);
            int mapped = mapped_segments(), names = my_segment_names();
            CHECK(names == 0, "iteration %d: %d segment names of this process in /dev/shm", it, names);
            CHECK(mapped <= max_teams, "iteration %d: %d OSMP segments mapped (bound %d) with %d communicators", it,
                  mapped, max_teams, live);
            CHECK(teams <= max_teams, "iteration %d: libosmp_mpi holds %ld teams (bound %d)", it, teams, max_teams);
            rss_last = rss_kib();
            if (rss_first < 0) rss_first = rss_last;
            long shm = shm_used_kib() - shm_base;
            if (shm > shm_most) shm_most = shm;
            CHECK(shm <= shm_bound, "iteration %d: /dev/shm holds %ld KiB more than at the start (bound %ld) with %d "
                  "communicators", it, shm, shm_bound, live);
        }
    }
    for (int i = 0; i < live; i++) MPI_Comm_free(&pool[i]);
    free(pool);
    CHECK(!rss_bound || rss_last - rss_first < rss_bound, "resident memory grew by %ld KiB over %d creations",
          rss_last - rss_first, created);
    long acc = 0, through = 0, teams = 0, made = 0;
    if (stat) {
        stat("allreduce", &acc, &through);
        stat("teams", &teams, &made);
    }
    CHECK(!expect_osmp || (stat && acc >= created), "%ld of %d allreduces ran on OSMP", acc, created);
    CHECK(!expect_capped || (stat && through > 0), "no allreduce went to MPI at the team cap");
    if (rank == 0)
        printf("many-comms: %d communicators created (at most %d alive), %ld teams created, RSS %+ld KiB, "
               "/dev/shm at most %+ld KiB, allreduce %ld on OSMP %ld to MPI\n", created, most_live, made,
               rss_last - rss_first, shm_most, acc, through);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all != 0;
}
