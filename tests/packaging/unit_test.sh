#!/usr/bin/env bash
# unit_test.sh UNIT BLKRR DEFAULTS: the exporter service runs an existing
# blkrr top option set, is hardened as docs/packaging.md says, and passes
# `systemd-analyze verify` (skipped, exit 77, when systemd-analyze is missing).
set -uo pipefail
unit=$1 blkrr=$2 defaults=$3
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
for line in 'EnvironmentFile=/etc/default/blkrr-exporter' 'Restart=on-failure' \
  'ProtectSystem=strict' 'ProtectHome=yes' 'NoNewPrivileges=yes' 'WantedBy=multi-user.target'; do
  grep -qx "$line" "$unit" || fail "$unit: no line $line"
done
for key in CapabilityBoundingSet AmbientCapabilities MemoryMax; do
  grep -q "^$key=." "$unit" || fail "$unit: no $key="
done
grep -q '^CapabilityBoundingSet=.*CAP_BPF' "$unit" || fail "$unit: CAP_BPF not in the bounding set"
# The options the service passes must exist in this blkrr.
exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
help=$("$blkrr" top --help)
mapfile -t opts < <(grep -oE -- '--[a-z-]+' <<<"$exec_line")
for opt in "${opts[@]}"; do
  grep -qE -- "^  (-., |    )$opt( |$)" <<<"$help" || fail "ExecStart uses $opt, which blkrr top does not have"
done
grep -q '^BLKRR_EXPORTER_LISTEN=[^ ]*:[0-9]\+$' "$defaults" || fail "$defaults: no BLKRR_EXPORTER_LISTEN=ADDR:PORT"
if ! command -v systemd-analyze >/dev/null; then
  [ $fails = 0 ] || exit 1
  echo "SKIPPED: systemd-analyze not installed: unit checked, not verified (apt-get install systemd)"
  exit 77
fi
# verify checks that ExecStart= exists: point it at this build's binary.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$blkrr|" "$unit" >"$tmp/blkrr-exporter.service"
# --man=no: blkrr-top(1) of Documentation= is not installed yet (package-test.sh
# verifies the installed unit with its man page).
out=$(systemd-analyze verify --man=no "$tmp/blkrr-exporter.service" 2>&1)
[ -z "$out" ] || fail "systemd-analyze verify: $out"
[ $fails = 0 ] || exit 1
echo "blkrr-exporter.service: hardened, options exist, systemd-analyze verify clean"
