#!/usr/bin/env bash
# Configure and build blkrr into build/ (or $BLKRR_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BLKRR_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BLKRR_BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
ninja -C "$build" -j "$(nproc)"
