#!/usr/bin/env bash
# osmp-run names a program it cannot run once (not once per rank), exits 127;
# --help exits 0 and names every option; an unknown option is named, exit 2.
#   run-exec-once.sh OSMP_RUN
set -uo pipefail
run=$1 fail=0
err=$("$run" -n 4 -- ./no-such-program-osmp 2>&1 >/dev/null); rc=$?
[ "$rc" = 127 ] || { echo "exit status $rc, expected 127"; fail=1; }
[ "$(grep -c 'cannot run ./no-such-program-osmp: No such file or directory' <<<"$err")" = 1 ] ||
  { echo "expected one line, got: $err"; fail=1; }
help=$("$run" --help); rc=$?
[ "$rc" = 0 ] || { echo "--help exit status $rc"; fail=1; }
for o in -n --bind --cores --topology --synthetic --hierarchy --timeout --grace --help; do
  grep -q -- "^  $o\|^  -h, $o" <<<"$help" || { echo "--help does not explain $o"; fail=1; }
done
err=$("$run" --frobnicate -n 1 -- true 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$err" = "osmp-run: unknown option --frobnicate (see --help)" ] || { echo "bad option: $rc $err"; fail=1; }
[ $fail = 0 ] && echo "run-exec-once: ok"
exit $fail
