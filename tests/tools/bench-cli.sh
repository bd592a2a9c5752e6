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
# --sizes 0:MAX (IMB's first size): every operation at 0 bytes too, reductions from 8 B on after it
mpirun -n 2 --oversubscribe "$bench" --mode osu --ops allreduce,allgatherv,gatherv --sizes 0:8 --iters 5 --warmup 1 \
  --rounds 1 --json "$tmp/zero.json" >"$tmp/zero.txt" 2>&1 || { echo "--sizes 0:8 failed:"; cat "$tmp/zero.txt"; fail=1; }
python3 - "$tmp/zero.json" <<'PY' || fail=1
import json, sys
got = [(x["op"], x["bytes"]) for x in json.load(open(sys.argv[1]))["results"]]
want = [("allreduce", 0), ("allreduce", 8)] + [(op, b) for op in ("gatherv", "allgatherv") for b in (0, 1, 2, 4, 8)]
assert sorted(got) == sorted(want), got
PY
err=$(mpirun -n 1 "$bench" --tune --sizes 0:8 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] && grep -q 'osmp-bench: --sizes must satisfy 0 <= MIN <= MAX <= 256M (--tune: 1 <= MIN)' <<<"$err" ||
  { echo "--tune --sizes 0:8 not refused: $rc $err"; fail=1; }
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
  # osmp-bench prints the cache-line round trip it timed before and after its measurement, also with --no-bound.
  out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -n 2 --bind-to core "$bench" --mode b2b \
    --ops barrier --iters 5 --warmup 1 --rounds 1 --no-bound 2>&1)
  grep -Eq '^state: cache-line round trip [0-9.]+ us before the measurement, [0-9.]+ us after$' <<<"$out" ||
    { echo "osmp-bench --no-bound printed no state: line:"; echo "$out"; fail=1; }
fi
# bench/merge.py merges every run of each side (the median per operation and size); bench/summary.py gives
# the spread of the round trips the runs timed.
mkdir -p "$tmp/sum"
python3 - "$tmp/sum" "$src/bench" <<'PY' || fail=1
import glob, json, os, subprocess, sys
d, bench = sys.argv[1], sys.argv[2]
def runs(osmp, mpi, *flags):
    """osmp, mpi: per run (round trip before, after, allreduce latency); returns the summary and the merged file."""
    for f in glob.glob(os.path.join(d, "*.json")):
        os.remove(f)
    paths = []
    for who, rows in (("osmp", osmp), ("mpi", mpi)):
        for k, (before, after, us) in enumerate(rows):
            run = {"processes": 2, "mpi": "Open MPI v4.1.4, package: test", "mode": "osu", "preloaded": who == "osmp",
                   "line_rt_us": before, "line_rt_after_us": after, "latency_us": before / 2,
                   "results": [{"op": "allreduce", "bytes": 8, "avg_us": us, "max_us": us + 1, "min_us": us,
                                "bound_us": 0.1}]}
            paths.append(os.path.join(d, f"openmpi-osu-{who}-{k + 1}.json"))
            json.dump(run, open(paths[-1], "w"))
    merged = os.path.join(d, "openmpi-osu.json")
    subprocess.run(["python3", os.path.join(bench, "merge.py"), *flags, merged] + paths, check=True)
    out = subprocess.run(["python3", os.path.join(bench, "summary.py"), "--out", d, merged], capture_output=True,
                         text=True, check=True).stdout
    return out, json.load(open(merged))
out, m = runs([(0.07, 0.05, 1.0), (0.06, 0.08, 3.0)], [(0.08, 0.07, 2.0), (0.06, 0.06, 4.0)])
assert m["runs"] == {"osmp": 2, "mpi": 2} and m["results"][0]["osmp_us"] == 2.0, m
assert "(median of the first comparison's runs; 0.050-0.080 us over every run" in out, out
# Runs whose round trips differ are merged alike: every run read.
out, m = runs([(0.07, 0.05, 1.0), (0.45, 0.50, 9.0), (0.06, 0.08, 3.0)],
              [(0.08, 0.07, 2.0), (0.06, 0.52, 7.0), (0.06, 0.06, 4.0)])
assert m["runs"] == {"osmp": 3, "mpi": 3}, m
assert (m["results"][0]["osmp_us"], m["results"][0]["mpi_us"]) == (3.0, 4.0), m
assert "0.050-0.520 us over every run" in out and "WARNING" not in out, out
PY
[ $fail = 0 ] && echo "bench-cli: ok"
exit $fail
