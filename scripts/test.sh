#!/usr/bin/env bash
# Set up, build, and run the whole test suite: a warnings-as-errors build; the
# Python package (pip install, pytest); the suite under AddressSanitizer +
# UndefinedBehaviorSanitizer; the thread and
# runtime tests under ThreadSanitizer; a short run of every fuzz target.
# OSMP_FUZZ_SECONDS (default 6) sets the fuzzing time per target, 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
stage() { echo "== $* ($(($(date +%s) - start)) s)"; }

stage "plain build and suite"
OSMP_BUILD_DIR=build scripts/setup.sh -DOSMP_WERROR=ON "$@"
(cd build && ctest --output-on-failure -j"$(nproc)")

stage "Python package"
# pip install . into build/py/venv, pytest under osmp-run and mpirun (docs/python.md)
python/tests/run.sh build

stage "ASan+UBSan build and suite"
# Optimized (-O2 -g): as thorough for ASan/UBSan, and fast enough to run the whole suite.
OSMP_BUILD_DIR=build-asan scripts/setup.sh -DOSMP_WERROR=ON -DOSMP_ASAN=ON -DOSMP_UBSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
# Left out here to keep .ci/run within its time (each is 20-120 s under ASan,
# and the plain pass runs it): MPICH's runs (libosmp_mpich is libosmp_mpi's
# source, which the Open MPI runs check here), the small-chunk sweeps and the
# 48-192-participant trace and path tests (their algorithms run under ASan in
# the procs-* sweeps and trace-forced-48-opteron), the 64-rank Milan run, the
# 11-rank forced-direct run at the full level, the 192-participant scan trace
# (procs-1[13]-scan-* run the scans), the 128-participant memory count (pages,
# not accesses), and the 16-participant and mixed runs that repeat what the
# forced and smaller runs cover (procs-16-forced-x3950, procs-12-forced-single-copy,
# TSan's mixed-2x3).
(cd build-asan && ctest --output-on-failure -j"$(nproc)" \
    -E "mpi\.mpich-|mpi\.conform-mpich|coll\.procs-16-milan-test|coll\.procs-16-forced-irregular|coll\.procs-16$|coll\.mixed-2x3-wait|coll\.nb-procs-16-milan|trace-forced-128-kunpeng-small-chunks|procs-8-(forced|kary)-small-chunks|coll\.procs-64-milan|procs-11-direct-full|trace-bcast-opteron48-(mst|root21)|trace-forced-(96-x3950|192-milan)|trace-hierarchy-per-op|trace-nonblocking-(192-milan|64-kunpeng-pipelined)|trace-scan-192-milan|mem-128-kunpeng")

stage "TSan build, thread and runtime tests"
OSMP_BUILD_DIR=build-tsan scripts/setup.sh -DOSMP_WERROR=ON -DOSMP_TSAN=ON -DCMAKE_BUILD_TYPE=Debug "$@"
# Thread participants (alone and mixed with processes) and the runtime's own
# paths: creation, rendezvous, liveness, handle checks. TSan sees the threads of
# one process; between processes there is nothing for it to see.
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure -j"$(nproc)" \
  -LE mpi -R "threads-8|mixed-2x3|wrap-threads|unit.badargs|unit.steps|unit.runahead|procs-[23]$|kill-one-8|mismatch|nb-threads|nb-procs-2|progress")

if [ "${OSMP_FUZZ_SECONDS:-6}" != 0 ]; then
  stage "fuzzing"
  scripts/fuzz.sh "${OSMP_FUZZ_SECONDS:-6}" # CI: .ci/run must stay under 30 minutes
fi
stage "all tests passed (plain, Python, ASan+UBSan, TSan, fuzzing)"
