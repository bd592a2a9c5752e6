#!/usr/bin/env bash
# expect-end.sh SECONDS command...: passes when the command fails (a rank was
# killed on purpose) but ends by itself well before SECONDS, i.e. nothing hung.
# The killed job's MPI segments (stale-segments.sh) are removed afterwards:
# the MPI library could not, and no test may leave a file in /dev/shm. The
# launcher can return while the job's other ranks are still exiting (and still
# map their segments), so we first wait for every process that carries this
# run's mark in its environment to be gone.
. "$(dirname "$0")/stale-segments.sh"
limit=$1
shift
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
mark="OSMP_EXPECT_END=$$.$RANDOM"
start=$(date +%s)
env "$mark" timeout -k 5 "$limit" "$@"
rc=$?
took=$(($(date +%s) - start))
echo "expect-end: exit status $rc after $took s"
# the job's processes: readable environments that hold the mark
job_pids() { grep -lsaF -- "$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
for _ in $(seq 1 100); do [ -z "$(job_pids)" ] && break; sleep 0.1; done
left=$(job_pids)
if [ -n "$left" ]; then
  echo "expect-end: killing the job's processes still alive 10 s after it ended: $left"
  kill -KILL $left 2>/dev/null
  sleep 0.5
fi
for f in $(stale_segments "$stamp"); do
  echo "expect-end: removing $f (left by the killed job)"
  rm -f "$f"
done
[ "$rc" -ne 0 ] && [ "$took" -lt "$limit" ]
