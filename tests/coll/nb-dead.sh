#!/usr/bin/env bash
# A participant dies while every participant has requests outstanding:
# nb-check --dead VICTIM. Every survivor's posts or osmp_waitall must return
# OSMP_ERR_PEER_LOST within a second (nb-check asserts it), by itself, before
# osmp-run would kill anyone (a 30 s grace), and nothing may be left in /dev/shm.
# usage: nb-dead.sh OSMP-RUN NB-CHECK NRANKS VICTIM [osmp-run args...]
set -u
run=$1 check=$2 n=$3 victim=$4
shift 4
out=$(timeout -k 5 120 "$run" -n "$n" "$@" --grace 30 -- "$check" --dead "$victim" 2>&1)
rc=$?
fail() { echo "nb-dead: $*"; echo "$out"; exit 1; }
[ $rc = 124 ] && fail "hung"
grep -q "killing them" <<<"$out" && fail "survivors did not stop by themselves within the grace"
grep -q "^nb-check: rank [0-9]*/" <<<"$out" && fail "a survivor failed a check"
[ $rc = 137 ] || fail "osmp-run exited $rc, not 137 (the victim's SIGKILL)"
got=$(grep -c "^nb-check: rank [0-9]*: OSMP_ERR_PEER_LOST after" <<<"$out")
[ "$got" = $((n - 1)) ] || fail "$got of $((n - 1)) survivors reported OSMP_ERR_PEER_LOST"
left=$(ls /dev/shm | grep "^osmp-" || true)
[ -z "$left" ] || fail "left in /dev/shm: $left"
echo "nb-dead: rank $victim died with requests outstanding; all $((n - 1)) survivors got OSMP_ERR_PEER_LOST:"
grep "^nb-check: rank" <<<"$out"
