# Exact results for integer-valued inputs in every dtype (each rank computes
# every rank's contribution and the reference with NumPy in the same dtype),
# a stated bound for random floats, bad input refused before any collective
# (the team works afterwards), and nonblocking calls completed in any order.
import array
import threading
import time

import numpy as np
import pytest

import osmp

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]
HALVES = [np.float16, BF16]
ALL = [np.dtype(d) for d in INTS + FLOATS + HALVES]
N = 7  # elements per rank: odd, not a multiple of any vector width


def contrib(rank, dtype, op, n=N, salt=0):
    """Rank's integer-valued input: small enough that every dtype holds every
    partial result exactly (bfloat16: below 256), except integer sums and
    products, which wrap around in C as in NumPy."""
    i = np.arange(n) + salt
    if op == "prod":
        v = np.where(rank < 8, 1 + (rank + i) % 2, 1)
    elif op in ("land", "lor", "lxor"):
        v = (rank + i) % 3 == 0
    elif op in ("band", "bor", "bxor"):
        v = (rank * 37 + i * 11) % 128
    else:
        v = rank % 4 + i % 3
    return v.astype(dtype)


UFUNC = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum, "band": np.bitwise_and,
         "bor": np.bitwise_or, "bxor": np.bitwise_xor, "land": np.logical_and, "lor": np.logical_or,
         "lxor": np.logical_xor}


def reference(ranks, dtype, op, n=N, salt=0):
    acc = contrib(ranks[0], dtype, op, n, salt)
    for r in ranks[1:]:
        acc = UFUNC[op](acc, contrib(r, dtype, op, n, salt))
    return np.asarray(acc).astype(dtype)


def ops_for(dtype):
    if np.dtype(dtype).kind in "iu":
        return list(UFUNC)
    return ["sum", "prod", "min", "max"]


def exact(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (got, want)


CASES = [(d, op) for d in ALL for op in ops_for(d)]


@pytest.mark.parametrize("dtype,op", [pytest.param(d, o, id=f"{d}-{o}")
                                      for d, o in CASES])
def test_allreduce_exact(team, dtype, op):
    everyone = list(range(team.size))
    exact(team.allreduce(contrib(team.rank, dtype, op), op=op), reference(everyone, dtype, op))
    x = contrib(team.rank, dtype, op)
    assert team.allreduce(x, op=getattr(osmp, op.upper()), out=x) is x  # in place
    exact(x, reference(everyone, dtype, op))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_reductions_exact(team, dtype):
    r, n = team.rank, team.size
    root = n - 1
    got = team.reduce(contrib(r, dtype, "max"), op="max", root=root)
    if r == root:
        exact(got, reference(list(range(n)), dtype, "max"))
    else:
        assert got is None
    exact(team.scan(contrib(r, dtype, "sum")), reference(list(range(r + 1)), dtype, "sum"))
    got = team.exscan(contrib(r, dtype, "sum"))
    if r == 0:
        assert got is None
    else:
        exact(got, reference(list(range(r)), dtype, "sum"))
    # reduce_scatter_block: block b of every rank's (n, N) input; rank r gets block r.
    x = np.stack([contrib(r, dtype, "sum", salt=b) for b in range(n)])
    exact(team.reduce_scatter_block(x), reference(list(range(n)), dtype, "sum", salt=r))
    # reduce_scatter: rank b's block has b + 1 elements.
    counts = [b + 1 for b in range(n)]
    x = contrib(r, dtype, "sum", n=sum(counts))
    want = reference(list(range(n)), dtype, "sum", n=sum(counts))
    start = sum(counts[:r])
    exact(team.reduce_scatter(x, counts), want[start:start + counts[r]])


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_data_movement_exact(team, dtype):
    r, n = team.rank, team.size
    mine = contrib(r, dtype, "sum")
    everyone = np.stack([contrib(q, dtype, "sum") for q in range(n)])
    root = n // 2
    x = mine.copy() if r == root else np.zeros(N, dtype)
    assert team.bcast(x, root=root) is x
    exact(x, contrib(root, dtype, "sum"))
    got = team.gather(mine, root=root)
    if r == root:
        exact(got, everyone)
    else:
        assert got is None
    exact(team.allgather(mine), everyone)
    exact(team.scatter(everyone if r == root else None, root=root, out=np.empty(N, dtype)), everyone[r])
    exact(team.scatter(everyone, root=root), everyone[r])
    # alltoall: block q of rank p is contrib(p, salt=q)
    send = np.stack([contrib(r, dtype, "sum", salt=q) for q in range(n)])
    exact(team.alltoall(send), np.stack([contrib(p, dtype, "sum", salt=r) for p in range(n)]))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_vector_forms_exact(team, dtype):
    r, n = team.rank, team.size
    counts = [(q % 3) + 1 for q in range(n)]  # rank q's block: 1..3 elements
    blocks = [contrib(q, dtype, "sum", n=counts[q]) for q in range(n)]
    packed = np.concatenate(blocks)
    root = 0
    got = team.gatherv(blocks[r], counts, root=root)
    if r == root:
        exact(got, packed)
    else:
        assert got is None
    exact(team.allgatherv(blocks[r], counts), packed)
    # displacements with gaps: block q at 4q; the gaps are left alone.
    displs = [4 * q for q in range(n)]
    out = np.zeros(4 * n, dtype)
    team.allgatherv(blocks[r], counts, out=out, displs=displs)
    want = np.zeros(4 * n, dtype)
    for q in range(n):
        want[displs[q]:displs[q] + counts[q]] = blocks[q]
    exact(out, want)
    exact(team.scatterv(packed if r == root else None, counts, root=root, out=np.empty(counts[r], dtype)), blocks[r])
    # alltoallv: rank p sends (p + q) % 3 + 1 elements to rank q.
    sc = [(r + q) % 3 + 1 for q in range(n)]
    rc = [(p + r) % 3 + 1 for p in range(n)]
    send = np.concatenate([contrib(r, dtype, "sum", n=sc[q], salt=q) for q in range(n)])
    want = np.concatenate([contrib(p, dtype, "sum", n=rc[p], salt=r) for p in range(n)])
    exact(team.alltoallv(send, sc, rc), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16], ids=str)
def test_allreduce_random_floats(team, dtype):
    # Any summation order of n terms is within (n - 1) * eps * sum|x_i| of the
    # exact sum (Higham, Accuracy and Stability, 4.2); the reference is summed
    # in float64 from the same rounded inputs, and the result is rounded once
    # more to dtype: half an ulp of it on top.
    n, dt = team.size, np.dtype(dtype)
    xs = [np.random.default_rng(1000 + q).standard_normal(1000).astype(dt) for q in range(n)]
    got = team.allreduce(xs[team.rank]).astype(np.float64)
    exact64 = np.sum([x.astype(np.float64) for x in xs], axis=0)
    absum = np.sum([np.abs(x.astype(np.float64)) for x in xs], axis=0)
    eps = float(ml_dtypes.finfo(dt).eps) if dt == BF16 else float(np.finfo(dt).eps)
    bound = (n - 1) * eps * absum + eps * np.abs(exact64)
    assert np.all(np.abs(got - exact64) <= bound)


def still_works(team):
    exact(team.allreduce(np.full(3, team.rank + 1, np.int64)), np.full(3, team.size * (team.size + 1) // 2, np.int64))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_empty_arrays(team, dtype):
    """Zero elements, as MPI allows: every collective returns an empty result of the right shape."""
    n, e = team.size, np.zeros(0, dtype)
    assert team.allreduce(e).shape == (0,)
    assert team.bcast(np.zeros(0, dtype)).shape == (0,)
    assert team.allgather(e).shape == (n, 0)
    assert team.alltoall(np.zeros((n, 0), dtype)).shape == (n, 0)
    assert team.reduce_scatter_block(np.zeros((n, 0), dtype)).shape == (0,)
    assert team.scan(e).shape == (0,)
    assert team.allgatherv(e, [0] * n).shape == (0,)
    got = team.reduce(e, root=n - 1)
    assert got.shape == (0,) if team.rank == n - 1 else got is None


def test_bad_input_raises_and_team_works(team):
    x = np.arange(12.0)
    bad = [
        (osmp.ArgumentError, lambda: team.allreduce(x[::2])),  # not contiguous
        (osmp.DtypeError, lambda: team.allreduce(np.arange(3, dtype=np.complex128))),
        (osmp.DtypeError, lambda: team.allreduce(np.arange(3, dtype=">f8"))),  # byte order
        (osmp.ArgumentError, lambda: team.allreduce(x, out=np.empty(5))),  # shape
        (osmp.DtypeError, lambda: team.allreduce(x, out=np.empty(12, np.float32))),
        (osmp.ArgumentError, lambda: team.allreduce(x, op="avg")),
        (osmp.DtypeError, lambda: team.allreduce(x, op="bxor")),  # the library's OSMP_ERR_TYPE
        (osmp.ArgumentError, lambda: team.bcast(x, root=team.size)),
        (osmp.ArgumentError, lambda: team.reduce(x, root=-1)),
        (osmp.ArgumentError, lambda: team.alltoall(np.arange(team.size + 1))),
        (osmp.ArgumentError, lambda: team.allgatherv(x, [1] * (team.size + 1))),
        (osmp.ArgumentError, lambda: team.allgatherv(x, [1] * team.size)),  # counts[rank] != x.size
        (osmp.ArgumentError, lambda: team.reduce_scatter(x, [1] * team.size)),
        (osmp.ArgumentError, lambda: team.allreduce(x, out=np.frombuffer(bytes(96)))),  # read-only
        (osmp.ArgumentError, lambda: team.allreduce(x[:6], out=x[3:9])),  # overlap
        (osmp.ArgumentError, lambda: team.allreduce(None)),
    ]
    for exc, call in bad:
        with pytest.raises(exc) as e:
            call()
        assert isinstance(e.value, osmp.Error) and e.value.status.startswith("OSMP_ERR_"), e.value
        assert str(e.value)
        still_works(team)
    with pytest.raises(osmp.Error) as e:
        osmp.Team().barrier()  # never opened: as a closed team
    assert e.value.status == "OSMP_ERR_BAD_TEAM"
    still_works(team)


def test_buffer_protocol_inputs(team):
    n = team.size
    want = float(n * (n - 1) // 2)
    exact(team.allreduce(array.array("d", [team.rank] * 3)), np.full(3, want))
    exact(team.allreduce(memoryview(bytearray(np.full(2, team.rank, np.int32).tobytes())).cast("i")),
          np.full(2, int(want), np.int32))

    class Iface:  # only __array_interface__
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    buf = np.full(4, team.rank, np.float32)
    out = np.empty(4, np.float32)
    team.allreduce(Iface(buf), out=Iface(out))
    exact(out, np.full(4, want, np.float32))
    torch = pytest.importorskip("torch")
    t = torch.full((3,), float(team.rank), dtype=torch.float64)
    team.allreduce(t.numpy(), out=t.numpy())  # in place on the tensor's memory
    assert t.tolist() == [want] * 3


def test_requests_any_order(team):
    r, n = team.rank, team.size
    reqs = {
        "allreduce": (team.iallreduce(np.full(5, r, np.int64)), np.full(5, n * (n - 1) // 2, np.int64)),
        "allgather": (team.iallgather(np.array([r, -r], np.int32)),
                      np.array([[q, -q] for q in range(n)], np.int32)),
        "bcast": (team.ibcast(np.arange(3.0) if r == 0 else np.zeros(3)), np.arange(3.0)),
        "barrier": (team.ibarrier(), None),
        "scan": (team.iscan(np.ones(2, np.uint16)), np.full(2, r + 1, np.uint16)),
        "alltoallv": (team.ialltoallv(np.full(n, r, np.int8), [1] * n, [1] * n), np.arange(n, dtype=np.int8)),
    }
    order = list(reqs)
    np.random.default_rng(r).shuffle(order)  # every rank completes them in its own order
    for k in order[: len(order) // 2]:
        req, want = reqs[k]
        while not req.test():
            pass
        got = req.wait()
        if want is not None:
            exact(got, want)
    for k in order[len(order) // 2:]:
        req, want = reqs[k]
        got = req.wait()
        assert req.done
        if want is not None:
            exact(got, want)
    # A request dropped before completion: its buffers stay alive until the
    # next blocking call completes it.
    team.iallreduce(np.ones(1000))
    still_works(team)


def test_gil_released_during_blocking_call(team):
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    th = threading.Thread(target=spin)
    th.start()
    if team.rank == 0:
        time.sleep(0.3)  # the others wait in the barrier meanwhile
    before = ticks[0]
    team.barrier()
    after = ticks[0]
    stop.set()
    th.join()
    if team.rank != 0:
        assert after - before > 10, "the thread did not run while this rank waited in barrier()"
