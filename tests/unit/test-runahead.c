/*
 * Paths that only show in who waits for whom, checked on two thread
 * participants:
 *   - oversubscribed (both pinned to one CPU): the team says so, waits without
 *     spinning, its barrier is the tree one, and a broadcast root (a reduce
 *     leaf) finishes 64 small calls before its peer has made one, through the
 *     ring of mini lines; with one mailbox line it would wait for the peer at
 *     the second call;
 *   - the direct allreduce alternates its line between the UP and DOWN
 *     mailboxes and owes its "done reading" publication until the next call:
 *     the counters and the owed step are checked after every call; a vector
 *     beyond the line goes in the next ring slot of that line's mailbox, up
 *     to OSMP__DIRECT_READ_MAX bytes read per rank;
 *   - a small broadcast travels in the root's next mini line (data and step), a
 *     scatter or gather block in up to OSMP__MINI_LINES_BLOCK of them (an
 *     aligned pair), a broadcast and a reduction's vector in up to
 *     OSMP__MINI_LINES_MAX.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "team/team.h"
#include "test.h"

#define CALLS OSMP__MINI_SLOTS

static osmp_team_t world;
static int cpu0; /* the first CPU this process may run on */
static osmp_atomic32_t ahead_done[2];

/* Wait (yielding) until *flag is set, for at most 10 s; 1 if it was set. */
static int wait_flag(osmp_atomic32_t *flag)
{
    struct timespec nap = {0, 1000000};
    for (int i = 0; i < 10000; i++) {
        if (osmp__load32(flag)) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK_INT(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
}

static void *oversubscribed_participant(void *arg)
{
    int index = (int)(intptr_t)arg;
    pin_to(cpu0);
    osmp_team_t team;
    CHECK_INT(osmp_team_create_threads(world, 2, index, &team), OSMP_OK);
    osmp__coll_t c = &team->impl->coll;
    CHECK_INT(c->oversubscribed, 1);
    CHECK_INT(c->mb.wait.spin, 0);
    CHECK_STR(c->choice[OSMP_COLL_BARRIER][OSMP__SIZE_INLINE][0][0].alg->name, "flat");

    /* Broadcast: the root makes every call before the reader makes one. */
    if (index == 0) {
        for (int64_t i = 0; i < CALLS; i++) CHECK_INT(osmp_bcast(team, &i, 1, OSMP_INT64, 0), OSMP_OK);
        osmp__store32(&ahead_done[0], 1);
    } else {
        CHECK(wait_flag(&ahead_done[0])); /* else the root waited for me: lockstep */
        for (int64_t i = 0; i < CALLS; i++) {
            int64_t v = -1;
            CHECK_INT(osmp_bcast(team, &v, 1, OSMP_INT64, 0), OSMP_OK);
            CHECK_INT(v, i);
        }
    }
    CHECK_INT(c->pass_slots[1], CALLS); /* one mini line per call, on both */

    /* Reduce: the leaf makes every call before the root makes one. */
    if (index == 1) {
        for (int64_t i = 0; i < CALLS; i++) {
            int64_t v = 1000 + i;
            CHECK_INT(osmp_reduce(team, &v, NULL, 1, OSMP_INT64, OSMP_SUM, 0), OSMP_OK);
        }
        osmp__store32(&ahead_done[1], 1);
    } else {
        CHECK(wait_flag(&ahead_done[1]));
        for (int64_t i = 0; i < CALLS; i++) {
            int64_t v = i, sum = -1;
            CHECK_INT(osmp_reduce(team, &v, &sum, 1, OSMP_INT64, OSMP_SUM, 0), OSMP_OK);
            CHECK_INT(sum, 1000 + 2 * i);
        }
    }
    CHECK_INT(osmp_barrier(team), OSMP_OK);
    CHECK_INT(osmp_team_destroy(team), OSMP_OK);
    return NULL;
}

/* Two thread participants, index 0 and 1, each running fn. */
static void run_pair(void *(*fn)(void *))
{
    pthread_t th[2];
    for (intptr_t i = 0; i < 2; i++) pthread_create(&th[i], NULL, fn, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
}

static void test_oversubscribed_runs_ahead(void)
{
    run_pair(oversubscribed_participant);
}

static void *direct_participant(void *arg)
{
    int index = (int)(intptr_t)arg;
    osmp_team_t team;
    CHECK_INT(osmp_team_create_threads(world, 2, index, &team), OSMP_OK);
    osmp__coll_t c = &team->impl->coll;
    CHECK_STR(c->choice[OSMP_COLL_ALLREDUCE][OSMP__SIZE_INLINE][0][0].alg->name, "direct");
    struct osmp__chan *mine[2] = {osmp__mb_chan(&c->mb, index, OSMP__UP), osmp__mb_chan(&c->mb, index, OSMP__DOWN)};
    for (int k = 0; k < 6; k++) {
        int64_t v = index + k, sum = -1;
        uint64_t calls = c->direct_calls;
        CHECK_INT(osmp_allreduce(team, &v, &sum, 1, OSMP_INT64, OSMP_SUM), OSMP_OK);
        CHECK_INT(sum, 1 + 2 * k);
        int d = (int)(calls & 1); /* the call wrote line d and published its step there */
        CHECK(c->direct_calls == calls + 1);
        CHECK_INT(c->owed, 1);
        CHECK_INT(c->owed_dir, 1 - d);
        CHECK(osmp__load_acquire(&mine[d]->seq) == c->owed_step - 1);
        CHECK_INT(memcmp(mine[d]->inline_data, &v, sizeof(v)), 0);
        if (k == 2 || k == 3) {
            /* Another collective makes what is owed (on line 1-d): the barrier publishes it first. */
            int direct =
                strcmp(c->choice[OSMP_COLL_BARRIER][OSMP__SIZE_INLINE][0][0].alg->name, "direct") == 0;
            CHECK(direct || c->oversubscribed); /* (the table's row for oversubscribed teams: flat) */
            int od = c->owed_dir;
            uint64_t owed = c->owed_step, before = c->direct_calls;
            CHECK_INT(od, 1 - d);
            CHECK_INT(osmp_barrier(team), OSMP_OK);
            CHECK_INT(c->owed, 0);
            uint64_t seq = osmp__load_acquire(&mine[od]->seq);
            CHECK(seq >= owed && seq - owed < OSMP__PHASE_STEPS);
            CHECK(c->direct_calls == before);
        }
    }
    /* Allgather and alltoall take part in the same exchange: the next line,
     * the "done reading" owed on the other one; nothing published on it. */
    CHECK_STR(c->choice[OSMP_COLL_ALLGATHER][OSMP__SIZE_INLINE][0][0].alg->name, "direct");
    CHECK_STR(c->choice[OSMP_COLL_ALLTOALL][OSMP__SIZE_INLINE][0][0].alg->name, "direct");
    for (int k = 0; k < 4; k++) {
        uint64_t calls = c->direct_calls, other = osmp__load_acquire(&mine[1 - (calls & 1)]->seq);
        int64_t send[2] = {100 * index + k, 100 * index + k + 10}, recv[2] = {-1, -1};
        if (k % 2 == 0) {
            CHECK_INT(osmp_allgather(team, send, recv, 1, OSMP_INT64), OSMP_OK);
            CHECK(recv[0] == k && recv[1] == 100 + k);
        } else {
            CHECK_INT(osmp_alltoall(team, send, recv, 1, OSMP_INT64), OSMP_OK);
            CHECK(recv[0] == k + 10 * index && recv[1] == 100 + k + 10 * index); /* rank r's block for me */
        }
        int d = (int)(calls & 1);
        CHECK(c->direct_calls == calls + 1);
        CHECK_INT(c->owed, 1);
        CHECK_INT(c->owed_dir, 1 - d);
        CHECK(osmp__load_acquire(&mine[d]->seq) == c->owed_step - 1);
        CHECK(osmp__load_acquire(&mine[1 - d]->seq) == other); /* no publication at the end of the call */
        CHECK_INT(memcmp(mine[d]->inline_data, k % 2 == 0 ? &send[0] : &send[1 - index], sizeof(int64_t)), 0);
    }
    /* Beyond the line, up to OSMP__DIRECT_READ_MAX bytes of the peer's vector:
     * the same alternating lines, the vector in the next ring slot of line d;
     * in place too (the output is folded into after both inputs are in the
     * slots). One element more and it runs flat: no direct call is counted. */
    CHECK_STR(c->choice[OSMP_COLL_ALLREDUCE][OSMP__SIZE_MEDIUM][0][0].alg->name, "direct");
    /* Selection's chain: direct up to what it may read, then the table's next row. */
    CHECK(c->choice[OSMP_COLL_ALLREDUCE][OSMP__SIZE_MEDIUM][0][0].max == OSMP__DIRECT_READ_MAX);
    CHECK_STR(c->choice[OSMP_COLL_ALLREDUCE][OSMP__SIZE_MEDIUM][0][1].alg->name, "flat");
    CHECK(c->choice[OSMP_COLL_ALLREDUCE][OSMP__SIZE_MEDIUM][0][1].max == SIZE_MAX);
    /* Threads copy blocks beyond the line once: allgather's ring, never direct. */
    CHECK_STR(c->choice[OSMP_COLL_ALLGATHER][OSMP__SIZE_MEDIUM][1][0].alg->name, "ring");
    enum { N = OSMP__DIRECT_READ_MAX / sizeof(int64_t) };
    static int64_t vin[2][N + 1], vout[2][N + 1];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i <= N; i++) vin[index][i] = vout[index][i] = (int64_t)i * (index + 1) + k;
        uint64_t calls = c->direct_calls, slots = c->pass_slots[0];
        int in_place = k == 1;
        CHECK_INT(osmp_allreduce(team, in_place ? OSMP_IN_PLACE : vin[index], vout[index], N, OSMP_INT64, OSMP_SUM),
                  OSMP_OK);
        for (int i = 0; i < N; i++) CHECK(vout[index][i] == (int64_t)i * 3 + 2 * k);
        CHECK(vout[index][N] == (int64_t)N * (index + 1) + k); /* beyond count: untouched */
        CHECK(c->direct_calls == calls + 1 && c->pass_slots[0] == slots + 1);
        int d = (int)(calls & 1);
        CHECK(osmp__load_acquire(&mine[d]->seq) == c->owed_step - 1);
        const int64_t *slot = (const int64_t *)osmp__mb_slot(&c->mb, index, d, osmp__mb_ring(&c->mb, slots));
        CHECK(slot[0] == k && slot[N - 1] == (int64_t)(N - 1) * (index + 1) + k);
    }
    uint64_t calls = c->direct_calls;
    for (int i = 0; i <= N; i++) vin[index][i] = i;
    CHECK_INT(osmp_allreduce(team, vin[index], vout[index], N + 1, OSMP_INT64, OSMP_SUM), OSMP_OK);
    CHECK(vout[index][N] == 2 * N);
    CHECK(c->direct_calls == calls);
    /* A small broadcast rides in the root's next mini line, with the data. */
    int64_t b = index == 0 ? 4242 : -1;
    uint64_t before = c->pass_slots[1];
    CHECK_INT(osmp_bcast(team, &b, 1, OSMP_INT64, 0), OSMP_OK);
    CHECK_INT(b, 4242);
    CHECK(c->pass_slots[1] == before + 1);
    const struct osmp__mini *line = &osmp__mb_region(&c->mb, 0)->mini[OSMP__DOWN][before % OSMP__MINI_SLOTS];
    CHECK_INT(memcmp(line->data, &b, sizeof(b)), 0);
    CHECK(osmp__load_acquire((osmp_atomic64_t *)&line->seq) == c->step - OSMP__PHASE_STEPS + 1);
    /* A scatter block of two mini lines rides in an aligned pair of the root's next ones, each with
     * its piece and the step (threads would copy it once from 49 B: main sets
     * OSMP_SINGLE_COPY_MIN_THREADS); one byte more goes through a ring slot. */
    enum { SB = OSMP__MINI_LINES_BLOCK * OSMP__MINI_DATA };
    static unsigned char sin[2 * SB + 2], sout[2][SB + 1];
    /* the root's input, which the other reads only after the call has passed on its writes */
    for (int i = 0; index == 0 && i < 2 * SB + 2; i++) sin[i] = (unsigned char)(i * 7 + 1);
    before = c->pass_slots[1];
    uint64_t slots_before = c->pass_slots[0];
    CHECK_INT(osmp_scatter(team, sin, sout[index], SB, OSMP_UINT8, 0), OSMP_OK);
    CHECK_INT(memcmp(sout[index], sin + (size_t)index * SB, SB), 0);
    CHECK(c->pass_slots[1] == before + OSMP__MINI_LINES_BLOCK + 1); /* one more, to start at an even line */
    uint64_t first = before + before % 2;
    CHECK((uintptr_t)osmp__mb_region(&c->mb, 0)->mini[OSMP__DOWN][first % OSMP__MINI_SLOTS].data % 128 == 8);
    for (int j = 0; j < OSMP__MINI_LINES_BLOCK; j++) {
        line = &osmp__mb_region(&c->mb, 0)->mini[OSMP__DOWN][(first + (uint64_t)j) % OSMP__MINI_SLOTS];
        CHECK_INT(memcmp(line->data, sin + SB + (size_t)j * OSMP__MINI_DATA, OSMP__MINI_DATA), 0);
        CHECK(osmp__load_acquire((osmp_atomic64_t *)&line->seq) == c->step - OSMP__PHASE_STEPS + 1);
    }
    before = c->pass_slots[1];
    CHECK_INT(osmp_scatter(team, sin, sout[index], SB + 1, OSMP_UINT8, 0), OSMP_OK);
    CHECK_INT(memcmp(sout[index], sin + (size_t)index * (SB + 1), SB + 1), 0);
    CHECK(c->pass_slots[1] == before && c->pass_slots[0] == slots_before + 2 + 1); /* n taken by the first call, one slot by the second */
    CHECK_INT(osmp_team_destroy(team), OSMP_OK);
    return NULL;
}

static void test_direct_allreduce_alternates(void)
{
    run_pair(direct_participant);
}

/* The data of `rank`'s mini lines from ring index `first` on (dir) equals the
 * message `msg` of `bytes`, piece by piece, each line published at `step`. */
static void check_lines(osmp__coll_t c, int rank, int dir, uint64_t first, const void *msg, size_t bytes,
                        uint64_t step)
{
    for (int j = 0; j < osmp__mini_lines(bytes); j++) {
        const struct osmp__mini *line =
            &osmp__mb_region(&c->mb, rank)->mini[dir][(first + (uint64_t)j) % OSMP__MINI_SLOTS];
        CHECK_INT(memcmp(line->data, (const char *)msg + (size_t)j * OSMP__MINI_DATA, osmp__mini_piece(bytes, j)), 0);
        CHECK(osmp__load_acquire((osmp_atomic64_t *)&line->seq) == step);
    }
}

/* Broadcast and reduce of three lines' data, gather of two: the sender's next
 * mini lines from an even one (one more taken to start there); one element
 * more: the ring slots. Reduce of two lines with every datatype. */
static void *pair_participant(void *arg)
{
    int index = (int)(intptr_t)arg;
    osmp_team_t team;
    CHECK_INT(osmp_team_create_threads(world, 2, index, &team), OSMP_OK);
    osmp__coll_t c = &team->impl->coll;
    enum { SB = OSMP__MINI_LINES_MAX * OSMP__MINI_DATA, NV = SB / sizeof(int64_t) };
    enum { GB = OSMP__MINI_LINES_BLOCK * OSMP__MINI_DATA };
    _Static_assert(OSMP__MINI_LINES_MAX == 3 && OSMP__MINI_LINES_BLOCK == 2, "the lines this test expects");
    static unsigned char bin[SB + 1], bbuf[2][SB + 1];
    static int64_t rin[2][NV + 1], rout[NV + 1];
    static unsigned char gin[2][GB + 1], gout[2 * GB + 2];
    for (int pass = 0; pass < 2; pass++) {
        size_t bytes = SB + (size_t)pass, nv = NV + (size_t)pass;
        uint64_t lines = c->pass_slots[1], slots = c->pass_slots[0];
        /* broadcast from 0: the root's DOWN lines */
        if (index == 0)
            for (size_t i = 0; i < bytes; i++) bin[i] = (unsigned char)(i * 13 + 5 + pass);
        if (index == 0) memcpy(bbuf[0], bin, bytes);
        else memset(bbuf[1], 0, bytes);
        CHECK_INT(osmp_bcast(team, bbuf[index], bytes, OSMP_UINT8, 0), OSMP_OK);
        CHECK_INT(memcmp(bbuf[index], bin, bytes), 0);
        uint64_t first = lines + lines % 2;
        if (pass == 0) {
            CHECK(c->pass_slots[1] == lines + OSMP__MINI_LINES_MAX + 1);
            check_lines(c, 0, OSMP__DOWN, first, bin, bytes, c->step - OSMP__PHASE_STEPS + 1);
        } else {
            CHECK(c->pass_slots[1] == lines && c->pass_slots[0] == slots + 1);
        }
        /* reduce to 0: the leaf's UP lines */
        lines = c->pass_slots[1];
        slots = c->pass_slots[0];
        for (size_t i = 0; i < nv; i++) rin[index][i] = (int64_t)i * (index + 1) - 7 * pass;
        CHECK_INT(osmp_reduce(team, rin[index], index == 0 ? rout : NULL, nv, OSMP_INT64, OSMP_SUM, 0), OSMP_OK);
        for (size_t i = 0; index == 0 && i < nv; i++) CHECK(rout[i] == (int64_t)i * 3 - 14 * pass);
        first = lines + lines % 2;
        if (pass == 0) {
            CHECK(c->pass_slots[1] == lines + OSMP__MINI_LINES_MAX + 1);
            if (index == 1) check_lines(c, 1, OSMP__UP, first, rin[1], bytes, c->step - OSMP__PHASE_STEPS + 1);
        } else {
            CHECK(c->pass_slots[1] == lines && c->pass_slots[0] == slots + 1);
        }
        /* gather to 0: the sender's UP lines */
        lines = c->pass_slots[1];
        size_t gbytes = GB + (size_t)pass;
        for (size_t i = 0; i < gbytes; i++) gin[index][i] = (unsigned char)(i * 3 + 11 * index + pass);
        CHECK_INT(osmp_gather(team, gin[index], gout, gbytes, OSMP_UINT8, 0), OSMP_OK);
        if (index == 0) {
            CHECK_INT(memcmp(gout, gin[0], gbytes), 0);
            for (size_t i = 0; i < gbytes; i++) CHECK(gout[gbytes + i] == (unsigned char)(i * 3 + 11 + pass));
        }
        first = lines + lines % 2;
        if (pass == 0) {
            CHECK(c->pass_slots[1] == lines + OSMP__MINI_LINES_BLOCK + 1);
            if (index == 1) check_lines(c, 1, OSMP__UP, first, gin[1], gbytes, c->step - OSMP__PHASE_STEPS + 1);
        } else {
            CHECK(c->pass_slots[1] == lines + 1); /* gather takes its exposure line all the same */
        }
        CHECK_INT(osmp_barrier(team), OSMP_OK); /* the next pass rewrites the inputs the peer read */
    }
    /* Every datatype folds line by line: 100 B of each (two lines) and 160 B
     * (three), reduced to 0 with SUM, then with MAX (a peer's element wins at
     * the odd indices). */
    for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
        for (int k = 0; k < 4; k++) {
            int op = k % 2 ? OSMP_MAX : OSMP_SUM;
            size_t e = osmp_dtype_size((osmp_dtype_t)d), nv = (k < 2 ? 100 : 160) / e;
            static _Alignas(8) unsigned char din[2][160], dout[160]; /* (rows of whole doubles) */
            uint64_t lines = c->pass_slots[1];
            for (size_t i = 0; i < nv; i++) {
                long v = (long)(i % 50) + (index == (int)(i % 2) ? 7 : 0);
                switch (d) {
                case OSMP_FLOAT: ((float *)din[index])[i] = (float)v; break;
                case OSMP_DOUBLE: ((double *)din[index])[i] = (double)v; break;
                case OSMP_FLOAT16: ((_Float16 *)din[index])[i] = (_Float16)v; break;
                case OSMP_BFLOAT16: { /* integers below 256: binary32's upper half exactly */
                    float f = (float)v;
                    uint32_t u;
                    memcpy(&u, &f, 4);
                    ((uint16_t *)din[index])[i] = (uint16_t)(u >> 16);
                    break;
                }
                default: memcpy(din[index] + i * e, &v, e); break; /* little-endian: the low bytes */
                }
            }
            CHECK_INT(osmp_reduce(team, din[index], index == 0 ? dout : NULL, nv, (osmp_dtype_t)d,
                                  (osmp_op_t)op, 0),
                      OSMP_OK);
            CHECK(c->pass_slots[1] == lines + (k < 2 ? 2 : 3) + 1);
            for (size_t i = 0; index == 0 && i < nv; i++) {
                long want = op == OSMP_SUM ? 2 * (long)(i % 50) + 7 : (long)(i % 50) + 7, got = 0;
                switch (d) {
                case OSMP_FLOAT: got = (long)((float *)dout)[i]; break;
                case OSMP_DOUBLE: got = (long)((double *)dout)[i]; break;
                case OSMP_FLOAT16: got = (long)((_Float16 *)dout)[i]; break;
                case OSMP_BFLOAT16: {
                    uint32_t u = (uint32_t)((uint16_t *)dout)[i] << 16;
                    float f;
                    memcpy(&f, &u, 4);
                    got = (long)f;
                    break;
                }
                default: memcpy(&got, dout + i * e, e); break;
                }
                CHECK(got == want);
            }
            CHECK_INT(osmp_barrier(team), OSMP_OK);
        }
    CHECK_INT(osmp_team_destroy(team), OSMP_OK);
    return NULL;
}

static void test_two_line_messages(void)
{
    run_pair(pair_participant);
}

int main(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
    while (cpu0 < CPU_SETSIZE && !CPU_ISSET(cpu0, &set)) cpu0++;
    setenv("OSMP_SINGLE_COPY_MIN_THREADS", "1048576", 1); /* staged paths between threads too */
    if (osmp_init(&world) != OSMP_OK) return 1;
    RUN(test_oversubscribed_runs_ahead);
    RUN(test_direct_allreduce_alternates);
    RUN(test_two_line_messages);
    CHECK_INT(osmp_finalize(), OSMP_OK);
    return TEST_EXIT();
}
