#!/usr/bin/env bash
# fault-next under OSMP_FAULT=KIND:N@1 for N = 1, 2, ... until a run no longer
# reaches the N-th event: each run must end (no hang) with a working
# communicator after the failure. usage: fault-next.sh KIND LAUNCH... PROGRAM
set -u
kind=$1
shift
status=0
for n in $(seq 1 80); do
  out=$(OSMP_FAULT="$kind:$n@1" timeout -k 5 60 "$@" 2>&1)
  rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then echo "FAIL $kind $n: hung"; status=1; break; fi
  if [ $rc != 0 ]; then echo "FAIL $kind $n (exit $rc):"; echo "$out"; status=1; break; fi
  if ! grep -q "OSMP_FAULT: .* fails" <<<"$out"; then echo "fault-next: $((n - 1)) ${kind}s of rank 1, each survived"; break; fi
  echo "ok   $kind $n: $(grep "^fault-next" <<<"$out")"
done
[ "$n" = 1 ] && { echo "FAIL: no $kind fault showed"; status=1; }
exit $status
