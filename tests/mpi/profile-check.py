#!/usr/bin/env python3
"""OSMP_PROFILE exactness: run profile-check (tests/mpi/profile-check.c) with
OSMP_PROFILE set and compare FILE (the .mat: point-to-point plus collective
bytes) and FILE.json with what the program sent, byte for byte and message for
message, and what its broadcasts moved.

usage: profile-check.py [--fortran] N LAUNCH... PROGRAM
  (LAUNCH: the launcher and its options up to the rank count, which is N;
  --fortran: the program is tests/mpi/fortran/profile-fortran.F90)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

fortran = sys.argv[1] == "--fortran"
args = sys.argv[2:] if fortran else sys.argv[1:]
n = int(args[0])
cmd = args[1:]


def expected_fortran(n):
    b = [[0] * n for _ in range(n)]
    m = [[0] * n for _ in range(n)]
    for r in range(n):
        b[r][(r + 1) % n] += 8 + 16 + 32 + 2 * 64 + 128 + 256 + 512
        m[r][(r + 1) % n] += 8
    for color in (0, 1):
        members = sorted([r for r in range(n) if r % 2 == color], key=lambda r: -r)
        if len(members) > 1:
            for q, r in enumerate(members):
                b[r][members[(q + 1) % len(members)]] += 1024
                m[r][members[(q + 1) % len(members)]] += 1
    z = [[0] * n for _ in range(n)]
    return b, m, z, [row[:] for row in z]


def expected(n):
    b = [[0] * n for _ in range(n)]
    m = [[0] * n for _ in range(n)]
    for r in range(n):
        to = (r + 1) % n
        b[r][to] += 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + 2 * 256 + 1024 + 2048 + 4096
        m[r][to] += 13
        b[r][(r + 2) % n] += 48
        m[r][(r + 2) % n] += 1
    for color in (0, 1):
        members = sorted([r for r in range(n) if r % 2 == color], key=lambda r: -r)
        if len(members) > 1:
            for q, r in enumerate(members):
                d = members[(q + 1) % len(members)]
                b[r][d] += 8192
                m[r][d] += 1
    cb = [[0] * n for _ in range(n)]
    cc = [[0] * n for _ in range(n)]
    for r in range(0, n - 1, 2):
        cb[r][r + 1] = 1000
        cc[r][r + 1] = 1
    return b, m, cb, cc


tmp = tempfile.mkdtemp()
try:
    prof = os.path.join(tmp, "prof")
    env = dict(os.environ, OSMP_PROFILE=prof)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=250)
    if r.returncode != 0:
        sys.exit("run failed (%d): %s\n%s" % (r.returncode, r.stdout, r.stderr))
    want_b, want_m, want_cb, want_cc = (expected_fortran if fortran else expected)(n)
    text = open(prof).read()
    want_text = "".join("".join("%d " % (v + c) for v, c in zip(row, crow)) + "\n" for row, crow in zip(want_b, want_cb))
    bad = 0
    if text != want_text:
        print("FILE differs:\n--- expected\n%s--- got\n%s" % (want_text, text))
        bad = 1
    j = json.load(open(prof + ".json"))
    want = {"ranks": n, "p2p": {"bytes": want_b, "messages": want_m},
            "collectives": {"bytes": want_cb, "calls": want_cc}}
    if j != want:
        print("FILE.json differs:\nexpected %s\ngot      %s" % (json.dumps(want), json.dumps(j)))
        bad = 1
    print("ok" if not bad else "FAIL")
    sys.exit(bad)
finally:
    shutil.rmtree(tmp)
