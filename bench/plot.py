#!/usr/bin/env python3
"""Draw osmp-bench results (bench/compare's merged JSON, or osmp-bench --mode
side --json files): per mode and operation, latency versus message size for
OSMP and each MPI library (named in the legend) and the bound, log-log
(MODE-OP.png; an operation without bytes, barrier, as bars); and per mode the
ratio OSMP / MPI of every operation versus size (MODE-ratio.png).

usage: plot.py --out DIR RESULT.json [RESULT.json ...]
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from summary import lib_name  # noqa: E402

WHAT = {"osu": "per call (OSU), avg over ranks", "b2b": "back to back (IMB), max over ranks",
        "side": "side by side in one process (OSU timing)",
        "nb": "nonblocking (osu_i<op>), pure time"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the PNG files")
    ap.add_argument("results", nargs="+", help="merged or osmp-bench --json files")
    args = ap.parse_args()
    runs = []
    for path in args.results:
        with open(path) as f:
            r = json.load(f)
        r.setdefault("mode", "side")
        runs.append(r)
    os.makedirs(args.out, exist_ok=True)
    for mode in dict.fromkeys(r["mode"] for r in runs):
        mine = [r for r in runs if r["mode"] == mode]
        osmp_label = "OSMP (libosmp_mpi preloaded under {})" if mode != "side" else "OSMP (run under {})"
        ops = list(dict.fromkeys(x["op"] for r in mine for x in r["results"]))
        for op in ops:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            rows0 = [x for x in mine[0]["results"] if x["op"] == op]
            if all(x["bytes"] == 0 for x in rows0):  # barrier: one size, bars
                labels, values = ["bound"], [rows0[0]["bound_us"]]
                for r in mine:
                    x = next(x for x in r["results"] if x["op"] == op)
                    labels += [osmp_label.format(lib_name(r)).replace(" (", "\n("), lib_name(r)]
                    values += [x["osmp_us"], x["mpi_us"]]
                ax.bar(range(len(values)), values, color=["0.6"] + ["C0", "C1", "C2", "C3"][: len(values) - 1])
                ax.set_xticks(range(len(values)))
                ax.set_xticklabels(labels, fontsize=7)
                ax.set_ylabel("latency (us)")
            else:
                for i, r in enumerate(mine):
                    rows = [x for x in r["results"] if x["op"] == op]
                    x = [max(x["bytes"], 1) for x in rows]
                    if i == 0:
                        ax.plot(x, [y["bound_us"] for y in rows], "k:", label="bound (cache line + cross-core copy)")
                    ax.plot(x, [y["osmp_us"] for y in rows], "o-", label=osmp_label.format(lib_name(r)))
                    ax.plot(x, [y["mpi_us"] for y in rows], "s--", label=lib_name(r))
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("bytes per rank")
                ax.set_ylabel("latency (us)")
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=8)
            ax.set_title(f"{op}, {mine[0]['processes']} processes, {WHAT.get(mode, mode)}")
            fig.tight_layout()
            fig.savefig(os.path.join(args.out, f"{mode}-{op}.png"), dpi=100)
            plt.close(fig)
        fig, ax = plt.subplots(figsize=(8, 5))
        xmin = min([x["bytes"] for r in mine for x in r["results"] if x["bytes"] > 0] or [1])
        for r in mine:
            style = "-" if r is mine[0] else "--"
            for op in ops:
                rows = [x for x in r["results"] if x["op"] == op and x["bytes"] > 0]
                if rows:
                    ax.plot([x["bytes"] for x in rows], [x["osmp_us"] / x["mpi_us"] for x in rows], style, marker=".",
                            label=f"{op} ({lib_name(r)})")
                else:  # barrier: a horizontal mark at the smallest size
                    x = next(x for x in r["results"] if x["op"] == op)
                    ax.axhline(x["osmp_us"] / x["mpi_us"], ls=":", lw=1, color="k" if r is mine[0] else "0.5")
                    ax.annotate(f"barrier ({lib_name(r)})", (xmin, x["osmp_us"] / x["mpi_us"]), fontsize=7)
        ax.axhline(1.0, color="r", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel("OSMP / MPI (below 1: OSMP faster)")
        ax.set_title(f"ratio, {mine[0]['processes']} processes, {WHAT.get(mode, mode)}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, f"{mode}-ratio.png"), dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    main()
