// Human units for every screen, summary and report: bytes in binary units,
// durations, elapsed times, size labels, UTC times, and printf into a
// std::string. One format for each, whatever command prints it.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <string>

namespace blkrr {

// printf(3) into a std::string of any length.
std::string strfmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string vstrfmt(const char* f, va_list ap);

// A unit to divide values by: bytes / div is in `unit`.
struct Scale {
  double div = 1;
  std::string unit;
};
// The largest binary unit (B, KiB, MiB, GiB, TiB, PiB) in which `max_bytes` is >= 1.
Scale byte_scale(double max_bytes);
// The largest of ns, us, ms, s in which `max_ns` is >= 1.
Scale duration_scale(double max_ns);
// "4.00 KiB" style: 3 significant digits and the fitting unit.
std::string fmt_bytes(double bytes);
std::string fmt_duration_ns(double ns);  // "850 us", "1.23 ms", "2.50 s"
std::string fmt_elapsed(double s);       // "45.2 s", "12 min 5 s", "3 h 20 min"
// Short power-of-two label of a size in bytes: "512", "4K", "64K", "1M", "2G".
std::string size_label(uint64_t bytes);
// ISO-8601 UTC time of a Unix time in seconds ("2026-11-24 23:19:34 UTC").
std::string fmt_utc(double unix_s);

}  // namespace blkrr
