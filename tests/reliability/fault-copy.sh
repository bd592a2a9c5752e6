#!/usr/bin/env bash
# A single copy that fails on one participant (OSMP_FAULT=copy:N@R) in every
# collective whose algorithms copy once: the participant reports the failure,
# the team fails for everyone (no hang), and nobody reports success with data
# it did not get (trace-run checks every result and prints "wrong" if so).
# usage: fault-copy.sh OSMP-RUN TRACE-RUN TOPOLOGY.xml
set -u
RUN=$1 TRACE_RUN=$2 XML=$3
status=0
# op, algorithm, root (the gathers' root is the failing rank: the one that copies)
for alg in "bcast OSMP_BCAST_ALG=flat 5" "bcast OSMP_BCAST_ALG=mst 5" "allgather OSMP_ALLGATHER_ALG=ring 5" \
           "gather OSMP_GATHER_ALG=hier 3" "scatter OSMP_SCATTER_ALG=hier 5" "gather OSMP_GATHER_ALG=direct 3" \
           "alltoall OSMP_ALLTOALL_ALG=pairwise 5" "alltoall OSMP_ALLTOALL_ALG=distance 5"; do
  set -- $alg
  for n in 1 2; do # the first copy of rank 3, and its second (after some copies succeeded)
    out=$(env "$2" OSMP_FAULT="copy:$n@3" OSMP_SINGLE_COPY=cma OSMP_SINGLE_COPY_MIN=0 \
          timeout -k 5 60 "$RUN" -n 8 --topology "$XML" --bind random:4 --timeout 50 -- "$TRACE_RUN" "$1" 40000 "$3" 2>&1)
    rc=$?
    what="$1 $2, copy $n of rank 3"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL $what: hung"; status=1; continue; fi
    if grep -q "wrong" <<<"$out"; then echo "FAIL $what: a participant reported data it did not get:"; echo "$out"; status=1; continue; fi
    if [ "$rc" = 0 ]; then
      # Every case copies at rank 3 at least once: its first copy must fail; a
      # second one it may not have (one block, copied whole).
      if [ "$n" = 1 ] || grep -q "rank 3:" <<<"$out"; then echo "FAIL $what: the fault did not show"; status=1
      else echo "ok   $what: rank 3 makes one copy only"; fi
      continue
    fi
    if ! grep -q "rank 3: [^;]*single copy" <<<"$out"; then echo "FAIL $what: rank 3 did not report its failed copy:"; echo "$out"; status=1; continue; fi
    # Every participant that failed names rank 3 and its reason (osmp_team_failure), not only "peer lost".
    if grep "trace-run: rank" <<<"$out" | grep -qv "the team's failure: rank 3: .*single copy"; then
      echo "FAIL $what: a participant did not see who failed and why:"; echo "$out"; status=1; continue; fi
    echo "ok   $what: $(grep -c "trace-run: rank" <<<"$out") participants reported the failure"
  done
done
# A broadcast leaf copies every chunk its parent has published in one call: a
# pair far apart (cores 0 and 63: two packages, no shared cache) that copies
# once (OSMP_STREAM_MIN=never; it would stage), 1 MiB from the root (8 chunks of
# 128 KiB, all published at once), and the leaf's second copy set to fail: there
# is none, the run passes.
out=$(env OSMP_FAULT="copy:2@1" OSMP_SINGLE_COPY=cma OSMP_STREAM_MIN=never \
      timeout -k 5 60 "$RUN" -n 2 --topology "$XML" --cores 0,63 --timeout 50 -- "$TRACE_RUN" bcast 1048576 0 2>&1)
rc=$?
if [ "$rc" != 0 ] || grep -q "rank 1:" <<<"$out"; then
  echo "FAIL far bcast of 1 MiB: the leaf made more than one copy (exit $rc):"; echo "$out"; status=1
else echo "ok   far bcast of 1 MiB: the leaf makes one copy"; fi
exit $status
