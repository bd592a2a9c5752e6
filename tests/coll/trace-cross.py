#!/usr/bin/env python3
"""Bytes that the calls of a transfer trace (OSMP_TRACE=PREFIX) move across the
boundaries of one kind of domain.

    trace-cross.py TREE.json PREFIX [--kind package] [--expect OP:BYTES ...] [--most OP:BYTES ...]
                   [--once OP:BYTES ...]

TREE.json is `osmp-topo --format json` of the topology the team planned with
(the same loader as the runtime, so the logical core indices agree). Each trace
line names team ranks; the team lines give each rank's core, the tree each
core's domain. Per call it prints the op, the bytes copied between ranks, the
bytes that crossed a boundary and over how many (src, dst) pairs, and what each
rank received from the others. The checks (exit 1 when one fails):
  --expect OP:BYTES  the OP call moved exactly BYTES across boundaries
  --most OP:BYTES    at most BYTES
  --once OP:BYTES    every rank but one (the root) received exactly BYTES from the others
"""
import glob
import json
import sys
from collections import defaultdict


def domains_of(tree, kind):
    """Logical core -> logical index of its domain of this kind."""
    out = {}

    def walk(node):
        if node["kind"] == kind:
            lo, hi = node["cores"]
            for c in range(lo, hi + 1):
                out[c] = node["logical_index"]
        for ch in node.get("children", []):
            walk(ch)

    walk(tree["tree"])
    return out


def main(argv):
    args, checks, kind = [], [], "package"
    i = 0
    while i < len(argv):
        if argv[i] == "--kind":
            kind = argv[i + 1]
            i += 2
        elif argv[i] in ("--expect", "--most", "--once"):
            op, _, n = argv[i + 1].partition(":")
            checks.append((argv[i], op, int(n)))
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        dom = domains_of(json.load(f), kind)
    if not dom:
        print(f"trace-cross: the topology has no {kind} domains", file=sys.stderr)
        return 2
    core, copies = {}, []
    for path in glob.glob(glob.escape(args[1]) + ".*.jsonl"):
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                if rec.get("kind") == "team":
                    core[rec["rank"]] = rec["core"]
                elif rec.get("kind") == "copy":
                    copies.append(rec)
    calls = {}
    for rec in copies:
        c = calls.setdefault(rec["call"], {"op": rec["op"], "moved": 0, "cross": 0, "pairs": set(),
                                           "received": defaultdict(int)})
        if rec["src"] == rec["dst"]:
            continue
        c["moved"] += rec["n"]
        c["received"][rec["dst"]] += rec["n"]
        if dom[core[rec["src"]]] != dom[core[rec["dst"]]]:
            c["cross"] += rec["n"]
            c["pairs"].add((rec["src"], rec["dst"]))
    n = len(core)
    ok = True
    for k in sorted(calls):
        c = calls[k]
        got = [c["received"][r] for r in range(n)]
        print(f"call {k} {c['op']}: {c['moved']} B between ranks, {c['cross']} B across {kind} boundaries "
              f"over {len(c['pairs'])} (src, dst) pairs; received per rank {min(got)}..{max(got)} B")
        for check, op, want in checks:
            if op != c["op"]:
                continue
            if check == "--expect" and c["cross"] != want:
                print(f"  FAIL: expected {want} B across {kind} boundaries", file=sys.stderr)
                ok = False
            elif check == "--most" and c["cross"] > want:
                print(f"  FAIL: expected at most {want} B across {kind} boundaries", file=sys.stderr)
                ok = False
            elif check == "--once" and sorted(got) != [0] + [want] * (n - 1):
                print(f"  FAIL: expected every rank but the root to receive {want} B once", file=sys.stderr)
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
