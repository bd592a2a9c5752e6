#!/usr/bin/env python3
"""Path tests: run one collective under osmp-run with OSMP_TRACE, read the trace
through `osmp-topo --show traffic`, and assert what the runtime really moved.

    trace-check.py OSMP_RUN OSMP_TOPO TRACE_RUN TOPOLOGIES_DIR CASE

A case fixes a machine, a placement, an operation and a size, and checks exact
byte counts across packages, who received what, how many participants a root
heard from, and which algorithm `auto` chose. Exit status 0 when every check of
the case holds; the first failure prints the numbers and exits 1.
"""
import json
import os
import subprocess
import sys
import tempfile

MIB = 1 << 20

# The 48-core machine of Ma et al. (Cluster 2011): 8 six-core Opterons, each
# package one NUMA node and one L3.
OPTERON48 = ["--synthetic", "pack:8 numa:1 l3:1 core:6 pu:1"]
# The same with a given L3 size (the exchanges stream their own block by it).
def opteron48_l3(nbytes):
    return ["--synthetic", f"pack:8 numa:1 l3:1(size={nbytes}) core:6 pu:1"]


# Their cross-socket binding: rank r on core (r mod 8) * 6 + r / 8, so rank
# order jumps across packages at every step.
CROSS48 = ",".join(str((r % 8) * 6 + r // 8) for r in range(48))


def run_case(tools, machine, cores, op, nbytes, root=0, env=None):
    osmp_run, osmp_topo, trace_run = tools
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "t")
        e = dict(os.environ, OSMP_TRACE=prefix)
        e.update(env or {})
        n = len(cores.split(","))
        cmd = [osmp_run, "-n", str(n), *machine, "--cores", cores, "--timeout", "250", "--",
               trace_run, op, str(nbytes), str(root)]
        r = subprocess.run(cmd, env=e, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
        topo_machine = ["--input" if m == "--topology" else m for m in machine]  # (osmp-topo's name for it)
        t = subprocess.run([osmp_topo, *topo_machine, "--show", "traffic", "--trace", prefix, "--op", op,
                            "--format", "json"], capture_output=True, text=True)
        if t.returncode != 0:
            sys.exit(f"osmp-topo --show traffic failed:\n{t.stderr}")
        calls = json.loads(t.stdout)["calls"]
        if len(calls) != 1:
            sys.exit(f"expected one {op} call in the trace, found {len(calls)}")
        # Bytes each rank copied within its own memory (staging into its slots
        # among them), which the traffic view leaves out: from the raw trace.
        # And the bytes of those each rank staged with streaming stores (OSMP_STREAM_MIN).
        calls[0]["own"], calls[0]["stream"], calls[0]["reduced"] = [0] * n, [0] * n, [0] * n
        for r in range(n):
            with open(f"{prefix}.{r}.jsonl") as f:
                for line in f:
                    e = json.loads(line)
                    if e.get("kind") == "copy" and e["op"] == op and e["src"] == e["dst"] == r:
                        calls[0]["own"][r] += e["n"]
                    if e.get("kind") == "stream" and e["op"] == op:
                        calls[0]["stream"][r] += e["n"]
                    if e.get("kind") == "reduce" and e["op"] == op:
                        calls[0]["reduced"][r] += e["n"]
        return calls[0]


failures = []


def check(what, ok, got):
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {got}")
    if not ok:
        failures.append(what)


def case_bcast_opteron(tools):
    c = run_case(tools, OPTERON48, CROSS48, "bcast", MIB)
    check("every rank but the root receives the payload exactly once",
          all(v == (0 if r == 0 else MIB) for r, v in enumerate(c["received"])), c["received"])
    check("1 MiB broadcast crosses package boundaries exactly 7 times", c["cross"]["package"] == 7 * MIB,
          c["cross"]["package"])


def case_bcast_opteron_root(tools):
    # A root in the middle of a package: the same crossings, the root's package first.
    c = run_case(tools, OPTERON48, CROSS48, "bcast", MIB, root=21)
    check("root 21: every other rank receives the payload once",
          all(v == (0 if r == 21 else MIB) for r, v in enumerate(c["received"])), c["received"])
    check("root 21: 7 package crossings", c["cross"]["package"] == 7 * MIB, c["cross"]["package"])


def case_bcast_opteron_mst(tools):
    # The distance-aware tree, through the slots and copied once: the same floor.
    for env in ({"OSMP_BCAST_ALG": "mst"}, {"OSMP_BCAST_ALG": "mst", "OSMP_SINGLE_COPY": "cma",
                                             "OSMP_SINGLE_COPY_MIN": "0"}):
        c = run_case(tools, OPTERON48, CROSS48, "bcast", MIB, root=13, env=env)
        what = "mst" + (" single copy" if "OSMP_SINGLE_COPY" in env else "")
        check(f"{what}: ran {c['alg']}", c["alg"] == "mst", c["alg"])
        check(f"{what}: every rank but the root receives the payload once",
              all(v == (0 if r == 13 else MIB) for r, v in enumerate(c["received"])), c["received"])
        check(f"{what}: 7 package crossings", c["cross"]["package"] == 7 * MIB, c["cross"]["package"])


def case_hierarchy_per_op(tools):
    # OSMP_HIERARCHY_BCAST=flat: the broadcast plans with one group (the root
    # feeds all 47, 42 of them on other packages); allreduce keeps the team's.
    env = {"OSMP_HIERARCHY_BCAST": "flat"}
    c = run_case(tools, OPTERON48, CROSS48, "bcast", MIB, env=env)
    check("bcast planned flat: 42 package crossings from the root", c["cross"]["package"] == 42 * MIB,
          c["cross"]["package"])
    check("bcast planned flat: the root feeds all 47", c["busiest_source"] == {"rank": 0, "bytes": 47 * MIB},
          c["busiest_source"])
    c = run_case(tools, OPTERON48, CROSS48, "allreduce", MIB, env=env)
    check("allreduce keeps the team's plan (hsliced: 14 MiB across packages)",
          c["alg"] == "hsliced" and c["cross"]["package"] == 14 * MIB, (c["alg"], c["cross"]["package"]))


def case_allgather_opteron(tools):
    b = 64 * 1024
    c = run_case(tools, OPTERON48, CROSS48, "allgather", b)
    check("allgather moves at most 8*47*B across packages (rank-order ring: 48*47*B)",
          c["cross"]["package"] <= 8 * 47 * b, f'{c["cross"]["package"]} <= {8 * 47 * b}')
    check("every rank receives the 47 other blocks exactly once",
          all(v == 47 * b for v in c["received"]), c["received"])
    check("auto chose the ring", c["alg"] == "ring", c["alg"])


def case_reduce_scatter_opteron(tools):
    # Each block's partial sum passes 47 of the 48 ring edges, 8 of which cross
    # packages: one reduce per block along a tree would cross 7 times per block,
    # but with the tree's members working and the rest idle, block after block.
    b = 64 * 1024
    c = run_case(tools, OPTERON48, CROSS48, "reduce_scatter_block", b)
    check("reduce_scatter_block moves at most 8*47*B across packages", c["cross"]["package"] <= 8 * 47 * b,
          f'{c["cross"]["package"]} <= {8 * 47 * b}')
    check("every rank receives 47 partial sums of B bytes exactly once", all(v == 47 * b for v in c["received"]),
          c["received"])
    check("auto chose the ring", c["alg"] == "ring", c["alg"])


def check_direct_small(tools, op, own):
    # Six ranks of one package (a flat team), blocks of 8 B (line) and 200 B
    # (slot): direct ran, and every rank read one block from each of the 5
    # others (and copied own x B within its memory, where own is given).
    for b in (8, 200):
        c = run_case(tools, OPTERON48, "0,1,2,3,4,5", op, b)
        check(f"{op}, {b} B blocks: direct ran", c["alg"] == "direct", c["alg"])
        check(f"{op}, {b} B blocks: every rank receives one block from each of the 5 others once",
              all(v == 5 * b for v in c["received"]), c["received"])
        check(f"{op}, {b} B blocks: every rank reads from the 5 others", c["sources"] == [5] * 6, c["sources"])
        if own:
            check(f"{op}, {b} B blocks: every rank copies {own} x B within its memory", c["own"] == [own * b] * 6,
                  c["own"])


def case_reduce_scatter_direct(tools):
    # Small blocks take one hop, every rank reading its block of each other
    # rank's vector (line: 6 x 8 B; slot: 6 x 200 B). A vector that fits a
    # slot but would make each rank read more than 16 KiB (5 x 4000 B) goes
    # to reduces, the next selection row; large blocks take the ring.
    cores = "0,1,2,3,4,5"
    check_direct_small(tools, "reduce_scatter_block", 0)
    c = run_case(tools, OPTERON48, cores, "reduce_scatter_block", 4000)
    check("4000 B blocks: beyond direct's limit, reduces", c["alg"] == "reduces", c["alg"])
    c = run_case(tools, OPTERON48, cores, "reduce_scatter_block", 65540)
    check("64 KiB + 4 B blocks: auto chose the ring", c["alg"] == "ring", c["alg"])


def case_single_copy_exchange(tools):
    # OSMP_SINGLE_COPY_MIN at its default (auto). Allgather and alltoall copy
    # blocks once, by CMA, straight from the peer's buffer (every core copies
    # what it receives, so staging would add a copy on each) once the team's
    # n^2 blocks reach 2.5 MiB: 2 processes from 640 KiB blocks, 4 from 160 KiB;
    # below, and for bcast at every size up to 32 MiB, through the slots, where
    # the sender first copies into its own slot. A number sets every collective.
    # Each rank's own block goes from its input to its output with streaming
    # stores once the n^2 blocks reach half the last-level cache the team sits
    # under (osmp__copy_own; here an 8 MiB L3: 4 MiB): every whole line of it,
    # so for a block of whole lines all of it (an aligned output) or all but one
    # line's worth (the piece before its first line boundary and after its last,
    # copied plainly).
    cma = {"OSMP_SINGLE_COPY": "cma"}
    l3_8m = opteron48_l3(8 * MIB)
    for b, alg in ((144 * 1024, "slots"), (160 * 1024, "pairwise")):
        c = run_case(tools, l3_8m, "0,1,2,3", "alltoall", b, env=cma)
        check(f"4 processes, alltoall of {b} B blocks: {alg}", c["alg"] == alg, c["alg"])
        check(f"4 processes, alltoall of {b} B blocks: each rank receives 3 x B", c["received"] == [3 * b] * 4,
              c["received"])
    cores = "0,1"

    def streamed(c, b):
        return all(x in (b - 64, b) for x in c["stream"])

    for b, alg, own_streamed in ((576 * 1024, "slots", False), (640 * 1024, "pairwise", False),
                                 (MIB, "pairwise", True)):
        c = run_case(tools, l3_8m, cores, "alltoall", b, env=cma)
        check(f"alltoall of {b} B blocks: {alg}", c["alg"] == alg, c["alg"])
        check(f"alltoall of {b} B blocks: each rank receives B from the other", c["received"] == [b, b],
              c["received"])
        check(f"alltoall of {b} B blocks: own block streamed: {own_streamed}",
              streamed(c, b) if own_streamed else c["stream"] == [0, 0], c["stream"])
    for b, own, own_streamed in ((512 * 1024, 2, False), (640 * 1024, 1, False), (MIB, 1, True)):
        c = run_case(tools, l3_8m, cores, "allgather", b, env=cma)
        check(f"allgather of {b} B blocks: each rank copies {own} x B within its memory", c["own"] == [own * b] * 2,
              c["own"])
        check(f"allgather of {b} B blocks: each rank receives B from the other", c["received"] == [b, b],
              c["received"])
        check(f"allgather of {b} B blocks: own block streamed: {own_streamed}",
              streamed(c, b) if own_streamed else c["stream"] == [0, 0], c["stream"])
    c = run_case(tools, l3_8m, cores, "alltoall", MIB, env=dict(cma, OSMP_SINGLE_COPY_MIN="33554432"))
    check("alltoall of 1 MiB blocks with OSMP_SINGLE_COPY_MIN=33554432: slots", c["alg"] == "slots", c["alg"])
    check("alltoall of 1 MiB blocks through the slots: own block streamed", streamed(c, MIB), c["stream"])
    c = run_case(tools, l3_8m, cores, "bcast", MIB, env=cma)
    check("bcast of 1 MiB: the root stages it into its slots", c["own"] == [MIB, 0], c["own"])
    check("bcast of 1 MiB: nothing streamed on a near pair", c["stream"] == [0, 0], c["stream"])
    # The streaming threshold follows the cache: a 32 MiB L3 streams from 4 MiB blocks on 2 (16 MiB), and a
    # pair under two 8 MiB L3s (cores 0 and 6: two packages) from 2 MiB (8 MiB of 16).
    for machine, cores, b, want in ((opteron48_l3(32 * MIB), "0,1", 2 * MIB, False),
                                    (opteron48_l3(32 * MIB), "0,1", 4 * MIB, True),
                                    (l3_8m, "0,6", MIB, False), (l3_8m, "0,6", 2 * MIB, True)):
        c = run_case(tools, machine, cores, "alltoall", b, env=cma)
        check(f"{machine[1]}, cores {cores}: alltoall of {b} B blocks, own block streamed: {want}",
              streamed(c, b) if want else c["stream"] == [0, 0], c["stream"])


def case_far_team(tools):
    # A team whose participants share no last-level cache (select.c far_team:
    # here two packages of the Opteron48, cores 0 and 47): the sender stages
    # with streaming stores from 1 KiB (OSMP_STREAM_MIN=auto), and the
    # exchanges (allgather, alltoall) copy once from 16 KiB; a pair under one
    # L3 stages with ordinary stores. With OSMP_STREAM_MIN=never every
    # collective copies once from 16 KiB there. The single copy rule is
    # OSMP_SINGLE_COPY_MIN=auto's (a number leaves the exchanges staged),
    # streaming OSMP_STREAM_MIN=auto's; a third process beside one of the pair
    # takes neither, and three on three packages take both.
    cma, b = {"OSMP_SINGLE_COPY": "cma"}, 64 * 1024
    far_cores = "0,47"
    for cores, stream, alg in ((far_cores, b, "pairwise"), ("0,1", 0, "slots"), ("0,5", 0, "slots")):
        c = run_case(tools, OPTERON48, cores, "bcast", b, env=cma)
        check(f"cores {cores}: bcast of 64 KiB, the root stages it into its slots", c["own"] == [b, 0], c["own"])
        check(f"cores {cores}: bcast of 64 KiB, {stream} B of it with streaming stores",
              c["stream"] == [stream, 0], c["stream"])
        check(f"cores {cores}: bcast of 64 KiB, the other rank receives it once", c["received"] == [0, b],
              c["received"])
        c = run_case(tools, OPTERON48, cores, "alltoall", b, env=cma)
        check(f"cores {cores}: alltoall of 64 KiB: {alg}", c["alg"] == alg, c["alg"])
    for cores, alg, own in ((far_cores, "ring", 32 * 1024), ("0,1", "direct", 2 * 32 * 1024)):
        c = run_case(tools, OPTERON48, cores, "allgather", 32 * 1024, env=cma)
        check(f"cores {cores}: allgather of 32 KiB: {alg}", c["alg"] == alg, c["alg"])
        check(f"cores {cores}: allgather of 32 KiB, each rank copies {own} B within its memory",
              c["own"] == [own, own], c["own"])
    for cores, stream in ((far_cores, [0, b]), ("0,1", [0, 0])):
        # Reduce: the leaf stages its input (streamed when far); the root folds its own input and the leaf's
        # into its output at once: no copy of its own.
        c = run_case(tools, OPTERON48, cores, "reduce", b, env=cma)
        check(f"cores {cores}: reduce of 64 KiB, bytes copied within each rank's memory",
              c["own"] == [0, b], c["own"])
        check(f"cores {cores}: reduce of 64 KiB, bytes streamed", c["stream"] == stream, c["stream"])
        check(f"cores {cores}: reduce of 64 KiB, the root receives it once", c["received"] == [b, 0],
              c["received"])
    for cores, stream in ((far_cores, MIB), ("0,1", 0)):
        # Sliced allreduce: each rank stages the other's half of its input, folds its own half of it (read
        # in place) into its output and stages that result from there, streamed when far: 1.5 MiB within its
        # memory either way.
        c = run_case(tools, OPTERON48, cores, "allreduce", MIB, env=cma)
        check(f"cores {cores}: allreduce of 1 MiB: sliced", c["alg"] == "sliced", c["alg"])
        check(f"cores {cores}: allreduce of 1 MiB, bytes copied within each rank's memory",
              c["own"] == [3 * MIB // 2] * 2, c["own"])
        check(f"cores {cores}: allreduce of 1 MiB, bytes streamed", c["stream"] == [stream, stream], c["stream"])
        check(f"cores {cores}: allreduce of 1 MiB, each rank receives the other's input half and result half",
              c["received"] == [MIB, MIB], c["received"])
        # Reduce_scatter_block ring: each rank stages the other's block of its input (streamed when far) and
        # combines its own block with the one staged for it straight into its output: no copy of its own.
        c = run_case(tools, OPTERON48, cores, "reduce_scatter_block", MIB, env=cma)
        check(f"cores {cores}: reduce_scatter_block of 1 MiB blocks: ring", c["alg"] == "ring", c["alg"])
        check(f"cores {cores}: reduce_scatter_block of 1 MiB blocks, bytes copied within each rank's memory",
              c["own"] == [MIB, MIB], c["own"])
        check(f"cores {cores}: reduce_scatter_block of 1 MiB blocks, bytes streamed",
              c["stream"] == [stream, stream], c["stream"])
    for nbytes, stream in ((1024, 1024), (1016, 0)):
        c = run_case(tools, OPTERON48, far_cores, "gather", nbytes, env=cma)
        check(f"far: gather of {nbytes} B, the other rank streams {stream} B into its slot", c["stream"] == [0, stream],
              c["stream"])
    never = dict(cma, OSMP_STREAM_MIN="never")
    c = run_case(tools, OPTERON48, far_cores, "bcast", 16 * 1024, env=never)
    check("far, OSMP_STREAM_MIN=never: bcast of 16 KiB goes by single copy", c["own"] == [0, 0], c["own"])
    c = run_case(tools, OPTERON48, far_cores, "bcast", 16 * 1024 - 8, env=never)
    check("far, OSMP_STREAM_MIN=never: bcast of 16 KiB - 8 B is staged", c["own"] == [16 * 1024 - 8, 0], c["own"])
    check("far, OSMP_STREAM_MIN=never: nothing streamed", c["stream"] == [0, 0], c["stream"])
    c = run_case(tools, OPTERON48, far_cores, "reduce", b, env=never)
    check("far, OSMP_STREAM_MIN=never: reduce of 64 KiB, the root copies the leaf's input once",
          c["own"] == [0, 0] and c["received"] == [b, 0], (c["own"], c["received"]))
    c = run_case(tools, OPTERON48, far_cores, "alltoall", b, env=dict(cma, OSMP_SINGLE_COPY_MIN="33554432"))
    check("far, OSMP_SINGLE_COPY_MIN=33554432: alltoall of 64 KiB through the slots", c["alg"] == "slots", c["alg"])
    check("far, OSMP_SINGLE_COPY_MIN=33554432: its slots streamed", c["stream"] == [b, b], c["stream"])
    c = run_case(tools, OPTERON48, "0,47,42", "alltoall", b, env=cma)
    check("3 processes, cores 0,47,42 (42 and 47 share an L3): alltoall of 64 KiB through the slots",
          c["alg"] == "slots", c["alg"])
    check("3 processes, cores 0,47,42: nothing streamed", c["stream"] == [0, 0, 0], c["stream"])
    c = run_case(tools, OPTERON48, "0,6,12", "alltoall", b, env=cma)
    check("3 processes on three packages: alltoall of 64 KiB copied once", c["alg"] == "pairwise", c["alg"])
    c = run_case(tools, OPTERON48, "0,6,12", "bcast", b, env=cma)
    check("3 processes on three packages: bcast of 64 KiB, the root streams it into its slots",
          c["stream"][0] == b, c["stream"])
    c = run_case(tools, OPTERON48, "0,1,2", "bcast", b, env=dict(cma, OSMP_STREAM_MIN="0"))
    check("3 processes, OSMP_STREAM_MIN=0: bcast of 64 KiB, the root streams it into its slots",
          c["stream"][0] == b, c["stream"])


def case_alltoall_direct(tools):
    # Every rank writes its blocks for the five others into its line (5 x 8 B)
    # or one slot (5 x 200 B), and its own into its output, and reads its own
    # out of each other rank's; a vector beyond a slot (5 x 8000 B, chunk 32
    # KiB) goes to slots, the next selection row.
    check_direct_small(tools, "alltoall", 6)
    c = run_case(tools, OPTERON48, "0,1,2,3,4,5", "alltoall", 8000)
    check("8000 B blocks: beyond direct's slot, slots", c["alg"] == "slots", c["alg"])


def case_selection_chain(tools):
    # An algorithm that takes blocks only up to its line or slot (max_block) gives larger ones to the next
    # selection row, chosen at team creation, whether it came from the table or OSMP_<OP>_ALG. Six ranks of
    # one package (flat, chunk 32 KiB): allgather direct up to a slot, gather_bcast beyond. Alltoallv direct
    # needs a byte of the mailbox line per peer: a team of 50 takes slots.
    six = "0,1,2,3,4,5"
    for env, how in ((None, "auto"), ({"OSMP_ALLGATHER_ALG": "direct"}, "OSMP_ALLGATHER_ALG=direct")):
        for nbytes, alg in ((16000, "direct"), (32768, "direct"), (32769, "gather_bcast"), (60000, "gather_bcast")):
            c = run_case(tools, OPTERON48, six, "allgather", nbytes, env=env)
            check(f"{how}, 6 ranks, allgather of {nbytes} B blocks: {alg}", c["alg"] == alg, c["alg"])
            if alg == "direct":
                check(f"{how}, 6 ranks, allgather of {nbytes} B blocks: every rank receives 5 blocks once",
                      all(v == 5 * nbytes for v in c["received"]), c["received"])
    fifty = ",".join(str(r) for r in range(50))
    machine = ["--synthetic", "pack:8 numa:1 l3:1 core:8 pu:1"]
    for env, how in ((None, "auto"), ({"OSMP_ALLTOALLV_ALG": "direct"}, "OSMP_ALLTOALLV_ALG=direct")):
        c = run_case(tools, machine, fifty, "alltoallv", 64, env=env)
        check(f"{how}, 50 ranks, alltoallv: slots", c["alg"] == "slots", c["alg"])


def case_allgatherv_direct(tools):
    # Allgatherv on a small flat team: the direct exchange, in a line or a slot sized for the largest block
    # (odd ranks' blocks are half as long), and the ring beyond a slot (chunk 128 KiB up to 4 ranks).
    # Every rank decides on the largest block: at 256 KiB rank 1's block of 128 KiB fits a slot, and had it
    # taken the direct exchange while rank 0 took the ring, the call would not end. Every block empty (IMB's
    # 0 bytes): no algorithm runs, as for a zero count (every rank has the counts: api.c).
    for cores, nbytes, alg in (("0,1", 0, "none"), ("0,1,2", 0, "none"), ("0,1", 64, "direct"), ("0,1", 128 * 1024, "direct"), ("0,1", 256 * 1024, "ring"),
                               ("0,1,2", 40, "direct"), ("0,1,2", 40000, "direct"), ("0,1,2", 256 * 1024, "ring")):
        c = run_case(tools, OPTERON48, cores, "allgatherv", nbytes)
        n = len(cores.split(","))
        got = sum(nbytes >> (r % 2) for r in range(n))
        check(f"{n} ranks, allgatherv of {nbytes} B (odd ranks {nbytes // 2}): {alg}", c["alg"] == alg, c["alg"])
        check(f"{n} ranks, allgatherv of {nbytes} B: each rank receives the others' blocks once",
              c["received"] == [got - (nbytes >> (r % 2)) for r in range(n)], c["received"])


def case_alltoallv_direct(tools):
    # Alltoallv direct: each pair takes the path its block's size says (both ends know it): in the sender's
    # line up to 48 / (n - 1) bytes, in its slot of the call up to chunk / (n - 1), copied once from the
    # sender's buffer from the single-copy threshold (no staging at the sender), through the slots' rows beyond
    # (staged by the sender). Blocks between ranks of different parity are half as long, so one call mixes
    # paths: 64 B on 2 ranks rides in lines, 100 B on 3 in slot parts, 1 MiB on 3 in rows. What the trace
    # shows: every block received once, and each sender's own copies (its own block, plus every block it
    # staged: line, slot or rows, not one copied once), which tells a pair copied once from one staged. Line,
    # slot part and rows apart: results and timing only.
    # 2 ranks: near pair (cores 0 and 1 share an L3), exchanges copied once from 1.25 MiB (5/16 of the
    # machine's 16 MiB L3 / n^2: 2 MiB blocks copied once, the 1 MiB ones staged), an own block streamed from
    # 2 MiB (half that L3 / n^2).
    # 8 ranks: a part of 6 B holds no address; a block copied once has it in the sender's slot instead.
    eight = ",".join(str(r) for r in range(8))
    for cores, nbytes, cmin in (("0,1", 64, 5 * MIB // 4), ("0,1", 2 * MIB, 5 * MIB // 4), ("0,1,2", 100, None),
                                ("0,1,2", 2 * MIB, 3 * MIB // 2), (eight, 256 * 1024, 128 * 1024),
                                (eight, 256 * 1024, 192 * 1024)):
        n = len(cores.split(","))
        part = 48 // (n - 1)
        env = {"OSMP_SINGLE_COPY_MIN": str(cmin)} if cmin and n > 2 else None
        c = run_case(tools, OPTERON48, cores, "alltoallv", nbytes, env=env)
        check(f"{n} ranks, alltoallv of {nbytes} B blocks: direct", c["alg"] == "direct", c["alg"])

        def blk(w, q):
            return nbytes >> ((w + q) % 2)

        def staged(b):
            return b <= part or cmin is None or b < cmin

        want = [sum(blk(w, q) for w in range(n) if w != q) for q in range(n)]
        check(f"{n} ranks, alltoallv of {nbytes} B blocks: each rank receives its blocks once", c["received"] == want,
              c["received"])
        own = [blk(w, w) + sum(blk(w, q) for q in range(n) if q != w and staged(blk(w, q))) for w in range(n)]
        paths = f"blocks from {cmin} B copied once, the others staged" if cmin else "every block staged"
        check(f"{n} ranks, alltoallv of {nbytes} B blocks: {paths}", c["own"] == own, c["own"])
        if n == 2:
            ok = all(x in (nbytes - 64, nbytes) for x in c["stream"]) if nbytes >= MIB else c["stream"] == [0, 0]
            check(f"2 ranks, alltoallv of {nbytes} B blocks: own block streamed: {nbytes >= MIB}", ok, c["stream"])


def case_allreduce_opteron(tools):
    c = run_case(tools, OPTERON48, CROSS48, "allreduce", MIB)
    check("1 MiB allreduce moves at most 16 MiB across packages", c["cross"]["package"] <= 16 * MIB,
          c["cross"]["package"])
    check("no participant combines more than 2.5 MiB of inputs", c["most_reduced"]["bytes"] <= 5 * MIB // 2,
          c["most_reduced"])


def case_gather_opteron(tools):
    for root, nbytes in ((0, 4096), (9, 40), (47, 1 << 20)):
        c = run_case(tools, OPTERON48, CROSS48, "gather", nbytes, root=root)
        check(f"root {root}, {nbytes} B: the gather's root hears from its 5 package mates and the 7 other "
              "leaders only (13 participants with itself; 47 others flat)", c["sources"][root] == 12,
              c["sources"][root])


def scan_moves(alg, exclusive, n, nbytes, chunk=32768):
    """Per rank, the bytes a scan (exscan) of nbytes per rank reads from other ranks' slots, copies within its
    own memory, and combines, as the protocol comments of src/coll/scan/scan_<alg>.c say (out of place)."""
    lens = [nbytes] if nbytes <= 56 else [min(chunk, nbytes - o) for o in range(0, nbytes, chunk)]
    recv, own, red = [0] * n, [0] * n, [0] * n
    for r in range(n):
        for L in lens:
            if alg == "chain":  # my slot <- prefix op input; output <- it (scan) or the prefix (exscan)
                recv[r] += (2 if exclusive else 1) * L if r else 0
                own[r] += (L if r == 0 else 0) + (0 if exclusive else L)
                red[r] += 2 * L if r else 0
                continue
            if alg == "tree":
                i = r + 1
                b = i & -i
                kids, parent, below, ndown = b.bit_length() - 1, i + b <= n, i - b, min(b // 2, n - i)
                dst = "up" if parent else "down" if ndown else None  # where F is made (1)
                first = "in"  # where my F is
                for j in range(kids):  # 2: each child's F, on the left of mine, and (exscan) of my output
                    w = dst or (None if exclusive else "out")
                    if w:
                        recv[r] += L
                        red[r] += 2 * L
                        first = w
                    if exclusive:
                        recv[r] += L
                        red[r] += 2 * L if j else 0
                if parent and first != "up":  # 3
                    own[r] += L
                    first = "up"
                down = "down" if ndown else None
                if below:  # 5: P(i-b) on the left of F, and (exscan) of my output
                    w = down or (None if exclusive else "out")
                    if w:
                        recv[r] += L
                        red[r] += 2 * L
                        first = w
                    if exclusive:
                        recv[r] += L
                        red[r] += 2 * L if kids else 0
                elif down and first != "down":  # 6
                    own[r] += L
                    first = "down"
                if not exclusive and first != "out":
                    own[r] += L
                continue
            K = max(0, (n - 1).bit_length())
            first = "in"  # where my window is
            for k in range(K + 1):
                dst = ("slot", k) if k < K and r + (1 << k) < n else None
                if k > 0 and r >= 1 << (k - 1):
                    if dst or not exclusive:  # received op window, into my slot k or my output
                        recv[r] += L
                        red[r] += 2 * L
                        first = dst or "out"
                    if exclusive:  # received op what I received before (the first: copied)
                        recv[r] += L
                        red[r] += 2 * L if k > 1 else 0
                if dst and first != dst:
                    own[r] += L
                    first = dst
            if not exclusive and first != "out":
                own[r] += L
    return recv, own, red


def case_scan_milan(tools):
    # Scan and exscan on 192 oversubscribed participants planned on the 128-core Milan (cores 5r mod 128):
    # auto chooses tree there; each algorithm forced, its exact movement (bytes read from other ranks, copied
    # within a rank, combined), in one mini line (8 B) and in ring slots, a full and a part chunk (40000 B).
    n = 192
    machine = ["--topology", os.path.join(sys.argv[4], "amd-milan-2x64.xml")]
    cores = ",".join(str(5 * r % 128) for r in range(n))
    for op in ("scan", "exscan"):
        c = run_case(tools, machine, cores, op, 8)
        check(f"{op} auto, {n} ranks oversubscribed: ran tree", c["alg"] == "tree", c["alg"])
    for alg in ("rdbl", "chain", "tree"):
        env = {"OSMP_SCAN_ALG": alg, "OSMP_EXSCAN_ALG": alg}
        for op in ("scan", "exscan"):
            for nbytes in (8, 40000):
                c = run_case(tools, machine, cores, op, nbytes, env=env)
                recv, own, red = scan_moves(alg, op == "exscan", n, nbytes)
                what = f"{op} {alg} (forced), {n} ranks, {nbytes} B"
                print(f"{what}: read / copied / combined {sum(recv)} / {sum(own)} / {sum(red)} B")
                check(f"{what}: ran {alg}", c["alg"] == alg, c["alg"])
                check(f"{what}: {sum(recv)} B read from other ranks, per rank as the protocol says",
                      c["received"] == recv, (c["moved"], [(r, x, y) for r, (x, y) in enumerate(zip(c["received"], recv)) if x != y][:5]))
                check(f"{what}: {sum(own)} B copied within ranks, per rank as the protocol says",
                      c["own"] == own, (sum(c["own"]), [(r, x, y) for r, (x, y) in enumerate(zip(c["own"], own)) if x != y][:5]))
                check(f"{what}: {sum(red)} B combined, per rank as the protocol says",
                      c["reduced"] == red, (sum(c["reduced"]), [(r, x, y) for r, (x, y) in enumerate(zip(c["reduced"], red)) if x != y][:5]))


def run_forced(tools, name, n, machine, placement, env, nbytes, expect):
    """Every collective at roots 0, n-1, n/2 with the algorithms forced by env,
    results checked by trace-run; the trace must show that each call ran the
    algorithm expected of it (op -> name as the trace writes it)."""
    osmp_run, _, trace_run = tools
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "t")
        e = dict(os.environ, OSMP_TRACE=prefix, **env)
        cmd = [osmp_run, "-n", str(n), *machine, *placement, "--timeout", "280", "--",
               trace_run, "all", str(nbytes), "ends"]
        r = subprocess.run(cmd, env=e, capture_output=True, text=True)
        check(f"{name}: every result right ({n} participants, {nbytes} B)", r.returncode == 0,
              r.returncode if r.returncode == 0 else r.stderr.strip()[-2000:])
        if r.returncode != 0:
            return
        ran = {}
        for rank in range(n):
            with open(f"{prefix}.{rank}.jsonl") as f:
                for line in f:
                    x = json.loads(line)
                    if x["kind"] == "call" and x["op"] in expect:
                        ran.setdefault(x["op"], set()).add(x["alg"])
        for op, alg in expect.items():
            check(f"{name}: {op} ran {alg} on every participant", ran.get(op) == {alg}, sorted(ran.get(op, [])))


def trace_records(prefix, n):
    """Per rank, every call's algorithm and its copies, reductions and streamed bytes, in order."""
    out = []
    for rank in range(n):
        with open(f"{prefix}.{rank}.jsonl") as f:
            recs = [json.loads(line) for line in f]
        out.append([(x["call"], x["op"], x["kind"], x.get("alg"), x.get("src"), x.get("dst"), x.get("n"))  # not "resumable"
                    for x in recs if x["kind"] in ("call", "copy", "reduce", "stream")])
    return out


def run_nonblocking(tools, name, n, machine, placement, env, nbytes, ops="all"):
    """Every collective at roots 0, n-1, n/2 blocking, then as nonblocking
    calls (osmp_i<op>, osmp_test until done): both runs' results right, the
    same algorithm and the same data movement in every call on every rank, and
    every nonblocking call (and no blocking one) ran its algorithm's resumable
    form, on every rank (compositions as schedules of resumable parts)."""
    osmp_run, _, trace_run = tools
    traces, forms = {}, {}
    for calls in ("blocking", "test"):
        with tempfile.TemporaryDirectory() as d:
            prefix = os.path.join(d, "t")
            e = dict(os.environ, OSMP_TRACE=prefix, TRACE_RUN_CALLS=calls, **env)
            cmd = [osmp_run, "-n", str(n), *machine, *placement, "--timeout", "280", "--",
                   trace_run, ops, str(nbytes), "ends"]
            r = subprocess.run(cmd, env=e, capture_output=True, text=True)
            check(f"{name}: every result right, {calls} calls ({n} participants, {nbytes} B)", r.returncode == 0,
                  r.returncode if r.returncode == 0 else r.stderr.strip()[-2000:])
            if r.returncode != 0:
                return
            traces[calls] = trace_records(prefix, n)
            resumable, other = 0, set()
            for rank in range(n):
                with open(f"{prefix}.{rank}.jsonl") as f:
                    for x in map(json.loads, f):
                        if x["kind"] == "call" and x["op"] != "barrier":  # (call 0, blocking in both runs)
                            resumable += bool(x.get("resumable"))
                            other |= set() if x.get("resumable") else {(x["op"], x["alg"])}
            forms[calls] = resumable, other
    check(f"{name}: blocking calls ran no resumable form", forms["blocking"][0] == 0, forms["blocking"][0])
    check(f"{name}: every nonblocking call ran its algorithm's resumable form, on every rank",
          forms["test"][0] > 0 and not forms["test"][1], sorted(forms["test"][1]))
    b, t = traces["blocking"], traces["test"]
    forced = {k[len("OSMP_"):-len("_ALG")].lower(): v for k, v in env.items() if k.endswith("_ALG")}
    ran = {(x[1], x[3]) for rank in t for x in rank if x[2] == "call" and x[1] in forced}
    check(f"{name}: the forced algorithms ran ({forced})", ran == set(forced.items()), sorted(ran))
    same = [r for r in range(n) if b[r] == t[r]]
    calls = sum(1 for x in b[0] if x[2] == "call")
    check(f"{name}: the nonblocking calls' traces equal the blocking calls' on every rank ({calls} calls each)",
          len(same) == n, f"{n - len(same)} ranks differ, first {next((r for r in range(n) if b[r] != t[r]), None)}")


SC0 = {"OSMP_SINGLE_COPY": "cma", "OSMP_SINGLE_COPY_MIN": "0"}
# Nonblocking calls against blocking ones: name -> (n, machine, placement, knobs, bytes[, the operations run:
# trace-run's OPS, default all]). The scans' tree
# (auto, oversubscribed) and rdbl (forced): one mini line, and 1 KiB slots two deep (4 chunks; rdbl: 7 steps
# each, claims waiting within a chunk; tree: two slots a chunk, so the down claim waits for the parent's read).
NONBLOCKING = {
    "nonblocking-64-milan": (64, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "scatter"], {}, 1001),
    "nonblocking-192-milan": (192, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "random:5"], {}, 8),
    "nonblocking-64-kunpeng-pipelined": (64, ["--topology", "{T}/kunpeng920-2x64-clusters.xml"], ["--bind", "scatter"],
                                         {"OSMP_CHUNK_SIZE": "1024", "OSMP_PIPELINE_DEPTH": "2"}, 65541),
    "nonblocking-scan-100-milan": (100, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "random:3"], {}, 8,
                                   "scan,exscan"),
    "nonblocking-scan-100-milan-slots": (100, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "random:3"],
                                         {"OSMP_CHUNK_SIZE": "1024", "OSMP_PIPELINE_DEPTH": "2"}, 4000, "scan,exscan"),
    # Compositions (schedules of resumable parts) forced, and alltoall's distance (single copy)
    "nonblocking-48-opteron-compositions": (48, OPTERON48, ["--cores", CROSS48],
                                            {"OSMP_ALLGATHER_ALG": "gather_bcast", "OSMP_ALLGATHERV_ALG": "gatherv_bcast",
                                             "OSMP_REDUCE_SCATTER_BLOCK_ALG": "reduces", "OSMP_ALLTOALL_ALG": "scatters",
                                             "OSMP_ALLTOALLV_ALG": "scatters"}, 1001,
                                            "allgather,allgatherv,reduce_scatter_block,alltoall,alltoallv"),
    "nonblocking-48-opteron-distance": (48, OPTERON48, ["--cores", CROSS48], dict(SC0, OSMP_ALLTOALL_ALG="distance"),
                                        1001, "alltoall"),
    # (auto runs tree there, oversubscribed; rdbl's resumable form forced)
    "nonblocking-scan-100-milan-rdbl": (100, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "random:3"],
                                        {"OSMP_SCAN_ALG": "rdbl", "OSMP_EXSCAN_ALG": "rdbl"}, 8, "scan,exscan"),
    "nonblocking-scan-100-milan-slots-rdbl": (100, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "random:3"],
                                              {"OSMP_CHUNK_SIZE": "1024", "OSMP_PIPELINE_DEPTH": "2",
                                               "OSMP_SCAN_ALG": "rdbl", "OSMP_EXSCAN_ALG": "rdbl"}, 4000,
                                              "scan,exscan"),
}

# Every algorithm forced somewhere, at 48 to 192 oversubscribed participants on
# real machines (and Ma et al.'s), every rooted call at roots 0, n-1 and n/2,
# odd sizes in each size class: name -> (n, machine, placement, other knobs,
# bytes, {op: the algorithm forced with OSMP_<OP>_ALG, as the trace names it}).
FORCED = {
    "forced-48-opteron": (48, OPTERON48, ["--cores", CROSS48], SC0, 1001,
                          {"bcast": "mst", "gather": "hier", "scatter": "hier", "allgather": "ring",
                           "alltoall": "distance", "allreduce": "hsliced", "reduce": "hsliced",
                           "reduce_scatter_block": "reduces"}),
    "forced-96-x3950": (96, ["--topology", "{T}/ibm-x3950-16pkg-96.xml"], ["--bind", "random:11"], {}, 65541,
                        {"bcast": "kary:3", "gather": "direct", "scatter": "direct", "allgather": "gather_bcast",
                         "alltoall": "scatters", "reduce": "kary:2", "allreduce": "hsliced",
                         "reduce_scatter_block": "ring"}),
    "forced-192-milan": (192, ["--topology", "{T}/amd-milan-2x64.xml"], ["--bind", "random:5"], SC0, 8,
                         {"bcast": "flat", "alltoall": "pairwise", "allgather": "ring", "gather": "hier",
                          "allreduce": "kary:4"}),
    "forced-128-kunpeng-small-chunks": (128, ["--topology", "{T}/kunpeng920-2x64-clusters.xml"], ["--bind", "scatter"],
                                        {"OSMP_CHUNK_SIZE": "1024", "OSMP_PIPELINE_DEPTH": "2"}, 3001,
                                        {"bcast": "mst", "allgather": "ring", "scatter": "hier", "gather": "hier",
                                         "allreduce": "flat", "reduce": "sliced", "reduce_scatter_block": "ring",
                                         "alltoall": "slots"}),
}

CASES = {
    "bcast-opteron48": case_bcast_opteron,
    "bcast-opteron48-root21": case_bcast_opteron_root,
    "bcast-opteron48-mst": case_bcast_opteron_mst,
    "hierarchy-per-op": case_hierarchy_per_op,
    "allgather-opteron48": case_allgather_opteron,
    "reduce_scatter-opteron48": case_reduce_scatter_opteron,
    "reduce_scatter-direct": case_reduce_scatter_direct,
    "single-copy-exchange": case_single_copy_exchange,
    "far-team": case_far_team,
    "alltoall-direct": case_alltoall_direct,
    "allgatherv-direct": case_allgatherv_direct,
    "selection-chain": case_selection_chain,
    "alltoallv-direct": case_alltoallv_direct,
    "allreduce-opteron48": case_allreduce_opteron,
    "gather-opteron48": case_gather_opteron,
    "scan-192-milan": case_scan_milan,
}

if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[5] not in {**CASES, **FORCED, **NONBLOCKING}:
        sys.exit(f"usage: trace-check.py OSMP_RUN OSMP_TOPO TRACE_RUN TOPOLOGIES_DIR CASE "
                 f"({', '.join(list(CASES) + list(FORCED) + list(NONBLOCKING))})")
    if sys.argv[5] in NONBLOCKING:
        n, machine, placement, knobs, nbytes, *ops = NONBLOCKING[sys.argv[5]]
        machine = [m.replace("{T}", sys.argv[4]) for m in machine]
        run_nonblocking(tuple(sys.argv[1:4]), sys.argv[5], n, machine, placement, knobs, nbytes, *ops)
    elif sys.argv[5] in FORCED:
        n, machine, placement, knobs, nbytes, expect = FORCED[sys.argv[5]]
        env = dict(knobs, **{f"OSMP_{op.upper()}_ALG": alg for op, alg in expect.items()})
        machine = [m.replace("{T}", sys.argv[4]) for m in machine]
        run_forced(tuple(sys.argv[1:4]), sys.argv[5], n, machine, placement, env, nbytes, expect)
    else:
        CASES[sys.argv[5]](tuple(sys.argv[1:4]))
    sys.exit(1 if failures else 0)
