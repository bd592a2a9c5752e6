/*
 * Requests across threads and teams, with OSMP_CHECK_ARGS=1:
 *   1. mismatched counts of a nonblocking allreduce: every participant's
 *      completion returns OSMP_ERR_MISMATCH (the request ends before it ever
 *      ran: nothing of it may be freed that was not set), and the team stays
 *      usable;
 *   2. the same with a zero count on one side (a zero-count request still
 *      takes part in the check, as the blocking call does);
 *   3. osmp_waitany over requests on two teams returns the one that completes
 *      while the other cannot (its peer joins only after the waitany returned);
 *   4. a request posted by one thread, completed by another, its team then
 *      destroyed: the posting thread's later waits (on another team) must not
 *      touch the destroyed team (ASan and TSan builds see it).
 * Two threads; a hang is a failure (alarm).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osmp.h"

static osmp_team_t world;
static int failed;

#define EXPECT(call, want)                                                                                   \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != (want)) {                                                                                 \
            fprintf(stderr, "nb-cross: line %d: %s returned %s, expected %s\n", __LINE__, #call,            \
                    osmp_status_name(rc_), osmp_status_name(want));                                         \
            __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);                                                   \
        }                                                                                                    \
    } while (0)

static int stage;
static void stage_set(int s)
{
    __atomic_store_n(&stage, s, __ATOMIC_RELEASE);
}
static void stage_wait(int s)
{
    while (__atomic_load_n(&stage, __ATOMIC_ACQUIRE) < s) usleep(1000);
}

static osmp_team_t alone;     /* scenario 4's team of one */
static osmp_request_t orphan; /* posted on it by thread 0, completed by main */

static void *thread_main(void *arg)
{
    int i = (int)(long)arg;
    osmp_team_t t, t2;
    EXPECT(osmp_team_create_threads(world, 2, i, &t), OSMP_OK);
    EXPECT(osmp_team_create_threads(world, 2, i, &t2), OSMP_OK);
    long in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    osmp_request_t r;

    /* 1: a request that ends before it runs; the heap it gets is poisoned first. */
    for (int k = 0; k < 4; k++) {
        void *p = malloc(1024);
        memset(p, 0x41, 1024);
        free(p);
    }
    EXPECT(osmp_iallreduce(t, in, out, i ? 8 : 4, OSMP_INT64, OSMP_SUM, &r), OSMP_OK);
    EXPECT(osmp_wait(&r), OSMP_ERR_MISMATCH);
    if (r != OSMP_REQUEST_NULL) EXPECT(-1, OSMP_OK);
    EXPECT(osmp_barrier(t), OSMP_OK);

    /* 2: a zero count against 4 */
    EXPECT(osmp_iallreduce(t, in, out, i ? 4 : 0, OSMP_INT64, OSMP_SUM, &r), OSMP_OK);
    EXPECT(osmp_wait(&r), OSMP_ERR_MISMATCH);
    EXPECT(osmp_allreduce(t, in, out, 4, OSMP_INT64, OSMP_SUM), OSMP_OK);
    if (out[3] != 8) EXPECT(-1, OSMP_OK);

    /* 3: waitany over two teams, only the second can complete */
    if (i == 0) {
        osmp_request_t q[2];
        int index = -2;
        EXPECT(osmp_ibarrier(t, &q[0]), OSMP_OK);
        EXPECT(osmp_ibarrier(t2, &q[1]), OSMP_OK);
        EXPECT(osmp_waitany(2, q, &index), OSMP_OK);
        if (index != 1 || q[1] != OSMP_REQUEST_NULL || q[0] == OSMP_REQUEST_NULL) EXPECT(-1, OSMP_OK);
        stage_set(1);
        EXPECT(osmp_wait(&q[0]), OSMP_OK);
    } else { /* (nonblocking, as MPI requires: a blocking call never matches a nonblocking one) */
        osmp_request_t q;
        usleep(100000);
        EXPECT(osmp_ibarrier(t2, &q), OSMP_OK);
        EXPECT(osmp_wait(&q), OSMP_OK);
        stage_wait(1);
        EXPECT(osmp_ibarrier(t, &q), OSMP_OK);
        EXPECT(osmp_wait(&q), OSMP_OK);
    }

    /* 4: thread 0 posts on the team of one; main completes it and destroys the team */
    if (i == 0) {
        EXPECT(osmp_iallreduce(alone, in, out, 8, OSMP_INT64, OSMP_SUM, &orphan), OSMP_OK);
        stage_set(2);
    }
    stage_wait(3);
    if (i == 1) usleep(100000); /* (thread 0 blocks in the barrier meanwhile) */
    EXPECT(osmp_barrier(t), OSMP_OK);
    EXPECT(osmp_team_destroy(t2), OSMP_OK);
    EXPECT(osmp_team_destroy(t), OSMP_OK);
    return NULL;
}

int main(void)
{
    alarm(120);
    setenv("OSMP_CHECK_ARGS", "1", 1); /* (scenarios 1 and 2 need it) */
    EXPECT(osmp_init(&world), OSMP_OK);
    struct osmp_team_params p = {.rank = 0, .size = 1};
    EXPECT(osmp_team_create(&p, &alone), OSMP_OK);
    pthread_t th[2];
    for (long i = 0; i < 2; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
    stage_wait(2);
    EXPECT(osmp_wait(&orphan), OSMP_OK);
    EXPECT(osmp_team_destroy(alone), OSMP_OK);
    stage_set(3);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    EXPECT(osmp_finalize(), OSMP_OK);
    if (failed) return 1;
    printf("nb-cross: all checks passed\n");
    return 0;
}
