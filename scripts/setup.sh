#!/usr/bin/env bash
# Install what OSMP needs on Debian/Ubuntu (only what is missing), then configure
# and build into build/ (or $OSMP_BUILD_DIR). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libhwloc-dev hwloc libopenmpi-dev openmpi-bin mpich libmpich-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The plot script's matplotlib lives in a virtual environment of the project.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import matplotlib" 2>/dev/null; then
  if ! python3 -m venv .venv >/dev/null 2>&1; then
    sudo_cmd=()
    [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv .venv
  fi
  .venv/bin/pip install -q matplotlib >&2
fi

# The Python package (pip install ., docs/python.md) compiles against Python's headers.
if ! [ -f "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq python3-dev >/dev/null
fi

build=${OSMP_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
echo "setup: built into $build/" >&2
