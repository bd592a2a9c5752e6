#!/usr/bin/env bash
# MPICH's collective test suite (test/mpi/coll of MPICH's 4.0.2 release) as libosmp_mpi's yardstick (issues 45
# and 49): every test that passes without the interposer must pass with it.
#
# usage: mpich-suite.sh [options] WORK-DIR NAME CC PRELOAD LAUNCHER... -n
#   WORK-DIR  where the release is downloaded (once, sha256 checked) and unpacked; NAME/ gets the programs,
#             the logs of every run and results.tsv
#   NAME      the MPI library's name in paths and messages (ompi, mpich)
#   CC        that library's wrapper compiler (mpicc.openmpi, mpicc.mpich)
#   PRELOAD   the interposer built for it (build/libosmp_mpi.so, build/libosmp_mpich.so)
#   LAUNCHER  the launcher up to its rank-count option; it must pass LD_PRELOAD on to the ranks
# options:
#   --list FILE      tests to run, in MPICH's testlist format (default: mpich-coll.list beside this script)
#   --only REGEX     run only the programs whose name matches (extended regex, whole name)
#   --skip REGEX     run none of the programs whose name matches
#   --max-np N       cap every rank count at N (default 4), as runtests' -maxnp; runs that become equal run once
#   --timeout S      limit of a run without the interposer (default 90; a list entry's smaller timeLimit= wins);
#                    a run with it gets 5 times what the run without took, at least 60 s, at most twice S
#   --budget S       start no run after S seconds (default: no limit); runs left out fail the suite
#   --all            also run with the interposer the tests that fail without it (they still cannot fail this)
#   --jobs N         parallel compilations (default 2)
# Environment: OSMP_MPICH_TARBALL a local copy of the release to use instead of downloading it.
#
# A test passes when the job exits 0 and prints "No Errors" (MPICH's runtests: MTest_Finalize prints it on rank 0
# when no rank counted an error). Each test runs first without the interposer (LD_PRELOAD empty), then, when that
# passed, with PRELOAD. A list entry's xfail-osmp=REASON (a key of ours) says that it fails with the interposer for
# a known reason: its failure is listed, not counted, and a pass says that the mark can go. Exit status: 0 when
# every other test that passed without the interposer passed with it and no run left a file in /dev/shm; 1
# otherwise; 77 when the release cannot be had (no network and no copy).
#
# The programs are built as MPICH's test/mpi/Makefile_single.mtest builds them (the test's source, util/mtest.c,
# util/mtest_common.c, util/mtest_single.c; the nb<test> programs from <test>.c with -DUSE_MTEST_NBC, as
# coll/Makefile.am says), but directly with CC and a hand-written mpitestconf.h instead of the suite's configure
# (which wants MPICH's whole build tree; nothing the coll tests use depends on what it would find beyond what is
# written below). A program that does not build against a library (under Open MPI 4.1, the MPI 4 persistent and
# large-count calls) is counted as not built, not as a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
list=$here/mpich-coll.list
only=
skip='^$'
budget=0
max_np=4
limit=90
all=0
jobs=2
while [ $# -gt 0 ]; do
  case $1 in
  --list) list=$2; shift 2 ;;
  --only) only=$2; shift 2 ;;
  --skip) skip=$2; shift 2 ;;
  --budget) budget=$2; shift 2 ;;
  --max-np) max_np=$2; shift 2 ;;
  --timeout) limit=$2; shift 2 ;;
  --all) all=1; shift ;;
  --jobs) jobs=$2; shift 2 ;;
  --) shift; break ;;
  -*) echo "mpich-suite: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
if [ $# -lt 5 ]; then
  sed -n '5,12p' "$0" >&2
  exit 2
fi
work=$1 name=$2 cc=$3 preload=$4
shift 4
launch=("$@")

version=4.0.2
url=http://deb.debian.org/debian/pool/main/m/mpich/mpich_${version}.orig.tar.xz
sha=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
say() { echo "mpich-suite($name): $*"; }

mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
src=$work/mpich-$version/test/mpi

# 1. The release, once per work directory: the runs for each library may start together (ctest -j).
fetch() {
  local tarball=$work/mpich_${version}.orig.tar.xz
  [ -f "$src/.unpacked" ] && return 0
  if ! echo "$sha  $tarball" | sha256sum -c --status 2>/dev/null; then
    rm -f "$tarball"
    local from=$url
    if [ -n "${OSMP_MPICH_TARBALL:-}" ] && [ -f "$OSMP_MPICH_TARBALL" ]; then
      from=$OSMP_MPICH_TARBALL
      cp "$OSMP_MPICH_TARBALL" "$tarball.part"
    elif command -v curl >/dev/null; then
      curl -fsSL --retry 2 --connect-timeout 20 --max-time 600 -o "$tarball.part" "$url"
    elif command -v wget >/dev/null; then
      wget -q --tries=2 --timeout=20 -O "$tarball.part" "$url"
    else
      false
    fi || { rm -f "$tarball.part"; say "SKIP: cannot download $url (no network, no curl or wget; OSMP_MPICH_TARBALL may name a copy)"; return 77; }
    if ! echo "$sha  $tarball.part" | sha256sum -c --status; then
      rm -f "$tarball.part"
      say "FAIL: $from does not have the sha256 $sha"
      return 1
    fi
    mv "$tarball.part" "$tarball"
  fi
  rm -rf "$work/mpich-$version"
  local d=mpich-$version/test/mpi
  tar -xJf "$work/mpich_${version}.orig.tar.xz" -C "$work" "$d/coll" "$d/util" "$d/include" "$d/dtpools/include" ||
    { say "FAIL: cannot unpack $work/mpich_${version}.orig.tar.xz"; return 1; }
  touch "$src/.unpacked"
}
exec 9>"$work/.lock"
flock 9
fetch
rc=$?
flock -u 9
[ $rc -eq 0 ] || exit $rc

# 2. The runs: MPICH's testlist lines "program nprocs [key=value...]" (runtests' RunList: arg= adds an argument,
# env= a variable, timeLimit= the limit; strict=, mem=, xfail= ... change nothing here; xfail-osmp= is ours),
# rank counts capped.
out=$work/$name
mkdir -p "$out/bin" "$out/logs" || exit 1
declare -a r_prog r_np r_args r_env r_limit r_known
declare -A seen
while read -r line; do
  line=${line%%#*}
  read -ra f <<<"$line"
  [ ${#f[@]} -ge 1 ] || continue
  prog=${f[0]} np=${f[1]:-1} args="" env="" tl=$limit known=""
  [[ $prog =~ ^[A-Za-z0-9_]+$ ]] || { say "FAIL: bad test name '$prog' in $list"; exit 1; }
  [ -z "$only" ] || [[ $prog =~ ^($only)$ ]] || continue
  [[ $prog =~ ^($skip)$ ]] && continue
  for kv in "${f[@]:2}"; do
    case $kv in
    arg=*) args+=" ${kv#arg=}" ;;
    env=*) env+=" ${kv#env=}" ;;
    timeLimit=*) [ "${kv#timeLimit=}" -lt "$tl" ] && tl=${kv#timeLimit=} ;;
    xfail-osmp=*) known=${kv#xfail-osmp=} ;;
    esac
  done
  [ "$np" -gt "$max_np" ] && np=$max_np
  key="$prog $np$args$env"
  [ -n "${seen[$key]:-}" ] && continue
  seen[$key]=1
  r_prog+=("$prog") r_np+=("$np") r_args+=("${args# }") r_env+=("${env# }") r_limit+=("$tl") r_known+=("$known")
done <"$list"
[ ${#r_prog[@]} -gt 0 ] || { say "FAIL: no test in $list matches '$only'"; exit 1; }

# 3. The programs (only those the runs need), against CC; a failed build is logged, not fatal.
cat >"$out/mpitestconf.h" <<'EOF'
/* Written by OSMP's tests/mpi/mpich-suite.sh in place of the one configure makes (Linux, glibc, x86-64/LP64). */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED
#define HAVE_DLFCN_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_INTTYPES_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRDUP 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_USLEEP 1
#define HAVE__BOOL 1
#define POINTERINT_t int64_t
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_SHORT 2
#define SIZEOF_VOID_P 8
#define STDC_HEADERS 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#endif
EOF
cflags=(-O1 -w -I"$out" -I"$src/include" -I"$src/dtpools/include")
stamp=$out/bin/.stamp
want="$("$cc" -show 2>/dev/null || "$cc" --showme 2>/dev/null) ${cflags[*]} $sha"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -f "$out"/bin/*
  for u in mtest mtest_common mtest_single; do
    "$cc" "${cflags[@]}" -c "$src/util/$u.c" -o "$out/bin/$u.o" >"$out/logs/$u.build" 2>&1 ||
      { say "FAIL: $src/util/$u.c does not build with $cc:"; cat "$out/logs/$u.build"; exit 1; }
  done
  echo "$want" >"$stamp"
fi
build_one() { # program: its source and flags as coll/Makefile.am has them
  local p=$1 s=$src/coll/$1.c d=
  if [ ! -f "$s" ] && [[ $p == nb* ]] && [ -f "$src/coll/${p#nb}.c" ]; then
    s=$src/coll/${p#nb}.c d=-DUSE_MTEST_NBC
  fi
  [ -x "$out/bin/$p" ] && [ "$out/bin/$p" -nt "$stamp" ] && return 0
  [ -f "$out/bin/$p.failed" ] && [ "$out/bin/$p.failed" -nt "$stamp" ] && return 0
  # shellcheck disable=SC2086
  if "$cc" $cflags_s $d -o "$out/bin/$p" "$s" "$out/bin/mtest.o" "$out/bin/mtest_common.o" \
      "$out/bin/mtest_single.o" -lm >"$out/logs/$p.build" 2>&1; then
    rm -f "$out/bin/$p.failed"
  else
    touch "$out/bin/$p.failed"
  fi
}
export -f build_one
export src out stamp cc cflags_s="${cflags[*]}"
printf '%s\n' "${r_prog[@]}" | sort -u | xargs -P "$jobs" -I{} bash -c 'build_one "$1"' _ {}

# 4. One run: its own timeout; its processes killed when it ends. Each job gets a /dev/shm of its own (a tmpfs in
# a private mount namespace, as tests/mpi/mutate.sh) where we may mount one: what a job leaves there is exactly
# its own, and goes with the namespace. Elsewhere OSMP's new segments whose creator died are only named (another
# test running meanwhile may own them; coll.shm-clean judges), and Open MPI's files go to a folder of ours
# (MPICH, and UCX under it, unlink theirs once mapped). `leaked` is set when a job that passed left a file, or one
# that failed by itself left OSMP's: a job killed by the timeout failed already (and a rank killed inside a
# team's creation may leave its segment, issue 45.7); Open MPI's files after a failure are Open MPI's business.
shmdir=$out/ompi-shm
rm -rf "$shmdir"
mkdir -p "$shmdir"
export OMPI_MCA_btl_vader_backing_directory=$shmdir
private=0
unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null && private=1
# the job's processes: readable environments that hold the run's mark
job_pids() { grep -lsaF -- "$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
osmp_names() { find /dev/shm -maxdepth 1 -name 'osmp-*' -printf '%f\n' 2>/dev/null | sort; }
leftover="" leaked=0
run() { # pre log np prog args env limit -> 0 passed, 1 failed, 2 timed out
  local pre=$1 log=$2 np=$3 prog=$4 args=$5 env=$6 tl=$7
  local mark="OSMP_MPICH_SUITE=$$.$RANDOM" before st left f pid osmp_left=0 job
  # shellcheck disable=SC2206
  job=(env "$mark" LD_PRELOAD="$pre" $env "${launch[@]}" "$np" "$out/bin/$prog" $args)
  if [ $private = 1 ]; then
    : >"$log.shm"
    # (the outer timeout only in case the inner one cannot act)
    timeout -k 5 $((tl + 30)) unshare --mount --propagation private sh -c \
      'left=$1 tl=$2; shift 2; mount -t tmpfs tmpfs /dev/shm || exit 125; timeout -k 5 "$tl" "$@"; st=$?
       ls -A /dev/shm >"$left"; exit $st' sh "$log.shm" "$tl" "${job[@]}" >"$log" 2>&1
    st=$?
  else
    before=$(osmp_names)
    timeout -k 5 "$tl" "${job[@]}" >"$log" 2>&1
    st=$?
  fi
  for _ in $(seq 1 50); do [ -z "$(job_pids "$mark")" ] && break; sleep 0.1; done
  left=$(job_pids "$mark")
  # shellcheck disable=SC2086
  [ -n "$left" ] && echo "mpich-suite: killed the job's processes left after it ended: $left" >>"$log" && kill -KILL $left 2>/dev/null
  leftover="" leaked=0
  for f in "$shmdir"/*; do
    [ -e "$f" ] && leftover+=" $f" && rm -f "$f"
  done
  if [ $private = 1 ]; then
    while read -r f; do
      [ -n "$f" ] && leftover+=" /dev/shm/$f" && [[ $f == osmp-* ]] && osmp_left=1
    done <"$log.shm"
    rm -f "$log.shm"
  else
    for f in $(comm -13 <(echo "$before") <(osmp_names)); do
      pid=${f#osmp-}
      pid=${pid%%-*}
      [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && echo "mpich-suite: new in /dev/shm, its creator gone: $f" >>"$log"
    done
  fi
  [ -n "$leftover" ] && echo "mpich-suite: left behind (removed):$leftover" >>"$log"
  echo "mpich-suite: exit status $st" >>"$log"
  [ $st -eq 124 ] || [ $st -eq 137 ] && return 2
  if [ $st -eq 0 ] && grep -Eq '^\s*No [Ee]rrors\s*$' "$log"; then
    [ -n "$leftover" ] && leaked=1
    return 0
  fi
  leaked=$osmp_left
  return 1
}
verdict=(pass fail timeout)

# 5. Every run, without then with the interposer; results.tsv: program np args, and for each run its verdict
# and its seconds.
res=$out/results.tsv
echo -e "program\tnp\targs\twithout\tseconds\twith\tseconds" >"$res"
built=0 nobuild=0 pass_without=0 pass_with=0 ran_with=0 leaks=0 unrun=0
regressions=() unbuilt=() failing_without=() known_fail=() known_pass=()
start=$(date +%s)
for i in "${!r_prog[@]}"; do
  p=${r_prog[$i]} np=${r_np[$i]} args=${r_args[$i]} env=${r_env[$i]} tl=${r_limit[$i]} known=${r_known[$i]}
  id="$p $np${args:+ $args}"
  tag=$p-$np${args:+-${args//[^A-Za-z0-9=,.]/}}
  if [ ! -x "$out/bin/$p" ]; then
    nobuild=$((nobuild + 1)) unbuilt+=("$p")
    echo -e "$p\t$np\t$args\tnot built\t-\t-\t-" >>"$res"
    continue
  fi
  built=$((built + 1))
  if [ "$budget" -gt 0 ] && [ $(($(date +%s) - start)) -ge "$budget" ]; then
    unrun=$((unrun + 1))
    echo -e "$p\t$np\t$args\tnot run\t-\t-\t-" >>"$res"
    say "$id: not run (the budget of $budget s is spent)"
    continue
  fi
  t0=$(date +%s)
  run "" "$out/logs/$tag.without" "$np" "$p" "$args" "$env" "$tl"
  w=$?
  t1=$(date +%s)
  [ -n "$leftover" ] && say "$id without the interposer left:$leftover"
  [ $w -eq 0 ] && pass_without=$((pass_without + 1)) || failing_without+=("$id (${verdict[$w]})")
  v=- t2=$t1
  if [ $w -eq 0 ] || [ $all = 1 ]; then
    # twice the limit at most: a run that passed without gets room for a loaded machine, not for a hang
    wl=$((5 * (t1 - t0)))
    [ $wl -lt 60 ] && wl=60
    [ $wl -gt $((2 * tl)) ] && wl=$((2 * tl))
    run "$preload" "$out/logs/$tag.with" "$np" "$p" "$args" "$env" "$wl"
    v=$?
    t2=$(date +%s)
    ran_with=$((ran_with + 1))
    [ -n "$leftover" ] && say "$id with the interposer left:$leftover"
    if [ $leaked = 1 ]; then
      leaks=$((leaks + 1))
      [ $v -eq 0 ] && v=1
    fi
    [ $v -eq 0 ] && pass_with=$((pass_with + 1))
    if [ $w -eq 0 ] && [ $v -ne 0 ] && [ -n "$known" ]; then
      known_fail+=("$id (${verdict[$v]}; known: $known)")
    elif [ $w -eq 0 ] && [ $v -ne 0 ]; then
      regressions+=("$id (${verdict[$v]}: $out/logs/$tag.with)")
    elif [ $w -eq 0 ] && [ -n "$known" ]; then
      known_pass+=("$id")
    fi
    v=${verdict[$v]}
  fi
  echo -e "$p\t$np\t$args\t${verdict[$w]}\t$((t1 - t0))\t$v\t$((t2 - t1))" >>"$res"
  say "$id: without ${verdict[$w]} ($((t1 - t0)) s), with $v ($((t2 - t1)) s)"
done

[ $private = 1 ] || say "no /dev/shm of its own for each job (unshare refused): OSMP's segments are only named"
say "${#r_prog[@]} runs of $(printf '%s\n' "${r_prog[@]}" | sort -u | wc -l) programs (ranks capped at $max_np, limit $limit s) in $(($(date +%s) - start)) s; results in $res"
say "built: $built; not built against $cc: $nobuild$([ $nobuild = 0 ] || echo " ($(printf '%s\n' "${unbuilt[@]}" | sort -u | tr '\n' ' '| sed 's/ $//'))")"
say "passed without the interposer: $pass_without of $built"
say "passed with it: $pass_with of $ran_with$([ $all = 1 ] || echo " (the runs that passed without it)")"
[ ${#failing_without[@]} -eq 0 ] || say "fail without the interposer (listed, not failures): ${failing_without[*]}"
[ ${#known_fail[@]} -eq 0 ] || { say "fail with it for a known reason (xfail-osmp):"; printf '  %s\n' "${known_fail[@]}"; }
[ ${#known_pass[@]} -eq 0 ] || say "marked xfail-osmp but passed (the mark can go): ${known_pass[*]}"
rc=0
[ $unrun -eq 0 ] || { say "FAIL: $unrun runs not run within the budget of $budget s"; rc=1; }
[ $leaks -eq 0 ] || { say "FAIL: $leaks runs with the interposer left files behind"; rc=1; }
if [ ${#regressions[@]} -gt 0 ]; then
  say "FAIL: pass without the interposer, fail with it: ${#regressions[@]}"
  printf '  %s\n' "${regressions[@]}"
  rc=1
fi
[ $rc -eq 0 ] && say "ok: every test that passes without the interposer passes with it$([ ${#known_fail[@]} -eq 0 ] || echo ", but for the ${#known_fail[@]} known")"
exit $rc
