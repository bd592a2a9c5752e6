#!/usr/bin/env bash
# kill-stress.sh OSMP_RUN SURVIVE ITERATIONS [FIRST_SEED]: the reliability.kill-*
# tests (kill-test.sh, the arguments tests/CMakeLists.txt gives them) over and
# over, each iteration with new seeds so the kills land at other moments:
# kill-one-8 (12 rounds) and kill-all-4 (15 rounds) every iteration,
# kill-one-64-milan (3 rounds) every 10th. After every test /dev/shm must hold
# no osmp-* name. Not in CI (ctest -C stress -L stress runs it; see
# tests/CMakeLists.txt); point it at a sanitizer build for their timing.
#
# It runs in a private mount namespace with its own tmpfs on /dev/shm where
# unshare allows, so that nothing else on the machine (other test runs) puts
# names there or sees its own disappear; otherwise on the machine's /dev/shm,
# which then must not be used by anything else meanwhile.
set -uo pipefail
run=$1 survive=$2 iterations=$3 seed=${4:-1000}
here=$(cd "$(dirname "$0")" && pwd)
topo=$here/../data/topologies/amd-milan-2x64.xml
if [ "${OSMP_STRESS_INNER:-}" != 1 ]; then
  export OSMP_STRESS_INNER=1
  if unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null; then
    echo "kill-stress: in a private /dev/shm"
    exec unshare --mount --propagation private bash -c 'mount -t tmpfs -o size=512m tmpfs /dev/shm && exec "$0" "$@"' \
      "$0" "$@"
  fi
  echo "kill-stress: no private /dev/shm (unshare not allowed): using the machine's"
fi
names() { ls /dev/shm | grep '^osmp-' || true; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s) tests=0
check() { # NAME: the test passed and left nothing
  local rc=$1 what=$2
  tests=$((tests + 1))
  if [ "$rc" != 0 ]; then
    cat "$log"
    echo "kill-stress: iteration $i: $what failed (exit $rc) after $tests tests, $(($(date +%s) - start)) s" >&2
    exit 1
  fi
  if [ -n "$(names)" ]; then
    echo "kill-stress: iteration $i: $what left in /dev/shm: $(names)" >&2
    exit 1
  fi
}
for ((i = 1; i <= iterations; i++)); do
  s=$((seed + 3 * i))
  "$here/kill-test.sh" one "$run" "$survive" 12 "$s" -- -n 8 >"$log" 2>&1
  check $? "kill-one-8 (seed $s)"
  "$here/kill-test.sh" all "$run" "$survive" 15 $((s + 1)) -- -n 4 >"$log" 2>&1
  check $? "kill-all-4 (seed $((s + 1)))"
  if ((i % 10 == 0)); then
    "$here/kill-test.sh" one "$run" "$survive" 3 $((s + 2)) -- -n 64 --topology "$topo" --bind scatter >"$log" 2>&1
    check $? "kill-one-64-milan (seed $((s + 2)))"
  fi
  echo "kill-stress: iteration $i of $iterations passed ($tests tests, $(($(date +%s) - start)) s)"
done
echo "kill-stress: $iterations iterations, $tests tests passed, nothing left in /dev/shm ($(($(date +%s) - start)) s)"
