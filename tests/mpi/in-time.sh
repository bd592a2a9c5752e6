#!/usr/bin/env bash
# in-time.sh SECONDS [--expect REGEX]... command...: passes when the command (an
# MPI job) exits 0 within SECONDS and its output (stdout and stderr, printed
# when it ends) matches every REGEX (grep -E). A job still running at SECONDS is
# killed ("hung", status 124): the test fails by its own limit, not the
# suite's. When it failed, as in expect-end.sh, the job's processes that
# outlive the launcher are killed and the MPI library's segments a killed job
# leaves in /dev/shm are removed: no test may leave a file there. (A job that
# ended well removed its own: the scan, slow on a busy machine, is skipped.)
. "$(dirname "$0")/stale-segments.sh"
limit=$1
shift
expects=()
while [ "$1" = "--expect" ]; do
  expects+=("$2")
  shift 2
done
stamp=$(mktemp)
out=$(mktemp)
trap 'rm -f "$stamp" "$out"' EXIT
mark="OSMP_IN_TIME=$$.$RANDOM"
start=$(date +%s)
env "$mark" timeout -k 5 "$limit" "$@" >"$out" 2>&1 # (not through a pipe: ranks the launcher left behind would hold it)
rc=$?
cat "$out"
took=$(($(date +%s) - start))
[ "$rc" -eq 124 ] && echo "in-time: hung: killed after $limit s"
echo "in-time: exit status $rc after $took s"
job_pids() { grep -lsaF -- "$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
if [ "$rc" -eq 0 ]; then
  for e in "${expects[@]}"; do
    if ! grep -Eq -- "$e" "$out"; then
      echo "in-time: the output has no line matching: $e"
      exit 1
    fi
  done
  exit 0
fi
for _ in $(seq 1 100); do [ -z "$(job_pids)" ] && break; sleep 0.1; done
left=$(job_pids)
if [ -n "$left" ]; then
  echo "in-time: killing the job's processes still alive 10 s after it ended: $left"
  kill -KILL $left 2>/dev/null
  sleep 0.5
fi
for f in $(stale_segments "$stamp"); do
  echo "in-time: removing $f (left by the killed job)"
  rm -f "$f"
done
exit 1
