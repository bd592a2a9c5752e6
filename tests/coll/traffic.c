/*
 * traffic: one broadcast and one allgather, with their results checked, for
 * counting what they move with the transfer trace (OSMP_TRACE; trace-cross.py
 * sums the bytes per boundary).
 *
 *   osmp-run -n N [...] -- traffic [--bcast BYTES] [--allgather BYTES] [--root R]
 *
 * Defaults: a 1 MiB broadcast from rank 0, then an allgather of 64 KiB + 1 per
 * rank (odd, so that the last chunk is short).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmp.h"

static unsigned char pattern(size_t i, int owner)
{
    return (unsigned char)(i * 131u + (unsigned)owner * 7u + 1u);
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "traffic: %s: %s\n", what, osmp_status_str(rc));
    return 1;
}

int main(int argc, char **argv)
{
    size_t bbytes = 1 << 20, gbytes = (64 << 10) + 1;
    int root = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bcast") == 0 && i + 1 < argc) bbytes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--allgather") == 0 && i + 1 < argc) gbytes = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) root = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: traffic [--bcast BYTES] [--allgather BYTES] [--root R]\n");
            return 2;
        }
    }
    osmp_team_t t;
    int rc = osmp_init(&t);
    if (rc) return fail("osmp_init", rc);
    int me = osmp_team_rank(t), n = osmp_team_size(t);
    if (root < 0 || root >= n) root = 0;
    unsigned char *b = malloc(bbytes + 1), *mine = malloc(gbytes + 1), *all = malloc(gbytes * (size_t)n + 1);
    if (!b || !mine || !all) return fail("malloc", OSMP_ERR_NO_MEMORY);
    for (size_t i = 0; i < bbytes; i++) b[i] = me == root ? pattern(i, root) : 0;
    for (size_t i = 0; i < gbytes; i++) mine[i] = pattern(i, me);
    memset(all, 0, gbytes * (size_t)n);
    if ((rc = osmp_bcast(t, b, bbytes, OSMP_UINT8, root))) return fail("osmp_bcast", rc);
    if ((rc = osmp_allgather(t, mine, all, gbytes, OSMP_UINT8))) return fail("osmp_allgather", rc);
    for (size_t i = 0; i < bbytes; i++)
        if (b[i] != pattern(i, root)) return fail("broadcast result differs", OSMP_ERR_MISMATCH);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < gbytes; i++)
            if (all[(size_t)r * gbytes + i] != pattern(i, r))
                return fail("allgather result differs", OSMP_ERR_MISMATCH);
    free(b);
    free(mine);
    free(all);
    if ((rc = osmp_finalize())) return fail("osmp_finalize", rc);
    if (me == 0) printf("traffic: results correct\n");
    return 0;
}
