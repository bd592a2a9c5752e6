/*
 * mem-check: the team segment's memory grows with use (issue 39). Runs every
 * collective of the public API with messages of up to --small bytes (count x
 * element size; the vector variants' blocks at most that), every result checked
 * exactly (unsigned integers, sums wrap); with --per-call every buffer of a
 * call is at most --small bytes (the blocks of gather, allgather, alltoall and
 * the like at most --small / N), and measures the /dev/shm pages of the
 * team's segment that exist:
 *   - after creation: at most --max-kib per participant on average (the
 *     team's total at most size x max-kib); after the small calls at most
 *     --max-small-kib (default: --max-kib) per participant;
 *   - after one large allreduce (--large bytes, checked too): more than after
 *     the small calls, so the measurement is seen to see growth.
 *
 *   osmp-run -n N [--topology F.xml ...] -- mem-check [--small B] [--large B] [--max-kib K] [--report]
 *
 * The segment's name is unlinked once every participant mapped it, so its
 * pages are counted with mincore(2) over rank 0's mapping of it: for a shared
 * file mapping mincore says which pages of the file are in memory (tmpfs: which
 * exist), whoever touched them; a hole of the sparse file is not. --report
 * prints one line "N created small large segment" in KiB (bench/team-memory.sh:
 * the segment's size is what creation touched before issue 39);
 * --trace the growth after each call that grew the segment.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "osmp.h"
#include "team/team.h" /* the segment's address and size */

static int me, n;
static int failing_alone = 1; /* a failure this rank alone sees (a call, a wrong element): it says so */
static int trace; /* --trace: the growth after each call (rank 0 prints it) */
static uint64_t seg_kib(osmp_team_t t);
static uint64_t last; /* the segment's KiB at the last note */
static void note(osmp_team_t t, const char *what, size_t c)
{
    if (!trace) return;
    uint64_t now = seg_kib(t);
    if (me == 0 && now != last) printf("  %-22s %5zu B: +%llu KiB\n", what, c * 4, (unsigned long long)(now - last));
    last = now;
}

/* (the measurements are rank 0's, bcast to all: rank 0 says what failed, the others exit) */
#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        if (me != 0 && !failing_alone) _exit(1);                                                             \
        fprintf(stderr, "mem-check: rank %d/%d: ", me, n);                                                   \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fputc('\n', stderr);                                                                                 \
        fflush(stderr);                                                                                      \
        _exit(1);                                                                                            \
    } while (0)

#define OK(call)                                                                                             \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != OSMP_OK) FAIL("%s (count %zu) returned %s", #call, c, osmp_status_name(rc_));             \
    } while (0)

/* Element i of rank r's contribution (call k). */
static uint32_t v(int r, size_t i, unsigned k)
{
    uint64_t z = (uint64_t)r * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL + k * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (uint32_t)(z * 0xd6e9e9b5ULL >> 16);
}

static void expect(const char *what, size_t c, const uint32_t *got, size_t i, uint32_t want)
{
    if (got[i] != want) FAIL("%s (count %zu): element %zu is %u, expected %u", what, c, i, got[i], want);
}

/* Vector blocks: rank r's count at scale c (some ranks none, the others up to c). */
static size_t vc(int r, size_t c)
{
    int k = (r * 7 + 3) % 5;
    return k == 4 ? 0 : c - (size_t)k * (c / 4);
}
/* Alltoallv: elements rank i sends rank j. */
static size_t pc(int i, int j, size_t c)
{
    return vc(i + 2 * j, c);
}

/* c elements in the one-block collectives' buffers, b per block in the others'. */
static void run_small(osmp_team_t t, size_t c, size_t b, unsigned k)
{
    const osmp_dtype_t d = OSMP_UINT32;
    const size_t N = (size_t)n;
    size_t most = N * b > c ? N * b : c;
    uint32_t *in = calloc(most + 1, 4), *out = calloc(most + 1, 4), *ref = calloc(most + 1, 4);
    size_t *cnt = calloc(N, sizeof(size_t)), *dsp = calloc(N, sizeof(size_t));
    size_t *scnt = calloc(N, sizeof(size_t)), *sdsp = calloc(N, sizeof(size_t));
    if (!in || !out || !ref || !cnt || !dsp || !scnt || !sdsp) FAIL("out of memory");
    OK(osmp_barrier(t));
    int roots[3] = {0, n - 1, n / 2};
    for (int ri = 0; ri < 3; ri++, k++) {
        int root = roots[ri];
        /* bcast */
        for (size_t i = 0; i < c; i++) out[i] = me == root ? v(root, i, k) : 0;
        OK(osmp_bcast(t, out, c, d, root));
        note(t, "bcast", c);
        for (size_t i = 0; i < c; i++) expect("bcast", c, out, i, v(root, i, k));
        /* reduce */
        for (size_t i = 0; i < c; i++) in[i] = v(me, i, k), ref[i] = 0;
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < c; i++) ref[i] += v(r, i, k);
        OK(osmp_reduce(t, in, out, c, d, OSMP_SUM, root));
        note(t, "reduce", c);
        if (me == root)
            for (size_t i = 0; i < c; i++) expect("reduce", c, out, i, ref[i]);
        /* gather */
        OK(osmp_gather(t, in, out, b, d, root));
        note(t, "gather", b);
        if (me == root)
            for (int r = 0; r < n; r++)
                for (size_t i = 0; i < b; i++) expect("gather", b, out, (size_t)r * b + i, v(r, i, k));
        /* scatter */
        if (me == root)
            for (int r = 0; r < n; r++)
                for (size_t i = 0; i < b; i++) in[(size_t)r * b + i] = v(r, i, k + 7);
        OK(osmp_scatter(t, in, out, b, d, root));
        note(t, "scatter", b);
        for (size_t i = 0; i < b; i++) expect("scatter", b, out, i, v(me, i, k + 7));
        /* gatherv, packed in reverse rank order */
        size_t off = 0;
        for (int r = n - 1; r >= 0; r--) cnt[r] = vc(r, b), dsp[r] = off, off += cnt[r];
        for (size_t i = 0; i < cnt[me]; i++) in[i] = v(me, i, k);
        OK(osmp_gatherv(t, in, cnt[me], out, cnt, dsp, d, root));
        note(t, "gatherv", b);
        if (me == root)
            for (int r = 0; r < n; r++)
                for (size_t i = 0; i < cnt[r]; i++) expect("gatherv", b, out, dsp[r] + i, v(r, i, k));
        /* scatterv */
        if (me == root)
            for (int r = 0; r < n; r++)
                for (size_t i = 0; i < cnt[r]; i++) in[dsp[r] + i] = v(r, i, k + 3);
        OK(osmp_scatterv(t, in, cnt, dsp, out, cnt[me], d, root));
        note(t, "scatterv", b);
        for (size_t i = 0; i < cnt[me]; i++) expect("scatterv", b, out, i, v(me, i, k + 3));
    }
    /* allreduce, scan, exscan */
    for (size_t i = 0; i < c; i++) in[i] = v(me, i, k), ref[i] = 0;
    OK(osmp_allreduce(t, in, out, c, d, OSMP_SUM));
    note(t, "allreduce", c);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++) ref[i] += v(r, i, k);
    for (size_t i = 0; i < c; i++) expect("allreduce", c, out, i, ref[i]);
    OK(osmp_scan(t, in, out, c, d, OSMP_SUM));
    note(t, "scan", c);
    for (size_t i = 0; i < c; i++) {
        uint32_t s = 0;
        for (int r = 0; r <= me; r++) s += v(r, i, k);
        expect("scan", c, out, i, s);
    }
    OK(osmp_exscan(t, in, out, c, d, OSMP_SUM));
    note(t, "exscan", c);
    for (size_t i = 0; me > 0 && i < c; i++) {
        uint32_t s = 0;
        for (int r = 0; r < me; r++) s += v(r, i, k);
        expect("exscan", c, out, i, s);
    }
    /* allgather */
    OK(osmp_allgather(t, in, out, b, d));
    note(t, "allgather", b);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < b; i++) expect("allgather", b, out, (size_t)r * b + i, v(r, i, k));
    /* allgatherv, packed in rank order */
    size_t off = 0;
    for (int r = 0; r < n; r++) cnt[r] = vc(r, b), dsp[r] = off, off += cnt[r];
    OK(osmp_allgatherv(t, in, cnt[me], out, cnt, dsp, d));
    note(t, "allgatherv", b);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < cnt[r]; i++) expect("allgatherv", b, out, dsp[r] + i, v(r, i, k));
    /* reduce_scatter_block: element j of rank r's input is v(r, j) */
    for (size_t j = 0; j < N * b; j++) in[j] = v(me, j, k + 1);
    OK(osmp_reduce_scatter_block(t, in, out, b, d, OSMP_SUM));
    note(t, "reduce_scatter_block", b);
    for (size_t i = 0; i < b; i++) {
        uint32_t s = 0;
        for (int r = 0; r < n; r++) s += v(r, (size_t)me * b + i, k + 1);
        expect("reduce_scatter_block", b, out, i, s);
    }
    /* reduce_scatter: blocks of vc(r) */
    OK(osmp_reduce_scatter(t, in, out, cnt, d, OSMP_SUM));
    note(t, "reduce_scatter", b);
    for (size_t i = 0; i < cnt[me]; i++) {
        uint32_t s = 0;
        for (int r = 0; r < n; r++) s += v(r, dsp[me] + i, k + 1);
        expect("reduce_scatter", b, out, i, s);
    }
    /* alltoall: block j of rank r is v(r * n + j, i) */
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < b; i++) in[(size_t)j * b + i] = v(me * n + j, i, k);
    OK(osmp_alltoall(t, in, out, b, d));
    note(t, "alltoall", b);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < b; i++) expect("alltoall", b, out, (size_t)r * b + i, v(r * n + me, i, k));
    /* alltoallv: every block at most b, packed */
    size_t so = 0, ro = 0;
    for (int j = 0; j < n; j++) {
        scnt[j] = pc(me, j, b), sdsp[j] = so, so += scnt[j];
        cnt[j] = pc(j, me, b), dsp[j] = ro, ro += cnt[j];
        for (size_t i = 0; i < scnt[j]; i++) in[sdsp[j] + i] = v(me * n + j, i, k + 2);
    }
    OK(osmp_alltoallv(t, in, scnt, sdsp, out, cnt, dsp, d));
    note(t, "alltoallv", b);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < cnt[r]; i++) expect("alltoallv", b, out, dsp[r] + i, v(r * n + me, i, k + 2));
    OK(osmp_barrier(t));
    free(in), free(out), free(ref), free(cnt), free(dsp), free(scnt), free(sdsp);
}

/* KiB of the team segment that exist in /dev/shm (rank 0's answer, given to everyone). */
static uint64_t seg_kib(osmp_team_t t)
{
    size_t c = 0;
    uint64_t kib = 0;
    OK(osmp_barrier(t)); /* every earlier write is done */
    if (me == 0) {
        const struct osmp__team *impl = t->impl;
        size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = impl->seg_size / page;
        unsigned char *vec = malloc(pages ? pages : 1);
        if (!vec || mincore(impl->coll.mb.seg, impl->seg_size, vec) != 0) FAIL("mincore over the segment failed");
        uint64_t in = 0;
        for (size_t i = 0; i < pages; i++) in += vec[i] & 1;
        free(vec);
        kib = in * page / 1024;
    }
    OK(osmp_bcast(t, &kib, 1, OSMP_UINT64, 0));
    return kib;
}

int main(int argc, char **argv)
{
    size_t small = 4096, large = 1 << 20;
    long max_kib = 64, max_small_kib = -1;
    int report = 0, per_call = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--small") == 0 && i + 1 < argc) small = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--large") == 0 && i + 1 < argc) large = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--max-kib") == 0 && i + 1 < argc) max_kib = strtol(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--max-small-kib") == 0 && i + 1 < argc) max_small_kib = strtol(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--report") == 0) report = 1;
        else if (strcmp(argv[i], "--per-call") == 0) per_call = 1;
        else if (strcmp(argv[i], "--trace") == 0) trace = 1;
        else {
            fprintf(stderr, "usage: mem-check [--small B] [--large B] [--max-kib K] [--max-small-kib K] [--per-call] [--report] [--trace]\n");
            return 2;
        }
    }
    osmp_team_t t;
    int rc = osmp_init(&t);
    if (rc) {
        fprintf(stderr, "mem-check: osmp_init: %s\n", osmp_status_str(rc));
        return 1;
    }
    me = osmp_team_rank(t), n = osmp_team_size(t);
    if (n < 2 || t->impl->seg_private) FAIL("needs a team of two or more processes (osmp-run -n N)");
    uint64_t created = last = seg_kib(t), bound = (uint64_t)max_kib * (uint64_t)n;
    failing_alone = 0; /* the bounds' failures below: every rank sees rank 0's numbers */
    if (created > bound) FAIL("the new team's segment holds %llu KiB, more than %llu", (unsigned long long)created,
                              (unsigned long long)bound);
    /* 0-byte, line, mini-line, and up-to-a-page messages: 1, 7, 16, 100, 1000 and `small` bytes / 4 elements */
    size_t counts[] = {0, 1, 7, 16, 100, 1000, small / 4};
    unsigned k = 1;
    failing_alone = 1;
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++, k += 16) {
        size_t c = counts[ci], b = per_call && c * 4 * (size_t)n > small ? small / 4 / (size_t)n : c;
        if (c * 4 <= small) run_small(t, c, b, k);
    }
    uint64_t after_small = seg_kib(t);
    failing_alone = 0;
    if (max_small_kib < 0) max_small_kib = max_kib;
    uint64_t small_bound = (uint64_t)max_small_kib * (uint64_t)n;
    if (after_small > small_bound)
        FAIL("after calls of up to %zu bytes the segment holds %llu KiB, more than %llu (%ld KiB x %d)", small,
             (unsigned long long)after_small, (unsigned long long)small_bound, max_small_kib, n);
    /* one large allreduce, checked */
    failing_alone = 1;
    size_t c = large / 4;
    uint32_t *in = malloc(c * 4 + 4), *out = malloc(c * 4 + 4);
    if (!in || !out) FAIL("out of memory");
    /* rank r's element i is i K1 + r K2 (mod 2^32): the sum is n i K1 + K2 n (n - 1) / 2, checked in O(c) */
    const uint32_t K1 = 2654435761u, K2 = 40503u;
    for (size_t i = 0; i < c; i++) in[i] = (uint32_t)i * K1 + (uint32_t)me * K2;
    OK(osmp_allreduce(t, in, out, c, OSMP_UINT32, OSMP_SUM));
    for (size_t i = 0; i < c; i++)
        expect("large allreduce", c, out, i, (uint32_t)n * (uint32_t)i * K1 + K2 * (uint32_t)(n * (n - 1) / 2));
    free(in), free(out);
    uint64_t after_large = seg_kib(t);
    failing_alone = 0;
    if (after_large <= after_small)
        FAIL("a %zu-byte allreduce left the segment at %llu KiB, as after the small calls: the measurement sees no "
             "growth", large, (unsigned long long)after_large);
    if (me == 0) {
        if (report)
            printf("%d %llu %llu %llu %zu\n", n, (unsigned long long)created, (unsigned long long)after_small,
                   (unsigned long long)after_large, t->impl->seg_size / 1024);
        else
            printf("mem-check: %d participants: segment %llu KiB of %zu after creation, %llu after calls of up to "
                   "%zu B (bound %llu), %llu after a %zu B allreduce\n",
                   n, (unsigned long long)created, t->impl->seg_size / 1024, (unsigned long long)after_small,
                   small, (unsigned long long)small_bound, (unsigned long long)after_large, large);
    }
    if (osmp_finalize()) return 1;
    return 0;
}
