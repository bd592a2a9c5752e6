#!/usr/bin/env bash
# osmp-tune and the tune table, end to end, on 8 oversubscribed participants
# placed on a real topology (docs/tuning.md):
#   1. osmp-tune --quick writes a table that osmp-topo --algorithms shows in use;
#   2. with OSMP_FAULT=delay slowing the algorithm it chose for 8-byte allreduces,
#      the new table chooses another wherever the first chose that one (up to 64 KiB);
#   3. the runtime runs what the table says (the transfer trace's algorithm);
#   4. a table made on another topology is refused (one line naming both machines),
#      a damaged one is named with its line, and in both cases the defaults run.
# usage: tune-check.sh OSMP_RUN OSMP_TUNE OSMP_TOPO TRACE_RUN TOPOLOGIES_DIR
set -u
RUN=$1 TUNE=$2 TOPO=$3 TRACE_RUN=$4 T=$5
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
milan=$T/amd-milan-2x64.xml kunpeng=$T/kunpeng920-2x64-clusters.xml
place=(-n 8 --topology "$milan" --cores 0,1,8,9,64,65,72,73)
export OSMP_TUNE_FILE=none # the world team of osmp-tune itself: the defaults

# The choice of collective $1 at $2 bytes in table $3.
choice() {
  awk -v op="$1" -v b="$2" '
    function bytes(s) { if (s == "max") return 1e30; if (s ~ /K$/) return s * 1024; if (s ~ /M$/) return s * 1048576; return s + 0 }
    $1 == op && NF == 5 && bytes($3) <= b && b <= bytes($4) { print $5 }' "$3"
}

# 1
"$RUN" "${place[@]}" -- "$TUNE" --quick --ops allreduce,bcast --out "$d/base.txt" 2>"$d/base.err" ||
  { cat "$d/base.err"; fail "osmp-tune"; }
grep -q '\[##############################\] 100%' "$d/base.err" || fail "no progress bar at 100%"
grep -q "left" "$d/base.err" || fail "the progress bar says no time left"
head -1 "$d/base.txt" | grep -q "^topology [0-9a-f]\{16\} 128 cores" || fail "no milan signature: $(head -1 "$d/base.txt")"
slow=$(choice allreduce 8 "$d/base.txt")
[ -n "$slow" ] || { cat "$d/base.txt"; fail "no allreduce row for 8 bytes"; }
OSMP_TOPOLOGY=$milan OSMP_TUNE_FILE=$d/base.txt "$TOPO" --algorithms >"$d/alg.out" || fail "osmp-topo --algorithms"
grep -q "^tune table $d/base.txt: in use" "$d/alg.out" || { tail -5 "$d/alg.out"; fail "the table is not in use"; }
grep -q "allreduce *8 ranks *0 \.\. .* $slow " "$d/alg.out" || fail "--algorithms does not list the tuned rule"

# 2: the winner made slow: 100 ms per call, where calls up to 64 KiB take microseconds to a few milliseconds
# even on a loaded machine
OSMP_FAULT=delay:allreduce.${slow%%:*}:100000 "$RUN" "${place[@]}" -- "$TUNE" --quick --ops allreduce --no-settings \
  --sizes 8,1K,64K --out "$d/slow.txt" 2>"$d/slow.err" || { cat "$d/slow.err"; fail "osmp-tune with a slow algorithm"; }
for b in 8 1024 65536; do
  before=$(choice allreduce $b "$d/base.txt") after=$(choice allreduce $b "$d/slow.txt")
  if [ "${before%%:*}" = "${slow%%:*}" ] && [ "${after%%:*}" = "${slow%%:*}" ]; then
    cat "$d/slow.txt"; fail "allreduce at $b bytes still chooses $slow, made 100 ms slower"
  fi
done
echo "8-byte allreduce: $slow; slowed on purpose: $(choice allreduce 8 "$d/slow.txt")"

# 3: what the runtime runs at each size is the table's choice
for b in 8 65536; do
  want=$(choice allreduce $b "$d/slow.txt")
  OSMP_TUNE_FILE=$d/slow.txt OSMP_TRACE=$d/tr$b "$RUN" "${place[@]}" -- "$TRACE_RUN" allreduce $b ||
    fail "trace-run allreduce $b with the table"
  got=$(grep -o '"op": "allreduce", "kind": "call", "alg": "[^"]*"' "$d/tr$b.0.jsonl" | sed 's/.*"alg": "//; s/"$//')
  [ "$got" = "$want" ] || fail "allreduce of $b bytes ran $got, the table says $want"
done

# 4a: another topology: refused, once, naming both; the defaults run
OSMP_TUNE_FILE=$d/slow.txt OSMP_TRACE=$d/kp "$RUN" -n 8 --topology "$kunpeng" -- "$TRACE_RUN" allreduce 8 2>"$d/kp.err" ||
  { cat "$d/kp.err"; fail "trace-run on kunpeng with milan's table"; }
[ "$(grep -c "was made on another machine" "$d/kp.err")" -ge 1 ] || { cat "$d/kp.err"; fail "no refusal"; }
grep "was made on another machine" "$d/kp.err" | head -1 | grep -q "128 cores.*this one is 128 cores.*topology" ||
  fail "the refusal does not name both machines: $(head -1 "$d/kp.err")"
OSMP_TUNE_FILE=none OSMP_TRACE=$d/def "$RUN" -n 8 --topology "$kunpeng" -- "$TRACE_RUN" allreduce 8 || fail "defaults"
a=$(grep -o '"alg": "[^"]*"' "$d/kp.0.jsonl" | sort -u) b=$(grep -o '"alg": "[^"]*"' "$d/def.0.jsonl" | sort -u)
[ "$a" = "$b" ] || fail "with a refused table the team ran $a, the defaults run $b"

# 4b: a damaged table: named with its line, the defaults run
n=$(grep -n '^allreduce ' "$d/slow.txt" | head -1 | cut -d: -f1)
awk -v n="$n" 'NR == n { $5 = "no-such-algorithm" } { print }' "$d/slow.txt" >"$d/bad.txt"
OSMP_TOPOLOGY=$milan OSMP_TUNE_FILE=$d/bad.txt "$TOPO" --algorithms >"$d/bad.out" 2>"$d/bad.err"
grep -q "^tune table $d/bad.txt:$n: allreduce has no algorithm \"no-such-algorithm\"" "$d/bad.out" ||
  { tail -3 "$d/bad.out"; fail "the damaged line is not named"; }
OSMP_TUNE_FILE=$d/bad.txt OSMP_TRACE=$d/bad "$RUN" "${place[@]}" -- "$TRACE_RUN" allreduce 8 2>"$d/bad.err" ||
  fail "trace-run with a damaged table"
grep -q "bad.txt:$n: allreduce has no algorithm" "$d/bad.err" || fail "the run does not say which line is damaged"
OSMP_TUNE_FILE=none OSMP_TRACE=$d/def2 "$RUN" "${place[@]}" -- "$TRACE_RUN" allreduce 8 || fail "defaults on milan"
a=$(grep -o '"alg": "[^"]*"' "$d/bad.0.jsonl" | sort -u) b=$(grep -o '"alg": "[^"]*"' "$d/def2.0.jsonl" | sort -u)
[ "$a" = "$b" ] || fail "with a damaged table the team ran $a, the defaults run $b"
echo "tune-check: all passed"
