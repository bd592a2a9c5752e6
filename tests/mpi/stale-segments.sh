# Sourced by the tests: the MPI library's shared-memory files in /dev/shm that
# no live process holds open or mapped. Open MPI's vader BTL keeps one segment
# per process (vader_segment.HOST.JOB.RANK) for the whole job and removes it at
# the end; a job whose ranks or launcher are killed (a test that kills a rank
# on purpose) can leave them behind. A file some process still uses belongs to
# a job that is running (ctest -j runs several): it is never listed.
# usage: stale_segments [NEWER-THAN-FILE]   prints the names, one a line
stale_segments() {
  newer=${1:+-newer $1}
  # shellcheck disable=SC2086
  find /dev/shm -maxdepth 1 -type f -name 'vader_segment.*' $newer 2>/dev/null | while read -r f; do
    grep -qsF -- "$f" /proc/[0-9]*/maps && continue
    used=0
    for fd in /proc/[0-9]*/fd/*; do
      [ "$(readlink "$fd" 2>/dev/null)" = "$f" ] && used=1 && break
    done
    [ "$used" = 0 ] && echo "$f"
  done
}
