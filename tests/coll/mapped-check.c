/*
 * mapped-check: osmp_alloc memory is read in place by the other processes of a
 * collective, and only it (include/osmp.h, src/shm/copy.c).
 *
 *   OSMP_SINGLE_COPY_MIN=0 OSMP_ALLGATHER_ALG=ring osmp-run -n N -- mapped-check
 *   OSMP_SINGLE_COPY_MIN=33554432 osmp-run -n N -- mapped-check --pipelined
 *
 * (allgather's default for small blocks goes through the slots, not single
 * copy). The first checks the single copies; the second the pipelined
 * broadcast, whose parents expose osmp_alloc buffers to their children.
 *
 * Rounds of bcast, gather and scatter at every root, allgather and alltoall,
 * with buffers from osmp_alloc, then from malloc, then from osmp_alloc again
 * (the first round's regions freed first, so their descriptors come back for
 * new memory: a reader's stale mapping must not be read), then from osmp_alloc
 * on odd ranks and malloc on even ones (each rank decides for its own buffer). Each call's result is
 * checked exactly, and so is the path each participant's single copies took
 * (osmp_copy_stats): with osmp_alloc buffers every copy that must read another
 * process's block went through a mapping and none through CMA; with malloc
 * buffers the reverse. Then the same with a team of two threads per process:
 * a thread reads its sibling's osmp_alloc memory with plain loads (the address
 * it was given carries the region's tag) and the other processes' through a
 * mapping. Also more regions than a reader keeps mapped, and the argument
 * checks of osmp_alloc and osmp_free.
 * Exit status 0 when every check passed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

static int failures, me, n;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "mapped-check: rank %d: %s: ", me, #cond);                                       \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

enum { MODE_OSMP, MODE_MALLOC, MODE_MIXED }; /* MIXED: osmp_alloc on odd ranks, malloc on even ones */

static void *get(int mode, size_t bytes)
{
    void *p = NULL;
    if (mode == MODE_MIXED) mode = me % 2 ? MODE_OSMP : MODE_MALLOC;
    if (mode == MODE_MALLOC) return malloc(bytes);
    int rc = osmp_alloc(bytes, &p);
    CHECK(rc == OSMP_OK && p, "osmp_alloc(%zu): %s", bytes, osmp_status_name(rc));
    return p;
}

static void put(int mode, void *p)
{
    if (mode == MODE_MIXED) mode = me % 2 ? MODE_OSMP : MODE_MALLOC;
    if (mode == MODE_MALLOC) free(p);
    else CHECK(osmp_free(p) == OSMP_OK, "osmp_free of osmp_alloc's pointer");
}

static unsigned char val(int round, int rank, size_t i)
{
    return (unsigned char)(round * 89 + rank * 31 + i * 7 + (i >> 9));
}

static int pipelined; /* --pipelined: OSMP_SINGLE_COPY_MIN=33554432 (auto copies allgather and alltoall blocks
                       * once from 4 MiB / n^2, below these sizes on 5 processes) */

/* The copies from another process this call must have made on this rank: at
 * least `reads`, each through a mapping (MODE_OSMP) or CMA, and none the other
 * way. With --pipelined only the broadcast reads another process's memory
 * (also inside compositions: allgather as gather + bcast), the direct
 * gather's root (OSMP_GATHER_ALG=direct) and the direct scatter's receivers
 * (OSMP_SCATTER_ALG=direct) from blocks of a chunk or more, and only from an
 * osmp_alloc buffer (read in place where exposed; anything else
 * goes through the slots). */
static void expect_path(const char *what, int mode, const struct osmp_copy_stats *a,
                        const struct osmp_copy_stats *b, int reads)
{
    uint64_t mapped = b->mapped - a->mapped, cma = b->cma - a->cma;
    int bcast = strstr(what, "bcast") != NULL || strstr(what, "(exposed)") != NULL;
    if (mode == MODE_MIXED) { /* each rank's own choice, so the results are what counts */
        if (pipelined) CHECK(cma == 0, "%s: %llu CMA copies; want none", what, (unsigned long long)cma);
    } else if (pipelined && mode == MODE_MALLOC) {
        CHECK(mapped == 0 && cma == 0, "%s: %llu mapped, %llu CMA copies; want none (through the slots)", what,
              (unsigned long long)mapped, (unsigned long long)cma);
    } else if (pipelined && !bcast) {
        CHECK(cma == 0, "%s: %llu CMA copies; want none", what, (unsigned long long)cma);
    } else if (mode == MODE_OSMP) {
        CHECK(mapped >= (uint64_t)reads && cma == 0, "%s: %llu mapped, %llu CMA copies; want >= %d mapped, no CMA",
              what, (unsigned long long)mapped, (unsigned long long)cma, reads);
    } else {
        CHECK(cma >= (uint64_t)reads && mapped == 0, "%s: %llu mapped, %llu CMA copies; want >= %d CMA, none mapped",
              what, (unsigned long long)mapped, (unsigned long long)cma, reads);
    }
}

static void round_of(osmp_team_t w, int round, int mode, size_t bytes, void *keep[2])
{
    size_t all = bytes * (size_t)n;
    unsigned char *in = get(mode, all), *out = get(mode, all);
    struct osmp_copy_stats s0, s1;
    char what[96];
    for (int root = 0; root < n; root++) {
        snprintf(what, sizeof(what), "round %d bcast %zu B root %d", round, bytes, root);
        for (size_t i = 0; i < bytes; i++) in[i] = me == root ? val(round, root, i) : 0;
        osmp_copy_stats(&s0);
        CHECK(osmp_bcast(w, in, bytes, OSMP_UINT8, root) == OSMP_OK, "%s", what);
        osmp_copy_stats(&s1);
        for (size_t i = 0; i < bytes; i++)
            if (in[i] != val(round, root, i)) {
                CHECK(0, "%s: byte %zu is %d, want %d", what, i, in[i], val(round, root, i));
                break;
            }
        expect_path(what, mode, &s0, &s1, me != root && (!pipelined || bytes >= 4096)); /* OSMP__EXPOSE_MIN */

        /* a direct gather's blocks of a chunk (32 or 128 KiB by default: the sizes here lie below or above
         * both) or more are exposed, like bcast's buffers */
        const char *g = getenv("OSMP_GATHER_ALG");
        int gx = pipelined && bytes >= 32768 && g && !strcmp(g, "direct");
        snprintf(what, sizeof(what), "round %d gather%s %zu B root %d", round, gx ? " (exposed)" : "", bytes, root);
        for (size_t i = 0; i < bytes; i++) in[i] = val(round, me, i);
        memset(out, 0, all);
        osmp_copy_stats(&s0);
        CHECK(osmp_gather(w, in, out, bytes, OSMP_UINT8, root) == OSMP_OK, "%s", what);
        osmp_copy_stats(&s1);
        for (int r = 0; me == root && r < n; r++)
            for (size_t i = 0; i < bytes; i++)
                if (out[(size_t)r * bytes + i] != val(round, r, i)) {
                    CHECK(0, "%s: block %d byte %zu wrong", what, r, i);
                    r = n;
                    break;
                }
        expect_path(what, mode, &s0, &s1, me == root ? n - 1 : 0);

        const char *sc = getenv("OSMP_SCATTER_ALG");
        int sx = pipelined && bytes >= 32768 && sc && !strcmp(sc, "direct");
        snprintf(what, sizeof(what), "round %d scatter%s %zu B root %d", round, sx ? " (exposed)" : "", bytes, root);
        for (size_t i = 0; i < all; i++) in[i] = val(round, (int)(i / bytes) + 7, i % bytes);
        memset(out, 0, bytes);
        osmp_copy_stats(&s0);
        CHECK(osmp_scatter(w, in, out, bytes, OSMP_UINT8, root) == OSMP_OK, "%s", what);
        osmp_copy_stats(&s1);
        for (size_t i = 0; i < bytes; i++)
            if (out[i] != val(round, me + 7, i)) {
                CHECK(0, "%s: byte %zu wrong", what, i);
                break;
            }
        expect_path(what, mode, &s0, &s1, me != root);
    }
    snprintf(what, sizeof(what), "round %d allgather %zu B", round, bytes);
    for (size_t i = 0; i < bytes; i++) in[i] = val(round, me, i);
    osmp_copy_stats(&s0);
    CHECK(osmp_allgather(w, in, out, bytes, OSMP_UINT8) == OSMP_OK, "%s", what);
    osmp_copy_stats(&s1);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < bytes; i++)
            if (out[(size_t)r * bytes + i] != val(round, r, i)) {
                CHECK(0, "%s: block %d byte %zu wrong", what, r, i);
                r = n;
                break;
            }
    expect_path(what, mode, &s0, &s1, n > 1);

    snprintf(what, sizeof(what), "round %d alltoall %zu B", round, bytes);
    for (size_t i = 0; i < all; i++) in[i] = val(round, me * n + (int)(i / bytes), i % bytes);
    osmp_copy_stats(&s0);
    CHECK(osmp_alltoall(w, in, out, bytes, OSMP_UINT8) == OSMP_OK, "%s", what);
    osmp_copy_stats(&s1);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < bytes; i++)
            if (out[(size_t)r * bytes + i] != val(round, r * n + me, i)) {
                CHECK(0, "%s: block %d byte %zu wrong", what, r, i);
                r = n;
                break;
            }
    expect_path(what, mode, &s0, &s1, n - 1);
    if (keep) {
        keep[0] = in, keep[1] = out;
    } else {
        put(mode, in);
        put(mode, out);
    }
}

/* A team of 2 threads per process: alltoall over osmp_alloc buffers, where
 * each thread reads one block from its sibling and 2 (n - 1) from the other
 * processes' threads; then bcast from every root. */
static osmp_team_t world;

static void *thread_main(void *arg)
{
    int idx = (int)(intptr_t)arg, rc;
    osmp_team_t t;
    if ((rc = osmp_team_create_threads(world, 2, idx, &t)) != OSMP_OK) {
        CHECK(0, "osmp_team_create_threads: %s", osmp_status_name(rc));
        return NULL;
    }
    int tr = osmp_team_rank(t), tn = osmp_team_size(t);
    size_t bytes = 5000, all = bytes * (size_t)tn;
    unsigned char *in = get(MODE_OSMP, all), *out = get(MODE_OSMP, all);
    struct osmp_copy_stats s0, s1;
    for (size_t i = 0; i < all; i++) in[i] = val(3, tr * tn + (int)(i / bytes), i % bytes);
    /* the barriers keep the sibling's other calls out of the window the stats cover */
    CHECK(osmp_barrier(t) == OSMP_OK, "threads barrier");
    osmp_copy_stats(&s0);
    CHECK(osmp_alltoall(t, in, out, bytes, OSMP_UINT8) == OSMP_OK, "threads alltoall");
    CHECK(osmp_barrier(t) == OSMP_OK, "threads barrier");
    osmp_copy_stats(&s1);
    CHECK(osmp_barrier(t) == OSMP_OK, "threads barrier");
    for (int r = 0; r < tn; r++)
        for (size_t i = 0; i < bytes; i++)
            if (out[(size_t)r * bytes + i] != val(3, r * tn + tr, i)) {
                CHECK(0, "threads alltoall: thread rank %d: block %d byte %zu wrong", tr, r, i);
                r = tn;
                break;
            }
    for (int root = 0; root < tn; root++) {
        for (size_t i = 0; i < bytes; i++) in[i] = tr == root ? val(4, root, i) : 0;
        CHECK(osmp_bcast(t, in, bytes, OSMP_UINT8, root) == OSMP_OK, "threads bcast");
        for (size_t i = 0; i < bytes; i++)
            if (in[i] != val(4, root, i)) {
                CHECK(0, "threads bcast root %d: thread rank %d: byte %zu wrong", root, tr, i);
                break;
            }
    }
    CHECK(osmp_barrier(t) == OSMP_OK, "threads barrier");
    put(MODE_OSMP, in);
    put(MODE_OSMP, out);
    osmp_team_destroy(t);
    /* both threads count into the process's stats: at least their reads of the other processes
     * (--pipelined: the team spans processes, so its alltoall runs through the slots) */
    if (pipelined)
        CHECK(s1.mapped == s0.mapped && s1.cma == s0.cma, "threads alltoall: %llu mapped, %llu CMA copies",
              (unsigned long long)(s1.mapped - s0.mapped), (unsigned long long)(s1.cma - s0.cma));
    else CHECK(s1.mapped - s0.mapped >= (uint64_t)(2 * (n - 1)) && s1.cma == s0.cma,
          "threads alltoall: %llu mapped, %llu CMA copies", (unsigned long long)(s1.mapped - s0.mapped),
          (unsigned long long)(s1.cma - s0.cma));
    return NULL;
}

int main(int argc, char **argv)
{
    pipelined = argc > 1 && !strcmp(argv[1], "--pipelined");
    osmp_team_t w;
    if (osmp_init(&w) != OSMP_OK) return 2;
    me = osmp_team_rank(w), n = osmp_team_size(w);

    void *p = NULL, *q = NULL, *m = malloc(64);
    CHECK(osmp_alloc(16, NULL) == OSMP_ERR_INVALID_ARG, "a NULL out pointer");
    CHECK(osmp_alloc(0, &p) == OSMP_OK && p && ((uintptr_t)p & 4095) == 0, "0 bytes: a page-aligned pointer");
    CHECK(osmp_alloc(0, &q) == OSMP_OK && q && q != p, "0 bytes again: another pointer");
    CHECK(osmp_free(m) == OSMP_ERR_INVALID_ARG, "malloc's pointer");
    CHECK(osmp_free((char *)p + 1) == OSMP_ERR_INVALID_ARG, "a pointer inside a region");
    CHECK(osmp_free(NULL) == OSMP_OK, "NULL");
    CHECK(osmp_free(p) == OSMP_OK && osmp_free(q) == OSMP_OK, "the two pointers");
    CHECK(osmp_free(p) == OSMP_ERR_INVALID_ARG, "a pointer freed already");
    free(m);

    const size_t sizes[] = {1, 4099, 300001};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        void *first[2];
        round_of(w, 0, MODE_OSMP, sizes[k], first);
        round_of(w, 1, MODE_MALLOC, sizes[k], NULL);
        /* everyone is done with round 0's regions before they go */
        CHECK(osmp_barrier(w) == OSMP_OK, "barrier");
        put(MODE_OSMP, first[0]);
        put(MODE_OSMP, first[1]);
        round_of(w, 2, MODE_OSMP, sizes[k], NULL);
        round_of(w, 3, MODE_MIXED, sizes[k], NULL);
    }
    /* More regions than a reader keeps mapped (16): evicted ones are mapped again. */
    enum { MANY = 40 };
    unsigned char *many[MANY];
    for (int i = 0; i < MANY; i++) many[i] = get(MODE_OSMP, 4096);
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < MANY; k++) {
            int i = pass ? MANY - 1 - k : k, root = i % n;
            for (size_t j = 0; j < 4096; j++) many[i][j] = me == root ? val(pass + 5, i, j) : 0;
            struct osmp_copy_stats s0, s1;
            osmp_copy_stats(&s0);
            CHECK(osmp_bcast(w, many[i], 4096, OSMP_UINT8, root) == OSMP_OK, "bcast of region %d", i);
            osmp_copy_stats(&s1);
            for (size_t j = 0; j < 4096; j++)
                if (many[i][j] != val(pass + 5, i, j)) {
                    CHECK(0, "pass %d, bcast of region %d: byte %zu wrong", pass, i, j);
                    break;
                }
            expect_path("bcast of one of many regions", MODE_OSMP, &s0, &s1, me != root);
        }
    for (int i = 0; i < MANY; i++) put(MODE_OSMP, many[i]);

    world = w;
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);

    struct osmp_copy_stats s;
    osmp_copy_stats(&s);
    printf("mapped-check: rank %d: %llu mapped copies (%llu bytes), %llu CMA copies (%llu bytes), %d failures\n", me,
           (unsigned long long)s.mapped, (unsigned long long)s.mapped_bytes, (unsigned long long)s.cma,
           (unsigned long long)s.cma_bytes, failures);
    osmp_finalize();
    return failures ? 1 : 0;
}
