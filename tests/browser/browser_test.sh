#!/usr/bin/env bash
# blkrr report's index.html in headless Chromium (report_page.js): a
# recording's report and a --compare report of an original and its replay, at 1280x800 and
# 390x844; then the same checker on a copy of the page with a missing image
# and a console error injected, which must fail naming both.
#   browser_test.sh BLKRR SOURCE_DIR [--screenshots DIR]
# Needs chromium and node/npm (scripts/install-deps.sh); exit 77 (skip)
# without them. puppeteer-core (version pinned in package-lock.json) is
# installed with `npm ci` into a cache directory, never into the source tree:
# $BLKRR_NPM_CACHE, default ~/.cache/blkrr/npm.
set -euo pipefail
blkrr=$1 src=$2
shift 2
shots=()
if [ "${1:-}" = --screenshots ]; then shots=(--screenshots "$(realpath "$2")"); fi
here=$src/tests/browser
for c in chromium node npm; do
  command -v "$c" >/dev/null || { echo "SKIPPED: $c is not installed (scripts/install-deps.sh)"; exit 77; }
done
start=$(date +%s%N)
elapsed() { awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
lock_sum=$(sha256sum "$here/package-lock.json" | cut -c1-16)
cache=${BLKRR_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/blkrr/npm}/$lock_sum
if [ ! -f "$cache/node_modules/puppeteer-core/package.json" ]; then
  mkdir -p "$cache"
  cp "$here/package.json" "$here/package-lock.json" "$cache/"
  # --ignore-scripts: no install script may fetch a browser; /usr/bin/chromium is used.
  (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
    { echo "browser-test: FAILED: npm ci in $cache"; exit 1; }
fi
export NODE_PATH=$cache/node_modules

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A recording with processes and completions (a blkparse capture converted),
# and a load with its (dry-run) replay for --compare.
"$blkrr" convert -q "$src/tests/data/blkparse/ext4-natural.blkparse.txt.gz" -o "$tmp/ext4.blkrr"
"$blkrr" report -q "$tmp/ext4.blkrr" -o "$tmp/trace"
load=$src/tests/data/linux-mysql.load.gz
truncate -s 32G "$tmp/lab.img"
"$blkrr" replay -q "$load" "$tmp/lab.img" --allow-file --dry-run --duration 5 -o "$tmp/run.replay.gz"
"$blkrr" report -q --compare "$load" "$tmp/run.replay.gz" -o "$tmp/compare"
echo "browser-test: reports written in $(elapsed) s"

node "$here/report_page.js" "${shots[@]}" "$tmp/trace"
node "$here/report_page.js" "${shots[@]}" --compare "$tmp/compare"

# The checker must see a missing image and a console error.
cp -r "$tmp/trace" "$tmp/broken"
sed -i 's|</body>|<img alt="injected" src="data/no-such.png"><script>console.error("injected error")</script></body>|' \
  "$tmp/broken/index.html"
rc=0
node "$here/report_page.js" "$tmp/broken" >"$tmp/broken.out" || rc=$?
if [ $rc != 1 ] || ! grep -q 'image not decoded: injected' "$tmp/broken.out" ||
  ! grep -q 'console error: injected error' "$tmp/broken.out"; then
  cat "$tmp/broken.out"
  echo "browser-test: FAILED: the checker did not report the injected missing image and console error (exit $rc)"
  exit 1
fi
echo "browser-test: the injected missing image and console error were detected"
echo "browser-test: passed in $(elapsed) s"
