#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bug patterns, performance, functions of at most 80
# lines) over the C++ sources changed since BASE (default: main's merge base
# with HEAD, or HEAD~1 on main itself), with build/compile_commands.json.
# The whole tree takes 10+ minutes on two cores; a change takes seconds.
#   scripts/tidy-changed.sh [BASE]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
base=${1:-}
if [ -z "$base" ]; then
  base=$(git merge-base HEAD main 2>/dev/null || true)
  [ "$base" = "$(git rev-parse HEAD)" ] && base=HEAD~1
fi
[ -f build/compile_commands.json ] || { echo "no build/compile_commands.json: run scripts/build.sh"; exit 2; }
mapfile -t files < <(git diff --name-only --diff-filter=AMR "$base" -- '*.cpp' | grep -v -E '^tests/data/')
if [ "${#files[@]}" -eq 0 ]; then
  echo "tidy-changed: no C++ source changed since $base"
  exit 0
fi
echo "tidy-changed: ${#files[@]} files changed since $base"
out=$(printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p build --quiet 2>/dev/null \
  | grep -E -A3 "(warning|error):")
if [ -n "$out" ]; then
  echo "$out"
  exit 1
fi
echo "tidy-changed: clean"
