#!/usr/bin/env bash
# Kill -9 at random moments and check that nothing hangs and nothing is left.
#
#   kill-test.sh one|all OSMP_RUN SURVIVE ROUNDS SEED -- osmp-run-args...
#
# one: each round starts `osmp-run ARGS -- survive loop`, waits a random time
#      (0-400 ms: before, during and after team creation), SIGKILLs one random
#      rank and asserts: osmp-run exits 137 naming the rank and the signal, every
#      other rank returned OSMP_ERR_PEER_LOST (or OSMP_ERR_TIMEOUT while joining)
#      and stopped by itself (osmp-run did not have to kill it), and /dev/shm
#      holds no osmp-* file.
# all: each round SIGKILLs osmp-run and every rank at a random moment (0-60 ms);
#      a name may then be left in /dev/shm. Afterwards a planted name of a dead
#      pid, one of a live pid and a dead pid's of another pid namespace are
#      added, one more team is created, and the test asserts that only the live
#      pid's and the other namespace's names are still there.
set -uo pipefail
mode=$1 run=$2 survive=$3 rounds=$4 RANDOM=$5
shift 6 # the "--" too
args=("$@")
nranks=0
for ((i = 0; i + 1 < ${#args[@]}; i++)); do [ "${args[i]}" = -n ] && nranks=${args[i + 1]}; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "kill-test: $*" >&2; cat "$tmp/out" >&2 2>/dev/null; exit 1; }
shm_names() { ls /dev/shm | grep '^osmp-' || true; }
ms() { date +%s%3N; }

[ -z "$(shm_names)" ] || fail "/dev/shm holds osmp files before the test: $(shm_names)"
worst=0
for ((round = 1; round <= rounds; round++)); do
  if [ "$mode" = one ]; then delay=$((RANDOM % 400)); else delay=$((RANDOM % 60)); fi
  "$run" "${args[@]}" --grace 10 -- "$survive" loop --seconds 60 >"$tmp/out" 2>&1 &
  runner=$!
  sleep "$(printf '0.%03d' "$delay")"
  if [ "$mode" = all ]; then
    pkill -KILL -P "$runner"
    kill -KILL "$runner"
    wait "$runner" 2>/dev/null
    continue
  fi
  for ((try = 0; try < 500; try++)); do # a slow (sanitized) osmp-run may not have forked yet
    mapfile -t ranks < <(pgrep -P "$runner")
    [ "${#ranks[@]}" -gt 0 ] && break
    sleep 0.01
  done
  [ "${#ranks[@]}" -gt 0 ] || fail "round $round: no rank running 5 s after the start"
  victim=${ranks[RANDOM % ${#ranks[@]}]}
  kill -KILL "$victim"
  killed_at=$(ms)
  wait "$runner"
  status=$?
  took=$(($(ms) - killed_at))
  [ "$took" -gt "$worst" ] && worst=$took
  n=$(grep -c "^osmp-run: rank [0-9]* killed by signal 9 (Killed)$" "$tmp/out")
  [ "$status" = 137 ] || fail "round $round: osmp-run exited $status, not 137"
  [ "$n" = 1 ] || fail "round $round: osmp-run did not name the killed rank and the signal"
  ! grep -q "killing them" "$tmp/out" || fail "round $round: ranks did not stop by themselves"
  survivors=$(grep -c "OSMP_ERR_PEER_LOST\|OSMP_ERR_TIMEOUT" "$tmp/out")
  [ "$survivors" = $((nranks - 1)) ] || fail "round $round: $survivors of $((nranks - 1)) survivors reported the loss"
  [ -z "$(shm_names)" ] || fail "round $round: left in /dev/shm: $(shm_names)"
  echo "round $round: killed pid $victim after ${delay} ms (${#ranks[@]} ranks started); all $nranks stopped ${took} ms later"
done
if [ "$mode" = one ]; then
  echo "kill-test: $rounds rounds passed; slowest stop after a kill: ${worst} ms"
  exit 0
fi
echo "kill-test: the kills left $(shm_names | wc -l) name(s) in /dev/shm"
# A pid that surely is dead: a finished child's. Names carry the creator's pid
# namespace (src/shm/segment.c); a dead pid's name of another namespace stays.
sh -c 'exit 0' & dead=$!
wait $dead
ns=$(stat -L -c %i /proc/self/ns/pid)
mine=$(printf '%08x' "$ns") other=$(printf '%08x' $((ns ^ 1)))
live="osmp-$$-$mine-0123456789abcdef01234567" elsewhere="osmp-$dead-$other-0123456789abcdef01234567"
planted=("osmp-$dead-$mine-0123456789abcdef01234567" "$live" "$elsewhere")
for f in "${planted[@]}"; do touch "/dev/shm/$f" && chmod 600 "/dev/shm/$f"; done
"$run" "${args[@]}" -- "$survive" loop --seconds 0 >"$tmp/out" 2>&1 || fail "the run after the kills failed"
left=$(shm_names | sort | tr '\n' ' ')
rm -f "/dev/shm/$live" "/dev/shm/$elsewhere"
want=$(printf '%s\n' "$live" "$elsewhere" | sort | tr '\n' ' ')
[ "$left" = "$want" ] || fail "expected only the live pid's and the other namespace's names in /dev/shm, found: ${left:-nothing}"
echo "kill-test: $rounds rounds of killing everything passed; /dev/shm cleaned by the next run"
