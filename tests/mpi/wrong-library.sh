#!/usr/bin/env bash
# The libosmp_mpi of the other MPI library preloaded: the job must run as
# without it (every call to MPI, results checked by the program) and each rank
# must say once which library to preload instead.
#   wrong-library.sh RANKS LAUNCHER... -- PROGRAM...
set -u
ranks=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
rc=$?
cat "$out"
said=$(grep -c "osmp-mpi: this libosmp_mpi was built for .* but the program runs .*: every call goes to MPI; preload .* instead" "$out")
if [ "$rc" -ne 0 ]; then echo "wrong-library: FAIL: the job ended with status $rc"; exit 1; fi
if [ "$said" -ne "$ranks" ]; then echo "wrong-library: FAIL: $said warning lines, expected one per rank ($ranks)"; exit 1; fi
echo "wrong-library: ok"
