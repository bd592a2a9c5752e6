#!/usr/bin/env python3
"""OSMP_MAP and MPI_Cart_create's reorder (tests/mpi/map-check.c), on this
machine's first two cores (logical 0 and 1; their PUs from osmp-topo).

  1. OSMP_MAP=1,0,1,0: rank r reports exactly the PUs of core [1,0,1,0][r]
     as its affinity right after MPI_Init.
  2. Cart_create(reorder=1) of a line of 4 ranks where ranks 0, 2 share core
     1 and ranks 1, 3 core 0: the line 0-1-2-3 crosses cores 3 times in
     rank order; the mapping puts grid positions {0,1} on one core and {2,3}
     on the other (one crossing, the optimum). With reorder=0, the world order.
     The same for the line declared with MPI_Dist_graph_create_adjacent, and
     new rank v reports vertex v's neighbours, v - 1 and v + 1.
  3. OSMP_MAP listing fewer cores than ranks, or a core this machine lacks:
     the job fails with one line naming the file and the problem.

usage: map-check.py OSMP_TOPO LAUNCH... PROGRAM   (LAUNCH ends with the rank count, 4)
"""
import json
import os
import subprocess
import sys
import tempfile

topo = sys.argv[1]
cmd = sys.argv[2:]
tree = json.loads(subprocess.run([topo, "--format", "json"], capture_output=True, text=True, check=True).stdout)
pus = {}


def walk(d):
    if d["kind"] == "core":
        pus[d["logical_index"]] = d["cpuset"]
    for c in d.get("children", []):
        walk(c)


walk(tree["tree"])
if len(pus) < 2:
    print("this machine has one core: nothing to check")
    sys.exit(0)
bad = 0


def run(mapping, args=()):
    with tempfile.NamedTemporaryFile("w", suffix=".map", delete=False) as f:
        f.write(mapping + "\n")
    try:
        env = dict(os.environ, OSMP_MAP=f.name)
        r = subprocess.run(cmd + list(args), env=env, capture_output=True, text=True, timeout=200)
        return r, f.name
    finally:
        pass


def parse(out):
    rows = {}
    for line in out.splitlines():
        w = line.split()
        if len(w) == 10 and w[0] == "rank":
            rows[int(w[1])] = (w[3], int(w[5]), int(w[7]), w[9])
    return rows


def expand(cpuset):
    out = []
    for part in cpuset.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return ",".join(map(str, out))


mapping = [1, 0, 1, 0]
for reorder in ("1", "0"):
    r, name = run(",".join(map(str, mapping)), [reorder])
    os.unlink(name)
    if r.returncode != 0:
        print("FAIL: run failed:", r.stderr)
        sys.exit(1)
    rows = parse(r.stdout)
    if sorted(rows) != [0, 1, 2, 3]:
        print("FAIL: output", r.stdout)
        sys.exit(1)
    for rank, (cpus, cart, dist, nbrs) in rows.items():
        want_nb = ",".join(str(x) for x in ([dist - 1] if dist > 0 else []) + ([dist + 1] if dist < 3 else []))
        if nbrs.replace("-1,", "").replace(",-1", "") != want_nb:
            print("FAIL: dist graph rank %d reports neighbours %s, expected %s" % (dist, nbrs, want_nb))
            bad = 1
        want = expand(pus[mapping[rank]])
        if cpus != want:
            print("FAIL: rank %d runs on PUs %s, OSMP_MAP says core %d (PUs %s)" % (rank, cpus, mapping[rank], want))
            bad = 1
    for col, what in ((1, "MPI_Cart_create"), (2, "MPI_Dist_graph_create_adjacent")):
        new = sorted(rows[k][col] for k in rows)
        if new != [0, 1, 2, 3]:
            print("FAIL: %s ranks %s" % (what, new))
            bad = 1
            continue
        if reorder == "0":
            if any(rows[k][col] != k for k in rows):
                print("FAIL: %s with reorder=0 changed the order: %s" % (what, rows))
                bad = 1
        else:
            core_of_pos = {rows[k][col]: mapping[k] for k in rows}
            crossings = sum(core_of_pos[p] != core_of_pos[p + 1] for p in range(3))
            if crossings != 1 or core_of_pos[0] != core_of_pos[1]:
                print("FAIL: %s with reorder=1 put positions 0-3 on cores %s (%d crossings, the optimum has 1)"
                      % (what, [core_of_pos[p] for p in range(4)], crossings))
                bad = 1

for mapping_text, why in (("0,1", "lists 2 cores for 4 ranks on this node"),
                          ("0,1,0,%d" % len(pus), "out of range")):
    r, name = run(mapping_text)
    os.unlink(name)
    lines = [l for l in r.stderr.splitlines() if "osmp-mpi: OSMP_MAP=" in l]
    if r.returncode == 0 or not lines or not all(why in l for l in lines):
        print("FAIL: OSMP_MAP=%s: exit %d, stderr %r (expected a line with %r)" % (mapping_text, r.returncode,
                                                                                   r.stderr[-500:], why))
        bad = 1
print("ok" if not bad else "FAIL")
sys.exit(bad)
