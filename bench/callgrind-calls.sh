#!/bin/sh
# Instructions per call and rank of a blocking collective, osmp_<op> under
# MPI_<Op> (libosmp_mpi preloaded), counted by callgrind (repeatable on a noisy
# machine: docs/measurements.md). Two runs, of N and 2N calls; their
# difference over N is one call's cost without the first call's. Waits
# are left out: OSMP_SPIN=0 makes a waiter sleep at once, and the instructions
# inside osmp__wait_reached (polls, yields, the futex) are subtracted, so what
# remains is the call's own path.
#
#   bench/callgrind-calls.sh BUILD_DIR [OP [BYTES [N]]]   (default allreduce 8 2000)
#
# Prints one line per rank: op bytes rank instructions/call.
set -eu
build=$1 op=${2:-allreduce} bytes=${3:-8} iters=${4:-2000}
fn=osmp_$op # the C entry point under MPI_<Op>: the communicator's and team's creation stay outside
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # iterations -> one "rank instructions" line per rank
  rm -f "$out"/cg.*
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -n 2 \
    -x OSMP_SPIN=0 -x LD_PRELOAD="$build/libosmp_mpi.so" valgrind --tool=callgrind \
    --callgrind-out-file="$out/cg.%p" --toggle-collect="$fn" "$build/osmp-bench" --mode osu --ops "$op" \
    --sizes "$bytes" --iters "$1" --rounds 1 --warmup 0 --no-bound >/dev/null 2>&1
  for f in $(ls "$out"/cg.* | sort); do
    total=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    incl=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null)
    wait=$(printf '%s\n' "$incl" | awk '/osmp__wait_reached \[/ {gsub(",", "", $1); print $1; exit}')
    echo $((total - ${wait:-0}))
  done
}
count "$iters" >"$out/a"
count $((2 * iters)) >"$out/b"
paste "$out/a" "$out/b" | awk -v op="$op" -v b="$bytes" -v n="$iters" '{printf "%s %s rank%d %d\n", op, b, NR - 1, ($2 - $1) / n}'
