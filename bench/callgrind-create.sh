#!/bin/bash
# Instructions per osmp_team_create outside waits (callgrind; repeatable on a noisy machine, where timing team
# creation with many oversubscribed processes is not): bench/create-cost.c under osmp-run, every rank under
# valgrind, OSMP_SPIN=0 so that a waiter sleeps at once, the instructions inside osmp__wait_reached (the
# exchanges' waits) subtracted, divided by the creations. Prints the smallest, the median and the largest rank.
#
#   bench/callgrind-create.sh BUILD_DIR N CREATIONS [osmp-run options: --topology X.xml --bind scatter]
set -eu
b=$1 n=$2 k=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
OSMP_SPIN=0 OSMP_TUNE_FILE=none "$b/tools/osmp-run" -n "$n" "$@" --timeout 3000 -- valgrind --tool=callgrind \
  --callgrind-out-file="$out/cg.%p" --toggle-collect=osmp_team_create "$b/create-cost" "$k" >/dev/null 2>&1
for f in "$out"/cg.*; do
  total=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  wait=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null | awk '/osmp__wait_reached \[/ {gsub(",", "", $1); print $1; exit}')
  echo $(((total - ${wait:-0}) / k))
done | sort -n | awk '{a[NR] = $1} END {printf "%d ranks: min %d, median %d, max %d instructions per creation\n", NR, a[1], a[int((NR + 1) / 2)], a[NR]}'
