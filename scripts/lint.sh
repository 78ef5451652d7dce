#!/usr/bin/env bash
# Static checks: clang-format (no changes needed), cppcheck, and clang-tidy
# over the compile_commands.json of build/ (run scripts/build.sh first).
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' | grep -v -E '^bpf/vmlinux|tests/data/')
echo "== clang-format"
clang-format --dry-run -Werror "${files[@]}" || rc=1
echo "== cppcheck"
cppcheck --enable=warning,performance,portability --std=c++20 --quiet --error-exitcode=1 \
  --library=googletest --suppress=missingIncludeSystem --inline-suppr \
  -I userspace -I . $(printf '%s\n' "${files[@]}" | grep -E '\.cpp$') || rc=1
if [ "${1:-}" != "--fast" ]; then
  echo "== clang-tidy"
  [ -f build/compile_commands.json ] || { echo "no build/compile_commands.json: run scripts/build.sh"; exit 1; }
  printf '%s\n' "${files[@]}" | grep -E '\.cpp$' | xargs -P "$(nproc)" -n 8 clang-tidy -p build --quiet 2>/dev/null \
    | grep -E "(warning|error):" && rc=1
fi
exit $rc
