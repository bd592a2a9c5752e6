#!/usr/bin/env bash
# The N-th allocation (OSMP_FAULT=alloc:N@3) or segment creation/attach
# (seg:N@3) of one participant fails, for N = 1, 2, ... until a run no longer
# reaches it, over every collective and algorithm trace-run drives: every
# participant that fails names rank 3 and "out of memory" / the segment (through
# osmp_init's status or osmp_team_failure), nobody reports data it did not get,
# nothing hangs, and LeakSanitizer (in the sanitizer pass) finds nothing.
# usage: fault-alloc.sh OSMP-RUN TRACE-RUN TOPOLOGY.xml [all|quick]
# quick: one algorithm per kind of allocation site (the sanitizer builds).
set -u
RUN=$1 TRACE_RUN=$2 XML=$3 CASES=${4:-all}
status=0
runs=0
check() { # kind n env op bytes root
  local kind=$1 n=$2 knob=$3 op=$4 bytes=$5 root=$6 out rc what
  out=$(env "$knob" OSMP_FAULT="$kind:$n@3" OSMP_SINGLE_COPY_MIN=0 \
        timeout -k 5 60 "$RUN" -n 8 --topology "$XML" --bind random:4 --timeout 50 -- "$TRACE_RUN" "$op" "$bytes" "$root" 2>&1)
  rc=$?
  runs=$((runs + 1))
  what="$op $knob, $kind $n of rank 3"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL $what: hung"; status=1; return 1; fi
  if grep -q "wrong" <<<"$out"; then echo "FAIL $what: a participant reported data it did not get:"; echo "$out"; status=1; return 1; fi
  if grep -q "LeakSanitizer\|AddressSanitizer" <<<"$out"; then echo "FAIL $what:"; echo "$out"; status=1; return 1; fi
  grep -q "OSMP_FAULT: .* fails" <<<"$out" || return 2 # the run no longer reaches the N-th event
  [ "$rc" = 0 ] && return 3 # absorbed (the creation exchange's buffers fall back to a mapping); results checked
  local want="out of memory"
  [ "$kind" = seg ] && want="shared memory segment"
  if ! grep -q "rank 3: .*$want" <<<"$out" && ! grep -q "osmp_init: .*$want" <<<"$out"; then
    echo "FAIL $what: no participant reported rank 3's failure:"; echo "$out"; status=1; return 1; fi
  # Inside a collective, every participant that failed names rank 3 and the reason.
  if grep "trace-run: rank" <<<"$out" | grep -qv "the team's failure: rank 3: $want"; then
    echo "FAIL $what: a participant did not see who failed and why:"; echo "$out"; status=1; return 1; fi
  return 0
}
all_cases=("bcast OSMP_BCAST_ALG=flat 5" "bcast OSMP_BCAST_ALG=kary:2 5" "bcast OSMP_BCAST_ALG=mst 5" \
              "reduce OSMP_REDUCE_ALG=flat 2" "reduce OSMP_REDUCE_ALG=sliced 2" "reduce OSMP_REDUCE_ALG=hsliced 2" \
              "allreduce OSMP_ALLREDUCE_ALG=flat 0" "allreduce OSMP_ALLREDUCE_ALG=sliced 0" "allreduce OSMP_ALLREDUCE_ALG=hsliced 0" \
              "gather OSMP_GATHER_ALG=direct 3" "gather OSMP_GATHER_ALG=hier 3" "scatter OSMP_SCATTER_ALG=direct 5" \
              "scatter OSMP_SCATTER_ALG=hier 5" "allgather OSMP_ALLGATHER_ALG=gather_bcast 0" "allgather OSMP_ALLGATHER_ALG=ring 0" \
              "reduce_scatter_block OSMP_REDUCE_SCATTER_BLOCK_ALG=reduces 0" "reduce_scatter_block OSMP_REDUCE_SCATTER_BLOCK_ALG=ring 0" \
              "alltoall OSMP_ALLTOALL_ALG=pairwise 0" "alltoall OSMP_ALLTOALL_ALG=distance 0" "alltoall OSMP_ALLTOALL_ALG=slots 0" \
              "alltoall OSMP_ALLTOALL_ALG=scatters 0")
quick_cases=("bcast OSMP_BCAST_ALG=mst 5" "reduce OSMP_REDUCE_ALG=hsliced 2" "alltoall OSMP_ALLTOALL_ALG=distance 0")
if [ "$CASES" = quick ]; then cases=("${quick_cases[@]}"); else cases=("${all_cases[@]}"); fi
for kind in seg alloc; do
  for case in "${cases[@]}"; do
    set -- $case
    failed=0 absorbed=0
    for n in $(seq 1 100); do
      check "$kind" "$n" "$2" "$1" 40000 "$3"
      r=$?
      [ $r = 2 ] && break
      [ $r = 0 ] && failed=$((failed + 1))
      [ $r = 3 ] && absorbed=$((absorbed + 1))
    done
    if [ "$failed" = 0 ]; then echo "FAIL $1 $2: no $kind fault showed"; status=1
    else echo "ok   $1 $2: $((n - 1)) ${kind}s of rank 3: $failed failed the run cleanly, $absorbed absorbed"; fi
    [ "$kind" = seg ] && break # segments: team creation only, the same for every collective
  done
done
echo "fault-alloc: $runs runs"
exit $status
