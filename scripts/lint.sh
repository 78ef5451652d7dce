#!/usr/bin/env bash
# Static checks: clang-format (no changes needed), cppcheck, shellcheck, and clang-tidy
# over the compile_commands.json of build/ (run scripts/build.sh first).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
rc=0
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' | grep -v -E '^bpf/vmlinux|tests/data/')
echo "== clang-format"
clang-format --dry-run -Werror "${files[@]}" || rc=1
echo "== cppcheck"
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep -E '\.cpp$')
cppcheck --enable=warning,performance,portability --std=c++20 --quiet --error-exitcode=1 \
  --library=googletest --suppress=missingIncludeSystem --inline-suppr \
  -I userspace -I . "${sources[@]}" || rc=1
echo "== shellcheck"
if command -v shellcheck > /dev/null; then
  # Settings in .shellcheckrc; -x follows the files the scripts source.
  git ls-files -z '*.sh' | xargs -0 shellcheck -x || rc=1
else
  echo "shellcheck not installed (scripts/install-deps.sh installs it)"
  rc=1
fi
if [ "${1:-}" != "--fast" ]; then
  echo "== clang-tidy"
  [ -f build/compile_commands.json ] || { echo "no build/compile_commands.json: run scripts/build.sh"; exit 1; }
  printf '%s\n' "${files[@]}" | grep -E '\.cpp$' | xargs -P "$(nproc)" -n 8 clang-tidy -p build --quiet 2>/dev/null \
    | grep -E "(warning|error):" && rc=1
fi
exit $rc
