#!/usr/bin/env bash
# Install everything blkrr needs to build, test and benchmark on Debian 12.
# Idempotent: a second run only checks. Waits (with a bound, and says so) for
# another package manager holding the dpkg or apt lock (scripts/apt-lock.sh).
#   --check  also run `apt-get check` (are the installed packages consistent?),
#            under the same wait for the lock
set -euo pipefail
# shellcheck source=scripts/apt-lock.sh
. "$(dirname "$0")/apt-lock.sh"
check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) echo "install-deps.sh: unknown option '$1' (known: --check)" >&2; exit 2 ;;
esac
pkgs=(build-essential cmake ninja-build pkg-config clang llvm bpftool libbpf-dev libblkid-dev
      zlib1g-dev libisal-dev libdeflate-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev liburing-dev
      gnuplot-nox fio bpftrace blktrace jq e2fsprogs util-linux kmod clang-format clang-tidy cppcheck shellcheck
      libfuse3-dev  # the flight recorder test's delaying FUSE file system
      ccache  # scripts/build.sh: a rebuild of an unchanged source (ASan build, a second checkout) is a cache hit
      libclang-rt-14-dev  # libFuzzer for scripts/fuzz.sh
      prometheus chromium)  # tests/prometheus (prometheus, promtool), tests/browser (headless)
# tests/browser runs puppeteer-core under node; a node installed otherwise
# (with its own npm) is kept.
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_get update -qq
  apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "$check" = 1 ]; then apt_get check -qq; fi
