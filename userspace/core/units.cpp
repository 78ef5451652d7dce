#include "core/units.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <iterator>

#include "core/stats.h"

namespace blkrr {

std::string strfmt(const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  std::string out = vstrfmt(f, ap);
  va_end(ap);
  return out;
}

std::string vstrfmt(const char* f, va_list ap) {
  va_list again;
  va_copy(again, ap);
  char buf[256];
  const int n = std::vsnprintf(buf, sizeof buf, f, ap);
  std::string out;
  if (n < 0) {
    out = "(format error)";
  } else if (static_cast<size_t>(n) < sizeof buf) {
    out.assign(buf, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), f, again);
    out.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

Scale byte_scale(double max_bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double div = 1;
  size_t u = 0;
  while (u + 1 < std::size(kUnits) && std::fabs(max_bytes) >= div * 1024) {
    div *= 1024;
    ++u;
  }
  return {div, kUnits[u]};
}

Scale duration_scale(double max_ns) {
  double a = std::fabs(max_ns);
  if (a >= 1e9) return {1e9, "s"};
  if (a >= 1e6) return {1e6, "ms"};
  if (a >= 1e3) return {1e3, "us"};
  return {1, "ns"};
}

std::string fmt_bytes(double bytes) {
  Scale s = byte_scale(bytes);
  return fmt_significant(bytes / s.div) + " " + s.unit;
}

std::string fmt_duration_ns(double ns) {
  Scale s = duration_scale(ns);
  return fmt_significant(ns / s.div) + " " + s.unit;
}

std::string fmt_elapsed(double s) {
  char b[64];
  auto whole = static_cast<unsigned long long>(std::llround(s));
  if (s < 120) {
    if (s >= 1 && std::fabs(s - static_cast<double>(whole)) < 1e-9)
      return std::to_string(whole) + " s";
    return fmt_significant(s) + " s";
  }
  unsigned long long big = s < 7200 ? whole / 60 : whole / 3600,
                     small = s < 7200 ? whole % 60 : whole / 60 % 60;
  const char* units[2][2] = {{"min", "s"}, {"h", "min"}};
  const char* const* u = units[s < 7200 ? 0 : 1];
  if (small == 0)
    std::snprintf(b, sizeof b, "%llu %s", big, u[0]);
  else
    std::snprintf(b, sizeof b, "%llu %s %llu %s", big, u[0], small, u[1]);
  return b;
}

std::string size_label(uint64_t bytes) {
  static const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  size_t u = 0;
  uint64_t v = bytes;
  while (v >= 1024 && v % 1024 == 0 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + kUnits[u];
}

std::string fmt_utc(double unix_s) {
  auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return b;
}

}  // namespace blkrr
