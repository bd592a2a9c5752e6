#!/usr/bin/env bash
# Participants that would decide a team differently (issue 45): one rank with another OSMP_TOPOLOGY (or one that
# does not load), another OSMP_HIERARCHY_<OP>, another tune table, an injected allocation failure in a decision
# (OSMP_FAULT=decide:N), hwloc restricted to another cpuset (a cgroup); and the controls: nothing different, and
# another OSMP_CHUNK_SIZE (rank 0 reads it for all: no mismatch). Every rank must print the same status and the
# same reason (tests/reliability/agree.c: osmp_init's status and osmp_team_last_error()), naming the part that
# differs or the rank and the step that failed; a mismatch is printed once on stderr; nothing hangs; no segment of
# the run is left in /dev/shm.
# usage: agree.sh CASE OSMP-RUN AGREE OSMP-TOPO TOPOLOGIES-DIR
set -u
case=$1 RUN=$2 AGREE=$3 TOPO=$4 T=$5
milan=$T/amd-milan-2x64.xml
kunpeng=$T/kunpeng920-2x64-clusters.xml
tmp=$(mktemp -d)
cg=""
cleanup() {
  rm -rf "$tmp"
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
  return 0
}
trap cleanup EXIT

# Rank $1 of the run gets the environment assignment $2; the others keep theirs.
one_rank() { # RANK VAR=VALUE
  printf '%s\n' '#!/bin/sh' "[ \"\$OSMP_RUN_RANK\" = $1 ] && export '$2'" "exec \"$AGREE\"" >"$tmp/one-rank"
  chmod +x "$tmp/one-rank"
  echo "$tmp/one-rank"
}

# run N WRAPPER [osmp-run options...]: sets out and rc
run() {
  local n=$1 prog=$2
  shift 2
  out=$(OSMP_TUNE_FILE=none timeout -k 5 60 "$RUN" -n "$n" "$@" --timeout 50 -- "$prog" 2>&1)
  rc=$?
}

# expect N STATUS REASON-REGEX [MESSAGES]: every rank's line says STATUS and the same reason, matching the
# regex; MESSAGES: how many "osmp: <reason>" lines stderr must hold (default: 1 for a mismatch, else 0).
expect() {
  local n=$1 status=$2 regex=$3 said=${4:-} lines reasons pids
  echo "$out"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL $case: hung"; exit 1; fi
  lines=$(grep -E '^agree: rank [0-9]+ \(pid [0-9]+\): ' <<<"$out")
  if [ "$(wc -l <<<"$lines")" != "$n" ] || [ "$(sed -E 's/^agree: rank ([0-9]+) .*/\1/' <<<"$lines" | sort -n | uniq | wc -l)" != "$n" ]; then
    echo "FAIL $case: expected one line from each of $n ranks"; exit 1
  fi
  reasons=$(sed -E 's/^agree: rank [0-9]+ \(pid [0-9]+\): //' <<<"$lines" | sort -u)
  if [ "$(wc -l <<<"$reasons")" != 1 ]; then echo "FAIL $case: the ranks differ:"; echo "$reasons"; exit 1; fi
  case $reasons in
    "$status: "*) ;;
    *) echo "FAIL $case: expected $status on every rank, got: $reasons"; exit 1 ;;
  esac
  local why=${reasons#"$status: "}
  if ! grep -Eq -- "$regex" <<<"$why"; then echo "FAIL $case: the reason does not match /$regex/"; exit 1; fi
  [ -n "$said" ] || { [ "$status" = OSMP_ERR_MISMATCH ] && said=1 || said=0; }
  if [ "$status" != OSMP_OK ] && [ "$(grep -cxF "osmp: $why" <<<"$out")" != "$said" ]; then
    echo "FAIL $case: expected the reason $said time(s) on stderr"; exit 1
  fi
  # The run's segment was named /osmp-<rank 0's pid>-...: none may remain.
  pids=$(sed -E 's/^agree: rank [0-9]+ \(pid ([0-9]+)\): .*/\1/' <<<"$lines")
  for p in $pids; do
    if ls /dev/shm 2>/dev/null | grep -q "^osmp-$p-"; then echo "FAIL $case: segment of pid $p left in /dev/shm"; exit 1; fi
  done
  echo "ok   $case: $n ranks: $reasons"
}

case $case in
  same) # the control: nothing differs, the team works
    run 4 "$AGREE" --topology "$milan" --bind scatter
    expect 4 OSMP_OK 'allreduce and bcast exact$' ;;
  topology) # rank 1 plans on another machine, the same core numbers
    run 4 "$(one_rank 1 OSMP_TOPOLOGY="$kunpeng")" --topology "$milan" --bind scatter
    expect 4 OSMP_ERR_MISMATCH "^team creation: rank 1's topology of the team's cores differs from rank 0's \(digest [0-9a-f]{16} vs [0-9a-f]{16}; also plan" ;;
  topology-missing) # rank 2 cannot load its topology: it still takes part, and everybody names it
    run 4 "$(one_rank 2 OSMP_TOPOLOGY="$tmp/no-such-machine.xml")" --topology "$milan" --bind scatter
    expect 4 OSMP_ERR_TOPO_LOAD '^team creation: rank 2: cannot load the topology \(loading its topology \(OSMP_TOPOLOGY\)\)$' ;;
  knob) # rank 2 gives allreduce a plan of its own (OSMP_HIERARCHY_<OP> is each participant's)
    run 4 "$(one_rank 2 OSMP_HIERARCHY_ALLREDUCE=flat)" --topology "$milan" --bind scatter
    expect 4 OSMP_ERR_MISMATCH "^team creation: rank 2's OSMP_HIERARCHY_<OP> differs from rank 0's \(digest [0-9a-f]{16} vs [0-9a-f]{16}; also plan, algorithm selection\)$" ;;
  knob-rank0) # a knob rank 0 reads for the team (the chunk): rank 2's value is not used, nothing differs
    run 4 "$(one_rank 2 OSMP_CHUNK_SIZE=256)" --topology "$milan" --bind scatter
    expect 4 OSMP_OK 'allreduce and bcast exact$' ;;
  tune) # rank 3 finds a tune table, the others none
    { OSMP_TOPOLOGY=$milan "$TOPO" --signature && echo "allreduce * 0 max kary:2"; } >"$tmp/tune.txt" || exit 1
    run 4 "$(one_rank 3 OSMP_TUNE_FILE="$tmp/tune.txt")" --topology "$milan" --bind scatter
    expect 4 OSMP_ERR_MISMATCH "^team creation: rank 3's tune table differs from rank 0's \(a table vs none, digest [0-9a-f]{16} vs 0{16}; also algorithm selection\)$" ;;
  fault-llc) # rank 2's first decision allocation (the caches the team spans, select.c team_llc) fails
    run 4 "$(one_rank 2 OSMP_FAULT=decide:1)" --topology "$milan" --bind scatter
    expect 4 OSMP_ERR_NO_MEMORY '^team creation: rank 2: out of memory \(choosing the algorithms and thresholds\)$'
    grep -q "OSMP_FAULT: allocation of a team-wide decision 1 of this process fails" <<<"$out" || { echo "FAIL: no fault"; exit 1; } ;;
  fault-mst) # its second and third (the MST rule's walk, select.c mst_cheaper); a fourth is never made
    for k in 2 3; do
      run 4 "$(one_rank 2 OSMP_FAULT=decide:$k)" --topology "$milan" --bind scatter
      expect 4 OSMP_ERR_NO_MEMORY '^team creation: rank 2: out of memory \(choosing the algorithms and thresholds\)$'
      grep -q "OSMP_FAULT: allocation of a team-wide decision $k of this process fails" <<<"$out" || { echo "FAIL: no fault $k"; exit 1; }
    done
    run 4 "$(one_rank 2 OSMP_FAULT=decide:4)" --topology "$milan" --bind scatter
    expect 4 OSMP_OK 'allreduce and bcast exact$'
    if grep -q "OSMP_FAULT" <<<"$out"; then echo "FAIL $case: a fourth decision allocation"; exit 1; fi ;;
  cpuset) # rank 1 in a cgroup cpuset of one CPU: hwloc shows it a one-core machine (needs root and cgroup v1's cpuset)
    root=/sys/fs/cgroup/cpuset
    if [ "$(nproc --all)" -lt 2 ] || [ ! -w "$root" ] || [ ! -r "$root/cpuset.mems" ]; then
      echo "skipped: no writable cgroup v1 cpuset hierarchy here (root, $root) or fewer than 2 CPUs"; exit 77
    fi
    cg=$root/osmp-agree-$$
    mkdir "$cg" && echo 1 >"$cg/cpuset.cpus" && cat "$root/cpuset.mems" >"$cg/cpuset.mems" || { echo "skipped: cannot make $cg"; exit 77; }
    printf '%s\n' '#!/bin/sh' "[ \"\$OSMP_RUN_RANK\" = 1 ] && { echo \$\$ >'$cg/tasks' || exit 9; }" "exec \"$AGREE\"" >"$tmp/in-cpuset"
    chmod +x "$tmp/in-cpuset"
    run 2 "$tmp/in-cpuset"
    expect 2 OSMP_ERR_MISMATCH "^team creation: rank 1's topology of the team's cores differs from rank 0's \(digest [0-9a-f]{16} vs [0-9a-f]{16}" ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
exit 0
