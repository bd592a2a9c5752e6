#!/usr/bin/env python3
"""osmp-map's output formats parsed back (ctest tool.map-formats).

For several machines, matrices, core lists and algorithms: every format names
the same rank -> core permutation onto the given cores (rankfile: logical
cores; hydra and Slurm: the OS index of each core's first PU, read from
osmp-topo's tree); the json cost equals the cost recomputed here from
osmp-topo's distance matrix, and is at most each baseline's. Then the rankfile
for this machine's cores is run by Open MPI's mpirun, which must bind each rank
where the file says.

usage: map-formats.py OSMP_MAP OSMP_TOPO TOPOLOGIES_DIR
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

MAP, TOPO, T = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "bench", "mapping"))
import patterns  # noqa: E402

failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("command failed (%d): %s\n%s" % (r.returncode, " ".join(args), r.stderr))
    return r.stdout


def pu_of_cores(machine):
    """logical core -> OS index of its first PU, from osmp-topo's json tree"""
    tree = json.loads(run([TOPO] + machine + ["--format", "json"]))["tree"]
    out = {}

    def walk(d):
        if d["kind"] == "core":
            out[d["logical_index"]] = int(d["cpuset"].split(",")[0].split("-")[0])
        for c in d.get("children", []):
            walk(c)

    walk(tree)
    return out


def check(machine, mat, n, cores, alg):
    name = "%s %s n=%d cores=%s %s" % (" ".join(machine), os.path.basename(mat), n, cores, alg)
    base = [MAP, "--matrix", mat] + machine + ["--algorithm", alg] + (["--cores", cores] if cores else [])
    got = {}
    got["cores"] = [int(c) for c in run(base + ["--format", "cores"]).strip().split(",")]
    rf = run(base + ["--format", "rankfile", "--host", "nodeA"]).splitlines()
    perm = {}
    for line in rf:
        m = re.fullmatch(r"rank (\d+)=nodeA slot=(\d+)", line)
        if not m:
            fail("%s: rankfile line %r" % (name, line))
            continue
        perm[int(m.group(1))] = int(m.group(2))
    got["rankfile"] = [perm.get(r, -1) for r in range(len(rf))]
    pu = pu_of_cores(machine)
    core_of_pu = {p: c for c, p in pu.items()}
    for fmt, prefix in (("hydra", "-bind-to user:"), ("slurm", "--cpu-bind=map_cpu:")):
        line = run(base + ["--format", fmt]).strip()
        if not line.startswith(prefix):
            fail("%s: %s output %r" % (name, fmt, line))
            continue
        got[fmt] = [core_of_pu.get(int(p), -1) for p in line[len(prefix):].split(",")]
    j = json.loads(run(base + ["--format", "json"]))
    got["json"] = j["cores"]
    for fmt, v in got.items():
        if v != got["cores"]:
            fail("%s: %s gives %s, cores format %s" % (name, fmt, v, got["cores"]))
    want_cores = expand(cores) if cores else sorted(pu)
    v = got["cores"]
    if len(v) != n or len(set(v)) != n or not set(v) <= set(want_cores):
        fail("%s: %s is not %d distinct cores of %s" % (name, v, n, want_cores))
    # cost recomputed from osmp-topo's distance ladder
    d = json.loads(run([TOPO] + machine + ["--cores", ",".join(map(str, v)), "--show", "distances",
                                           "--format", "json"]))["distances"]
    m = [[float(x) for x in line.split()] for line in open(mat) if line.strip()]
    cost = sum(m[i][k] * d[i][k] for i in range(n) for k in range(n) if i != k)
    if abs(cost - j["cost"]) > 1e-6 * max(1, cost):
        fail("%s: json cost %s, recomputed %s" % (name, j["cost"], cost))
    if set(j["baselines"]) != {"packed", "round_robin", "design1", "design2"}:
        fail("%s: baselines %s" % (name, j["baselines"]))
    if alg == "auto":
        for b, c in j["baselines"].items():
            if j["cost"] > c + 1e-9:
                fail("%s: auto %s dearer than %s %s" % (name, j["cost"], b, c))


def expand(lst):
    out = []
    for part in lst.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


tmp = tempfile.mkdtemp()
try:
    def mat(pattern, n, b):
        p = os.path.join(tmp, "%s-%d.mat" % (pattern, n))
        with open(p, "w") as f:
            for row in patterns.matrix(pattern, n, b):
                f.write(" ".join(map(str, row)) + " \n")
        return p

    cases = [
        (["--synthetic", "pack:2 core:4 pu:2"], mat("ring", 6, 10), 6, "0,2,4,6,7,5,3", "auto"),
        (["--synthetic", "pack:2 l3:2 core:2 pu:1"], mat("stencil2d", 8, 1000), 8, None, "design1"),
        (["--input", T + "/amd-milan-2x64.xml"], mat("stencil3d", 24, 4096), 24, "0-15,64-79", "auto"),
        (["--input", T + "/intel-cascadelake-2x20-smt.xml"], mat("subgroups", 16, 512), 16, None, "design2"),
        (["--input", T + "/ibm-power7-64c-smt4.xml"], mat("cg", 32, 2048), 32, None, "auto"),
        (["--input", T + "/kunpeng920-2x64-clusters.xml"], mat("cg", 16, 100), 16, "8-31", "round_robin"),
    ]
    for c in cases:
        check(*c)

    # The rankfile on this machine: Open MPI binds each rank where it says.
    mpirun = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
    ncores = len(pu_of_cores([]))
    if mpirun and ncores >= 2:
        p = os.path.join(tmp, "pair.mat")
        with open(p, "w") as f:
            f.write("0 5 \n9 0 \n")
        rf = os.path.join(tmp, "rankfile")
        with open(rf, "w") as f:
            f.write(run([MAP, "--matrix", p, "--cores", "1,0", "--format", "rankfile"]))
        cores = [int(l.split("slot=")[1]) for l in open(rf)]
        r = subprocess.run([mpirun, "--rankfile", rf, "-n", "2", "sh", "-c",
                            "echo $OMPI_COMM_WORLD_RANK $(taskset -cp $$ | sed 's/.*: //')"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail("mpirun --rankfile failed: %s" % r.stderr.strip()[-400:])
        else:
            pu = pu_of_cores([])
            seen = dict(l.split() for l in r.stdout.splitlines() if l.strip())
            for rank in range(2):
                if seen.get(str(rank)) != str(pu[cores[rank]]):
                    fail("mpirun --rankfile: rank %d bound to %s, the rankfile says core %d (PU %d)"
                         % (rank, seen.get(str(rank)), cores[rank], pu[cores[rank]]))
    else:
        print("no mpirun or fewer than 2 cores: rankfile run skipped")
finally:
    shutil.rmtree(tmp)
print("failures:", failures)
sys.exit(1 if failures else 0)
