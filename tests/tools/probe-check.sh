#!/usr/bin/env bash
# osmp-probe's topology in the rest of OSMP.
#
# probe-check.sh xml BUILD_TOOLS TRACE_RUN LATENCY_DIR
#   The XML written from a CSV (Ryzen 5950X) loads in osmp-topo with the measured groups (expected output), and
#   reaches the library through osmp-run --topology / OSMP_TOPOLOGY: a broadcast planned by CCD (OSMP_HIERARCHY=
#   group) reaches rank 3 through the leader of its CCD, where a flat machine of the same size sends it from the
#   root; a broken file in OSMP_TOPOLOGY fails with one line naming it.
# probe-check.sh measure BUILD_TOOLS TRACE_RUN
#   A short real measurement of this machine: a matrix of one row per allowed CPU with positive finite latencies,
#   levels in JSON, how long it took; its XML loads (and is this machine); --save then OSMP_TOPOLOGY=measured
#   runs collectives; without the cache, one line naming the file and osmp-probe --save.
set -u
mode=$1 tools=$2 trace_run=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

if [ "$mode" = xml ]; then
  L=$4
  "$tools/osmp-probe" --from-csv "$L/amd-ryzen-5950x.csv" --out-xml "$tmp/r.xml" >/dev/null 2>"$tmp/err" ||
    fail "osmp-probe --out-xml: $(cat "$tmp/err")"
  [ -s "$tmp/err" ] && fail "osmp-probe --from-csv --out-xml wrote to stderr: $(cat "$tmp/err")"
  grep -q 'name="OSMPLatency"' "$tmp/r.xml" || fail "no OSMPLatency distances in the XML"
  "$tools/osmp-topo" --input "$tmp/r.xml" >"$tmp/tree" 2>&1 || fail "osmp-topo --input: $(cat "$tmp/tree")"
  diff -u "$here/expected/probe-xml-ryzen-tree.out" "$tmp/tree" || fail "osmp-topo's tree of the measured XML"
  # Logical cores 0,1 are CPUs 0 and 16 (CCD 0), 16,17 are CPUs 8 and 24 (CCD 1).
  OSMP_HIERARCHY=group OSMP_TRACE="$tmp/m" "$tools/osmp-run" -n 4 --topology "$tmp/r.xml" --cores 0,1,16,17 \
    --timeout 60 -- "$trace_run" bcast 64 || fail "osmp-run --topology measured XML"
  grep -q '"kind": "copy", "src": 2, "dst": 3' "$tmp/m.3.jsonl" || fail "rank 3 did not receive from its CCD's leader"
  OSMP_HIERARCHY=group OSMP_TRACE="$tmp/f" "$tools/osmp-run" -n 4 --synthetic "core:32 pu:1" --cores 0,1,16,17 \
    --timeout 60 -- "$trace_run" bcast 64 || fail "osmp-run --synthetic"
  grep -q '"kind": "copy", "src": 0, "dst": 3' "$tmp/f.3.jsonl" || fail "control: on a flat machine rank 3 reads the root"
  # OSMP_TOPOLOGY=FILE without osmp-run (a team of one): the file is read.
  OSMP_TOPOLOGY="$tmp/r.xml" "$trace_run" allreduce 64 || fail "OSMP_TOPOLOGY=measured XML"
  echo '<topology>' >"$tmp/bad.xml"
  OSMP_TOPOLOGY="$tmp/bad.xml" "$trace_run" allreduce 64 >/dev/null 2>"$tmp/err" && fail "a broken OSMP_TOPOLOGY loaded"
  grep -q "^osmp: $tmp/bad.xml" "$tmp/err" || fail "no line naming the broken file: $(cat "$tmp/err")"
  exit $status
fi

# measure
ncpu=$(nproc)
"$tools/osmp-probe" --reps 3 --iters 200 --format json --out "$tmp/m.csv" --out-xml "$tmp/m.xml" >"$tmp/out" \
  2>"$tmp/err" || fail "osmp-probe: $(cat "$tmp/err")"
rows=$(wc -l <"$tmp/m.csv")
[ "$rows" = "$ncpu" ] || fail "$rows rows in the CSV, $ncpu allowed CPUs"
awk -F, -v n="$ncpu" '{
    if (NF != n) { print "row " NR-1 ": " NF " fields, expected " n; bad = 1 }
    for (j = 1; j <= NF; j++) {
      if (j < NR && !($j ~ /^[0-9]+(\.[0-9]+)?$/ && $j + 0 > 0)) { print "row " NR-1 " col " j-1 ": \"" $j "\""; bad = 1 }
      if (j >= NR && $j != "") { print "row " NR-1 " col " j-1 " above the diagonal: \"" $j "\""; bad = 1 }
    }
  } END { exit bad }' "$tmp/m.csv" || fail "the measured CSV"
[ "$ncpu" = 2 ] && { grep -Eq '^,$' <(head -1 "$tmp/m.csv") && grep -Eq '^[0-9.]+,$' <(tail -1 "$tmp/m.csv") ||
  fail "2 CPUs: expected a 2 x 2 lower-triangular CSV: $(cat "$tmp/m.csv")"; }
# The last level is the machine: one group of every allowed CPU.
last=$(tail -1 "$tmp/out")
[[ "$last" =~ \"name\":\ \"machine\",\ \"latency_ns\":\ [0-9.]+,\ \"groups\":\ \[\[([0-9, ]+)\]\]\}\]\}$ ]] &&
  [ "$(echo "${BASH_REMATCH[1]}" | tr ',' '\n' | wc -l)" = "$ncpu" ] || fail "no machine level with every CPU: $(cat "$tmp/out")"
grep -Eq "^osmp-probe: measured [0-9]+ pairs? of $ncpu CPUs in [0-9.]+ s" "$tmp/err" || fail "no time: $(cat "$tmp/err")"
"$tools/osmp-topo" --input "$tmp/m.xml" --show distances >/dev/null || fail "osmp-topo --input of the measured XML"
"$tools/osmp-run" -n 2 --topology "$tmp/m.xml" --timeout 60 -- "$trace_run" allreduce 64 || fail "osmp-run --topology"

export XDG_CACHE_HOME="$tmp/cache"
OSMP_TOPOLOGY=measured "$trace_run" allreduce 64 >/dev/null 2>"$tmp/err" && fail "ran without a measured topology"
[ "$(wc -l <"$tmp/err")" -ge 1 ] && grep -q "^osmp: OSMP_TOPOLOGY=measured: no measured topology in $tmp/cache/osmp/topology-.*\.xml.*osmp-probe --save" "$tmp/err" ||
  fail "missing cache: $(cat "$tmp/err")"
"$tools/osmp-probe" --reps 3 --iters 200 --save >/dev/null 2>"$tmp/err" || fail "osmp-probe --save: $(cat "$tmp/err")"
ls "$tmp/cache/osmp/topology-"*.xml >/dev/null || fail "--save wrote nothing in $tmp/cache/osmp"
OSMP_TOPOLOGY=measured "$tools/osmp-run" -n 2 --timeout 60 -- "$trace_run" allreduce 64 ||
  fail "OSMP_TOPOLOGY=measured after --save"
exit $status
