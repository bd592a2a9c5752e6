#!/usr/bin/env bash
# python/tests/run.sh BUILD_DIR: pip-install the package (the root CMake, built
# in BUILD_DIR/py/wheel-build so a second run recompiles only what changed)
# into the virtual environment BUILD_DIR/py/venv, then run python/tests under
# osmp-run at 2, 4 and 8 processes and at 16 oversubscribed on the Kunpeng 920
# topology, under mpirun with Team.from_mpi (Open MPI 2, 4 and 8; MPICH, which
# spins while it waits, 2 and 4), and
# the tensor-parallel example. BUILD_DIR holds a configured build with
# osmp-run (scripts/setup.sh). Exits non-zero on any failure, and on an OSMP
# segment left in /dev/shm by a dead process.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: python/tests/run.sh BUILD_DIR}" && pwd)
run=$build/tools/osmp-run
[ -x "$run" ] || { echo "run.sh: no $run: build the project first (scripts/setup.sh)" >&2; exit 2; }
start=$(date +%s)
stage() { echo "== python: $* ($(($(date +%s) - start)) s)"; }

stage "pip install into $build/py/venv"
venv=$build/py/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py=$venv/bin/python
# mpi4py: PyPI's binary wheel, which loads the system's libmpi at run time
# (Open MPI's libmpi.so.40; MPICH through MPI4PY_MPIABI below). The build
# requirements live in the venv (no build isolation) so that the CMake build
# directory sees the same nanobind path every run.
"$py" -m pip install -q --disable-pip-version-check numpy ml_dtypes pytest mpi4py "scikit-build-core>=0.10" \
    "nanobind>=2.0"
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall \
    --config-settings=build-dir="$build/py/wheel-build" "$src"

ls -d /dev/shm/* 2>/dev/null >"$build/py/shm-before" || true
cd "$build/py" # away from the source tree: `import osmp` is the installed package
pytest=("$py" -m pytest -q -p no:cacheprovider --color=no "$src/python/tests")
failed=0
launch() { # name, command...
    local name=$1
    shift
    stage "$name"
    if ! "$@" >"$build/py/$name.log" 2>&1; then
        echo "FAILED: $name ($*); its output:" >&2
        tail -n 40 "$build/py/$name.log" >&2
        failed=1
    else
        echo "   $(grep -oE '[0-9]+ passed|: ok$' "$build/py/$name.log" | wc -l) process(es) passed"
    fi
}

for n in 2 4 8; do
    launch "osmp-run-$n" "$run" -n $n --timeout 120 -- "${pytest[@]}"
done
launch osmp-run-16-kunpeng "$run" -n 16 --topology "$src/tests/data/topologies/kunpeng920-2x64-clusters.xml" \
    --bind scatter --timeout 150 -- "${pytest[@]}"
launch example-tensor-parallel "$run" -n 4 --timeout 60 -- "$py" "$src/python/examples/tensor_parallel.py"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
ompi_shm=$build/py/ompi-shm
rm -rf "$ompi_shm"
mkdir -p "$ompi_shm"
if command -v mpirun.openmpi >/dev/null; then
    for n in 2 4 8; do
        # Open MPI's shared memory in a folder of ours, where a leftover is surely ours.
        launch "mpirun-openmpi-$n" env OSMP_TEST_MPI=1 timeout 120 mpirun.openmpi --oversubscribe \
            --mca btl_vader_backing_directory "$ompi_shm" -n $n "${pytest[@]}"
    done
else
    echo "run.sh: no mpirun.openmpi: Open MPI runs skipped"
fi
if command -v mpirun.mpich >/dev/null; then
    # The wheel's MPICH module needs libmpi.so.12, which Debian's MPICH names
    # libmpich.so.12: a link under another name, on the library path.
    shim=$build/py/mpich-lib
    mkdir -p "$shim"
    ln -sf "$(ldconfig -p | awk '/libmpich\.so\.12 /{print $NF; exit}')" "$shim/libmpi.so.12"
    for n in 2 4; do
        launch "mpirun-mpich-$n" env OSMP_TEST_MPI=1 MPI4PY_MPIABI=mpich LD_LIBRARY_PATH="$shim" \
            timeout 120 mpirun.mpich -n $n "${pytest[@]}"
    done
else
    echo "run.sh: no mpirun.mpich: MPICH runs skipped"
fi

stage "/dev/shm"
# What the launches left: entries that were not there before, that no live
# process maps or holds open (another job's segments are its own business),
# and OSMP segments (osmp-<creator pid>-...) whose creator is dead.
in_use() { grep -qsF "$1" /proc/[0-9]*/maps 2>/dev/null || ls -l /proc/[0-9]*/fd 2>/dev/null | grep -qF "$1"; }
left=()
for f in /dev/shm/*; do
    [ -e "$f" ] || continue
    case "$f" in
    /dev/shm/osmp-*)
        pid=${f#/dev/shm/osmp-}
        pid=${pid%%-*}
        [[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && left+=("$f")
        ;;
    *) grep -qxF "$f" "$build/py/shm-before" || in_use "$f" || left+=("$f") ;;
    esac
done
for f in "$ompi_shm"/*; do
    [ -e "$f" ] && left+=("$f")
done
if [ ${#left[@]} -gt 0 ]; then
    # Only OSMP's segments of dead creators are removed (what osmp_shm_cleanup
    # does); anything else may be a concurrent job's and is only reported.
    echo "FAILED: left in /dev/shm (or Open MPI's folder): ${left[*]}" >&2
    for f in "${left[@]}"; do
        case "$f" in /dev/shm/osmp-* | "$ompi_shm"/*) rm -f "$f" ;; esac
    done
    failed=1
fi
stage "done: $([ $failed = 0 ] && echo 'all passed' || echo 'FAILURES above')"
exit $failed
