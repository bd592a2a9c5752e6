#!/usr/bin/env bash
# pidns.sh OSMP_RUN SURVIVE: /dev/shm shared across pid namespaces (containers
# that share it, unshare --pid). A team's name exists in /dev/shm while it is
# being created (rank 1 joins 6 s late, so rank 0's name stays that long);
# meanwhile osmp-run's reaping of dead creators' names runs in another pid
# namespace, where the creator's pid is no process (or another one). The name
# must stay and the team must complete, in both directions:
#   A: the team in this namespace, the reaper in a child one (unshare -p -f
#      --mount-proc), where the creator's pid does not exist: before names said
#      their namespace, it took the creator for dead and unlinked the name, and
#      the late rank could not attach (OSMP_ERR_SHM);
#   B: the team in a child namespace, the reaper here.
# Everything runs in a private mount namespace with its own tmpfs on /dev/shm
# (which the child pid namespaces share), so nothing of it can reach the
# machine's /dev/shm. Skipped (exit 77) where unshare is not allowed.
set -uo pipefail
run=$1 survive=$2
if [ "${OSMP_PIDNS_INNER:-}" != 1 ]; then
  if ! unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null; then
    echo "pidns: skipped: no private mount namespace with a tmpfs on /dev/shm (unshare -m not allowed)"
    exit 77
  fi
  if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
    echo "pidns: skipped: no pid namespace (unshare -p -f --mount-proc not allowed)"
    exit 77
  fi
  export OSMP_PIDNS_INNER=1
  exec unshare --mount --propagation private bash -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$0" "$@"' \
    "$0" "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pidns: $*" >&2; cat "$tmp"/*.out >&2 2>/dev/null; exit 1; }
names() { ls /dev/shm | grep '^osmp-' || true; }
child_ns() { unshare --pid --fork --mount-proc "$@"; }
ns=$(printf '%08x' "$(stat -L -c %i /proc/self/ns/pid)")

# scenario NAME TEAM_LAUNCH... -- REAPER_LAUNCH...: the team's rank 0 creates the
# name and waits for rank 1; the reaper runs once the name is there.
scenario() {
  local what=$1 team=() reaper=()
  shift
  while [ "$1" != -- ]; do team+=("$1"); shift; done
  shift
  reaper=("$@")
  [ -z "$(names)" ] || fail "$what: /dev/shm not empty before: $(names)"
  "${team[@]}" "$run" -n 2 --timeout 60 -- "$survive" loop --seconds 0 --late 1:6 >"$tmp/$what.out" 2>&1 &
  local pid=$! name=""
  for ((i = 0; i < 600; i++)); do
    sleep 0.01
    name=$(names)
    [ -z "$name" ] || break
  done
  [ -n "$name" ] || fail "$what: no segment name appeared within 6 s"
  # the name says its creator's pid namespace: this one for A, the child's for B
  if [ "$what" = A ]; then [[ $name == osmp-*-$ns-* ]]; else [[ $name != osmp-*-$ns-* ]]; fi ||
    fail "$what: $name does not name the creator's pid namespace (this one is $ns)"
  "${reaper[@]}" "$run" -n 1 -- true >"$tmp/$what-reaper.out" 2>&1 || fail "$what: the reaper's run failed"
  [ -e "/dev/shm/$name" ] || fail "$what: the reaper in the other pid namespace removed the live team's $name"
  wait "$pid" || fail "$what: the team failed (osmp-run exited $?)"
  [ -z "$(names)" ] || fail "$what: left in /dev/shm: $(names)"
  echo "pidns: $what: $name stayed while the reaper ran; the team completed"
}

scenario A -- child_ns
scenario B child_ns --
echo "pidns: passed"
