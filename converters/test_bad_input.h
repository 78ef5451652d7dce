// Helpers of the hostile-input tests (bad_input_test.cpp,
// bad_input_ranges_test.cpp): read a whole input and expect its error, and
// build raw blktrace events.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "converters/blktrace.h"
#include "converters/source.h"

namespace blkrr::testing {

// The error of reading all of `path` (none when it reads fine).
inline std::optional<Error> read_failure(const std::string& path, const SourceOptions& o = {}) {
  auto s = open_source({path}, o);
  if (!s) return s.error();
  Request r;
  for (;;) {
    auto got = (*s)->next(r);
    if (!got) return got.error();
    if (!*got) return std::nullopt;
  }
}

// Its message (empty when it reads fine).
inline std::string read_error(const std::string& path, const SourceOptions& o = {}) {
  auto e = read_failure(path, o);
  return e ? e->message : "";
}

// Reading `path` fails with an error of `kind` whose message holds `want`
// (the position: file:line, byte offset or record).
inline void expect_error(const std::string& path, const std::string& want,
                         const SourceOptions& o = {}, ErrorKind kind = ErrorKind::kBadInput) {
  auto e = read_failure(path, o);
  ASSERT_TRUE(e) << path << " reads fine; want: '" << want << "'";
  EXPECT_NE(e->message.find(want), std::string::npos)
      << "got: '" << e->message << "' want: '" << want << "'";
  EXPECT_EQ(e->kind, kind) << e->message;
}

// One blktrace event as blktrace writes it, then `pdu`: in this machine's
// byte order, or the other one with `swap` (a trace from a big-endian host).
inline std::string blktrace_event(uint64_t time, uint64_t sector, uint32_t bytes, uint16_t act,
                                  uint32_t cat, uint32_t pid = 1, uint32_t dev = make_dev(8, 0),
                                  const std::string& pdu = "", uint32_t version = 7,
                                  bool swap = false) {
  unsigned char b[48] = {};
  auto put32 = [&](size_t o, uint32_t v) {
    if (swap) v = __builtin_bswap32(v);
    std::memcpy(b + o, &v, 4);
  };
  auto put64 = [&](size_t o, uint64_t v) {
    if (swap) v = __builtin_bswap64(v);
    std::memcpy(b + o, &v, 8);
  };
  put32(0, blktrace::kMagic | version);
  put32(4, 1);  // sequence
  put64(8, time);
  put64(16, sector);
  put32(24, bytes);
  put32(28, act | (cat << 16));
  put32(32, pid);
  put32(36, dev);
  uint16_t pl = static_cast<uint16_t>(pdu.size());
  if (swap) pl = __builtin_bswap16(pl);
  std::memcpy(b + 46, &pl, 2);
  return std::string(reinterpret_cast<char*>(b), 48) + pdu;
}

}  // namespace blkrr::testing
