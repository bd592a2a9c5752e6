#!/usr/bin/env bash
# Team memory (docs/measurements.md section 14): /dev/shm KiB a team's segment holds after creation, after every
# collective with every buffer of up to 4 KiB (mem-check --per-call), after every collective with blocks of up to
# 4 KiB (a gather's result n x 4 KiB), and after one 1 MiB allreduce, for teams of 16, 64, 128 and 256
# oversubscribed processes planned on the Kunpeng 920 topology (tests/coll/mem-check.c, pages counted with mincore).
#   bench/team-memory.sh [BUILD_DIR] [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 64 128 256)
topo=tests/data/topologies/kunpeng920-2x64-clusters.xml
echo "| participants | segment (KiB) | after creation | after calls of up to 4 KiB | per participant | after blocks of up to 4 KiB | per participant | after a 1 MiB allreduce |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
  # --max-kib: no bound here (the ctest coll.mem-128-kunpeng asserts it); --report: "N created small large seg"
  run() {
    "$build"/tools/osmp-run -n "$n" --topology "$topo" --bind scatter --timeout 600 -- \
      "$build"/tests/mem-check --small 4096 --large 1048576 --max-kib 1000000 --report "$@"
  }
  read -r p created call large seg <<<"$(run --per-call)"
  read -r _ _ block _ _ <<<"$(run)"
  echo "| $p | $seg | $created | $call | $((call / p)) | $block | $((block / p)) | $large |"
done
