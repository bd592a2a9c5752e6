#!/bin/sh
# The suite's last test (FIXTURES_CLEANUP shm): no OSMP name may be left in
# /dev/shm, whether the suite passed or failed. Names whose creator died (a test
# killed inside a team's creation) are removed here, through osmp-run's own
# reaping, and still fail this test, so that a leak is seen and not left behind.
# usage: shm-clean.sh OSMP-RUN
# The MPI library's segments that no live process uses (tests/mpi/stale-segments.sh)
# are removed too, with a warning, but do not fail it: Open MPI leaves them when
# a job of its own is killed (the tests that kill a rank on purpose clean up
# after themselves, tests/mpi/expect-end.sh), they are not OSMP's, and a CI run
# must not fail at random on the MPI library's timing.
. "$(dirname "$0")/../mpi/stale-segments.sh"
before=$(ls /dev/shm | grep '^osmp-')
"$1" -n 1 -- true >/dev/null 2>&1
after=$(ls /dev/shm | grep '^osmp-')
stale=$(stale_segments)
rc=0
if [ -n "$before" ]; then
  echo "shm-clean: names left in /dev/shm by the suite: $before"
  [ -n "$after" ] && echo "shm-clean: still there (their creator lives): $after" || echo "shm-clean: removed"
  rc=1
fi
if [ -n "$stale" ]; then
  echo "shm-clean: warning: MPI segments left in /dev/shm by the suite, no process uses them (removed):" $stale
  rm -f $stale
fi
exit $rc
