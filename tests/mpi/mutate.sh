#!/usr/bin/env bash
# mutate.sh: does conform catch what it is meant to catch? For developers, not
# a ctest (it builds and runs conform once or twice per mutation: minutes).
#
#   tests/mpi/mutate.sh [--mpi ompi|mpich] [--ranks N] [--keep] [--list] [NAME...]
#
# Copies the source tree to a temporary directory, builds conform and the
# libosmp_mpi library there, checks that conform passes on the unmodified
# library, then for each mutation (all, or the NAMEs given): puts back the
# pristine sources, applies the mutation (a literal text replacement in the one
# file under src/ that contains the pattern: files may move, patterns stay),
# rebuilds only the library, and runs conform at N ranks (default 3), first on
# one node, then, if that passed, as two pseudo-nodes (OSMP_MPI_PSEUDO_NODES=2,
# the hierarchical paths). A mutation is CAUGHT when conform fails (a mismatch,
# a crash, or the 280 s timeout), SURVIVED when it passes.
# Runs go in a private /dev/shm (unshare, when allowed) so that a crashing
# mutant leaves no segments behind.
# Exit status: 0 every mutation caught; 1 some survived; 2 a mutation could not
# be applied (its pattern is gone or not unique: update it) or the baseline failed.
set -euo pipefail

# mutation NAME WHAT PATTERN REPLACEMENT (both literal)
names=() whats=() pats=() reps=()
mutation() { names+=("$1"); whats+=("$2"); pats+=("$3"); reps+=("$4"); }
mutation pair-types-as-plain-bytes \
  "the fixed bug: plain_size without its extent check, so MPI_DOUBLE_INT & co. move as plain bytes" \
  'PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS || lb != 0 || extent != size ||' \
  'PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS ||'
mutation null-buffer-is-out-of-memory \
  "the other fixed bug: a NULL buffer with a zero count is taken for a failed allocation" \
  'if (bytes == 0 || osmp__mpi_plain_size(dt) > 0) return OSMP_OK;' \
  'if (bytes == 0 || osmp__mpi_plain_size(dt) > 0) return *v ? OSMP_OK : OSMP_ERR_NO_MEMORY;'
mutation gather-drops-block-1 \
  "the root of a gather (through the slots) does not copy rank 1's block" \
  'memcpy(out + osmp__displ_of(a, r) * e + off, osmp__mb_slot(m, r, OSMP__UP, osmp__mb_ring(m, k)),' \
  'if (r != 1) memcpy(out + osmp__displ_of(a, r) * e + off, osmp__mb_slot(m, r, OSMP__UP, osmp__mb_ring(m, k)),'
mutation scatter-block-1-shifted \
  "a scatter (through the slots) sends block 1 from one byte further" \
  'memcpy(dst, in + osmp__displ_of(a, r) * e + off, len);' \
  'memcpy(dst, in + osmp__displ_of(a, r) * e + off + (r == 1), len);'
mutation rsb-block-1-shifted \
  "reduce_scatter_block reduces block 1 from one element further" \
  '.in = (const char *)a->in + off * a->esize,' \
  '.in = (const char *)a->in + (off + (r == 1)) * a->esize,'
mutation uint8-compared-signed \
  "MIN/MAX of unsigned 8-bit integers compare as signed" \
  'INTEGER(u8, uint8_t, uint8_t)' \
  'INTEGER(u8, int8_t, uint8_t)'
mutation gather-in-place-root-block-lost \
  "in-place gather of a derived type: the root's own block is not packed in" \
  'int rc = open_views(&in, &out, gather && in_pl, comm);' \
  'int rc = open_views(&in, &out, 0, comm);'
mutation hier-allgather-drops-block-1 \
  "several nodes: allgather does not put block 1 in place" \
  'for (int r = 0; r < s->size; r++) memcpy((char *)out + (size_t)r * block, all + node_major(s, r) * block, block);' \
  'for (int r = 0; r < s->size; r++) if (r != 1) memcpy((char *)out + (size_t)r * block, all + node_major(s, r) * block, block);'
mutation rsb-multinode-on-one-node \
  "several nodes: reduce_scatter_block runs in each node alone instead of going to MPI" \
  'if (s && s->multinode) s = (osmp__mpi_pass(OSMP_COLL_REDUCE_SCATTER_BLOCK, R_MULTINODE), NULL);' \
  ''
mutation scan-skips-rank-1 \
  "scan: rank 1 passes on the prefix before it without its own input" \
  'a->fn(mine, (const char *)a->in + off, len / e);' \
  'if (t->rank != 1) a->fn(mine, (const char *)a->in + off, len / e);'
mutation vector-view-block-1-shifted \
  "v-variants: block 1 of a packed vector side is read one byte further" \
  'if (x->counts[r]) PMPI_Pack(block_at(x, r), x->counts[r]' \
  'if (x->counts[r]) PMPI_Pack(block_at(x, r) + (r == 1), x->counts[r]'
mutation lone-logical-on-osmp \
  "a logical reduction on a communicator of one gives 0/1 where MPI returns the value" \
  'if (s && s->size == 1 && (*oop == OSMP_LAND || *oop == OSMP_LOR || *oop == OSMP_LXOR))' \
  'if (0)'

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

mpi=ompi ranks=3 keep=0 list=0 only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --list) list=1; shift ;;
    -h|--help) usage 0 ;;
    -*) usage 2 ;;
    *) only+=("$1"); shift ;;
  esac
done
if [ $list = 1 ]; then
  for i in "${!names[@]}"; do printf '%-32s %s\n' "${names[$i]}" "${whats[$i]}"; done
  exit 0
fi
case "$mpi" in ompi|mpich) ;; *) echo "mutate: --mpi ompi or mpich" >&2; exit 2 ;; esac

repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/osmp-mutate.XXXXXX")
cleanup() { if [ $keep = 1 ]; then echo "mutate: kept $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
say() { printf 'mutate: %s\n' "$*"; }

# 1. the source tree (tracked and untracked files, as in the worktree), and a pristine src/ to restore
mkdir -p "$tmp/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  xargs -0 cp --parents -t "$tmp/src")
cp -a "$tmp/src/src" "$tmp/pristine"

# 2. build conform and the library once
conform=conform-$mpi
lib=osmp_mpi
launch=(mpirun --oversubscribe -x LD_PRELOAD -x OSMP_MPI_PSEUDO_NODES -n "$ranks")
if [ "$mpi" = mpich ]; then
  launch=(mpirun.mpich -genvall -n "$ranks")
fi
say "building in $tmp/build"
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; exit 2; }
# MPICH's library is libosmp_mpich when Open MPI is installed too, else libosmp_mpi
if [ "$mpi" = mpich ] && grep -qw osmp_mpich <<<"$(cmake --build "$tmp/build" --target help)"; then lib=osmp_mpich; fi
build_lib() { cmake --build "$tmp/build" -j2 --target "$lib" >"$tmp/build.log" 2>&1; }
cmake --build "$tmp/build" -j2 --target "$conform" "$lib" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 2; }
libfile=$(ls "$tmp/build/lib$lib.so")

# A private /dev/shm when we may mount one: a mutant that crashes leaves nothing behind.
private=()
if unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm' 2>/dev/null; then
  private=(unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm && exec "$@"' sh)
else
  say "no private /dev/shm (unshare not allowed): a crashing mutant may leave osmp-* segments there"
fi

# run PSEUDO LOG: conform's exit status
run() {
  env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MPIR_CVAR_DEVICE_COLLECTIVES=none \
    LD_PRELOAD="$libfile" OSMP_MPI_PSEUDO_NODES="$1" \
    "${private[@]}" timeout -k 5 280 "${launch[@]}" "$tmp/build/tests/$conform" >"$2" 2>&1
}
# the first line that says what went wrong: conform's, libosmp_mpi's, else the MPI library's
why() { { grep -m1 'FAILED: ' "$1" | sed 's/.*FAILED: /FAILED: /' || grep -m1 'osmp-mpi: .*failed' "$1" || grep -m1 -iE 'error|abort|signal' "$1" ||
          echo "timeout or silent failure"; } | cut -c1-240; }

# 3. the baseline must pass
for p in 1 2; do
  if ! run $p "$tmp/baseline-$p.log"; then
    say "baseline FAILED (pseudo-nodes $p): conform fails without any mutation:"; why "$tmp/baseline-$p.log"; exit 2
  fi
done
say "baseline passes ($mpi, $ranks ranks, pseudo-nodes 1 and 2)"

# 4. the mutations
caught=0 survived=0 broken=0 prev=""
for i in "${!names[@]}"; do
  name=${names[$i]} what=${whats[$i]} pat=${pats[$i]} rep=${reps[$i]}
  if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then continue; fi
  # put back the previous mutant's file; cp without -p gives it a new mtime, so make rebuilds it
  if [ -n "$prev" ]; then cp "$tmp/pristine/$prev" "$tmp/src/src/$prev"; prev=""; fi
  files=$(grep -rlF -- "$pat" "$tmp/src/src" || true)
  n=$(printf '%s' "$files" | grep -c . || true)
  if [ "$n" != 1 ] || [ "$(grep -cF -- "$pat" "$files")" != 1 ]; then
    say "$name: NOT APPLIED: the pattern is in $n files (or several times): update it"; broken=$((broken + 1)); continue
  fi
  prev=${files#"$tmp/src/src/"}
  PAT=$pat REP=$rep perl -0pi -e 's/\Q$ENV{PAT}\E/$ENV{REP}/' "$files"
  if ! build_lib; then
    say "$name: NOT APPLIED: does not compile"; tail -5 "$tmp/build.log"; broken=$((broken + 1)); continue
  fi
  result=SURVIVED detail=""
  for p in 1 2; do
    if run $p "$tmp/$name-$p.log"; then continue; else rc=$?; fi
    result=CAUGHT detail="pseudo-nodes $p, exit $rc: $(why "$tmp/$name-$p.log")"
    break
  done
  say "$name (${files#"$tmp/src/"}): $result - $what"
  [ -n "$detail" ] && say "    $detail"
  if [ $result = CAUGHT ]; then caught=$((caught + 1)); else survived=$((survived + 1)); fi
done
# a kept tree holds the pristine sources (its library: the last mutant's)
if [ -n "$prev" ]; then cp "$tmp/pristine/$prev" "$tmp/src/src/$prev"; fi
say "$caught caught, $survived survived, $broken not applied"
[ $broken = 0 ] || exit 2
[ $survived = 0 ]
