"""OSMP: topology-aware collectives inside one node, over shared memory.

See docs/python.md. Every collective takes NumPy arrays (or anything NumPy
views without a copy: buffer protocol, ``__array_interface__``, torch CPU
tensors through ``.numpy()``) and returns its result.
"""
from __future__ import annotations

import atexit
import enum
import threading

import numpy as _np

from . import _osmp
from ._osmp import ArgumentError, DtypeError, Error, Request

__all__ = [
    "Team", "Request", "Error", "ArgumentError", "DtypeError", "Op", "init",
    "SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR",
]
__version__ = _osmp.version()


class Op(enum.IntEnum):
    """Reduction operations (osmp_op_t)."""
    SUM = 0
    PROD = 1
    MIN = 2
    MAX = 3
    LAND = 4
    LOR = 5
    LXOR = 6
    BAND = 7
    BOR = 8
    BXOR = 9


SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR = tuple(Op)

# osmp_dtype_t codes, in the header's order.
_INT8, _INT16, _INT32, _INT64, _UINT8, _UINT16, _UINT32, _UINT64, _FLOAT, _DOUBLE, _FLOAT16, _BFLOAT16 = range(12)

# numpy dtype -> (code, dtype the buffer is exported as). bfloat16 arrays do
# not export a buffer (NumPy has no format for ml_dtypes' types), so they go
# to the library as a uint16 view of the same memory.
_DT = {
    _np.dtype(_np.int8): (_INT8, None), _np.dtype(_np.int16): (_INT16, None),
    _np.dtype(_np.int32): (_INT32, None), _np.dtype(_np.int64): (_INT64, None),
    _np.dtype(_np.uint8): (_UINT8, None), _np.dtype(_np.uint16): (_UINT16, None),
    _np.dtype(_np.uint32): (_UINT32, None), _np.dtype(_np.uint64): (_UINT64, None),
    _np.dtype(_np.float32): (_FLOAT, None), _np.dtype(_np.float64): (_DOUBLE, None),
    _np.dtype(_np.float16): (_FLOAT16, None),
}
try:
    import ml_dtypes as _ml

    _DT[_np.dtype(_ml.bfloat16)] = (_BFLOAT16, _np.dtype(_np.uint16))
except ImportError:  # bfloat16 arrays need ml_dtypes; without it none can exist
    pass

_OPS = {o.name.lower(): int(o) for o in Op}
_OPS.update({int(o): int(o) for o in Op})

_ndarray = _np.ndarray
_empty = _np.empty
_empty_like = _np.empty_like

# Collective codes (osmp_coll_t, the order of OSMP_COLL_MAP).
(_BARRIER, _BCAST, _REDUCE, _ALLREDUCE, _GATHER, _ALLGATHER, _SCATTER, _REDUCE_SCATTER_BLOCK, _ALLTOALL,
 _GATHERV, _SCATTERV, _ALLGATHERV, _ALLTOALLV, _REDUCE_SCATTER, _SCAN, _EXSCAN) = range(16)


def _arr(x, name="x"):
    if type(x) is _ndarray:
        return x
    if x is None:
        raise ArgumentError(f"{name} is None")
    try:
        return _np.asarray(x)
    except Exception as e:  # what NumPy cannot view has no buffer we could pass either
        raise ArgumentError(f"{name}: cannot view {type(x).__name__} as an array ({e})") from None


def _code(a, name="x"):
    try:
        return _DT[a.dtype]
    except KeyError:
        raise DtypeError(
            f"{name}: dtype {a.dtype} has no OSMP datatype (int8-64, uint8-64, float16, bfloat16, float32, "
            "float64; native byte order)") from None


def _op(op):
    try:
        return _OPS[op]
    except (KeyError, TypeError):
        raise ArgumentError(f"unknown op {op!r}: one of {', '.join(o.name.lower() for o in Op)} or osmp.SUM ...") \
            from None


def _buf(a, view):
    return a if view is None else a.view(view)


def _check_out(x, out, shape, fn):
    out = _arr(out, "out")
    if out.dtype != x.dtype:
        raise DtypeError(f"{fn}: out has dtype {out.dtype}, x {x.dtype}")
    if out.shape != shape:
        raise ArgumentError(f"{fn}: out has shape {out.shape}, expected {shape}")
    return out


def _counts(v, n, name, fn):
    if v is None:
        return []
    try:
        c = [int(i) for i in v]
    except (TypeError, ValueError):
        raise ArgumentError(f"{fn}: {name} must be a sequence of {n} non-negative integers") from None
    if len(c) != n or any(i < 0 for i in c):
        raise ArgumentError(f"{fn}: {name} must be a sequence of {n} non-negative integers, got {list(v)!r}")
    return c


def _displs(counts):
    d, s = [], 0
    for c in counts:
        d.append(s)
        s += c
    return d


class Team(_osmp.Handle):
    """A team of participants running collectives together (osmp_team_t).

    Every participant calls the same collectives in the same order with
    matching arguments, as in MPI. Use osmp.init() (under osmp-run) or
    Team.from_mpi(comm); close() frees it (collective).
    """

    @classmethod
    def from_mpi(cls, comm) -> "Team":
        """A team of the processes of an mpi4py communicator (all on this node).

        Collective over comm; the out-of-band exchange is comm.Allgather.
        """
        from mpi4py import MPI  # only this constructor needs mpi4py

        if not isinstance(comm, MPI.Comm):
            raise ArgumentError(f"from_mpi: expected an mpi4py communicator, got {type(comm).__name__}")
        t = cls()

        def allgather(send, recv):
            comm.Allgather([send, MPI.BYTE], [recv, MPI.BYTE])

        t._init_oob(comm.Get_rank(), comm.Get_size(), allgather)
        return t

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"rank {self.rank} of {self.size}"
        return f"<osmp.Team {state}>"

    # ---- blocking ------------------------------------------------------

    def barrier(self) -> None:
        self._call(_BARRIER, None, None, 0, _UINT8, 0, 0, False, None)

    def bcast(self, x, root=0):
        x = _arr(x)
        code, view = _code(x)
        return self._call(_BCAST, _buf(x, view), None, x.size, code, 0, root, False, x)

    def reduce(self, x, op="sum", root=0, out=None):
        return self._reduce(x, op, root, out, False)

    # allreduce itself is _osmp.Handle.allreduce: C++ for a NumPy array of a
    # dtype with a buffer format, and this body for everything else.
    def _allreduce_py(self, x, op="sum", out=None):
        if type(x) is not _ndarray:
            x = _arr(x)
        try:
            code, view = _DT[x.dtype]
            o = _OPS[op]
        except (KeyError, TypeError):
            code, view = _code(x)
            o = _op(op)
        if out is None:
            out = _empty_like(x)
        elif out is not x and (type(out) is not _ndarray or out.dtype is not x.dtype or out.shape != x.shape):
            out = _check_out(x, out, x.shape, "allreduce")
        if view is None:
            return self._call(_ALLREDUCE, x, out, x.size, code, o, 0, False, out)
        return self._call(_ALLREDUCE, x.view(view), out.view(view), x.size, code, o, 0, False, out)

    def gather(self, x, root=0, out=None):
        return self._gather(x, root, out, False)

    def allgather(self, x, out=None):
        return self._allgather(x, out, False)

    def scatter(self, x, root=0, out=None):
        return self._scatter(x, root, out, False)

    def alltoall(self, x, out=None):
        return self._alltoall(x, out, False)

    def reduce_scatter_block(self, x, op="sum", out=None):
        return self._rsb(x, op, out, False)

    def scan(self, x, op="sum", out=None):
        return self._scan(_SCAN, x, op, out, False)

    def exscan(self, x, op="sum", out=None):
        return self._scan(_EXSCAN, x, op, out, False)

    def gatherv(self, x, counts=None, root=0, out=None, displs=None):
        return self._gatherv(_GATHERV, x, counts, root, out, displs, False)

    def allgatherv(self, x, counts, out=None, displs=None):
        return self._gatherv(_ALLGATHERV, x, counts, 0, out, displs, False)

    def scatterv(self, x, counts, root=0, out=None, displs=None):
        return self._scatterv(x, counts, root, out, displs, False)

    def alltoallv(self, x, sendcounts, recvcounts, out=None, sdispls=None, rdispls=None):
        return self._alltoallv(x, sendcounts, recvcounts, out, sdispls, rdispls, False)

    def reduce_scatter(self, x, counts, op="sum", out=None):
        return self._reduce_scatter(x, counts, op, out, False)

    # ---- nonblocking: the same arguments, a Request whose wait() returns the result ----

    def ibarrier(self) -> Request:
        return self._call(_BARRIER, None, None, 0, _UINT8, 0, 0, True, None)

    def ibcast(self, x, root=0) -> Request:
        x = _arr(x)
        code, view = _code(x)
        return self._call(_BCAST, _buf(x, view), None, x.size, code, 0, root, True, x)

    def ireduce(self, x, op="sum", root=0, out=None) -> Request:
        return self._reduce(x, op, root, out, True)

    def iallreduce(self, x, op="sum", out=None) -> Request:
        x = _arr(x)
        code, view = _code(x)
        out = _empty_like(x) if out is None else out if out is x else _check_out(x, out, x.shape, "iallreduce")
        return self._call(_ALLREDUCE, _buf(x, view), _buf(out, view), x.size, code, _op(op), 0, True, out)

    def igather(self, x, root=0, out=None) -> Request:
        return self._gather(x, root, out, True)

    def iallgather(self, x, out=None) -> Request:
        return self._allgather(x, out, True)

    def iscatter(self, x, root=0, out=None) -> Request:
        return self._scatter(x, root, out, True)

    def ialltoall(self, x, out=None) -> Request:
        return self._alltoall(x, out, True)

    def ireduce_scatter_block(self, x, op="sum", out=None) -> Request:
        return self._rsb(x, op, out, True)

    def iscan(self, x, op="sum", out=None) -> Request:
        return self._scan(_SCAN, x, op, out, True)

    def iexscan(self, x, op="sum", out=None) -> Request:
        return self._scan(_EXSCAN, x, op, out, True)

    def igatherv(self, x, counts=None, root=0, out=None, displs=None) -> Request:
        return self._gatherv(_GATHERV, x, counts, root, out, displs, True)

    def iallgatherv(self, x, counts, out=None, displs=None) -> Request:
        return self._gatherv(_ALLGATHERV, x, counts, 0, out, displs, True)

    def iscatterv(self, x, counts, root=0, out=None, displs=None) -> Request:
        return self._scatterv(x, counts, root, out, displs, True)

    def ialltoallv(self, x, sendcounts, recvcounts, out=None, sdispls=None, rdispls=None) -> Request:
        return self._alltoallv(x, sendcounts, recvcounts, out, sdispls, rdispls, True)

    def ireduce_scatter(self, x, counts, op="sum", out=None) -> Request:
        return self._reduce_scatter(x, counts, op, out, True)

    # ---- shared bodies -------------------------------------------------

    def _root(self, root, fn):
        if not isinstance(root, int) or not 0 <= root < self.size:
            raise ArgumentError(f"{fn}: root {root!r} is not a rank of this team of {self.size}")
        return root

    def _reduce(self, x, op, root, out, nb):
        fn = "ireduce" if nb else "reduce"
        x = _arr(x)
        code, view = _code(x)
        o = _op(op)
        self._root(root, fn)
        if self.rank == root:
            out = _empty_like(x) if out is None else out if out is x else _check_out(x, out, x.shape, fn)
            recv, res = _buf(out, view), out
        else:
            recv, res = None, None
        return self._call(_REDUCE, _buf(x, view), recv, x.size, code, o, root, nb, res)

    def _gather(self, x, root, out, nb):
        fn = "igather" if nb else "gather"
        x = _arr(x)
        code, view = _code(x)
        self._root(root, fn)
        recv = res = None
        if self.rank == root:
            shape = (self.size,) + x.shape
            res = _empty(shape, x.dtype) if out is None else _check_out(x, out, shape, fn)
            recv = _buf(res, view)
        return self._call(_GATHER, _buf(x, view), recv, x.size, code, 0, root, nb, res)

    def _allgather(self, x, out, nb):
        fn = "iallgather" if nb else "allgather"
        x = _arr(x)
        code, view = _code(x)
        shape = (self.size,) + x.shape
        out = _empty(shape, x.dtype) if out is None else _check_out(x, out, shape, fn)
        return self._call(_ALLGATHER, _buf(x, view), _buf(out, view), x.size, code, 0, 0, nb, out)

    def _blocks(self, x, fn):
        if x.ndim == 0 or x.shape[0] != self.size:
            raise ArgumentError(f"{fn}: x must have shape (team size {self.size}, ...), got {x.shape}")
        return x.size // self.size

    def _scatter(self, x, root, out, nb):
        # x is read at the root only; elsewhere it may be None (then out is
        # required) or an array of the root's shape and dtype, from which out
        # is made.
        fn = "iscatter" if nb else "scatter"
        self._root(root, fn)
        if self.rank == root or x is not None:
            x = _arr(x)
            code, view = _code(x)
            count = self._blocks(x, fn)
            out = _empty(x.shape[1:], x.dtype) if out is None else _check_out(x, out, x.shape[1:], fn)
        else:
            if out is None:
                raise ArgumentError(f"{fn}: a rank other than the root passes out (or x, for its shape and dtype)")
            out = _arr(out, "out")
            code, view = _code(out, "out")
            count = out.size
        send = _buf(x, view) if self.rank == root else None
        return self._call(_SCATTER, send, _buf(out, view), count, code, 0, root, nb, out)

    def _alltoall(self, x, out, nb):
        fn = "ialltoall" if nb else "alltoall"
        x = _arr(x)
        code, view = _code(x)
        count = self._blocks(x, fn)
        out = _empty_like(x) if out is None else _check_out(x, out, x.shape, fn)
        return self._call(_ALLTOALL, _buf(x, view), _buf(out, view), count, code, 0, 0, nb, out)

    def _rsb(self, x, op, out, nb):
        fn = "ireduce_scatter_block" if nb else "reduce_scatter_block"
        x = _arr(x)
        code, view = _code(x)
        o = _op(op)
        count = self._blocks(x, fn)
        out = _empty(x.shape[1:], x.dtype) if out is None else _check_out(x, out, x.shape[1:], fn)
        return self._call(_REDUCE_SCATTER_BLOCK, _buf(x, view), _buf(out, view), count, code, o, 0, nb, out)

    def _scan(self, coll, x, op, out, nb):
        fn = ("i" if nb else "") + ("scan" if coll == _SCAN else "exscan")
        x = _arr(x)
        code, view = _code(x)
        o = _op(op)
        res = out
        if out is None:
            out = _empty_like(x)
            # exscan leaves rank 0's output alone: there is no result to return
            res = None if coll == _EXSCAN and self.rank == 0 else out
        elif out is not x:
            out = res = _check_out(x, out, x.shape, fn)
        return self._call(coll, _buf(x, view), _buf(out, view), x.size, code, o, 0, nb, res)

    def _flat_out(self, x, out, n, fn):
        if out is None:
            return _empty(n, x.dtype)
        out = _arr(out, "out")
        if out.dtype != x.dtype:
            raise DtypeError(f"{fn}: out has dtype {out.dtype}, x {x.dtype}")
        if out.size < n:
            raise ArgumentError(f"{fn}: out holds {out.size} elements, the counts need {n}")
        return out

    def _gatherv(self, coll, x, counts, root, out, displs, nb):
        fn = ("i" if nb else "") + ("gatherv" if coll == _GATHERV else "allgatherv")
        x = _arr(x)
        code, view = _code(x)
        self._root(root, fn)
        recv = res = None
        c = d = []
        if coll == _ALLGATHERV or self.rank == root:
            c = _counts(counts, self.size, "counts", fn)
            if not c:
                raise ArgumentError(f"{fn}: counts are needed" + (" at the root" if coll == _GATHERV else ""))
            d = _counts(displs, self.size, "displs", fn) if displs is not None else _displs(c)
            if c[self.rank] != x.size:
                raise ArgumentError(f"{fn}: x holds {x.size} elements, counts[{self.rank}] is {c[self.rank]}")
            n = max((di + ci for ci, di in zip(c, d) if ci), default=0)
            res = self._flat_out(x, out, n, fn)
            recv = _buf(res, view)
        return self._callv(coll, _buf(x, view), recv, x.size, c, d, [], [], code, 0, root, nb, res)

    def _scatterv(self, x, counts, root, out, displs, nb):
        fn = "iscatterv" if nb else "scatterv"
        self._root(root, fn)
        c = _counts(counts, self.size, "counts", fn)
        if not c:
            raise ArgumentError(f"{fn}: counts are needed on every rank (each receives counts[rank])")
        d = _counts(displs, self.size, "displs", fn) if displs is not None else _displs(c)
        src = x if (self.rank == root or out is None) else out
        if src is None:
            raise ArgumentError(f"{fn}: a rank other than the root passes out (or x, for its dtype)")
        src = _arr(src)
        code, view = _code(src)
        mine = c[self.rank]
        if out is None:
            out = _empty(mine, src.dtype)
        else:
            out = _arr(out, "out")
            if out.dtype != src.dtype:
                raise DtypeError(f"{fn}: out has dtype {out.dtype}, x {src.dtype}")
            if out.size != mine:
                raise ArgumentError(f"{fn}: out holds {out.size} elements, counts[{self.rank}] is {mine}")
        send = _buf(_arr(x), view) if self.rank == root else None
        return self._callv(_SCATTERV, send, _buf(out, view), mine, c, d, [], [], code, 0, root, nb, out)

    def _alltoallv(self, x, sendcounts, recvcounts, out, sdispls, rdispls, nb):
        fn = "ialltoallv" if nb else "alltoallv"
        x = _arr(x)
        code, view = _code(x)
        sc = _counts(sendcounts, self.size, "sendcounts", fn)
        rc = _counts(recvcounts, self.size, "recvcounts", fn)
        if not sc or not rc:
            raise ArgumentError(f"{fn}: sendcounts and recvcounts are needed")
        sd = _counts(sdispls, self.size, "sdispls", fn) if sdispls is not None else _displs(sc)
        rd = _counts(rdispls, self.size, "rdispls", fn) if rdispls is not None else _displs(rc)
        n = max((di + ci for ci, di in zip(rc, rd) if ci), default=0)
        out = self._flat_out(x, out, n, fn)
        return self._callv(_ALLTOALLV, _buf(x, view), _buf(out, view), 0, sc, sd, rc, rd, code, 0, 0, nb, out)

    def _reduce_scatter(self, x, counts, op, out, nb):
        fn = "ireduce_scatter" if nb else "reduce_scatter"
        x = _arr(x)
        code, view = _code(x)
        o = _op(op)
        c = _counts(counts, self.size, "counts", fn)
        if not c:
            raise ArgumentError(f"{fn}: counts are needed")
        if sum(c) != x.size:
            raise ArgumentError(f"{fn}: x holds {x.size} elements, the counts sum to {sum(c)}")
        mine = c[self.rank]
        if out is None:
            out = _empty(mine, x.dtype)
        else:
            out = self._flat_out(x, out, mine, fn)
        return self._callv(_REDUCE_SCATTER, _buf(x, view), _buf(out, view), 0, c, [], [], [], code, o, 0, nb, out)


_osmp._setup_fast(_np.ndarray, _np.empty_like, Team._allreduce_py)

_world = None
_world_lock = threading.Lock()


def init() -> Team:
    """The team of the processes osmp-run started (a team of one elsewhere).

    Later calls return the same team until it is closed; it is closed at exit.
    """
    global _world
    with _world_lock:
        if _world is None or _world.closed:
            t = Team()
            t._init_world()
            _world = t
        return _world


@atexit.register
def _finalize():
    w = _world
    if w is not None and not w.closed:
        try:
            w.close()
        except Error:
            pass  # a team that lost a participant: nothing left to free collectively
