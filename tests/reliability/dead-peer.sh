#!/usr/bin/env bash
# Dead-peer detection at a fixed point: rank VICTIM kills itself (SIGKILL) at
# iteration ITER of survive's loop, after the team exists, in the middle of the
# collectives. Every survivor must report OSMP_ERR_PEER_LOST by itself, before
# osmp-run would kill anyone (a 30 s grace), and nothing may be left in
# /dev/shm. Were liveness to answer "alive" for the dead rank, the survivors
# would wait until osmp-run kills them: this test fails then, every time.
# usage: dead-peer.sh OSMP-RUN SURVIVE NRANKS VICTIM ITER [osmp-run args...]
set -u
run=$1 survive=$2 n=$3 victim=$4 iter=$5
shift 5
start=$(date +%s%3N)
out=$(timeout -k 5 120 "$run" -n "$n" "$@" --grace 30 -- "$survive" loop --seconds 60 --suicide "$victim:$iter" 2>&1)
rc=$?
took=$(($(date +%s%3N) - start))
fail() { echo "dead-peer: $*"; echo "$out"; exit 1; }
[ $rc = 124 ] && fail "hung"
grep -q "killing them" <<<"$out" && fail "survivors did not stop by themselves within the grace"
[ $rc = 137 ] || fail "osmp-run exited $rc, not 137 (the victim's SIGKILL)"
got=$(grep -c "^survive: rank [0-9]*: OSMP_ERR_PEER_LOST" <<<"$out")
[ "$got" = $((n - 1)) ] || fail "$got of $((n - 1)) survivors reported OSMP_ERR_PEER_LOST"
grep -q "^survive: rank $victim:" <<<"$out" && fail "the victim reported something"
left=$(ls /dev/shm | grep "^osmp-" || true)
[ -z "$left" ] || fail "left in /dev/shm: $left"
echo "dead-peer: rank $victim died at iteration $iter; all $((n - 1)) survivors reported OSMP_ERR_PEER_LOST; run took ${took} ms"
