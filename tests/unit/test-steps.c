/*
 * Steps and slots do not depend on counts. In one phase, participants may move
 * numbers of chunks that only some of them know (gatherv: each sender knows its
 * own count, the root knows all; alltoallv: nobody knows all), and the team's
 * next collectives must still line up. Three thread participants drive the
 * data path (shm/mailbox.h) directly, as a gatherv would: ranks 1 and 2 each
 * send rank 0 a number of chunks the other does not know (0 .. 3 * depth + 1,
 * so the ring wraps); then all run public collectives (inline and through the
 * slots), whose results are checked, round after round. And the reduction
 * kernels' two forms agree.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "coll/coll.h"
#include "team/team.h"
#include "test.h"

#define NTHREADS 3
#define ROUNDS 40

static osmp_team_t world;

static size_t chunks_of(int rank, int round, int depth)
{
    return (size_t)((round * (rank == 1 ? 7 : 5) + rank) % (3 * depth + 2));
}

static uint64_t payload(int rank, int round, size_t k)
{
    return (uint64_t)rank << 48 | (uint64_t)round << 24 | k;
}

/* One phase of the gatherv-like exchange: rank r > 0 sends chunks_of(r) chunks. */
static void uneven_phase(osmp__coll_t c, int round)
{
    struct osmp__mbox *m = &c->mb;
    uint64_t base = osmp__phase(c);
    int root = 0;
    if (c->rank != 0) {
        for (size_t k = 0; k < chunks_of(c->rank, round, m->depth); k++) {
            uint64_t s = base + 1 + k;
            char *dst = osmp__mb_claim(m, OSMP__UP, osmp__mb_ring(m, k), &root, 1, OSMP__UP, s);
            CHECK(dst != NULL);
            if (!dst) return;
            uint64_t v = payload(c->rank, round, k);
            memcpy(dst, &v, sizeof(v));
            osmp__mb_publish(m, OSMP__UP, s);
        }
        return;
    }
    /* The root knows every count. Chunk by chunk (as the gather does): read
     * chunk k of every sender that has one, then say so on my counter, which
     * frees those slots for the senders' chunk k + depth. */
    size_t most = 0;
    for (int r = 1; r < c->size; r++)
        if (chunks_of(r, round, m->depth) > most) most = chunks_of(r, round, m->depth);
    for (size_t k = 0; k < most; k++) {
        uint64_t s = base + 1 + k, v;
        for (int r = 1; r < c->size; r++) {
            if (k >= chunks_of(r, round, m->depth)) continue;
            CHECK_INT(osmp__mb_wait(m, r, OSMP__UP, s), OSMP_OK);
            memcpy(&v, osmp__mb_slot(m, r, OSMP__UP, osmp__mb_ring(m, k)), sizeof(v));
            CHECK(v == payload(r, round, k));
        }
        osmp__mb_publish(m, OSMP__UP, s);
    }
}

static void *participant(void *arg)
{
    int index = (int)(intptr_t)arg;
    osmp_team_t team;
    CHECK_INT(osmp_team_create_threads(world, NTHREADS, index, &team), OSMP_OK);
    osmp__coll_t c = &team->impl->coll;
    static double big_in[NTHREADS][5000];
    double big_out[5000];
    for (int round = 0; round < ROUNDS; round++) {
        uneven_phase(c, round);
        int64_t mine = index + round, sum = -1;
        CHECK_INT(osmp_allreduce(team, &mine, &sum, 1, OSMP_INT64, OSMP_SUM), OSMP_OK);
        CHECK_INT(sum, 3 * round + 3);
        for (int i = 0; i < 5000; i++) big_in[index][i] = index * 5000 + i + round;
        CHECK_INT(osmp_allreduce(team, big_in[index], big_out, 5000, OSMP_DOUBLE, OSMP_SUM), OSMP_OK);
        for (int i = 0; i < 5000; i += 997) CHECK(big_out[i] == 3.0 * (i + round) + 15000);
        CHECK_INT(osmp_barrier(team), OSMP_OK);
    }
    CHECK_INT(osmp_team_destroy(team), OSMP_OK);
    return NULL;
}

static void test_uneven_phases(void)
{
    pthread_t th[NTHREADS];
    for (intptr_t i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, participant, (void *)i);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
}

/* Every reduction kernel's three-array form (coll/tree.c folds my chunk and my
 * first child's into my result with it) gives the bits of copy-then-fold, for
 * every datatype and operation, NaNs and signed zeros among the floats; and
 * touches neither input. */
static void test_fold_kernels(void)
{
    enum { N = 37 };
    for (int d = 0; d < OSMP_DTYPE_COUNT; d++)
        for (int op = 0; op < OSMP_OP_COUNT; op++) {
            osmp__reduce_fn fn;
            osmp__reduce_fn3 fn3;
            int rc = osmp__reduce_fns_get((osmp_dtype_t)d, (osmp_op_t)op, &fn, &fn3);
            if (rc) {
                CHECK_INT(rc, OSMP_ERR_TYPE); /* logical and bitwise operations on floating point */
                continue;
            }
            size_t e = osmp_dtype_size((osmp_dtype_t)d);
            _Alignas(8) unsigned char a[N * 8 + 8], b[N * 8 + 8], a0[N * 8 + 8], b0[N * 8 + 8], ref[N * 8 + 8],
                out[N * 8 + 8];
            for (size_t i = 0; i < sizeof(a); i++) {
                a[i] = (unsigned char)(i * 37 + 11 + d);
                b[i] = (unsigned char)(i * 91 + 3 * op);
            }
/* a NaN on either side, -0 against +0, equal elements */
#define SPECIALS(T)                                                                                          \
    do {                                                                                                     \
        T *x = (T *)a, *y = (T *)b;                                                                          \
        x[0] = y[1] = (T)__builtin_nan("");                                                                  \
        x[2] = -(T)0;                                                                                        \
        y[2] = (T)0;                                                                                         \
        x[3] = y[3] = (T)1.5;                                                                                \
    } while (0)
            if (d == OSMP_FLOAT) SPECIALS(float);
            if (d == OSMP_DOUBLE) SPECIALS(double);
            memcpy(a0, a, sizeof(a));
            memcpy(b0, b, sizeof(b));
            memcpy(ref, a, sizeof(a));
            fn(ref, b, N);
            memset(out, 0xa5, sizeof(out));
            fn3(out, a, b, N);
            CHECK_INT(memcmp(out, ref, N * e), 0);
            CHECK(out[N * e] == 0xa5); /* nothing beyond the count */
            CHECK_INT(memcmp(a, a0, sizeof(a)), 0);
            CHECK_INT(memcmp(b, b0, sizeof(b)), 0);
        }
}

int main(void)
{
    if (osmp_init(&world) != OSMP_OK) return 1;
    RUN(test_uneven_phases);
    RUN(test_fold_kernels);
    CHECK_INT(osmp_finalize(), OSMP_OK);
    return TEST_EXIT();
}
