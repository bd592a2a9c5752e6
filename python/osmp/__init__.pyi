"""OSMP: topology-aware collectives inside one node, over shared memory (docs/python.md)."""
import enum
from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

ArrayLike = Any  # an ndarray, or anything NumPy views without a copy (buffer protocol, __array_interface__)
OpLike = Union[str, int, "Op"]

class Error(RuntimeError):
    """An OSMP call failed. ``status`` is the status name (``"OSMP_ERR_TYPE"``, ...); str() the message."""
    status: str

class ArgumentError(Error, ValueError):
    """Bad argument (shape, count, root, contiguity, closed team ...), refused before any collective started."""

class DtypeError(Error, TypeError):
    """A dtype OSMP has no datatype for, or an operation not defined on it (status OSMP_ERR_TYPE)."""

class Op(enum.IntEnum):
    """Reduction operations; ops may also be given as their lower-case names ("sum", ...)."""
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

SUM: Op
PROD: Op
MIN: Op
MAX: Op
LAND: Op
LOR: Op
LXOR: Op
BAND: Op
BOR: Op
BXOR: Op

class Request:
    """A nonblocking collective in progress. It holds the call's buffers until it completes; do not
    read its output or write its input meanwhile. Completing it in any order is allowed."""
    @property
    def done(self) -> bool:
        """True once completed (by wait() or a successful test())."""
    def wait(self) -> Any:
        """Block (GIL released) until complete; returns what the blocking call returns. Raises Error on failure."""
    def test(self) -> bool:
        """Advance the call; True once complete (then wait() returns the result at once)."""

def init() -> "Team":
    """The team of the processes osmp-run started (osmp_init); a team of one outside osmp-run.
    The same team until closed; closed at exit (osmp_finalize)."""

class Team:
    """A team of participants; every participant calls the same collectives in the same order.

    Arrays: C-contiguous, native byte order, dtype int8-64, uint8-64, float16, bfloat16 (ml_dtypes),
    float32 or float64. Results are new arrays unless ``out`` is given (then ``out`` is returned).
    In place: ``out=x`` for reduce, allreduce, scan and exscan; bcast always works in place.
    Blocking calls release the GIL.
    """
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @classmethod
    def from_mpi(cls, comm: Any) -> "Team":
        """A team of the processes of an mpi4py communicator (collective over comm; all on one node)."""
    def close(self) -> None:
        """Free the team (collective). Refused while nonblocking calls are outstanding. Later calls raise Error
        with status OSMP_ERR_BAD_TEAM."""
    def __enter__(self) -> "Team": ...
    def __exit__(self, *exc: Any) -> None: ...

    def barrier(self) -> None: ...
    def bcast(self, x: ArrayLike, root: int = 0) -> np.ndarray:
        """Root's x into every rank's x (in place); returns x."""
    def reduce(self, x: ArrayLike, op: OpLike = "sum", root: int = 0, out: Optional[ArrayLike] = None
               ) -> Optional[np.ndarray]:
        """Element-wise reduction of every rank's x; the result at root (None elsewhere)."""
    def allreduce(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None) -> np.ndarray:
        """Element-wise reduction of every rank's x, at every rank. out=x: in place."""
    def gather(self, x: ArrayLike, root: int = 0, out: Optional[ArrayLike] = None) -> Optional[np.ndarray]:
        """Root gets shape (size, *x.shape), row r from rank r; None elsewhere."""
    def allgather(self, x: ArrayLike, out: Optional[ArrayLike] = None) -> np.ndarray:
        """Every rank gets shape (size, *x.shape), row r from rank r."""
    def scatter(self, x: Optional[ArrayLike], root: int = 0, out: Optional[ArrayLike] = None) -> np.ndarray:
        """Row r of root's x (shape (size, ...)) to rank r. Other ranks pass out, or an x of root's shape and
        dtype (not read)."""
    def alltoall(self, x: ArrayLike, out: Optional[ArrayLike] = None) -> np.ndarray:
        """x of shape (size, ...): row j of rank i lands in row i of rank j."""
    def reduce_scatter_block(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None
                             ) -> np.ndarray:
        """x of shape (size, ...): rank r gets the reduction of every rank's row r."""
    def scan(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None) -> np.ndarray:
        """Rank r gets the reduction of ranks 0..r, in rank order."""
    def exscan(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None) -> Optional[np.ndarray]:
        """Rank r gets the reduction of ranks 0..r-1; rank 0 gets out untouched (None without out)."""
    def gatherv(self, x: ArrayLike, counts: Optional[Sequence[int]] = None, root: int = 0,
                out: Optional[ArrayLike] = None, displs: Optional[Sequence[int]] = None) -> Optional[np.ndarray]:
        """Flat blocks of counts[r] elements (x.size == counts[rank]) at displs (default packed) in root's flat
        result; counts needed at the root only; None elsewhere."""
    def allgatherv(self, x: ArrayLike, counts: Sequence[int], out: Optional[ArrayLike] = None,
                   displs: Optional[Sequence[int]] = None) -> np.ndarray:
        """gatherv's result at every rank. Elements of out outside the blocks are left alone."""
    def scatterv(self, x: Optional[ArrayLike], counts: Sequence[int], root: int = 0,
                 out: Optional[ArrayLike] = None, displs: Optional[Sequence[int]] = None) -> np.ndarray:
        """Rank r gets counts[r] elements of root's flat x from displs[r]. counts on every rank; other ranks
        pass out, or an x of the dtype (not read)."""
    def alltoallv(self, x: ArrayLike, sendcounts: Sequence[int], recvcounts: Sequence[int],
                  out: Optional[ArrayLike] = None, sdispls: Optional[Sequence[int]] = None,
                  rdispls: Optional[Sequence[int]] = None) -> np.ndarray:
        """sendcounts[j] elements at sdispls[j] go to rank j; recvcounts[i] from rank i land at rdispls[i]."""
    def reduce_scatter(self, x: ArrayLike, counts: Sequence[int], op: OpLike = "sum",
                       out: Optional[ArrayLike] = None) -> np.ndarray:
        """x holds sum(counts) elements; rank r gets the reduction of its counts[r] (after the lower ranks')."""

    def ibarrier(self) -> Request: ...
    def ibcast(self, x: ArrayLike, root: int = 0) -> Request: ...
    def ireduce(self, x: ArrayLike, op: OpLike = "sum", root: int = 0, out: Optional[ArrayLike] = None
                ) -> Request: ...
    def iallreduce(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None) -> Request: ...
    def igather(self, x: ArrayLike, root: int = 0, out: Optional[ArrayLike] = None) -> Request: ...
    def iallgather(self, x: ArrayLike, out: Optional[ArrayLike] = None) -> Request: ...
    def iscatter(self, x: Optional[ArrayLike], root: int = 0, out: Optional[ArrayLike] = None) -> Request: ...
    def ialltoall(self, x: ArrayLike, out: Optional[ArrayLike] = None) -> Request: ...
    def ireduce_scatter_block(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None
                              ) -> Request: ...
    def iscan(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None) -> Request: ...
    def iexscan(self, x: ArrayLike, op: OpLike = "sum", out: Optional[ArrayLike] = None) -> Request: ...
    def igatherv(self, x: ArrayLike, counts: Optional[Sequence[int]] = None, root: int = 0,
                 out: Optional[ArrayLike] = None, displs: Optional[Sequence[int]] = None) -> Request: ...
    def iallgatherv(self, x: ArrayLike, counts: Sequence[int], out: Optional[ArrayLike] = None,
                    displs: Optional[Sequence[int]] = None) -> Request: ...
    def iscatterv(self, x: Optional[ArrayLike], counts: Sequence[int], root: int = 0,
                  out: Optional[ArrayLike] = None, displs: Optional[Sequence[int]] = None) -> Request: ...
    def ialltoallv(self, x: ArrayLike, sendcounts: Sequence[int], recvcounts: Sequence[int],
                   out: Optional[ArrayLike] = None, sdispls: Optional[Sequence[int]] = None,
                   rdispls: Optional[Sequence[int]] = None) -> Request: ...
    def ireduce_scatter(self, x: ArrayLike, counts: Sequence[int], op: OpLike = "sum",
                        out: Optional[ArrayLike] = None) -> Request: ...
