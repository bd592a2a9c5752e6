#!/bin/sh
# The sliced reductions fold every element in an order fixed by the plan's
# groups: two runs that differ only in chunk size and pipeline depth must give
# the same bits (floating-point sums that round).
# usage: hsliced-order.sh OSMP-RUN TRACE-RUN TOPOLOGY.xml
set -eu
run() {
  env OSMP_ALLREDUCE_ALG=hsliced OSMP_REDUCE_ALG=hsliced "$@" \
    "$RUN" -n 12 --topology "$XML" --bind random:2 --timeout 25 -- "$DRIVER" bits 160088
}
RUN=$1 DRIVER=$2 XML=$3
a=$(run OSMP_CHUNK_SIZE=256 OSMP_PIPELINE_DEPTH=1)
b=$(run OSMP_CHUNK_SIZE=4096 OSMP_PIPELINE_DEPTH=3)
echo "$a"
echo "$b"
[ -n "$a" ] && [ "$a" = "$b" ]
