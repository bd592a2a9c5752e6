#!/bin/sh
# Tuning knobs with bad values (issue 13): each gives one line naming the
# variable and the value, then the default is used and the run succeeds. Each
# process reads the waiting knobs (a line each); the algorithm knobs are the
# team's, read by rank 0 (one line).
# usage: bad-knobs.sh OSMP-RUN TRACE-RUN
run=$1 trace=$2 status=0
for kv in OSMP_SPIN=abc OSMP_YIELDS=-1 OSMP_JOIN_TIMEOUT=1e3 OSMP_PUBLISH_FENCE=sometimes OSMP_BCAST_ALG=bogus \
    OSMP_ALLREDUCE_ALG=kary:0; do
  name=${kv%%=*} value=${kv#*=}
  out=$(env "$kv" "$run" -n 2 -- "$trace" bcast,allreduce 4096 2>&1)
  rc=$?
  lines=$(printf '%s\n' "$out" | grep -c "^osmp: $name")
  want=2
  case $name in *_ALG) want=1 ;; esac
  if [ $rc != 0 ]; then echo "FAIL $kv: exit $rc"; echo "$out"; status=1
  elif [ "$lines" != $want ] || ! printf '%s\n' "$out" | grep "^osmp: $name" | grep -q -e "$value.*using the default"; then
    echo "FAIL $kv: expected $want line(s) naming $name, \"$value\" and the default:"; echo "$out"; status=1
  else echo "ok   $kv: $(printf '%s\n' "$out" | grep -m1 "^osmp: $name")"; fi
done
# The team's shared settings (read by rank 0 at team creation): a bad value
# fails the team, with one line naming the variable, the value and what it
# must be.
for kv in OSMP_SINGLE_COPY_MIN=big OSMP_CHUNK_SIZE=1 OSMP_STREAM_MIN=fast OSMP_STREAM_MIN=-5; do
  name=${kv%%=*} value=${kv#*=}
  out=$(env "$kv" "$run" -n 2 -- "$trace" bcast 4096 2>&1)
  rc=$?
  lines=$(printf '%s\n' "$out" | grep -Ec "^osmp: $name=\"$value\" must be auto(, never)? or an integer")
  if [ $rc = 0 ] || [ "$lines" != 1 ]; then
    echo "FAIL $kv: expected a failed run and one line naming $name, \"$value\" and auto (exit $rc):"; echo "$out"
    status=1
  else echo "ok   $kv: $(printf '%s\n' "$out" | grep -m1 "^osmp: $name")"; fi
done
exit $status
