/* osmp-topo --show traffic (traffic.c): what a transfer trace says crossed the machine. */
#ifndef OSMP_TOOLS_TRAFFIC_H
#define OSMP_TOOLS_TRAFFIC_H

#include <stdio.h>

#include "osmp.h"

/* Read PREFIX.<rank>.jsonl of every rank and print, per call (only op's, only
 * those whose block is `bytes` when bytes >= 0), the bytes moved between
 * participants and across packages, NUMA nodes and L3s of topo, the participant
 * that received most, the one others read most from, the one that heard from
 * most others, and the one that combined most. Non-zero with a one-line reason in err on unreadable input. */
int osmp_traffic_show(osmp_topo_t topo, const char *prefix, const char *op, long long bytes, int json, FILE *out,
                      char *err, size_t errlen);

#endif
