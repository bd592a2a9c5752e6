#!/bin/sh
# What a broadcast and an allgather move across package boundaries, from the
# transfer trace, on the machine of Ma et al. (8 packages of 6 cores) with
# consecutive ranks on different packages: rank r on core (r mod 8) * 6 + r / 8.
#   traffic-check.sh OSMP-RUN OSMP-TOPO TRAFFIC TRACE-CROSS.PY [PYTHON]
# Targets: a 1 MiB broadcast crosses 7 times (the packages form a tree) and
# reaches every rank once; an allgather of B bytes per rank moves at most
# 8 * 47 * B across (the clustered ring enters and leaves each package once;
# a rank-order ring would cross on all 48 edges).
set -eu
run=$1 topo=$2 traffic=$3 cross=$4 python=${5:-python3}
machine="pack:8 l3:1 core:6 pu:1"
cores=0
r=1
while [ $r -lt 48 ]; do cores="$cores,$(( (r % 8) * 6 + r / 8 ))"; r=$((r + 1)); done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$topo" --synthetic "$machine" --format json > "$dir/machine.json"
B=65537
# The MST and the ring through the slots, then copied once, then as selected.
for alg in "OSMP_BCAST_ALG=mst OSMP_ALLGATHER_ALG=ring OSMP_SINGLE_COPY=none" \
           "OSMP_BCAST_ALG=mst OSMP_ALLGATHER_ALG=ring OSMP_SINGLE_COPY=cma OSMP_SINGLE_COPY_MIN=0" \
           "OSMP_BCAST_ALG=auto OSMP_ALLGATHER_ALG=auto"; do
    for root in 0 13; do
        echo "== $alg, root $root"
        rm -f "$dir"/t.*
        env $alg OSMP_TRACE="$dir/t" "$run" -n 48 --synthetic "$machine" --cores "$cores" \
            --timeout 100 -- "$traffic" --root $root --allgather $B
        "$python" "$cross" "$dir/machine.json" "$dir/t" --expect bcast:$((7 << 20)) --once bcast:$((1 << 20)) \
            --most allgather:$((8 * 47 * B))
    done
done
