#!/usr/bin/env bash
# Writes docs/knobs.md's text to stdout from the program's own knob table
# (osmp-topo --knobs), so that the page cannot drift from the code:
#   scripts/knobs-md.sh build/tools/osmp-topo > docs/knobs.md
# tests/CMakeLists.txt's docs.knobs fails when the committed page differs.
set -euo pipefail
topo=${1:-build/tools/osmp-topo}
cat <<'HEAD'
# Knobs

Every setting of OSMP is an environment variable `OSMP_<NAME>`, read when a team is created (the
`OSMP_<OP>_ALG` and `OSMP_HIERARCHY_<OP>` families take one variable per collective, e.g. `OSMP_ALLREDUCE_ALG`).
Settings that must agree across a team (chunk size, thresholds, hierarchy) are taken from rank 0. Those each
participant reads for itself (`OSMP_TOPOLOGY`, `OSMP_HIERARCHY_<OP>`, `OSMP_TUNE_FILE`) must give every participant
the same decisions: team creation fails with `OSMP_ERR_MISMATCH` and a line naming what differs otherwise. A value
that cannot be parsed is reported on stderr and fails team creation with `OSMP_ERR_KNOB`, or, for a knob local to
one process, falls back to its default with a one-line warning.

This page is generated from the knob table in `src/common/knobs.h`; do not edit it by hand:

```sh
scripts/knobs-md.sh build/tools/osmp-topo > docs/knobs.md
```

`osmp-topo --knobs` prints the same list, with the values set in the current environment.

| variable | default | meaning |
|---|---|---|
HEAD
# Each line: NAME "default" VALUE MEANING...; run without the caller's OSMP_*
# settings, which osmp-topo would append as "[set: ...]".
env -i PATH="$PATH" "$topo" --knobs | awk '{
    name = $1; dflt = $3
    doc = $0; sub(/^[^ ]+ +default +[^ ]+ +/, "", doc)
    gsub(/\|/, "\\|", doc)
    if (dflt == "\"\"") dflt = "(empty)"
    printf "| `%s` | `%s` | %s |\n", name, dflt, doc
}'
