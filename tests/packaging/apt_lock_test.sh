#!/usr/bin/env bash
# scripts/install-deps.sh waits for a package manager that holds the dpkg lock
# (as unattended-upgrades does), says so, and goes on once it is free; past
# BLKRR_APT_LOCK_TIMEOUT it gives up with the holder named.
# Usage: apt_lock_test.sh REPO. Needs root, apt-get and python3 (the lock
# holder: apt and dpkg take fcntl locks, which flock(1) does not see).
set -euo pipefail
repo=$1
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (takes the dpkg lock)"
command -v apt-get >/dev/null || skip "no apt-get"
command -v python3 >/dev/null || skip "no python3 to hold the lock"
command -v lslocks >/dev/null || skip "no lslocks (util-linux)"
tmp=$(mktemp -d)
holder=""
cleanup() {
  [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Holds /var/lib/dpkg/lock-frontend for $1 seconds in the background; returns
# once it is held.
hold_lock() {
  python3 -c '
import fcntl, sys, time
f = open("/var/lib/dpkg/lock-frontend", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[1]))' "$1" >"$tmp/held" &
  holder=$!
  for _ in $(seq 300); do
    grep -q held "$tmp/held" && return 0
    sleep 0.1
  done
  fail "the lock holder did not take the lock within 30 s"
}

# 1. Held for 8 s (dpkg-query's checks before take a few): install-deps.sh waits, says so, and succeeds.
hold_lock 8
start=$(date +%s)
bash "$repo/scripts/install-deps.sh" --check >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "install-deps.sh --check failed while waiting"; }
took=$(($(date +%s) - start))
cat "$tmp/out"
grep -q "waiting up to 600 s for the package manager lock held by python3 (pid $holder) on /var/lib/dpkg/lock-frontend" "$tmp/out" ||
  fail "install-deps.sh did not say it was waiting for the lock"
grep -q "the package manager lock is free after" "$tmp/out" || fail "no word when the lock was free"
[ "$took" -ge 7 ] || fail "install-deps.sh took ${took} s: it did not wait for the 8 s lock"
wait "$holder" || true
holder=""

# 2. Held past the bound: a clear failure, naming the holder.
hold_lock 30
start=$(date +%s)
if BLKRR_APT_LOCK_TIMEOUT=2 bash "$repo/scripts/install-deps.sh" --check >"$tmp/out" 2>&1; then
  cat "$tmp/out"
  fail "install-deps.sh succeeded although the lock was held past the bound"
fi
took=$(($(date +%s) - start))
cat "$tmp/out"
grep -q "gave up after 2 s: the package manager lock is still held by python3 (pid $holder)" "$tmp/out" ||
  fail "no message naming the holder after the bound"
[ "$took" -le 20 ] || fail "gave up after ${took} s, the bound was 2 s"
echo "PASS: waited for an 8 s lock and went on; gave up ${took} s after the start with a bound of 2 s"
