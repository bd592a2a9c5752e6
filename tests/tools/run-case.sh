#!/usr/bin/env bash
# Run one case of a tool (osmp-topo and osmp-probe: cases.txt; osmp-map: map-cases.txt) and compare stdout,
# stderr and the exit status with expected/CASE.{out,err,rc}. OSMP_UPDATE_EXPECTED=1 rewrites them
# (review the diff before committing).
# usage: run-case.sh CASE PATH/TO/TOOL TOPOLOGIES_DIR [CASES_FILE]
set -u
case=$1 OSMP_TOPO=$2 T=$3 cases=${4:-cases.txt}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
export OSMP_TUNE_FILE=none # (a tune table of this machine would change --algorithms)
line=$(grep -E "^$case " "$cases") || { echo "no case $case"; exit 1; }
eval "args=(${line#* })"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$OSMP_TOPO" "${args[@]}" >"$out" 2>"$err"
rc=$?
if [ "${OSMP_UPDATE_EXPECTED:-0}" = 1 ]; then
  cp "$out" "expected/$case.out"; cp "$err" "expected/$case.err"; echo "$rc" >"expected/$case.rc"
  exit 0
fi
status=0
if [ "$rc" != "$(cat "expected/$case.rc")" ]; then echo "exit status $rc, expected $(cat "expected/$case.rc")"; status=1; fi
diff -u "expected/$case.out" "$out" || status=1
diff -u "expected/$case.err" "$err" || status=1
if [ "$rc" = 2 ] && [ "$(wc -l <"$err")" != 1 ]; then echo "bad input must give exactly one line on stderr"; status=1; fi
exit $status
