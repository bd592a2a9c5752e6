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
for o in --mode --ops --sizes --iters --warmup --rounds --nb-tests --check --no-bound --alloc --json --quick --help; do
  grep -q -- "^  $o " <<<"$help" || { echo "osmp-bench --help does not explain $o"; fail=1; }
done
err=$(mpirun -n 1 "$bench" --frobnicate 2>&1 >/dev/null); rc=$?
grep -q 'osmp-bench: unknown option "--frobnicate"' <<<"$err" || { echo "bad option not named: $err"; fail=1; }
err=$(mpirun -n 1 "$bench" --mode fast 2>&1 >/dev/null)
grep -q 'osmp-bench: bad --mode "fast" (osu, b2b, side or nb)' <<<"$err" || { echo "bad mode not named: $err"; fail=1; }
err=$(mpirun -n 1 "$bench" --ops iallreduce 2>&1 >/dev/null)
grep -q 'osmp-bench: "iallreduce": a nonblocking collective, timed by --mode nb' <<<"$err" || { echo "i-name outside nb: $err"; fail=1; }
err=$(mpirun -n 1 "$bench" --nb-tests 2 2>&1 >/dev/null)
grep -q 'osmp-bench: --nb-tests needs --mode nb' <<<"$err" || { echo "--nb-tests outside nb: $err"; fail=1; }
err=$(mpirun -n 1 "$bench" --alloc huge 2>&1 >/dev/null)
grep -q 'osmp-bench: bad --alloc "huge" (malloc, mpi or osmp)' <<<"$err" || { echo "bad alloc not named: $err"; fail=1; }
# osmp_alloc buffers, both libraries on them, results compared
OSMP_SINGLE_COPY_MIN=0 mpirun -n 2 --oversubscribe "$bench" --mode side --check --alloc osmp --ops bcast,gather,alltoall \
  --sizes 4K:8K --iters 5 --warmup 1 --rounds 1 --no-bound >"$tmp/alloc.txt" 2>&1 ||
  { echo "--alloc osmp --check failed:"; cat "$tmp/alloc.txt"; fail=1; }
for mode in osu b2b side nb; do
  mpirun -n 2 --oversubscribe "$bench" --mode $mode --ops barrier,allreduce --sizes 8:16 --iters 5 --warmup 1 --rounds 1 \
    --json "$tmp/$mode.json" >"$tmp/$mode.txt" 2>&1 || { echo "mode $mode failed:"; cat "$tmp/$mode.txt"; fail=1; continue; }
  python3 - "$tmp/$mode.json" "$mode" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
mode = sys.argv[2]
keys = {"side": {"osmp_us", "mpi_us", "bound_us"},
        "nb": {"pure_us", "overall_us", "compute_us", "overlap_pct", "blocking_us", "pure_over_blocking", "post_us",
               "wait_us", "test_us", "bound_us"}}.get(mode, {"avg_us", "max_us", "min_us", "bound_us"})
got = [(x["op"], x["bytes"]) for x in r["results"]]
i = "i" if mode == "nb" else ""  # nb mode names the nonblocking calls
assert r["mode"] == mode and got == [(i + "barrier", 0), (i + "allreduce", 8), (i + "allreduce", 16)], got
assert all(keys <= set(x) and x["bound_us"] > 0 for x in r["results"]), r["results"]
for x in r["results"] if mode == "nb" else []:
    # OSU's overlap from the numbers printed beside it (4 decimals; overlap to 2), and pure / blocking
    want = max(0.0, 100 * (1 - (x["overall_us"] - x["compute_us"]) / x["pure_us"]))
    assert abs(x["overlap_pct"] - want) < 0.1, (x, want)
    assert abs(x["pure_over_blocking"] - x["pure_us"] / x["blocking_us"]) < 1e-3 * x["pure_over_blocking"] + 1e-4, x
    assert x["pure_us"] > 0 and x["blocking_us"] > 0 and x["test_us"] == 0, x
    # the compute is calibrated to last this rank's pure time (plus the clock reads around it)
    assert x["compute_us"] >= 0.9 * x["pure_us"], x
PY
done
# nb: the i-names, the vector variants, MPI_Test calls during the compute (their time reported, left out of compute).
# One rank: the nonblocking call is local work (post and wait are all of its pure time), nothing to overlap with.
mpirun -n 1 "$bench" --mode nb --ops ibarrier,igatherv,ialltoallv,reduce_scatter --sizes 64 --iters 50 --warmup 5 \
  --rounds 5 --nb-tests 3 --json "$tmp/nb1.json" >"$tmp/nb1.txt" 2>&1 || { echo "nb, 1 rank failed:"; cat "$tmp/nb1.txt"; fail=1; }
python3 - "$tmp/nb1.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
got = [(x["op"], x["bytes"]) for x in r["results"]]
assert r["nb_tests"] == 3 and got == [("ibarrier", 0), ("igatherv", 64), ("ialltoallv", 64), ("ireduce_scatter", 64)], got
assert all(x["test_us"] > 0 for x in r["results"]), r["results"]
bar = r["results"][0]
assert bar["overlap_pct"] < 50, bar  # ~0: overall - compute = post + wait = pure
PY
# --sizes 0:MAX (IMB's first size): every operation at 0 bytes too, reductions from 8 B on after it
mpirun -n 2 --oversubscribe "$bench" --mode osu --ops allreduce,allgatherv,gatherv --sizes 0:8 --iters 5 --warmup 1 \
  --rounds 1 --json "$tmp/zero.json" >"$tmp/zero.txt" 2>&1 || { echo "--sizes 0:8 failed:"; cat "$tmp/zero.txt"; fail=1; }
python3 - "$tmp/zero.json" <<'PY' || fail=1
import json, sys
got = [(x["op"], x["bytes"]) for x in json.load(open(sys.argv[1]))["results"]]
want = [("allreduce", 0), ("allreduce", 8)] + [(op, b) for op in ("gatherv", "allgatherv") for b in (0, 1, 2, 4, 8)]
assert sorted(got) == sorted(want), got
PY
help=$("$src/bench/compare" --help); rc=$?
[ "$rc" = 0 ] || { echo "bench/compare --help: exit $rc"; fail=1; }
for o in -n --modes --runs --nb --mpi --hog --quick --placement --help --ops; do
  grep -q -- "^  $o" <<<"$help" || { echo "bench/compare --help does not explain $o"; fail=1; }
done
err=$("$src/bench/compare" --frobnicate 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q 'unknown option "--frobnicate"' <<<"$err" || { echo "compare bad option: $rc $err"; fail=1; }
err=$("$src/bench/compare" --modes osu,nb 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q 'the nonblocking rows come with --nb' <<<"$err" || { echo "compare --modes nb: $rc $err"; fail=1; }
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
# nb mode (bench/compare --nb): the pure time is compared; overlap % and pure / blocking are medians of the runs.
for f in glob.glob(os.path.join(d, "*.json")):
    os.remove(f)
paths = []
for who, runs_ in (("osmp", [(1.0, 10.0, 1.1), (3.0, 30.0, 1.3)]), ("mpi", [(2.0, 20.0, 1.2), (4.0, 40.0, 1.0)])):
    for k, (pure, ovl, ratio) in enumerate(runs_):
        rows = [{"op": "iallreduce", "bytes": 8, "pure_us": pure, "overall_us": 2 * pure, "compute_us": pure,
                 "overlap_pct": ovl, "blocking_us": pure / ratio, "pure_over_blocking": ratio, "pure_max_us": pure,
                 "pure_min_us": pure, "post_us": 0.1, "wait_us": 0.1, "test_us": 0, "bound_us": 0.1},
                {"op": "ibarrier", "bytes": 0, "pure_us": pure, "overall_us": 2 * pure, "compute_us": pure,
                 "overlap_pct": 0, "blocking_us": pure, "pure_over_blocking": 1.0, "pure_max_us": pure,
                 "pure_min_us": pure, "post_us": 0.1, "wait_us": 0.1, "test_us": 0, "bound_us": 0.05}]
        run = {"processes": 2, "mpi": "MPICH Version: 4.0.2", "mode": "nb", "preloaded": who == "osmp",
               "nb_tests": 0, "line_rt_us": 0.07, "line_rt_after_us": 0.07, "latency_us": 0.035, "results": rows}
        paths.append(os.path.join(d, f"mpich-nb-{who}-{k + 1}.json"))
        json.dump(run, open(paths[-1], "w"))
merged = os.path.join(d, "mpich-nb.json")
subprocess.run(["python3", os.path.join(bench, "merge.py"), merged] + paths, check=True)
m = json.load(open(merged))
x = m["results"][0]
assert m["compared"] == "pure_us" and (x["osmp_us"], x["mpi_us"]) == (2.0, 3.0), m
assert (x["osmp_overlap_pct"], x["mpi_overlap_pct"]) == (20.0, 30.0) and abs(x["osmp_pure_over_blocking"] - 1.2) < 1e-9, x
out = subprocess.run(["python3", os.path.join(bench, "summary.py"), "--out", d, merged], capture_output=True,
                     text=True, check=True).stdout
assert "## Nonblocking collectives" in out, out
assert "| iallreduce | 8 | 2.00 | 3.00 | 20.0 | 30.0 | 1.20 | 1.10 |" in out, out
assert "| ibarrier | 0 | 2.00 | 3.00 | 0.0 | 0.0 | 1.00 | 1.00 |" in out, out
assert "OSMP's pure / blocking above 1.10 in 1 of 2" in out, out
PY
[ $fail = 0 ] && echo "bench-cli: ok"
exit $fail
