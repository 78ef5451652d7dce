#!/usr/bin/env bash
# promtool check rules RULES, then promtool test rules TESTS (which loads
# RULES by its path relative to TESTS). Exit 77 without promtool.
set -euo pipefail
command -v promtool >/dev/null || { echo "SKIPPED: promtool is not installed (scripts/install-deps.sh)"; exit 77; }
promtool check rules "$1"
promtool test rules "$2"
