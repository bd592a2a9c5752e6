#!/usr/bin/env python3
"""Merge several osmp-bench --tune tables of one machine and MPI library into one:
a (operation, ranks, byte band) goes to MPI only where at least --votes of the
runs said so (default: a majority), so that one noisy run on a shared machine
does not send a band to the slower library. Output: the same format
(docs/mpi.md "Tune table"), adjacent bands with the same choice merged.

usage: tune-merge.py [--votes K] TABLE [TABLE ...] > MERGED
"""
import argparse
import sys

MAX = 1 << 62


def parse(path):
    rules = []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) != 5 or line[4] not in ("osmp", "mpi"):
            sys.exit(f"tune-merge.py: {path}:{n}: expected OPERATION MAX_RANKS MIN_BYTES MAX_BYTES osmp|mpi")
        op, ranks, lo, hi, choice = line
        rules.append((op, ranks, int(lo), MAX if hi == "max" else int(hi), choice == "mpi"))
    return rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--votes", type=int, default=0, help="runs that must say mpi (default: more than half)")
    ap.add_argument("tables", nargs="+")
    a = ap.parse_args()
    runs = [parse(p) for p in a.tables]
    votes = a.votes or len(runs) // 2 + 1
    keys = list(dict.fromkeys((r[0], r[1]) for run in runs for r in run))
    print("# OSMP tune table (docs/mpi.md \"Tune table\"): OPERATION MAX_RANKS MIN_BYTES MAX_BYTES osmp|mpi")
    print(f"# merged by bench/tune-merge.py from {len(runs)} runs: mpi where at least {votes} said so")
    for op, ranks in keys:
        cuts = sorted({r[2] for run in runs for r in run if (r[0], r[1]) == (op, ranks)} |
                      {r[3] + 1 for run in runs for r in run if (r[0], r[1]) == (op, ranks) and r[3] < MAX})
        bands = []
        for i, lo in enumerate(cuts):
            hi = cuts[i + 1] - 1 if i + 1 < len(cuts) else MAX
            n = sum(1 for run in runs for r in run if (r[0], r[1]) == (op, ranks) and r[2] <= lo and hi <= r[3] and r[4])
            mpi = n >= votes
            if bands and bands[-1][2] == mpi:
                bands[-1][1] = hi
            else:
                bands.append([lo, hi, mpi])
        for lo, hi, mpi in bands:
            print(f"{op:<22} {ranks:>4} {lo:>10} {'max' if hi == MAX else hi:>10} {'mpi' if mpi else 'osmp'}")


if __name__ == "__main__":
    main()
