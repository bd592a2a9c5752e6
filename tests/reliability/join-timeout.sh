#!/usr/bin/env bash
# join-timeout.sh OSMP_RUN SURVIVE: rank 2 of 3 joins 4 s late; with
# OSMP_JOIN_TIMEOUT=1 the first to give up fails with OSMP_ERR_TIMEOUT after
# 1 s, naming rank 2 (once), osmp-run passes the loss on, and every rank (the
# late one included) stops by itself with a join error.
set -uo pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
OSMP_JOIN_TIMEOUT=1 "$1" -n 3 --grace 20 -- "$2" loop --late 2:4 >"$out" 2>&1
rc=$?
took=$(($(date +%s) - start))
cat "$out"
fail() { echo "join-timeout: $*" >&2; exit 1; }
[ "$rc" = 3 ] || fail "osmp-run exited $rc, not 3"
[ "$(grep -c 'OSMP_ERR_TIMEOUT in osmp_init after 1[0-9][0-9][0-9] ms' "$out")" -ge 1 ] || fail "nobody timed out after 1 s"
[ "$(grep -c 'OSMP_ERR_\(TIMEOUT\|PEER_LOST\) in osmp_init' "$out")" = 3 ] || fail "not every rank reported a join error"
! grep -q "killing them" "$out" || fail "osmp-run had to kill ranks"
[ "$(grep -c 'never arrived: 2$' "$out")" = 1 ] || fail "the timeout did not name rank 2, once"
# Below the 20 s grace: a rank that did not stop by itself fails this too. (10 s
# was too tight for the late rank's start-up under ASan on a loaded machine: 8.8 s
# seen once, all ranks reporting correctly.)
[ "$took" -lt 19 ] || fail "took $took s"
echo "join-timeout: passed in $took s"
