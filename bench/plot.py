#!/usr/bin/env python3
"""Draw osmp-bench results: latency versus message size per operation, log-log,
for OSMP, each MPI library and the physical bound, one PNG per operation.

usage: plot.py --out DIR RESULT.json [RESULT.json ...]
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the PNG files")
    ap.add_argument("results", nargs="+", help="osmp-bench --json files")
    args = ap.parse_args()
    runs = []
    for path in args.results:
        with open(path) as f:
            runs.append(json.load(f))
    ops = []
    for run in runs:
        for r in run["results"]:
            if r["op"] not in ops:
                ops.append(r["op"])
    os.makedirs(args.out, exist_ok=True)
    for op in ops:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, run in enumerate(runs):
            rows = [r for r in run["results"] if r["op"] == op]
            x = [max(r["bytes"], 1) for r in rows]
            name = run["mpi"].split(",")[0]
            if i == 0:
                ax.plot(x, [r["bound_us"] for r in rows], "k:", label="physical bound")
            ax.plot(x, [r["osmp_us"] for r in rows], "o-", label=f"OSMP (run under {name})")
            ax.plot(x, [r["mpi_us"] for r in rows], "s--", label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("latency (us)")
        ax.set_title(f"{op}, {runs[0]['processes']} processes")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, f"{op}.png"), dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    main()
