#!/usr/bin/env python3
"""Communication matrices of standard patterns, in the .mat layout osmp-map reads
(N lines of N numbers, row i = bytes rank i sends to each rank).

usage: patterns.py PATTERN N [BYTES]
  stencil2d   a 2D 5-point halo exchange on the most square P x Q grid with P*Q = N (non-periodic)
  stencil3d   a 3D 7-point halo exchange on the most cubic grid with X*Y*Z = N (non-periodic)
  cg          NAS CG-like: a sqrt(N) x sqrt(N) process grid (N a power of 2: 2^k x 2^(k or k+1)),
              reductions along rows (log2 partners at distances 1, 2, 4, ...) and the transpose exchange
  subgroups   all-to-all inside consecutive groups of 8 ranks (N a multiple of 8)
  ring        each rank with its two neighbours
"""
import sys


def factor2(n):
    best = (1, n)
    for p in range(1, int(n ** 0.5) + 1):
        if n % p == 0:
            best = (p, n // p)
    return best


def factor3(n):
    best = None
    for x in range(1, n + 1):
        if n % x:
            continue
        for y in range(x, n // x + 1):
            if (n // x) % y:
                continue
            z = n // x // y
            if z < y:
                continue
            cand = (z - x, (x, y, z))
            if best is None or cand < best:
                best = cand
    return best[1]


def matrix(pattern, n, b=1):
    m = [[0] * n for _ in range(n)]

    def add(i, j, v):
        if i != j:
            m[i][j] += v

    if pattern == "stencil2d":
        p, q = factor2(n)
        for r in range(n):
            x, y = r % q, r // q
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= x + dx < q and 0 <= y + dy < p:
                    add(r, (y + dy) * q + x + dx, b)
    elif pattern == "stencil3d":
        a, c, d = factor3(n)
        for r in range(n):
            x, y, z = r % a, (r // a) % c, r // (a * c)
            for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                if 0 <= x + dx < a and 0 <= y + dy < c and 0 <= z + dz < d:
                    add(r, ((z + dz) * c + y + dy) * a + x + dx, b)
    elif pattern == "cg":
        k = n.bit_length() - 1
        if 1 << k != n:
            sys.exit("cg: N must be a power of 2")
        rows = 1 << (k // 2)
        cols = n // rows
        for r in range(n):
            i, j = r // cols, r % cols
            s = 1
            while s < cols:  # recursive-doubling reduction along the row
                add(r, i * cols + (j ^ s), b)
                s *= 2
            # transpose partner (square part of the grid)
            t = (j % rows) * cols + i * (cols // rows) + j // rows
            add(r, t, b)
    elif pattern == "subgroups":
        if n % 8:
            sys.exit("subgroups: N must be a multiple of 8")
        for r in range(n):
            g = r // 8 * 8
            for s in range(g, g + 8):
                add(r, s, b)
    elif pattern == "ring":
        for r in range(n):
            add(r, (r + 1) % n, b)
            add(r, (r - 1) % n, b)
    else:
        sys.exit("unknown pattern " + pattern)
    return m


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mat = matrix(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    for row in mat:
        print(" ".join(str(v) for v in row) + " ")
