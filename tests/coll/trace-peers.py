#!/usr/bin/env python3
"""Distinct participants each rank received payload from, per call of a transfer trace (OSMP_TRACE=PREFIX).

    trace-peers.py PREFIX [--max-sources N] [--cores-per-domain K]

Prints, per call, the operation and for the destination with the most distinct sources (itself included, as
the trace counts copies within a participant's own memory) that number, the source read by the most distinct
participants, and the bytes that crossed between ranks (with --cores-per-domain K also those that crossed
between domains of K consecutive logical cores, e.g. packages). With --max-sources N, exits 1 if a gather's
root (its busiest destination) hears from more than N.
"""
import glob
import json
import sys
from collections import defaultdict


def main():
    prefix = sys.argv[1]
    limit = int(sys.argv[sys.argv.index("--max-sources") + 1]) if "--max-sources" in sys.argv else None
    per = int(sys.argv[sys.argv.index("--cores-per-domain") + 1]) if "--cores-per-domain" in sys.argv else None
    sources = defaultdict(lambda: defaultdict(set))  # call -> dst -> {src}
    readers = defaultdict(lambda: defaultdict(set))  # call -> src -> {dst}
    ops, cross, far, core = {}, defaultdict(int), defaultdict(int), {}
    recs = []
    for path in glob.glob(prefix + ".*.jsonl"):
        with open(path) as f:
            recs += [json.loads(line) for line in f]
    for rec in recs:
        if rec.get("kind") == "team":
            core[rec["rank"]] = rec["core"]
    for rec in recs:
        if rec.get("kind") != "copy":
            continue
        call = rec["call"]
        ops[call] = rec["op"]
        sources[call][rec["dst"]].add(rec["src"])
        readers[call][rec["src"]].add(rec["dst"])
        if rec["src"] != rec["dst"]:
            cross[call] += rec["n"]
        if per and core[rec["src"]] // per != core[rec["dst"]] // per:
            far[call] += rec["n"]
    ok = True
    for call in sorted(sources):
        dst, srcs = max(sources[call].items(), key=lambda kv: (len(kv[1]), -kv[0]))
        src, dsts = max(readers[call].items(), key=lambda kv: (len(kv[1]), -kv[0]))
        print(f"call {call} {ops[call]}: rank {dst} received from {len(srcs)} distinct participants "
              f"(itself included), rank {src} was read by {len(dsts)}; {cross[call]} bytes between participants"
              + (f", {far[call]} between domains" if per else ""))
        if limit is not None and ops[call] == "gather" and len(srcs) > limit:
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
