// The numbers of text formats: fixed-width decimal formatting without
// printf and strict field parsing (no sign, no wrap, no trailing bytes).
#include "converters/text_io.h"

#include <cstdint>
#include <cstring>
#include <string_view>

namespace blkrr {

namespace {
// Two digits at a time.
constexpr char kDigits2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline int count_digits(uint64_t v) {
  int n = 1;
  for (;;) {
    if (v < 10) return n;
    if (v < 100) return n + 1;
    if (v < 1000) return n + 2;
    if (v < 10000) return n + 3;
    v /= 10000;
    n += 4;
  }
}

// Writes exactly `n` digits of v (n = count_digits(v) or more, zero-padded).
inline void put_digits(char* end, uint64_t v, int n) {
  char* p = end;
  while (v >= 100) {
    unsigned i = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    *--p = kDigits2[i + 1];
    *--p = kDigits2[i];
  }
  if (v >= 10) {
    unsigned i = static_cast<unsigned>(v) * 2;
    *--p = kDigits2[i + 1];
    *--p = kDigits2[i];
  } else {
    *--p = static_cast<char>('0' + v);
  }
  while (p > end - n) *--p = '0';
}
}  // namespace

char* fmt_u64(char* p, uint64_t v) {
  int n = count_digits(v);
  put_digits(p + n, v, n);
  return p + n;
}

char* fmt_i64(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return fmt_u64(p, 0 - static_cast<uint64_t>(v));
  }
  return fmt_u64(p, static_cast<uint64_t>(v));
}

char* fmt_u64_w(char* p, uint64_t v, int width) {
  int n = count_digits(v);
  while (width > n) {
    *p++ = ' ';
    --width;
  }
  put_digits(p + n, v, n);
  return p + n;
}

char* fmt_sec9(char* p, int64_t ns, int width) {
  bool neg = ns < 0;
  uint64_t u = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  uint64_t sec = u / 1000000000u, frac = u % 1000000000u;
  int n = count_digits(sec) + 10 + (neg ? 1 : 0);
  while (width > n) {
    *p++ = ' ';
    --width;
  }
  if (neg) *p++ = '-';
  p = fmt_u64(p, sec);
  *p++ = '.';
  put_digits(p + 9, frac, 9);
  return p + 9;
}

char* fmt_usec3(char* p, uint64_t ns) {
  p = fmt_u64(p, ns / 1000);
  *p++ = '.';
  put_digits(p + 3, ns % 1000, 3);
  return p + 3;
}

bool parse_u64_field(std::string_view s, uint64_t& out) {
  s = trim(s);
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    unsigned d = static_cast<unsigned>(c - '0');
    if (d > 9) return false;
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool parse_i64_field(std::string_view s, int64_t& out) {
  s = trim(s);
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  uint64_t u = 0;
  if (!parse_u64_field(s, u)) return false;
  if (u > static_cast<uint64_t>(INT64_MAX)) return false;
  out = neg ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
  return true;
}

bool parse_seconds_ns(std::string_view s, int64_t& out_ns, int* frac_digits) {
  // One pass over the characters (this runs for every line of a load).
  s = trim(s);
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  const char* p = s.data();
  const char* const end = p + s.size();
  uint64_t sec = 0;
  size_t int_digits = 0;
  for (; p != end && *p != '.'; ++p) {
    unsigned d = static_cast<unsigned>(*p - '0');
    if (d > 9) return false;
    if (++int_digits > 10) return false;  // > 300 years: not a trace time
    sec = sec * 10 + d;
  }
  uint64_t frac = 0;
  int nd = 0;
  if (p != end) {
    for (++p; p != end; ++p) {
      unsigned d = static_cast<unsigned>(*p - '0');
      if (d > 9) return false;
      if (nd < 9) frac = frac * 10 + d;
      ++nd;
    }
  }
  if (int_digits == 0 && nd == 0) return false;  // "", "." or "-"
  for (int i = nd; i < 9; ++i) frac *= 10;
  uint64_t total = sec * 1000000000ull + frac;  // < 1e19: no wrap in 64 bits
  if (total > static_cast<uint64_t>(INT64_MAX)) return false;
  int64_t v = static_cast<int64_t>(total);
  out_ns = neg ? -v : v;
  if (frac_digits) *frac_digits = nd;
  return true;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

size_t split_whitespace(std::string_view l, std::string_view* out, size_t max) {
  size_t n = 0, i = 0;
  while (n < max) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    if (i >= l.size()) break;
    size_t b = i;
    while (i < l.size() && l[i] != ' ' && l[i] != '\t') ++i;
    out[n++] = l.substr(b, i - b);
  }
  return n;
}

size_t split_at(std::string_view l, char sep, std::string_view* out, size_t max) {
  size_t n = 0, b = 0;
  for (;;) {
    size_t e = l.find(sep, b);
    if (n == max) return max + 1;
    out[n++] = l.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
    if (e == std::string_view::npos) return n;
    b = e + 1;
  }
}

}  // namespace blkrr
