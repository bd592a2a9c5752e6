#!/usr/bin/env python3
"""Sum a transfer trace (OSMP_TRACE=PREFIX) per call: bytes copied between
participants on different packages, and the most input bytes one participant
combined. Packages come from the topology the team was planned on (hwloc-calc).

usage: trace-check.py PREFIX TOPOLOGY.xml [--max-cross BYTES] [--max-reduce BYTES]
Exit status 1 if a call exceeds a given bound."""
import glob, json, subprocess, sys
from collections import defaultdict

prefix, xml = sys.argv[1], sys.argv[2]
bounds = dict(zip(sys.argv[3::2], map(float, sys.argv[4::2])))
core_of, calls = {}, defaultdict(lambda: {"op": "", "cross": 0, "copied": 0, "reduce": defaultdict(int)})
for path in glob.glob(prefix + ".*.jsonl"):
    rank = None
    for line in open(path):
        rec = json.loads(line)
        if rec.get("kind") == "team":
            rank = rec["rank"]
            core_of[rank] = rec["core"]
            continue
        c = calls[rec["call"]]
        c["op"] = rec["op"]
        if rec["kind"] == "copy":
            c.setdefault("pairs", []).append((rec["src"], rec["dst"], rec["n"]))
        elif rec["kind"] == "reduce":
            c["reduce"][rank] += rec["n"]
package = {}
for r, core in core_of.items():
    out = subprocess.run(["hwloc-calc", "--if", "xml", "-i", xml, "core:%d" % core, "--intersect", "package"],
                         capture_output=True, text=True, check=True).stdout.strip()
    package[r] = int(out)
status = 0
MiB = 1 << 20
for k in sorted(calls):
    c = calls[k]
    for s, d, n in c.get("pairs", []):
        c["copied"] += n
        if package[s] != package[d]:
            c["cross"] += n
    worst = max(c["reduce"].items(), key=lambda x: x[1], default=(-1, 0))
    print("call %d %s: %d participants, copied %.3f MiB, across packages %.3f MiB, most combined %.3f MiB (rank %d)"
          % (k, c["op"], len(core_of), c["copied"] / MiB, c["cross"] / MiB, worst[1] / MiB, worst[0]))
    if c["cross"] > bounds.get("--max-cross", float("inf")) or worst[1] > bounds.get("--max-reduce", float("inf")):
        print("  exceeds a bound")
        status = 1
sys.exit(status)
