#!/usr/bin/env bash
# The main job: set up, then show this machine's tree of locality domains and the
# plan OSMP builds for one participant per core (add osmp-topo options to change it,
# e.g. --bind scatter or --hierarchy l3,package).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
topo=build/tools/osmp-topo
echo "== this machine"
"$topo"
echo
echo "== plan for one participant per core (osmp-topo --show groups $*)"
"$topo" --show groups "$@"
