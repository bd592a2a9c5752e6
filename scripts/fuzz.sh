#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz/ with clang (ASan + UBSan) into build-fuzz/ and run each for
# SECONDS (default 15), as many at once as there are cores, on a scratch corpus seeded from
# tests/fuzz/corpus/<name> and tests/fuzz/regressions/<name> (the committed corpus never grows).
# Exits 1 if a target crashes, leaks, times out or runs out of memory; the input that did it is copied
# to build-fuzz/crashes/<name>/ and its path printed (see tests/fuzz/README.md to make it a regression).
# Needs no MPI. Installs clang and the libFuzzer runtime through apt-get when they are missing.
# The mutation seed is fixed (OSMP_FUZZ_SEED, default 1) so that a CI run is repeatable; 0 draws one.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-15}
build=${OSMP_FUZZ_BUILD_DIR:-build-fuzz}
jobs=$(nproc)

sudo_cmd=()
[ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
apt_updated=0
install() {
  [ $apt_updated = 1 ] || "${sudo_cmd[@]}" apt-get update -qq
  apt_updated=1
  echo "fuzz: installing $*" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "$@" >/dev/null
}
missing=()
for p in cmake make pkg-config libhwloc-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v clang >/dev/null || missing+=(clang)
[ ${#missing[@]} = 0 ] || install "${missing[@]}"

# clang links -fsanitize=fuzzer from libclang_rt.fuzzer, which Debian 12 ships in libclang-rt-14-dev,
# only recommended by clang (Ubuntu 22.04: in libclang-common-14-dev, a dependency): probe, install if needed.
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
probe() {
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    > "$probe_dir/p.c"
  clang -fsanitize=fuzzer,address,undefined "$probe_dir/p.c" -o "$probe_dir/p" 2>/dev/null
}
if ! probe; then
  install "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
  probe || { echo "fuzz: clang cannot link -fsanitize=fuzzer (libclang_rt.fuzzer missing)" >&2; exit 1; }
fi

start=$(date +%s)
CC=clang cmake -S . -B "$build" -DOSMP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzzers -j"$jobs" >/dev/null
echo "fuzz: built into $build/ in $(( $(date +%s) - start )) s; ${secs} s per target, $jobs at a time" >&2

targets=()
for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
work=$(mktemp -d)
trap 'rm -rf "$probe_dir" "$work"' EXIT
# A smaller quarantine than ASan's 256 MB keeps two fuzzers well inside -rss_limit_mb.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=64}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

run_one() {
  local t=$1
  mkdir -p "$work/$t/new" "$work/$t/artifacts"
  # New inputs go to the first directory (scratch); the committed ones are read only.
  local rc=0
  "$build/tests/fuzz/fuzz-$t" -max_total_time="$secs" -seed="${OSMP_FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 \
    -artifact_prefix="$work/$t/artifacts/" "$work/$t/new" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" \
    > "$work/$t/log" 2>&1 || rc=$?
  echo $rc > "$work/$t/rc"
}

for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$t" &
done
wait
failed=0
for t in "${targets[@]}"; do
  rc=$(cat "$work/$t/rc" 2>/dev/null || echo 1)
  if [ "$rc" = 0 ]; then
    echo "fuzz: $t ok: $(grep -E "^#[0-9]+.*DONE" "$work/$t/log" | tail -1 | tr -s '\t ' ' ')"
    continue
  fi
  failed=1
  mkdir -p "$build/crashes/$t"
  echo "fuzz: $t FAILED (exit $rc); last lines of its log:"
  grep -v -E "^(#[0-9]+|INFO:|MS:|base unit:|0x|\\\\)" "$work/$t/log" | tail -40 | sed 's/^/    /'
  for f in "$work/$t/artifacts"/*; do
    [ -e "$f" ] || continue
    cp "$f" "$build/crashes/$t/"
    echo "fuzz: $t input: $build/crashes/$t/$(basename "$f")"
    echo "      replay: $build/tests/fuzz/fuzz-$t $build/crashes/$t/$(basename "$f")"
  done
done
if [ $failed = 0 ]; then
  echo "fuzz: ${#targets[@]} targets, ${secs} s each, no finding ($(( $(date +%s) - start )) s with the build)"
else
  echo "fuzz: FAILED: add the inputs above to tests/fuzz/regressions/<target>/ once fixed (tests/fuzz/README.md)"
fi
exit $failed
