#!/usr/bin/env bash
# The main job: set up, show this machine's tree of locality domains and the plan
# OSMP builds for one participant per core, then time OSMP against the installed
# MPI libraries side by side, blocking and nonblocking (bench/compare --quick --nb; results/ gets JSON,
# plots, summary).
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
echo "== OSMP vs the MPI libraries (bench/compare --quick --runs 3 --nb: 2 processes, Open MPI and MPICH, preloaded vs not, alternately; with MPI_Iallreduce and MPI_Ibcast)"
bench/compare --quick --runs 3 --nb
