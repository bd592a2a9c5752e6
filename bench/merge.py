#!/usr/bin/env python3
"""Merge the osmp-bench --json files of one library and mode (osu, b2b or nb),
run alternately with libosmp_mpi preloaded (NAME-MODE-osmp-K.json) and without
(NAME-MODE-mpi-K.json), into one file: per operation and size the median over
the runs of the compared statistic (osu: average over ranks, as OSU prints;
b2b: maximum over ranks, IMB's t_max; nb: the pure communication time, average
over ranks, as OSU's osu_i<op>) for each side, and of the others (nb: overall,
compute, overlap %, blocking time and pure / blocking, each the median of the
runs' values).

usage: merge.py OUT.json RUN.json [RUN.json ...]
"""
import json
import statistics
import sys


def main():
    args = sys.argv[1:]
    if len(args) < 2 or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if args and args[0] in ("-h", "--help") else 2)
    out, paths = args[0], args[1:]
    sides = {"osmp": [], "mpi": []}
    for p in paths:
        who = p.rsplit("/", 1)[-1].rsplit("-", 2)[-2]
        if who not in sides:
            sys.exit(f"merge.py: {p}: name must end in -osmp-K.json or -mpi-K.json")
        with open(p) as f:
            sides[who].append(json.load(f))
    if not sides["osmp"] or not sides["mpi"]:
        sys.exit("merge.py: need runs with and without libosmp_mpi")
    if not all(r["preloaded"] for r in sides["osmp"]) or any(r["preloaded"] for r in sides["mpi"]):
        sys.exit("merge.py: libosmp_mpi was not loaded where it should be (or was where it should not)")
    first = sides["mpi"][0]
    mode = first["mode"]
    key = {"osu": "avg_us", "nb": "pure_us"}.get(mode, "max_us")
    others = (("overall_us", "compute_us", "overlap_pct", "blocking_us", "pure_over_blocking", "pure_max_us",
               "pure_min_us") if mode == "nb" else ("avg_us", "max_us", "min_us"))
    merged = {k: first[k] for k in ("processes", "mpi", "mode", "latency_us")}
    merged["line_rt_us"] = statistics.median(r["line_rt_us"] for r in sides["mpi"] + sides["osmp"])
    merged["runs"] = {who: len(runs) for who, runs in sides.items()}
    merged["compared"] = key
    merged["preloaded_seen"] = [r["preloaded"] for r in sides["osmp"]]
    results = []
    for row in first["results"]:
        def med(who, k):
            v = [x[k] for run in sides[who] for x in run["results"] if x["op"] == row["op"] and x["bytes"] == row["bytes"]]
            return statistics.median(v) if v else float("nan")
        r = {"op": row["op"], "bytes": row["bytes"], "osmp_us": med("osmp", key), "mpi_us": med("mpi", key),
             "bound_us": med("mpi", "bound_us")}
        for k in others:
            r["osmp_" + k] = med("osmp", k)
            r["mpi_" + k] = med("mpi", k)
        results.append(r)
    merged["results"] = results
    with open(out, "w") as f:
        json.dump(merged, f, indent=1)


if __name__ == "__main__":
    main()
