#!/usr/bin/env bash
# expect-end.sh SECONDS command...: passes when the command fails (a rank was
# killed on purpose) but ends by itself well before SECONDS, i.e. nothing hung.
limit=$1
shift
start=$(date +%s)
timeout -k 5 "$limit" "$@"
rc=$?
took=$(($(date +%s) - start))
echo "expect-end: exit status $rc after $took s"
[ "$rc" -ne 0 ] && [ "$took" -lt "$limit" ]
