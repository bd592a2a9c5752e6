#!/usr/bin/env bash
# osmp-bench, bench/compare and bench/ab: --help exits 0 and explains every option, a bad
# option is named (exit 2), and each mode runs and writes the JSON fields
# bench/compare reads.
#   bench-cli.sh OSMP_BENCH SOURCE_DIR
set -uo pipefail
bench=$1 src=$2 fail=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
help=$(mpirun -n 1 "$bench" --help); rc=$?
[ "$rc" = 0 ] || { echo "osmp-bench --help: exit $rc"; fail=1; }
for o in --mode --ops --sizes --iters --warmup --rounds --check --no-bound --alloc --json --quick --tune --tune-out --tune-margin --help; do
  grep -q -- "^  $o " <<<"$help" || { echo "osmp-bench --help does not explain $o"; fail=1; }
done
err=$(mpirun -n 1 "$bench" --frobnicate 2>&1 >/dev/null); rc=$?
grep -q 'osmp-bench: unknown option "--frobnicate"' <<<"$err" || { echo "bad option not named: $err"; fail=1; }
err=$(mpirun -n 1 "$bench" --mode fast 2>&1 >/dev/null)
grep -q 'osmp-bench: bad --mode "fast" (osu, b2b or side)' <<<"$err" || { echo "bad mode not named: $err"; fail=1; }
err=$(mpirun -n 1 "$bench" --alloc huge 2>&1 >/dev/null)
grep -q 'osmp-bench: bad --alloc "huge" (malloc, mpi or osmp)' <<<"$err" || { echo "bad alloc not named: $err"; fail=1; }
# osmp_alloc buffers, both libraries on them, results compared
OSMP_SINGLE_COPY_MIN=0 mpirun -n 2 --oversubscribe "$bench" --mode side --check --alloc osmp --ops bcast,gather,alltoall \
  --sizes 4K:8K --iters 5 --warmup 1 --rounds 1 --no-bound >"$tmp/alloc.txt" 2>&1 ||
  { echo "--alloc osmp --check failed:"; cat "$tmp/alloc.txt"; fail=1; }
for mode in osu b2b side; do
  mpirun -n 2 --oversubscribe "$bench" --mode $mode --ops barrier,allreduce --sizes 8:16 --iters 5 --warmup 1 --rounds 1 \
    --json "$tmp/$mode.json" >"$tmp/$mode.txt" 2>&1 || { echo "mode $mode failed:"; cat "$tmp/$mode.txt"; fail=1; continue; }
  python3 - "$tmp/$mode.json" "$mode" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
keys = {"osmp_us", "mpi_us", "bound_us"} if sys.argv[2] == "side" else {"avg_us", "max_us", "min_us", "bound_us"}
got = [(x["op"], x["bytes"]) for x in r["results"]]
assert r["mode"] == sys.argv[2] and got == [("barrier", 0), ("allreduce", 8), ("allreduce", 16)], got
assert all(keys <= set(x) and x["bound_us"] > 0 for x in r["results"]), r["results"]
PY
done
help=$("$src/bench/compare" --help); rc=$?
[ "$rc" = 0 ] || { echo "bench/compare --help: exit $rc"; fail=1; }
for o in -n --modes --runs --mpi --hog --quick --placement --help --ops; do
  grep -q -- "^  $o" <<<"$help" || { echo "bench/compare --help does not explain $o"; fail=1; }
done
err=$("$src/bench/compare" --frobnicate 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q 'unknown option "--frobnicate"' <<<"$err" || { echo "compare bad option: $rc $err"; fail=1; }
# bench/ab: options explained, bad input named, and a run of the build against itself prints each
# (operation, size) once with the three medians and their ratios (not checked near 1: ctest runs other
# tests beside it).
build=$(dirname "$bench")
help=$("$src/bench/ab" --help); rc=$?
[ "$rc" = 0 ] || { echo "bench/ab --help: exit $rc"; fail=1; }
for o in --base --build --mpi -n --runs --stat; do
  grep -q -- "^  $o" <<<"$help" || { echo "bench/ab --help does not explain $o"; fail=1; }
done
err=$("$src/bench/ab" --build "$build" 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q 'required: --base' <<<"$err" || { echo "ab without --base: $rc $err"; fail=1; }
err=$("$src/bench/ab" --build "$build" --base "$tmp/none" 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q -- "--base $tmp/none: no libosmp_mpi" <<<"$err" || { echo "ab bad --base: $rc $err"; fail=1; }
err=$("$src/bench/ab" --build "$build" --base "$build" -- --mode side 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q 'mode "side": osu or b2b' <<<"$err" || { echo "ab side mode: $rc $err"; fail=1; }
if [ -e "$build/libosmp_mpi.so" ] && command -v mpirun >/dev/null; then
  "$src/bench/ab" --build "$build" --base "$build" --runs 1 -n 2 -- --mode b2b --ops barrier,allreduce --sizes 8 \
    --iters 20 --warmup 2 --rounds 1 >"$tmp/ab.txt" 2>&1 || { echo "bench/ab run failed:"; cat "$tmp/ab.txt"; fail=1; }
  python3 - "$tmp/ab.txt" <<'PY' || fail=1
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.split()[:1] in (["barrier"], ["allreduce"])]
assert [(r[0], r[1]) for r in rows] == [("allreduce", "8"), ("barrier", "0")], rows
# three latencies, then three ratios (printed to 2 decimals: a busy machine can make one 0.00)
assert all(len(r) == 8 and all(float(x) > 0 for x in r[2:5]) and all(float(x) >= 0 for x in r[5:]) for r in rows), rows
PY
  # --states: every run is filed by the round trips it timed itself (osmp-bench's state: line, also
  # printed with --no-bound), under near, far or changed.
  "$src/bench/ab" --build "$build" --base "$build" --runs 1 -n 2 --states -- --mode b2b --ops barrier --sizes 8 \
    --iters 20 --warmup 2 --rounds 1 >"$tmp/abs.txt" 2>&1 || { echo "bench/ab --states failed:"; cat "$tmp/abs.txt"; fail=1; }
  grep -Eq '^(near|far|changed) pair \(cache-line round trip ' "$tmp/abs.txt" ||
    { echo "bench/ab --states: no state named:"; cat "$tmp/abs.txt"; fail=1; }
  out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --bind-to core "$bench" --mode b2b \
    --ops barrier --iters 5 --warmup 1 --rounds 1 --no-bound 2>&1)
  grep -Eq '^state: cache-line round trip [0-9.]+ us before the measurement, [0-9.]+ us after$' <<<"$out" ||
    { echo "osmp-bench --no-bound printed no state: line:"; echo "$out"; fail=1; }
fi
# bench/summary.py names the span of the runs' cache-line round trips and warns when the pair was near in some
# runs and far in others (a median over both describes neither).
mkdir -p "$tmp/sum"
python3 - "$tmp/sum" "$src/bench/summary.py" <<'PY' || fail=1
import json, os, subprocess, sys
d = sys.argv[1]
merged = {"processes": 2, "mpi": "Open MPI v4.1.4, package: test", "mode": "osu", "line_rt_us": 0.07,
          "results": [{"op": "allreduce", "bytes": 8, "osmp_us": 0.2, "mpi_us": 0.4, "bound_us": 0.1}]}
json.dump(merged, open(os.path.join(d, "openmpi-osu.json"), "w"))
def summary(rts):
    for k, rt in enumerate(rts):
        side = "osmp" if k % 2 else "mpi"
        before, after = rt if isinstance(rt, tuple) else (rt, None)
        run = {"line_rt_us": before} if after is None else {"line_rt_us": before, "line_rt_after_us": after}
        json.dump(run, open(os.path.join(d, f"openmpi-osu-{side}-{k // 2 + 1}.json"), "w"))
    return subprocess.run(["python3", sys.argv[2], "--out", d, os.path.join(d, "openmpi-osu.json")],
                          capture_output=True, text=True, check=True).stdout
out = summary([0.07, 0.08, 0.06, 0.09])
assert "(0.060-0.090 us over its 4 runs, before and after each)" in out and "WARNING" not in out, out
out = summary([0.07, 0.47, 0.06, 0.48])
assert "(0.060-0.480 us over its 4 runs" in out and "2 runs near" in out and "2 far, 0 changed" in out, out
# A run whose round trip after its measurement is on the other side of 0.3 us from the one before: changed.
out = summary([(0.07, 0.05), (0.06, 0.52), (0.08, 0.07), (0.06, 0.06)])
assert "(0.050-0.520 us over its 4 runs" in out and "3 runs near" in out and "0 far, 1 changed" in out, out
out = summary([(0.07, 0.05), (0.06, 0.08)])
assert "WARNING" not in out, out
PY
[ $fail = 0 ] && echo "bench-cli: ok"
exit $fail
