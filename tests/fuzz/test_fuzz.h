// Shared driver of the libFuzzer harnesses (docs/reliability.md): the input
// bytes become a file (on tmpfs), which a reader reads to the end.
// Errors are fine; crashes, sanitizer reports, hangs and memory beyond the
// -rss_limit_mb are findings.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "converters/source.h"

namespace blkrr::fuzz {

// One regular file per process, rewritten for every input, in
// $BLKRR_FUZZ_DIR (scripts/fuzz.sh: a directory in /dev/shm it removes at
// the end), else /dev/shm or /tmp. Not a memfd: every stat and open of
// /proc/self/fd/N walks procfs (7 us here, 2.6 us on tmpfs), and readers
// open their input 2-5 times. The data is written first and the file then
// cut to its size: truncating to 0 first freed and refaulted its pages
// (11 us per input instead of 4).
inline const std::string& scratch_path(const uint8_t* data, size_t size) {
  static std::string path;
  static int fd = [] {
    const char* env = std::getenv("BLKRR_FUZZ_DIR");
    std::string dir = env && *env ? env : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path = dir + "/blkrr-fuzz-input-XXXXXX";
    int f = ::mkstemp(path.data());
    if (f < 0) __builtin_trap();
    std::atexit([] { ::unlink(path.c_str()); });
    return f;
  }();
  size_t off = 0;
  while (off < size) {
    ssize_t n = ::pwrite(fd, data + off, size - off, static_cast<off_t>(off));
    if (n <= 0) __builtin_trap();
    off += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) __builtin_trap();
  return path;
}

// Reads every request of the input as `format`; the result is ignored.
inline void read_all(const uint8_t* data, size_t size, InputFormat format, bool skip_bad) {
  SourceOptions o;
  o.format = format;
  o.skip_bad = skip_bad;
  auto src = open_source({scratch_path(data, size)}, o);
  if (!src) return;
  Request r;
  for (;;) {
    auto got = (*src)->next(r);
    if (!got || !*got) break;
  }
  (void)(*src)->counters();
}

}  // namespace blkrr::fuzz
