# shellcheck shell=bash
# apt_get ARGS...: apt-get that waits, with a bound, for another package
# manager (unattended-upgrades, apt-daily, a second apt) to release its locks,
# and says so, instead of failing at once with "Could not get lock".
# Sourced by every script that installs packages.
#
#   BLKRR_APT_LOCK_TIMEOUT  seconds to wait for the locks (default 600)
#
# apt itself waits for the dpkg locks (/var/lib/dpkg/lock-frontend, lock) with
# -o DPkg::Lock::Timeout; `apt-get update` does not wait for the lists lock
# (/var/lib/apt/lists/lock), so before each call this waits for every one of
# them, naming the holder (lslocks), up to the same bound in all.

BLKRR_APT_LOCK_TIMEOUT=${BLKRR_APT_LOCK_TIMEOUT:-600}
APT_LOCKS=(/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock
  /var/cache/apt/archives/lock)

# "COMMAND (pid N) on PATH" for the first process holding one of APT_LOCKS, or "".
apt_lock_holder() {
  command -v lslocks >/dev/null || return 0
  local pid cmd path l
  while read -r pid cmd path; do
    for l in "${APT_LOCKS[@]}"; do
      if [ "$path" = "$l" ]; then
        echo "$cmd (pid $pid) on $path"
        return 0
      fi
    done
  done < <(lslocks -n -o PID,COMMAND,PATH 2>/dev/null)
}

# Waits until no process holds a lock of apt or dpkg, at most $1 seconds;
# prints what it waits for, once; fails when the bound is reached.
apt_wait_for_locks() {
  local bound=$1 start holder said=""
  start=$(date +%s)
  while holder=$(apt_lock_holder) && [ -n "$holder" ]; do
    if [ -z "$said" ]; then
      echo "waiting up to ${bound} s for the package manager lock held by $holder" >&2
      said=1
    fi
    if [ $(($(date +%s) - start)) -ge "$bound" ]; then
      echo "gave up after ${bound} s: the package manager lock is still held by $holder" \
        "(set BLKRR_APT_LOCK_TIMEOUT to wait longer)" >&2
      return 1
    fi
    sleep 1
  done
  [ -z "$said" ] || echo "the package manager lock is free after $(($(date +%s) - start)) s" >&2
}

apt_get() {
  local start left
  start=$(date +%s)
  apt_wait_for_locks "$BLKRR_APT_LOCK_TIMEOUT" || return 1
  left=$((BLKRR_APT_LOCK_TIMEOUT - ($(date +%s) - start)))
  [ "$left" -gt 0 ] || left=1
  # Taken again in between (a race with the wait above): apt waits the rest.
  apt-get -o DPkg::Lock::Timeout="$left" "$@"
}
