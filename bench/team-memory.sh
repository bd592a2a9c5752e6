#!/usr/bin/env bash
# Team memory (docs/measurements.md section 14): /dev/shm KiB a team's segment holds after creation, after every
# collective with messages of up to 4 KiB, and after one 1 MiB allreduce, for teams of 16, 64, 128 and 256
# oversubscribed processes planned on the Kunpeng 920 topology (tests/coll/mem-check.c, pages counted with mincore).
#   bench/team-memory.sh [BUILD_DIR] [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 64 128 256)
topo=tests/data/topologies/kunpeng920-2x64-clusters.xml
echo "| participants | segment (KiB) | after creation | after calls up to 4 KiB | after a 1 MiB allreduce | per participant after the small calls |"
echo "|---:|---:|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
  # --max-kib: no bound here (the ctest coll.mem-128-kunpeng asserts it); --report: "N created small large seg"
  line=$("$build"/tools/osmp-run -n "$n" --topology "$topo" --bind scatter --timeout 600 -- \
         "$build"/tests/mem-check --small 4096 --large 1048576 --max-kib 1000000 --report)
  read -r p created small large seg <<<"$line"
  echo "| $p | $seg | $created | $small | $large | $((small / p)) |"
done
