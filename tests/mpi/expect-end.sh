#!/usr/bin/env bash
# expect-end.sh SECONDS command...: passes when the command fails (a rank was
# killed on purpose) but ends by itself well before SECONDS, i.e. nothing hung.
# The killed job's MPI segments (stale-segments.sh) are removed afterwards:
# the MPI library could not, and no test may leave a file in /dev/shm.
. "$(dirname "$0")/stale-segments.sh"
limit=$1
shift
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
start=$(date +%s)
timeout -k 5 "$limit" "$@"
rc=$?
took=$(($(date +%s) - start))
echo "expect-end: exit status $rc after $took s"
for f in $(stale_segments "$stamp"); do
  echo "expect-end: removing $f (left by the killed job)"
  rm -f "$f"
done
[ "$rc" -ne 0 ] && [ "$took" -lt "$limit" ]
