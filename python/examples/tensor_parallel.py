"""Row-parallel linear layer: y = x @ W^T with W's input columns split across ranks.

Rank r holds W[:, cols_r] and x[:, cols_r], computes the partial product
x[:, cols_r] @ W[:, cols_r]^T (every rank: the full output shape), and the
ranks sum the partials with a bfloat16 allreduce. Every rank checks the result
against the single-process product.

    osmp-run -n 4 python3 python/examples/tensor_parallel.py
"""
import sys

import ml_dtypes
import numpy as np

import osmp

BATCH, IN, OUT = 8, 1024, 256

team = osmp.init()
rank, size = team.rank, team.size

# The same seed everywhere: each rank can make the whole layer, and keeps its slice.
rng = np.random.default_rng(2024)
W = rng.standard_normal((OUT, IN), dtype=np.float32)
x = rng.standard_normal((BATCH, IN), dtype=np.float32)
cols = np.array_split(np.arange(IN), size)[rank]
W_slice, x_slice = W[:, cols].copy(), x[:, cols].copy()

partial = (x_slice @ W_slice.T).astype(ml_dtypes.bfloat16)
y = team.allreduce(partial, op="sum")
how = "bfloat16 allreduce"

# Bound: each partial rounds once to bfloat16 (eps/2 of it), then up to
# size - 1 additions each round once (eps/2 of the running sum), so
# |y - ref| <= size * eps * sum_i |partial_i|, plus float32's matmul error.
ref = x.astype(np.float64) @ W.T.astype(np.float64)
abs_partials = sum(np.abs(x[:, c].astype(np.float64) @ W[:, c].T.astype(np.float64))
                   for c in np.array_split(np.arange(IN), size))
eps = float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)
bound = size * eps * abs_partials + IN * np.finfo(np.float32).eps * (np.abs(x) @ np.abs(W).T)
err = np.abs(y.astype(np.float64) - ref)
ok = bool(np.all(err <= bound))
worst = float(np.max(err / np.maximum(bound, 1e-300)))
if rank == 0:
    print(f"tensor_parallel: {size} ranks, x {x.shape} @ W^T {W.T.shape}, {how}; "
          f"max |y - ref| = {err.max():.4g} (max error/bound {worst:.3f}): {'ok' if ok else 'FAILED'}")
team.close()
sys.exit(0 if ok else 1)
