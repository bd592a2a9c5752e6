#!/usr/bin/env bash
# libosmp_mpi where one rank would decide its teams differently (issue 45): every communicator goes to MPI on
# every rank and the program runs on with exact results (agree-mpi.c); OSMP_VERBOSE says why on every rank, once;
# rank 0 of the team prints the mismatch once; nothing stays in /dev/shm. "same": the control, on OSMP.
# usage: agree-mpi.sh same|topology|cpuset TOPOLOGY.xml N LAUNCH... PROGRAM
#   (the command without N and the program: "mpirun -n" style; LD_PRELOAD set by the caller)
set -u
case=$1 xml=$2 n=$3
shift 3
prog=${!#}
launch=("${@:1:$#-1}")
tmp=$(mktemp -d)
cg=""
cleanup() {
  rm -rf "$tmp"
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
  return 0
}
trap cleanup EXIT
# The MPI library's rank variable picks the rank that differs (Open MPI, MPICH's hydra).
wrapper=$tmp/rank-1-differs
case $case in
  same) line=":" ;;
  topology) line="export OSMP_TOPOLOGY='$xml'" ;;
  cpuset)
    root=/sys/fs/cgroup/cpuset
    if [ "$(nproc --all)" -lt 2 ] || [ ! -w "$root" ] || [ ! -r "$root/cpuset.mems" ]; then
      echo "skipped: no writable cgroup v1 cpuset hierarchy here (root, $root) or fewer than 2 CPUs"; exit 77
    fi
    cg=$root/osmp-agree-mpi-$$
    mkdir "$cg" && echo 1 >"$cg/cpuset.cpus" && cat "$root/cpuset.mems" >"$cg/cpuset.mems" || { echo "skipped: cannot make $cg"; exit 77; }
    line="echo \$\$ >'$cg/tasks' || exit 9" ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
printf '%s\n' '#!/bin/sh' 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}' "[ \"\$r\" = 1 ] && { $line; }" "exec \"$prog\"" >"$wrapper"
chmod +x "$wrapper"
out=$(OSMP_VERBOSE=1 timeout -k 5 150 "${launch[@]}" "$n" "$wrapper" 2>&1)
rc=$?
echo "$out"
fail() { echo "FAIL $case: $*"; exit 1; }
[ "$rc" = 124 ] || [ "$rc" = 137 ] && fail "hung"
[ "$rc" = 0 ] || fail "exit status $rc"
for r in $(seq 0 $((n - 1))); do
  l=$(grep -E "^agree-mpi: rank $r \(pid [0-9]+\): allreduce [0-9-]+ on OSMP, [0-9-]+ passed to MPI, results exact$" <<<"$out")
  [ -n "$l" ] || fail "rank $r did not finish with exact results"
  pid=$(sed -E 's/.*\(pid ([0-9]+)\).*/\1/' <<<"$l")
  ls /dev/shm 2>/dev/null | grep -q "^osmp-$pid-" && fail "a segment of rank $r (pid $pid) is left in /dev/shm"
  acc=$(sed -E 's/.*allreduce ([0-9-]+) on OSMP.*/\1/' <<<"$l")
  if [ "$case" = same ]; then
    [ "$acc" -gt 0 ] || fail "rank $r: the allreduces did not run on OSMP"
    grep -q "goes to MPI: team creation" <<<"$out" && fail "a team failed where nothing differs"
    continue
  fi
  [ "$acc" = 0 ] || fail "rank $r: $acc allreduces ran on OSMP"
  # The world and its duplicate failed alike: said once per rank and reason (twice where the digests changed:
  # a process that is not bound may be on another core when the duplicate's team is made).
  said=$(grep -c "^osmp-mpi: rank $r: a communicator goes to MPI: team creation: rank 1's topology of the team's cores differs from rank 0's (digest [0-9a-f]* vs [0-9a-f]*" <<<"$out")
  [ "$said" -ge 1 ] && [ "$said" -le 2 ] || fail "rank $r said why $said times (expected once, or twice)"
done
if [ "$case" != same ]; then
  c=$(grep -c "^osmp: team creation: rank 1's topology of the team's cores differs" <<<"$out")
  [ "$c" = 1 ] || fail "the mismatch printed $c times (expected once)"
fi
echo "ok   $case: $n ranks"
