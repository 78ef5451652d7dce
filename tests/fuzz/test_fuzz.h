// Shared driver of the libFuzzer harnesses (docs/reliability.md): the input
// bytes become an in-memory file (memfd), which a reader reads to the end.
// Errors are fine; crashes, sanitizer reports, hangs and memory beyond the
// -rss_limit_mb are findings.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "converters/source.h"

namespace blkrr::fuzz {

// One memfd per process, rewritten for every input.
inline const std::string& memfd_path(const uint8_t* data, size_t size) {
  static int fd = ::memfd_create("blkrr-fuzz", MFD_CLOEXEC);
  static std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (::ftruncate(fd, 0) != 0) __builtin_trap();
  size_t off = 0;
  while (off < size) {
    ssize_t n = ::pwrite(fd, data + off, size - off, static_cast<off_t>(off));
    if (n <= 0) __builtin_trap();
    off += static_cast<size_t>(n);
  }
  return path;
}

// Reads every request of the input as `format`; the result is ignored.
inline void read_all(const uint8_t* data, size_t size, InputFormat format, bool skip_bad) {
  SourceOptions o;
  o.format = format;
  o.skip_bad = skip_bad;
  auto src = open_source({memfd_path(data, size)}, o);
  if (!src) return;
  Request r;
  for (;;) {
    auto got = (*src)->next(r);
    if (!got || !*got) break;
  }
  (void)(*src)->counters();
}

}  // namespace blkrr::fuzz
