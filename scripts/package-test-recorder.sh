#!/usr/bin/env bash
# Part of scripts/package-test.sh, with the package installed: the recorder
# unit blkrr-record@.service is verified (systemd-analyze), started on a
# scratch loop device with 2-second pieces and --keep 3, watched until pieces
# appear and rotate (and the oldest go), then stopped; every piece left must
# be closed, with its trailer. Where systemd is not running (a container, a
# VM without it as PID 1) the unit's ExecStart runs by hand with its
# environment files and state directory, and is stopped with its KillSignal.
#   scripts/package-test-recorder.sh SCRATCH_DIR
set -euo pipefail
say() { echo "package-test: recorder: $*"; }
fail() { echo "package-test: recorder: FAILED: $*" >&2; exit 1; }
tmp=$1
unit=/usr/lib/systemd/system/blkrr-record@.service
{ [ -f "$unit" ] && [ -f /etc/default/blkrr-record ]; } || fail "no $unit or /etc/default/blkrr-record"
if command -v systemd-analyze >/dev/null; then
  # A template is verified through an instance of it.
  cp "$unit" "$tmp/blkrr-record@pkgtest.service"
  systemd-analyze verify "$tmp/blkrr-record@pkgtest.service" 2>&1 | tee "$tmp/verify" >&2
  [ ! -s "$tmp/verify" ] || fail "systemd-analyze verify blkrr-record@pkgtest.service has messages (above)"
  say "systemd-analyze verify: clean"
fi

truncate -s 64M "$tmp/loop.img"
loop=$(losetup -f --show "$tmp/loop.img")
pid=""
conf=/etc/default/blkrr-record-pkgtest
cleanup_recorder() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  systemctl stop blkrr-record@pkgtest.service >/dev/null 2>&1 || true
  losetup -d "$loop" 2>/dev/null || true
  rm -f "$conf"
  rm -rf /var/lib/blkrr/pkgtest
  rmdir /var/lib/blkrr 2>/dev/null || true
}
trap cleanup_recorder EXIT
printf 'BLKRR_RECORD_DEVICES="-d %s"\nBLKRR_RECORD_OPTIONS="--rotate 2s --keep 3"\n' "$loop" >"$conf"

if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && systemctl is-system-running >/dev/null 2>&1; then
  systemctl start blkrr-record@pkgtest.service || fail "systemctl start blkrr-record@pkgtest"
  state=/var/lib/blkrr/pkgtest
  how="systemctl start/stop"
else
  # Environment=, the two EnvironmentFile=, StateDirectory= and ExecStart= of the unit.
  state=$tmp/state/pkgtest
  mkdir -p "$state"
  exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
  exec_start=${exec_start//\$\{STATE_DIRECTORY\}/$state}
  exec_start=${exec_start//%i/pkgtest}
  (
    export BLKRR_RECORD_DEVICES='' BLKRR_RECORD_OPTIONS=''
    set -a
    # shellcheck disable=SC1091,SC1090
    . /etc/default/blkrr-record
    # shellcheck disable=SC1090
    . "$conf"
    set +a
    # The variables are expanded as systemd does ($VAR: split on spaces).
    eval "exec $exec_start" >"$tmp/recorder.log" 2>&1
  ) &
  pid=$!
  how="systemd not running here: the unit's ExecStart by hand"
fi
for _ in $(seq 60); do
  dd if="$loop" of=/dev/null bs=4k count=64 skip=$((RANDOM % 16000)) iflag=direct status=none
  sleep 0.2
done
pieces() { find "$state" -maxdepth 1 -name 'pkgtest.*.blkrr' | sort; }
closed=$(pieces | wc -l)
first=$(pieces | head -n 1)
[ "$closed" -ge 2 ] || fail "after 12 s of 2-s pieces only $closed closed pieces in $state: $(ls "$state")"
[ "$closed" -le 3 ] || fail "--keep 3 but $closed closed pieces in $state"
case $first in *pkgtest.000000.*) fail "--keep 3: the first piece is still there ($first)" ;; esac
if [ -n "$pid" ]; then
  kill -TERM "$pid"
  wait "$pid" || fail "the recorder exited $? on SIGTERM: $(tail -3 "$tmp/recorder.log")"
  pid=""
  grep -q '^recorded ' "$tmp/recorder.log" || fail "no summary at the stop: $(cat "$tmp/recorder.log")"
else
  systemctl stop blkrr-record@pkgtest.service || fail "systemctl stop"
  [ "$(systemctl show -p Result --value blkrr-record@pkgtest.service)" = success ] ||
    fail "blkrr-record@pkgtest ended with $(systemctl show -p Result --value blkrr-record@pkgtest.service)"
fi
[ -z "$(find "$state" -name '*.open')" ] || fail "pieces left open after the stop: $(ls "$state")"
for f in $(pieces); do
  /usr/bin/blkrr dump "$f" >/dev/null 2>"$tmp/dump.err" || fail "blkrr dump $f: $(cat "$tmp/dump.err")"
  [ ! -s "$tmp/dump.err" ] || fail "blkrr dump $f warns: $(cat "$tmp/dump.err")"
done
say "$how: $(pieces | wc -l) pieces kept of $(($(pieces | tail -n 1 | sed 's/.*pkgtest\.0*\([0-9][0-9]*\)\..*/\1/') + 1)), each closed with its trailer"
