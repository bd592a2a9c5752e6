"""Side-by-side timings of the Python binding, interleaved, median of rounds.

    osmp-run -n 4 -- python3 bench/python-bench.py            # OSMP only
    mpirun -n 4 python3 bench/python-bench.py                 # also mpi4py (Team.from_mpi)

Rows: an allreduce of 16 MiB of bfloat16 (OSMP; the library must reduce
bfloat16), of the same 16 MiB as float32 with OSMP and with mpi4py
(Comm.Allreduce, under mpirun), and the Python call's overhead for an 8-byte
float64 allreduce over the same call made from C (a loop inside the
extension). Each large call is timed between barriers, as the slowest rank's
time; each round runs every row once, in turn.
"""
import argparse
import os
import statistics
import time

import numpy as np

import osmp

ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=15)
ap.add_argument("--mib", type=float, default=16)
ap.add_argument("--small-iters", type=int, default=20000)
args = ap.parse_args()

under_mpi = "OSMP_RUN_FD" not in os.environ
comm = None
if under_mpi:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    team = osmp.Team.from_mpi(comm)
else:
    team = osmp.init()

nbytes = int(args.mib * 1024 * 1024)
f32 = np.full(nbytes // 4, 1.0 + team.rank, np.float32)
f32_out = np.empty_like(f32)
import ml_dtypes  # noqa: E402

bf16 = np.full(nbytes // 2, 1.0 + team.rank, ml_dtypes.bfloat16)
bf16_out = np.empty_like(bf16)


def slowest(fn):
    team.barrier()
    t = time.perf_counter()
    fn()
    t = np.array([time.perf_counter() - t])
    return float(team.allreduce(t, op="max")[0])


rows = {}


def add(name, value):
    rows.setdefault(name, []).append(value)


tiny = np.ones(1)
tiny_out = np.empty(1)
for _ in range(args.rounds):
    add(f"OSMP allreduce {args.mib:g} MiB bfloat16", slowest(lambda: team.allreduce(bf16, out=bf16_out)))
    add(f"OSMP allreduce {args.mib:g} MiB float32", slowest(lambda: team.allreduce(f32, out=f32_out)))
    if comm is not None:
        add(f"mpi4py Allreduce {args.mib:g} MiB float32",
            slowest(lambda: comm.Allreduce(f32, f32_out, op=MPI.SUM)))
    # The small call: per-call time of a Python loop and of a C loop, each
    # the slowest rank's; their difference is the binding's cost.
    n = args.small_iters
    team.barrier()
    t = time.perf_counter()
    for _ in range(n):
        team.allreduce(tiny, out=tiny_out)
    py = (time.perf_counter() - t) / n
    team.barrier()
    t = time.perf_counter()
    for _ in range(n):
        team.allreduce(tiny)
    py_alloc = (time.perf_counter() - t) / n
    team.barrier()
    c = team._c_allreduce_loop(n) / n
    add("8 B float64 allreduce, Python, out= given", py)
    add("8 B float64 allreduce, Python, result allocated", py_alloc)
    add("8 B float64 allreduce, C", c)
    add("Python overhead (out= given)", py - c)
    add("Python overhead (result allocated)", py_alloc - c)

if team.rank == 0:
    where = f"mpirun ({MPI.Get_library_version().splitlines()[0][:40]})" if comm is not None else "osmp-run"
    print(f"osmp {osmp.__version__} Python binding, {team.size} ranks under {where}, "
          f"median of {args.rounds} interleaved rounds")
    print(f"{'':48} {'median':>12} {'min':>12} {'max':>12}")
    for name, v in rows.items():
        big = "MiB" in name
        unit, scale = ("ms", 1e3) if big else ("us", 1e6)
        med = statistics.median(v) * scale
        extra = f"  ({nbytes / statistics.median(v) / 1e9:.2f} GB/s per rank)" if big else ""
        print(f"{name:48} {med:9.3f} {unit} {min(v) * scale:9.3f} {unit} {max(v) * scale:9.3f} {unit}{extra}")
team.close()
