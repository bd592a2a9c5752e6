#!/usr/bin/env bash
# osmp.pc finds the headers and libraries relative to itself: install the
# build tree, move the installation, and ask pkg-config (issue 13: it named
# the configure-time prefix).
#   pc-relocatable.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/moved"
pc=$(find "$tmp/moved" -name osmp.pc)
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs osmp)
inc=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-I//p')
lib=$(echo "$flags" | tr ' ' '\n' | sed -n 's/^-L//p')
[ -f "$inc/osmp.h" ] || { echo "pc-relocatable: -I$inc has no osmp.h ($flags)"; exit 1; }
ls "$lib"/libosmp.so >/dev/null 2>&1 || { echo "pc-relocatable: -L$lib has no libosmp.so ($flags)"; exit 1; }
case "$flags" in *"$tmp/first"*) echo "pc-relocatable: still names the first prefix: $flags"; exit 1 ;; esac
echo "pc-relocatable: ok ($flags)"
