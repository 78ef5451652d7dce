#!/usr/bin/env bash
# completion_test.sh COMPLETION BLKRR: drives the bash completion function as
# bash does (COMP_WORDS, COMP_CWORD, _blkrr) and checks the candidates:
# commands, options (all of `blkrr CMD --help`, both ways), option values,
# block devices for -d, input files by extension.
set -uo pipefail
comp=$(realpath "$1") blkrr=$2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" && mkdir sub && touch a.blkrr b.load.gz c.txt d.replay.gz

# candidates WORD...: what TAB offers after these words (the last is the one
# being completed), sorted, on one line.
candidates() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _blkrr
           printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"' _ "$comp" "$@"
}
expect() { # "WANT" WORD...
  local want=$1 got
  shift
  got=$(candidates "$@")
  [ "$got" = "$want" ] || fail "'$*<TAB>': want '$want', got '$got'"
}

devices=$(find /sys/class/block -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')
dev_paths=$(find /sys/class/block -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | sed 's|^|/dev/|' | tr '\n' ' ' | sed 's/ $//')
expect "record replay report" blkrr re
expect "--prometheus --prometheus-pid" blkrr top --prom
expect "cgroup comm pid" blkrr top --by ''
expect "bytes" blkrr top -s by
expect "D Q" blkrr convert --action ''
expect "$devices" blkrr record -d ''
expect "$devices" blkrr record --device = ''
expect "$devices" blkrr record --device =
expect "$devices" blkrr devices ''
expect "a.blkrr sub" blkrr dump ''
expect "a.blkrr b.load.gz d.replay.gz sub" blkrr report -o out ''
expect "a.blkrr b.load.gz sub" blkrr replay ''
expect "$dev_paths" blkrr replay a.blkrr /dev/
expect "d.replay.gz sub" blkrr validate ''
expect "a.blkrr sub" blkrr validate d.replay.gz ''
expect "a.blkrr b.load.gz c.txt d.replay.gz sub" blkrr convert -o ''
expect "sub" blkrr report -o ''
expect "" blkrr top -r ''
expect "record replay report" blkrr help re

commands=$("$blkrr" --help | awk '/^Commands:/ { f = 1; next } f && NF == 0 { exit } f { print $1 }')
# shellcheck disable=SC2086  # one word per command
[ "$(candidates blkrr '')" = "$(printf '%s\n' $commands -h --help -V --version | sort | tr '\n' ' ' | sed 's/ $//')" ] ||
  fail "'blkrr <TAB>' is not the commands of blkrr --help: $(candidates blkrr '')"
for c in $commands; do
  want=$("$blkrr" "$c" --help | grep -oE '^  (-[A-Za-z0-9], |    )--[A-Za-z0-9-]+' |
    grep -oE -- '-[A-Za-z0-9]\b|--[A-Za-z0-9-]+' | sort | tr '\n' ' ' | sed 's/ $//')
  got=$(candidates blkrr "$c" -)
  [ "$got" = "$want" ] || fail "blkrr $c -<TAB>: want '$want' (from --help), got '$got'"
done
[ $fails = 0 ] || exit 1
echo "bash completion: commands, options of $(wc -w <<< "$commands") commands, values, devices, files"
