// Hostile inputs, part two: the classes bad_input_test.cpp does
// not reach — size 0 and wrapped times in the binary readers and blkparse,
// blkparse dispatches without completions, and native traces whose times
// would give a load negative start times. Each test fails on the code before
// the range checks (eb00165).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "converters/blktrace.h"
#include "converters/convert.h"
#include "converters/source.h"
#include "converters/test_bad_input.h"
#include "converters/converter_fixtures.h"
#include "core/trace_format.h"

namespace blkrr {
namespace {

using testing::blktrace_event;
using testing::expect_error;
using testing::read_error;
using testing::TempDir;

// A native trace of `reqs` (each completed 1 us after its issue).
std::string native_trace(const TempDir& t, const std::string& name,
                         const std::vector<std::pair<uint64_t, uint32_t>>& issue_and_bytes) {
  TraceHeader h;
  auto w = TraceWriter::create(t.file(name), h);
  EXPECT_TRUE(w);
  for (const auto& [issue, bytes] : issue_and_bytes) {
    Request r;
    r.op = Op::kWrite;
    r.bytes = bytes;
    r.issue_ns = issue;
    r.complete_ns = issue + 1000;
    EXPECT_TRUE(w->append(r));
  }
  EXPECT_TRUE(w->close({}));
  return t.file(name);
}

TEST(BadInputRanges, NativeRecordsOfSizeZeroOrWrappedTimeAreRejected) {
  TempDir t;
  auto zero = native_trace(t, "zero.blkrr", {{1000, 4096}, {2000, 0}});
  expect_error(zero, zero + ": record 2: size 0; --skip-bad skips such records");
  // Beyond 2^63 ns: converted to a load, the start time was negative.
  auto wrap = native_trace(t, "wrap.blkrr", {{1000, 4096}, {(1ull << 63) + 5, 4096}});
  expect_error(wrap, wrap + ": record 2: time out of range");
  SourceOptions skip;
  skip.skip_bad = true;
  EXPECT_EQ(read_error(wrap, skip), "");
}

TEST(BadInputRanges, ConvertRefusesTimesThatWouldLeaveTheLoadRange) {
  TempDir t;
  // Two requests 2^62 + 1 s apart: within a native trace's range, but no
  // load start time blkrr reads back could hold the distance.
  auto far = native_trace(t, "far.blkrr", {{1000, 4096}, {(1ull << 62) + 1000000001000ull, 4096}});
  ConvertOptions o;
  o.inputs = {far};
  o.output = t.file("far.load");
  auto s = run_convert(o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(s.error().message.find("a request starts more than 146 years after the first one"),
            std::string::npos)
      << s.error().message;
  EXPECT_FALSE(std::filesystem::exists(t.file("far.load")));
}

TEST(BadInputRanges, BlkparseSizeZeroIsRejected) {
  TempDir t;
  auto p = t.write("z.txt",
                   "  8,0    0        1     0.000000000  10  D   W 8 + 8 [a]\n"
                   "  8,0    0        2     0.000001000  10  D   W 16 + 0 [a]\n");
  expect_error(p, p + ":2: size 0");
  auto neg = t.write("n.txt", "  8,0    0        1     -0.500000000  10  D   W 8 + 8 [a]\n");
  expect_error(neg, neg + ":1: bad time");
}

TEST(BadInputRanges, BlktraceSizeZeroAndFarSectorsAreRejected) {
  TempDir t;
  // The offset is where the event starts (it named the next event's).
  using namespace blktrace;
  auto z = t.write("z.blktrace.0", blktrace_event(1, 8, 4096, kIssue, kCatWrite) +
                                       blktrace_event(2, 16, 0, kIssue, kCatWrite));
  expect_error(z, z + ": byte offset 48: size 0 (sector 16, 0 bytes)");
  auto far = t.write("f.blktrace.0", blktrace_event(1, ~0ull, 4096, kIssue, kCatRead));
  expect_error(far, far + ": byte offset 0: sector + length beyond 2^63 bytes");
}

TEST(BadInputRanges, BlkparseDispatchesWithoutCompletionsStayBounded) {
  TempDir t;
  // One timestamp, no completions: pairing by trace time never lets go, so
  // only the count bound keeps memory flat (was 1.6 GB for 2 M lines).
  const uint64_t n = blktrace::kMaxInFlight + 1000;
  std::string text;
  text.reserve(n * 64);
  for (uint64_t i = 0; i < n; ++i)
    text += "  8,0    0 " + std::to_string(i + 1) + " 0.000000005  10  D   R " +
            std::to_string(i * 8) + " + 8 [a]\n";
  auto p = t.write("d.txt", text);
  auto s = open_source({p}, {});
  ASSERT_TRUE(s) << s.error().message;
  Request r;
  uint64_t out = 0;
  for (;;) {
    auto got = (*s)->next(r);
    ASSERT_TRUE(got) << got.error().message;
    if (!*got) break;
    ++out;
  }
  EXPECT_EQ(out, n);
  auto c = (*s)->counters();
  EXPECT_EQ(c["no completion event: given up, more than 262144 requests in flight"], 1000u);
}

}  // namespace
}  // namespace blkrr
