/*
 * agree: one team creation (osmp_init under osmp-run), and what each
 * participant got. Written against include/osmp.h only.
 *
 *   osmp-run -n N -- agree
 *
 * Every rank prints one line, "agree: rank R (pid P): STATUS: REASON"
 * (osmp_init's status name, osmp_team_last_error()), and where the team was
 * made, runs an allreduce of its rank and a broadcast from the last rank and
 * prints "agree: rank R (pid P): OSMP_OK: allreduce and bcast exact". Exit status 0 unless a
 * result is wrong or a call on the team fails (tests/reliability/agree.sh
 * compares the lines of all ranks).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "osmp.h"

int main(void)
{
    osmp_team_t w;
    const char *env = getenv("OSMP_RUN_RANK");
    int rc = osmp_init(&w);
    if (rc) {
        printf("agree: rank %s (pid %d): %s: %s\n", env ? env : "?", (int)getpid(), osmp_status_name(rc), osmp_team_last_error());
        return 0;
    }
    int rank = osmp_team_rank(w), size = osmp_team_size(w);
    int64_t v = rank + 1, sum = 0, b = rank == size - 1 ? 4242 : 0;
    if ((rc = osmp_allreduce(w, &v, &sum, 1, OSMP_INT64, OSMP_SUM)) || (rc = osmp_bcast(w, &b, 1, OSMP_INT64, size - 1))) {
        printf("agree: rank %d: a call failed: %s\n", rank, osmp_status_name(rc));
        return 1;
    }
    if (sum != (int64_t)size * (size + 1) / 2 || b != 4242) {
        printf("agree: rank %d: wrong result: sum %lld, bcast %lld\n", rank, (long long)sum, (long long)b);
        return 1;
    }
    printf("agree: rank %d (pid %d): OSMP_OK: allreduce and bcast exact%s\n", rank, (int)getpid(),
           *osmp_team_last_error() ? " (a reason left)" : "");
    return osmp_finalize() ? 1 : 0;
}
