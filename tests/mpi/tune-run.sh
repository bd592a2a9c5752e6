#!/bin/sh
# Run a command with OSMP_TUNE_FILE set to a tune table made of this machine's
# topology line (osmp-topo --signature) and the rules in BODY, so that the
# test tables hold on any machine (docs/tuning.md).
# usage: tune-run.sh OSMP_TOPO BODY command [args...]
set -u
topo=$1 body=$2
shift 2
f=$(mktemp)
trap 'rm -f "$f"' EXIT
{ "$topo" --signature && cat "$body"; } >"$f" || exit 1
OSMP_TUNE_FILE=$f "$@"
