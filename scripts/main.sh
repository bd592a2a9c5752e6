#!/usr/bin/env bash
# The main job: set up, show this machine's tree of locality domains and the plan
# OSMP builds for one participant per core, then time OSMP against the installed
# MPI library side by side (2 processes, interleaved rounds, medians).
# Arguments go to osmp-topo --show groups (e.g. --bind scatter, --hierarchy l3,package).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
topo=build/tools/osmp-topo
echo "== this machine"
"$topo"
echo
echo "== plan for one participant per core (osmp-topo --show groups $*)"
"$topo" --show groups "$@"
echo
echo "== OSMP vs $(mpirun --version 2>/dev/null | head -1) (build/mini-bench, 2 processes)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np=2
[ "$(nproc)" -ge 2 ] || np=1
mpirun -n "$np" --oversubscribe --bind-to core build/mini-bench
