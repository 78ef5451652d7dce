#!/usr/bin/env bash
# Configure and build blkrr into build/ (or $BLKRR_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BLKRR_BUILD_DIR:-build}
launcher=()  # ccache when there is one; paths relative to the checkout so that checkouts share it
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$PWD")} CCACHE_NOHASHDIR=1
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BLKRR_BUILD_TYPE:-RelWithDebInfo}" "${launcher[@]}" "$@" >/dev/null
ninja -C "$build" -j "$(nproc)"
