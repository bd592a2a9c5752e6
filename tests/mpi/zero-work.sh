#!/bin/sh
# OSMP_MPI_DISABLE=1 means zero OSMP work (issue 16): run the MPI command given
# (libosmp_mpi preloaded, OSMP_MPI_DISABLE=1 in the environment) with the
# dynamic linker logging every symbol binding, and fail if libosmp_mpi bound
# any function of libosmp: with lazy binding a function is bound at its first
# call, so none bound means none called. The one data symbol
# (osmp_in_place_marker) is bound at load. The log must show libosmp_mpi
# binding its PMPI_ calls, or the check saw nothing.
set -u
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$dir/ld" LD_BIND_NOW= "$@" >"$dir/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    cat "$dir/out"
    echo "zero-work: the program failed ($rc)"
    exit 1
fi
if ! cat "$dir"/ld.* 2>/dev/null | grep -q "binding file [^ ]*libosmp_mp[a-z]*\.so .*symbol \`PMPI_"; then
    echo "zero-work: no binding of libosmp_mpi to PMPI_ in the linker's log: the check saw nothing"
    exit 1
fi
calls=$(cat "$dir"/ld.* | grep "binding file [^ ]*libosmp_mp[a-z]*\.so .* to [^ ]*libosmp\.so" |
        grep -v "symbol \`osmp_in_place_marker'" | sed "s/.*symbol //" | sort -u)
if [ -n "$calls" ]; then
    echo "zero-work: with OSMP_MPI_DISABLE=1 libosmp_mpi called into libosmp:"
    echo "$calls"
    exit 1
fi
echo "zero-work: no call from libosmp_mpi into libosmp"
