#!/usr/bin/env bash
# man_test.sh BLKRR MANDIR: the man pages cannot drift from the binary.
# Every command of `blkrr --help` has MANDIR/blkrr-CMD.1.gz, whose options are
# exactly those of `blkrr CMD --help` (both ways); every page has EXIT STATUS,
# FILES, SEE ALSO (naming iotop, biotop, blktrace, fio), the command pages
# EXAMPLES; man(1) renders each page without a warning.
set -uo pipefail
blkrr=$1 dir=$2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
commands=$("$blkrr" --help | awk '/^Commands:/ { f = 1; next } f && NF == 0 { exit } f { print $1 }')
[ -n "$commands" ] || { echo "FAIL: no commands in $blkrr --help" >&2; exit 1; }

# "-d --device" / "--json": one line per option, from either source.
help_options() {
  "$blkrr" "$1" --help | grep -oE '^  (-[A-Za-z0-9], |    )--[A-Za-z0-9-]+' | sed -E 's/^ +//; s/,//; s/ +/ /g' | sort
}
man_options() {
  zcat "$1" | awk 'prev == ".TP" && /\\fB\\-/ { print } { prev = $0 }' |
    sed -e 's/\\f[BIR]//g' -e 's/\\-/-/g' | grep -oE '^(-[A-Za-z0-9], )?--[A-Za-z0-9-]+' | sed -E 's/,//' | sort
}
sections() { zcat "$1" | sed -n 's/^\.SH //p'; }

check_page() { # PAGE [command]
  local page=$1 s
  [ -f "$page" ] || { fail "no $page"; return; }
  for s in 'EXIT STATUS' FILES 'SEE ALSO' ${2:+EXAMPLES}; do
    sections "$page" | grep -qx "\"*$s\"*" || fail "$page: no section $s"
  done
  for s in 'iotop (8)' 'biotop (8)' 'blktrace (8)' 'fio (1)'; do
    zcat "$page" | grep -qF ".BR $s" || fail "$page: SEE ALSO does not name ${s/ /}"
  done
  local warn
  warn=$(MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
  [ -z "$warn" ] || fail "$page: man warns: $warn"
}

check_page "$dir/blkrr.1.gz"
for c in $commands; do
  zcat "$dir/blkrr.1.gz" | grep -qF ".BR blkrr\\-$c (1)" || fail "blkrr(1) does not list $c"
  page=$dir/blkrr-$c.1.gz
  check_page "$page" "$c"
  [ -f "$page" ] || continue
  diff <(help_options "$c") <(man_options "$page") >/tmp/man_test.$$ ||
    fail "blkrr $c: options of --help (<) and of $page (>) differ: $(cat /tmp/man_test.$$)"
  n=$(help_options "$c" | wc -l)
  [ "$n" -ge 3 ] || fail "blkrr $c --help: only $n options found (parser broken?)"
done
rm -f /tmp/man_test.$$
[ $fails = 0 ] || exit 1
echo "man pages: blkrr(1) and $(wc -w <<< "$commands") command pages match --help"
