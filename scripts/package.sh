#!/usr/bin/env bash
# Build the Debian package build/package/blkrr_<version>_amd64.deb (build dir:
# $BLKRR_BUILD_DIR, default build/, re-used as it is) with CPack, then check
# it with lintian (errors fail, warnings are shown). Prints the .deb path last.
# The version is `blkrr --version` of this build (git describe), in Debian
# spelling. See docs/packaging.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BLKRR_BUILD_DIR:-build}
[ "$(id -u)" -ne 0 ] || bash scripts/install-deps.sh  # fresh machine: the build needs them
gen=()
[ -f "$build/CMakeCache.txt" ] || gen=(-G Ninja)
# Prefix /usr: the paths of a Debian system (/usr/bin, /etc/default). cpack
# installs only; it must not build the tests (ALL) first.
cmake -S . -B "$build" "${gen[@]}" -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
ninja -C "$build" blkrr blkrr_packaging >/dev/null
rm -rf "$build/package"
(cd "$build" && cpack -G DEB -B "$PWD/package" >/dev/null)
debs=("$build"/package/blkrr_*.deb)
{ [ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ]; } || { echo "package.sh: cpack made no single blkrr_*.deb in $build/package" >&2; exit 1; }
deb=${debs[0]}
if command -v lintian >/dev/null; then
  # Run as root here (CI): lintian refuses that without --allow-root.
  lintian --allow-root --fail-on error --tag-display-limit 0 "$deb" >&2 || {
    echo "package.sh: lintian found errors in $deb (above)" >&2
    exit 1
  }
else
  echo "package.sh: lintian not installed: package not checked (apt-get install lintian)" >&2
fi
echo "$deb"
