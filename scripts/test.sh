#!/usr/bin/env bash
# Set up, build, and run the whole test suite: a warnings-as-errors build, then the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
OSMP_BUILD_DIR=build scripts/setup.sh -DOSMP_WERROR=ON "$@"
(cd build && ctest --output-on-failure -j"$(nproc)")
OSMP_BUILD_DIR=build-asan scripts/setup.sh -DOSMP_WERROR=ON -DOSMP_ASAN=ON -DOSMP_UBSAN=ON -DCMAKE_BUILD_TYPE=Debug "$@"
# The MPI tests preload libosmp_mpi into uninstrumented MPI programs: not under ASan.
# The two slowest forced-algorithm variants run in the plain pass only (CI has 20 minutes).
(cd build-asan && ctest --output-on-failure -j"$(nproc)" -LE mpi -E "kary-small-chunks|direct-full")
echo "all tests passed (plain and ASan+UBSan)"
