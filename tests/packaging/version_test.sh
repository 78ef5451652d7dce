#!/usr/bin/env bash
# version_test.sh VERSION_CMAKE: what userspace/core/version.cmake makes of
# each kind of `git describe` output (blkrr --version, Debian version), and
# that it leaves an unchanged file alone (no rebuild for the same version).
set -uo pipefail
script=$1
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # DESCRIBE WANT_VERSION WANT_DEB
  rm -f "$tmp/v.cmake"
  cmake -DDESCRIBE="$1" -DFALLBACK=0.1.0 -DOUT="$tmp/v.cpp" -DINFO="$tmp/v.cmake" -P "$script" 2>/dev/null
  local got
  got=$(sed -n 's/^set(BLKRR_\(DEB_\)\?VERSION "\(.*\)")$/\2/p' "$tmp/v.cmake" | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$2 $3" ] || { echo "FAIL: describe '$1': want '$2 $3', got '$got'" >&2; fails=$((fails + 1)); }
  grep -qF "return \"$2\";" "$tmp/v.cpp" || { echo "FAIL: describe '$1': v.cpp: $(cat "$tmp/v.cpp")" >&2; fails=$((fails + 1)); }
}
check v0.2.0 0.2.0 0.2.0
check v0.2.0-3-gabc1234 0.2.0-3-gabc1234 0.2.0+git3.gabc1234
check v0.2.0-3-gabc1234-dirty 0.2.0-3-gabc1234-dirty 0.2.0+git3.gabc1234.dirty
check 1.0 1.0 1.0
check 1a992fe 0.1.0-g1a992fe 0.1.0+g1a992fe
check abc1234-dirty 0.1.0-gabc1234-dirty 0.1.0+gabc1234.dirty
check '' 0.1.0 0.1.0
check 'release-candidate' 0.1.0 0.1.0
touch -d '2000-01-01' "$tmp/v.cpp"
cmake -DDESCRIBE='' -DFALLBACK=0.1.0 -DOUT="$tmp/v.cpp" -DINFO="$tmp/v.cmake" -P "$script"
[ "$(date -r "$tmp/v.cpp" +%Y)" = 2000 ] || { echo "FAIL: unchanged version rewrote v.cpp" >&2; fails=$((fails + 1)); }
[ $fails = 0 ] || exit 1
echo "version.cmake: 8 describe forms mapped, unchanged file kept"
