#!/usr/bin/env bash
# The package end to end, as on a fresh machine: build it (scripts/package.sh,
# lintian errors fail), apt-get install it, run what it installed, purge it,
# check that none of its files is left. Needs root and apt (Debian 12); skips
# with a message otherwise. Refuses to run when blkrr is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "package-test: $*"; }
fail() { echo "package-test: FAILED: $*" >&2; exit 1; }
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  say "SKIPPED: needs root and apt-get (it installs and purges the package)"
  exit 0
fi
if dpkg -s blkrr >/dev/null 2>&1; then fail "blkrr is installed already: apt-get purge blkrr first"; fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck source=scripts/apt-lock.sh
. scripts/apt-lock.sh
if ! command -v lintian >/dev/null; then
  say "installing lintian"
  apt_get install -y -qq --no-install-recommends lintian >/dev/null
fi

deb=$(bash scripts/package.sh | tail -n 1)
say "built $deb"
dpkg-deb -f "$deb" Depends | grep -q libbpf || fail "Depends has no libbpf: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | grep -q libisal || fail "Depends has no libisal (gzip streams): $(dpkg-deb -f "$deb" Depends)"
[ "$(dpkg-deb -f "$deb" Recommends)" = gnuplot-nox ] || fail "Recommends is not gnuplot-nox"

tmp=$(mktemp -d)
exporter_pid=""
cleanup() {
  if [ -n "$exporter_pid" ]; then kill "$exporter_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
  if dpkg -s blkrr >/dev/null 2>&1; then apt_get purge -y -qq blkrr >/dev/null || true; fi
}
trap cleanup EXIT
apt_get install -y -qq "$(realpath "$deb")" >/dev/null || fail "apt-get install $deb"
dpkg -L blkrr >"$tmp/files"

want=$(build/userspace/cli/blkrr --version)
[ "$(/usr/bin/blkrr --version)" = "$want" ] || fail "installed: $(/usr/bin/blkrr --version), built: $want"
[ "$(/usr/bin/blkrr convert -V)" = "$want" ] || fail "blkrr convert -V"
say "$want"
if /usr/bin/blkrr --help | grep -q '^  features '; then
  # Exit 1 means "no capture possible here" (e.g. a container): still a valid answer.
  rc=0
  /usr/bin/blkrr features >"$tmp/features" 2>&1 || rc=$?
  { [ $rc -le 1 ] && grep -q '^capture: ' "$tmp/features"; } ||
    fail "blkrr features (exit $rc): $(cat "$tmp/features")"
  say "blkrr features: exit $rc, $(grep '^capture: ' "$tmp/features")"
fi
/usr/bin/blkrr convert -q tests/data/windows-mssql.load.gz -o "$tmp/mssql.csv" 2>"$tmp/err" ||
  fail "blkrr convert: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/mssql.csv")" -gt 1000 ] || fail "convert wrote $(wc -l <"$tmp/mssql.csv") lines"
/usr/bin/blkrr report -q tests/data/windows-mssql.load.gz -o "$tmp/rep" --gnuplot no-such-gnuplot 2>"$tmp/err" ||
  fail "blkrr report without gnuplot: $(cat "$tmp/err")"
grep -q 'gnuplot-nox' "$tmp/err" || fail "report without gnuplot does not say what to install: $(cat "$tmp/err")"
for p in blkrr blkrr-record blkrr-top blkrr-convert; do
  man -w "$p" >/dev/null 2>&1 || fail "man -w $p finds no page"
done
say "man -w blkrr-record: $(man -w blkrr-record)"
comp=/usr/share/bash-completion/completions/blkrr
[ -f "$comp" ] || fail "no $comp"
got=$(bash -c 'source "$1"; COMP_WORDS=(blkrr rec); COMP_CWORD=1; _blkrr; echo "${COMPREPLY[*]}"' _ "$comp")
[ "$got" = record ] || fail "completion of 'blkrr rec': '$got'"
unit=/usr/lib/systemd/system/blkrr-exporter.service
{ [ -f "$unit" ] && [ -f /etc/default/blkrr-exporter ]; } || fail "no $unit or /etc/default/blkrr-exporter"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$unit" 2>&1 | tee "$tmp/verify" >&2
  [ ! -s "$tmp/verify" ] || fail "systemd-analyze verify $unit has messages (above)"
  say "systemd-analyze verify: clean"
else
  say "systemd-analyze missing: unit not verified"
fi

# The exporter as its unit runs it (systemd where it runs, else the unit's
# ExecStart= with its EnvironmentFile=), scraped by a real Prometheus that
# loads the installed alerting rules and is queried with the installed
# dashboard's expressions (tests/prometheus/prometheus_e2e.py).
rules=/usr/share/blkrr/prometheus/blkrr-alerts.yml
[ -f "$rules" ] || fail "no $rules"
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
  promtool check rules "$rules" >/dev/null || fail "promtool check rules $rules"
  if [ "$(systemctl is-system-running 2>/dev/null || true)" != offline ] &&
    systemctl start blkrr-exporter 2>"$tmp/err"; then
    say "blkrr-exporter started by systemd"
  else
    # shellcheck disable=SC1091
    (set -a && . /etc/default/blkrr-exporter && set +a &&
      eval "exec $(sed -n 's/^ExecStart=//p' "$unit")") >"$tmp/exporter.log" 2>&1 &
    exporter_pid=$!
    say "blkrr-exporter started from its unit's ExecStart (no systemd here), pid $exporter_pid"
  fi
  # shellcheck disable=SC1091
  listen=$(. /etc/default/blkrr-exporter && echo "$BLKRR_EXPORTER_LISTEN")
  python3 tests/prometheus/prometheus_e2e.py --target "$listen" \
    --dashboard /usr/share/doc/blkrr/grafana-blkrr.json --rules "$rules" ||
    fail "Prometheus against the packaged exporter (above; exporter log: $(tail -5 "$tmp/exporter.log" 2>/dev/null))"
  if [ -n "$exporter_pid" ]; then
    kill "$exporter_pid"
    wait "$exporter_pid" || true
    exporter_pid=""
  else
    systemctl stop blkrr-exporter
  fi
else
  say "prometheus missing (scripts/install-deps.sh): the packaged exporter not scraped"
fi
bash scripts/package-test-recorder.sh "$tmp" || fail "the recorder service (above)"

apt_get purge -y -qq blkrr >/dev/null || fail "apt-get purge blkrr"
! dpkg -s blkrr >/dev/null 2>&1 || fail "blkrr still known to dpkg after purge"
left=0
while read -r f; do
  if [ -e "$f" ] && [ ! -d "$f" ]; then echo "left after purge: $f" >&2; left=1; fi
done <"$tmp/files"
for d in /usr/share/doc/blkrr /etc/default/blkrr-exporter /etc/default/blkrr-record; do
  [ ! -e "$d" ] || { echo "left after purge: $d" >&2; left=1; }
done
[ $left = 0 ] || fail "files left after purge (above)"
say "installed, ran, purged: nothing left ($(grep -vc '/$' "$tmp/files") paths checked)"
