#!/usr/bin/env bash
# expect-osmp.sh RANKS FORTRAN_CALLS -- command...
#
# Runs an MPI job of fortran-check (libosmp_mpi preloaded, OSMP_VERBOSE=1 passed
# to every rank) and checks, besides its exit status and its "fortran-check: PASS"
# line, the counts libosmp_mpi prints at MPI_Finalize on each of RANKS ranks:
#   osmp-mpi: rank R: allreduce            5 on OSMP, 0 passed to MPI     (coll.c)
#   osmp-mpi: rank R: Fortran allreduce    5 calls                        (fortran.c)
# FORTRAN_CALLS: the calls whose Fortran entry point must be libosmp_mpi's
# ("all": every one in FORTRAN below; "none"; or a comma-separated list).
set -u
ranks=$1
fortran=$2
shift 2
[ "${1:-}" = -- ] && shift

# ---- what is asserted; tighten these as coll.c learns more -------------------
# Calls coll.c intercepts in C: each must have reached libosmp_mpi
# (on OSMP + passed to MPI > 0).
REACHED="barrier bcast reduce allreduce gather allgather scatter reduce_scatter_block alltoall
         gatherv scatterv allgatherv alltoallv reduce_scatter scan exscan"
# Calls that must have run on OSMP (on OSMP > 0): data movement takes any
# datatype, reductions the Fortran INTEGER, REAL, DOUBLE PRECISION and INTEGER8
# the program reduces (src/mpi/types.c).
ON_OSMP=$REACHED
# Every Fortran entry point of src/mpi/fortran.c.
FORTRAN="barrier bcast reduce allreduce gather allgather scatter reduce_scatter_block alltoall
         gatherv scatterv allgatherv alltoallv reduce_scatter scan exscan"
# -------------------------------------------------------------------------------

case $fortran in
all) fortran=$FORTRAN ;;
none) fortran="" ;;
*) fortran=${fortran//,/ } ;;
esac

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
rc=$?
cat "$out"
echo "---- expect-osmp: exit status $rc"
fail=0
if [ "$rc" -ne 0 ]; then
    echo "expect-osmp: FAIL: the job ended with status $rc"
    fail=1
fi
if ! grep -q '^fortran-check: PASS' "$out"; then
    echo "expect-osmp: FAIL: no 'fortran-check: PASS' line"
    fail=1
fi

# pmpi_counts RANK CALL: "ON PASSED" from coll.c's line, or nothing
pmpi_counts() {
    grep -oE "osmp-mpi: rank $1: $2 +[0-9]+ on OSMP, [0-9]+ passed to MPI" "$out" | tail -n 1 |
        sed -E 's/.* ([0-9]+) on OSMP, ([0-9]+) passed.*/\1 \2/'
}
# fortran_count RANK CALL: the number of calls fortran.c's entry point took, or nothing
fortran_count() {
    grep -oE "osmp-mpi: rank $1: Fortran $2 +[0-9]+ calls" "$out" | tail -n 1 | sed -E 's/.* ([0-9]+) calls/\1/'
}

for ((r = 0; r < ranks; r++)); do
    for c in $REACHED; do
        read -r on passed <<<"$(pmpi_counts "$r" "$c")"
        if [ -z "${on:-}" ] || [ $((on + passed)) -eq 0 ]; then
            echo "expect-osmp: FAIL: rank $r: $c never reached libosmp_mpi's C function"
            fail=1
        elif [[ " $ON_OSMP " == *" $c "* ]] && [ "$on" -eq 0 ]; then
            echo "expect-osmp: FAIL: rank $r: $c never ran on OSMP ($passed passed to MPI)"
            fail=1
        fi
        on="" passed=""
    done
    for c in $fortran; do
        n=$(fortran_count "$r" "$c")
        if [ -z "$n" ] || [ "$n" -eq 0 ]; then
            echo "expect-osmp: FAIL: rank $r: libosmp_mpi's Fortran entry point of $c was never taken"
            fail=1
        fi
    done
done
if [ "$fail" -eq 0 ]; then
    echo "expect-osmp: ok: $ranks ranks; reached libosmp_mpi: $REACHED; on OSMP: $ON_OSMP;" \
        "Fortran entry points taken: ${fortran:-none}" | tr -s ' \n' ' '
    echo
fi
exit "$fail"
