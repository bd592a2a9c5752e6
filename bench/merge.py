#!/usr/bin/env python3
"""Merge the osmp-bench --json files of one library and mode (osu or b2b), run
alternately with libosmp_mpi preloaded (NAME-MODE-osmp-K.json) and without
(NAME-MODE-mpi-K.json), into one file: per operation and size the median over
the runs of the compared statistic (osu: average over ranks, as OSU prints;
b2b: maximum over ranks, IMB's t_max) for each side, and of the others.

usage: merge.py OUT.json RUN.json [RUN.json ...]
"""
import json
import statistics
import sys


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 else 2)
    out, paths = sys.argv[1], sys.argv[2:]
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
    key = "avg_us" if mode == "osu" else "max_us"
    merged = {k: first[k] for k in ("processes", "mpi", "mode", "line_rt_us", "latency_us")}
    merged["runs"] = len(sides["mpi"])
    merged["compared"] = key
    merged["preloaded_seen"] = [r["preloaded"] for r in sides["osmp"]]
    results = []
    for row in first["results"]:
        def med(who, k):
            v = [x[k] for run in sides[who] for x in run["results"] if x["op"] == row["op"] and x["bytes"] == row["bytes"]]
            return statistics.median(v) if v else float("nan")
        r = {"op": row["op"], "bytes": row["bytes"], "osmp_us": med("osmp", key), "mpi_us": med("mpi", key),
             "bound_us": med("mpi", "bound_us")}
        for k in ("avg_us", "max_us", "min_us"):
            r["osmp_" + k] = med("osmp", k)
            r["mpi_" + k] = med("mpi", k)
        results.append(r)
    merged["results"] = results
    with open(out, "w") as f:
        json.dump(merged, f, indent=1)


if __name__ == "__main__":
    main()
