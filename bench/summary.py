#!/usr/bin/env python3
"""The markdown summary of bench/compare: per mode and MPI library, OSMP
(libosmp_mpi preloaded; side mode: OSMP's own calls) against the MPI library
alone, at the sizes applications care about, the ratios, the bound, the worst
ratio over every size, and the machine's load; nb mode (bench/compare --nb):
the nonblocking calls' pure communication time and overlap %, both sides.

usage: summary.py --out DIR [--warn TEXT] [--hogs N] MERGED.json [...]
"""
import argparse
import glob
import json
import math
import os


def lib_name(run):
    """'Open MPI v4.1.4, package ...' -> 'Open MPI 4.1.4'; 'MPICH Version: 4.0.2 ...' -> 'MPICH 4.0.2'."""
    s = run["mpi"].replace("Version:", "").split(",")[0].split()
    if s and s[0] == "Open":
        return " ".join(s[:2] + [s[2].lstrip("v")]) if len(s) > 2 else "Open MPI"
    return " ".join(s[:2]) if s else "MPI"


def nb_table(mine, sizes):
    """The nonblocking rows: per library OSMP's and MPI's pure time, overlap % and pure / blocking."""
    if not mine:
        return
    print("## Nonblocking collectives (OSU's osu_i<op>)\n")
    print("pure = MPI_I<op> posted and waited for at once; overall = posted, a dummy compute lasting about pure, "
          "MPI_Wait; overlap % = max(0, 100 (1 - (overall - compute) / pure)) (OSU's); average over ranks, median of "
          "the runs. pure / blocking: over the blocking MPI_<op> timed in the same run (target: at most 1.10). "
          "OSMP = libosmp_mpi preloaded: the MPI_I<op> calls it does not intercept go to the MPI library; then "
          "OSMP's pure and overlap columns measure the MPI library too, and its pure / blocking sets the MPI "
          "library's nonblocking call against OSMP's blocking one.\n")
    head, rule = "| operation | bytes |", "|---|---|"
    for r in mine:
        n = lib_name(r)
        head += (f" OSMP pure ({n}) | {n} pure | OSMP overlap % | {n} overlap % | OSMP pure / blocking |"
                 f" {n} pure / blocking |")
        rule += "---|---|---|---|---|---|"
    print(head)
    print(rule)
    ops = list(dict.fromkeys(x["op"] for x in mine[0]["results"]))
    for op in ops:
        for b in ([0] if op == "ibarrier" else sizes):
            rows = [[x for x in r["results"] if x["op"] == op and x["bytes"] == b] for r in mine]
            if not rows[0]:
                continue
            line = f"| {op} | {b} |"
            for row in rows:
                if row:
                    x = row[0]
                    line += (f" {x['osmp_us']:.2f} | {x['mpi_us']:.2f} | {x['osmp_overlap_pct']:.1f} |"
                             f" {x['mpi_overlap_pct']:.1f} | {x['osmp_pure_over_blocking']:.2f} |"
                             f" {x['mpi_pure_over_blocking']:.2f} |")
                else:
                    line += " | | | | | |"
            print(line)
    print()
    for r in mine:
        rows = r["results"]
        above = sum(1 for x in rows if x["osmp_pure_over_blocking"] > 1.1)
        print(f"- {lib_name(r)}: OSMP's pure / blocking above 1.10 in {above} of {len(rows)} (operation, size)")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--warn", default="")
    ap.add_argument("--hogs", type=int, default=0)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    runs = [json.load(open(p)) for p in a.runs]
    print(f"# OSMP vs the MPI library, {runs[0]['processes']} processes\n")
    cmd = os.path.join(a.out, "command.txt")
    if os.path.exists(cmd):
        print(f"Command: `{open(cmd).read().strip()}`\n")
    load = os.path.join(a.out, "load.txt")
    if os.path.exists(load):
        print("Machine: " + "; ".join(open(load).read().split("\n")).strip("; ") + "\n")
    if a.hogs:
        print(f"**Contention run: {a.hogs} CPU hogs (one per core) ran during the measurement.**\n")
    if a.warn:
        print(f"**{a.warn}**\n")
    # Each run's own round trips, before and after its measurement (LIB-MODE-osmp|mpi-K.json beside the merged
    # files): their spread says how steady the machine was.
    rts = []
    for path in sorted(glob.glob(os.path.join(a.out, "*-*-*-[0-9]*.json"))):
        try:
            run = json.load(open(path))
        except (OSError, ValueError):
            continue
        rts += [x for x in (run.get("line_rt_us"), run.get("line_rt_after_us")) if isinstance(x, (int, float)) and x > 0]
    span = (f" (median of the first comparison's runs; {min(rts):.3f}-{max(rts):.3f} us over every run, before "
            "and after each)" if rts else "")
    print(f"Cache-line round trip {runs[0]['line_rt_us']:.3f} us{span}. bound = one-way cache-line latency + the time "
          "one core takes to copy the bytes that must reach the busiest rank, just written by another core, into a "
          "hot buffer (measured per size in the same run).\n")
    modes = {"osu": "OSU mode: per-call latency, the library's own barrier between calls, average over ranks "
                    "(median of the runs); OSMP = the same binary with libosmp_mpi preloaded",
             "b2b": "Back-to-back mode (IMB): calls in a row, time per call, maximum over ranks (median of the runs); "
                    "OSMP = libosmp_mpi preloaded",
             "side": "Side mode: OSMP's calls and PMPI_ calls interleaved in one process, OSU timing, average over ranks"}
    pick = {"barrier": [0]}
    sizes = [8, 65536, 1048576]
    for mode, text in modes.items():
        mine = [r for r in runs if r["mode"] == mode]
        if not mine:
            continue
        print(f"## {text}\n")
        print("Latency in microseconds; ratio = OSMP / MPI (below 1: OSMP faster).\n")
        head, rule = "| operation | bytes | bound |", "|---|---|---|"
        for r in mine:
            n = lib_name(r)
            head += f" OSMP ({n}) | {n} | ratio | OSMP/bound |"
            rule += "---|---|---|---|"
        print(head)
        print(rule)
        ops = []
        for x in mine[0]["results"]:
            if x["op"] not in ops:
                ops.append(x["op"])
        for op in ops:
            for b in pick.get(op, sizes):
                rows = [[x for x in r["results"] if x["op"] == op and x["bytes"] == b] for r in mine]
                if not rows[0]:
                    continue
                line = f"| {op} | {b} | {rows[0][0]['bound_us']:.2f} |"
                for row in rows:
                    if row:
                        x = row[0]
                        rb = x["osmp_us"] / x["bound_us"] if x["bound_us"] > 0 else math.nan
                        line += f" {x['osmp_us']:.2f} | {x['mpi_us']:.2f} | {x['osmp_us'] / x['mpi_us']:.2f} | {rb:.1f} |"
                    else:
                        line += " | | | |"
                print(line)
        print("\nWorst ratio over every size measured:\n")
        for r in mine:
            worst = max(r["results"], key=lambda x: x["osmp_us"] / x["mpi_us"])
            above = sum(1 for x in r["results"] if x["osmp_us"] > x["mpi_us"])
            print(f"- {lib_name(r)}: {worst['osmp_us'] / worst['mpi_us']:.2f} ({worst['op']}, {worst['bytes']} bytes); "
                  f"{above} of {len(r['results'])} (operation, size) above 1.0")
        print()
    nb_table([r for r in runs if r["mode"] == "nb"], sizes)
    print(f"Full tables: {a.out}/*.txt; plots: {a.out}/*.png (latency per operation, ratio per mode)")


if __name__ == "__main__":
    main()
