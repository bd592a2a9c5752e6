/*
 * gather-trace: one gather, one scatter and one alltoall of COUNT int32 per
 * block (root ROOT), each result checked, for reading the transfer trace
 * (OSMP_TRACE) of a large team run oversubscribed on a real topology:
 *
 *   OSMP_TRACE=/tmp/t osmp-run -n 48 --topology X.xml --cores LIST -- gather-trace [COUNT [ROOT]]
 *   tests/coll/trace-peers.py /tmp/t     (distinct sources per destination, per call)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "osmp.h"

static int32_t val(int from, int to, size_t i)
{
    return (int32_t)(from * 1000003 + to * 7919 + (int)i);
}

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoul(argv[1], NULL, 10) : 4;
    int root = argc > 2 ? atoi(argv[2]) : 0, bad = 0;
    osmp_team_t w;
    int rc = osmp_init(&w);
    if (rc) {
        fprintf(stderr, "gather-trace: osmp_init: %s\n", osmp_status_str(rc));
        return 1;
    }
    int me = osmp_team_rank(w), n = osmp_team_size(w);
    int32_t *in = malloc(sizeof(int32_t) * count * (size_t)n + 1), *out = malloc(sizeof(int32_t) * count * (size_t)n + 1);
    for (size_t i = 0; i < count; i++) in[i] = val(me, root, i);
    rc = osmp_gather(w, in, out, count, OSMP_INT32, root);
    for (int r = 0; me == root && r < n; r++)
        for (size_t i = 0; i < count; i++) bad |= out[(size_t)r * count + i] != val(r, root, i);
    if (rc || bad) fprintf(stderr, "gather-trace: rank %d: gather %s%s\n", me, osmp_status_str(rc), bad ? ", wrong" : "");
    for (int r = 0; me == root && r < n; r++)
        for (size_t i = 0; i < count; i++) in[(size_t)r * count + i] = val(root, r, i);
    int rc2 = osmp_scatter(w, in, out, count, OSMP_INT32, root), bad2 = 0;
    for (size_t i = 0; i < count; i++) bad2 |= out[i] != val(root, me, i);
    if (rc2 || bad2) fprintf(stderr, "gather-trace: rank %d: scatter %s%s\n", me, osmp_status_str(rc2), bad2 ? ", wrong" : "");
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < count; i++) in[(size_t)r * count + i] = val(me, r, i);
    int rc3 = osmp_alltoall(w, in, out, count, OSMP_INT32), bad3 = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < count; i++) bad3 |= out[(size_t)r * count + i] != val(r, me, i);
    if (rc3 || bad3) fprintf(stderr, "gather-trace: rank %d: alltoall %s%s\n", me, osmp_status_str(rc3), bad3 ? ", wrong" : "");
    free(in);
    free(out);
    if (osmp_finalize()) return 1;
    return rc || bad || rc2 || bad2 || rc3 || bad3;
}
