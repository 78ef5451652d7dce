#!/usr/bin/env bash
# Install everything blkrr needs to build, test and benchmark on Debian 12.
# Idempotent: a second run only checks.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config clang llvm bpftool libbpf-dev libblkid-dev
      zlib1g-dev libisal-dev libdeflate-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev liburing-dev
      gnuplot-nox fio bpftrace blktrace jq e2fsprogs util-linux kmod clang-format clang-tidy cppcheck shellcheck
      libclang-rt-14-dev)  # libFuzzer for scripts/fuzz.sh
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
