// Hostile and careless inputs: every reader checks ranges, memory
// stays bounded, pipes work, outputs are atomic.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <thread>

#include "converters/blktrace.h"
#include "converters/convert.h"
#include "converters/load_format.h"
#include "converters/source.h"
#include "converters/test_bad_input.h"
#include "converters/converter_fixtures.h"
#include "converters/text_io.h"

namespace blkrr {
namespace {

using testing::blktrace_event;
using testing::expect_error;
using testing::read_error;
using testing::TempDir;

uint64_t count_requests(const std::string& path, const SourceOptions& o, Counters* c = nullptr) {
  auto s = open_source({path}, o);
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  if (!s) return 0;
  Request r;
  uint64_t n = 0;
  for (;;) {
    auto got = (*s)->next(r);
    EXPECT_TRUE(got) << (got ? "" : got.error().message);
    if (!got || !*got) break;
    ++n;
  }
  if (c) *c = (*s)->counters();
  return n;
}

TEST(BadInput, SecondsThatWouldWrapAreRejected) {
  int64_t ns = 0;
  EXPECT_FALSE(parse_seconds_ns("9999999999.5", ns));  // > 2^63 ns: used to wrap negative
  EXPECT_FALSE(parse_seconds_ns("-9999999999", ns));
  EXPECT_TRUE(parse_seconds_ns("9223372036.854775807", ns));
  EXPECT_EQ(ns, INT64_MAX);
  EXPECT_FALSE(parse_seconds_ns("9223372036.854775808", ns));
}

TEST(BadInput, LoadRangesNameFileAndLine) {
  TempDir t;
  const char* head = "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n";
  auto z = t.write("z.load", std::string(head) + "0.1 ; 8 ; 8 ; R\n0.2 ; 8 ; 0 ; W\n");
  expect_error(z, z + ":3: length 0");
  auto far = t.write("far.load", std::string(head) + "0.1 ; 18014398509481983 ; 8 ; R\n");
  expect_error(far, far + ":2: sector + length beyond 2^63 bytes");
  auto neg = t.write("neg.load", std::string(head) + "-0.5 ; 8 ; 8 ; R\n");
  expect_error(neg, neg + ":2: bad start time");
  Counters c;
  EXPECT_EQ(count_requests(z, SourceOptions{.skip_bad = true}, &c), 1u);
  EXPECT_EQ(c["skipped: length 0 (a request has at least one sector)"], 1u);
}

TEST(BadInput, FioRangesAndWraps) {
  TempDir t;
  const std::pair<const char*, const char*> bad[] = {
      {"fio version 3 iolog\n10 /dev/sdb read 18446744073709551104 512\n",
       ":2: sector + length beyond 2^63 bytes"},
      {"fio version 3 iolog\n18446744073709551 /dev/sdb read 0 512\n",
       ":2: timestamp out of range"},
      {"fio version 2 iolog\n/dev/sdb wait 18446744073709 0\n", ":2: wait time out of range"},
      {"fio version 3 iolog\n10 /dev/sdb read 0 0\n", ":2: size 0"},
      {"fio version 3 iolog\n10 /dev/sdb write 0 4294967295\n", ":2: size larger than 4 GiB"},
  };
  for (const auto& [text, want] : bad) {
    auto q = t.write("bad.log", text);
    expect_error(q, q + want);
  }
}

TEST(BadInput, MsrResponseTimeAndDiskRanges) {
  TempDir t;
  auto a = t.write("a.csv", "1,h,0,Read,0,512,18446744073709551615\n");
  expect_error(a, a + ":1: response time longer than a day", {.format = InputFormat::kMsrCsv});
  auto b = t.write("b.csv", "1,h,0,Read,0,0,5\n");
  expect_error(b, b + ":1: size 0", {.format = InputFormat::kMsrCsv});
  auto d = t.write("d.csv", "1,h,1048576,Read,0,512,5\n");
  expect_error(d, d + ":1: bad disk number", {.format = InputFormat::kMsrCsv});
}

TEST(BadInput, BlkparseDevicesShiftedColumnsAndSkipCounts) {
  TempDir t;
  // 4096,0 used to wrap to 0,0 and be merged with it.
  auto dev = t.write("dev.txt",
                     "  0,0    0        1     0.000000000  10  D   W 8 + 8 [a]\n"
                     "4096,0    0        2     0.000001000  10  D   W 16 + 8 [a]\n");
  expect_error(dev, dev + ":2: device number out of range");
  // A missing cpu column used to drop the line silently.
  auto shifted = t.write("s.txt",
                         "  8,0    0        1     0.000000000  10  D   W 8 + 8 [a]\n"
                         "  8,0    2     0.000001000  10  D   W 16 + 8 [a]\n");
  expect_error(shifted, shifted + ":2: bad cpu or sequence column (shifted columns?)");
  auto act = t.write("a.txt", "  8,0    0        1     0.000000000  10  1234  W 8 + 8 [a]\n");
  expect_error(act, act + ":1: bad action column");
  Counters c;
  EXPECT_EQ(count_requests(shifted, SourceOptions{.skip_bad = true}, &c), 1u);
  EXPECT_EQ(c["skipped: bad cpu or sequence column (shifted columns?)"], 1u);
}

// ---- blktrace ----

TEST(BadInput, BlktraceVersionIsChecked) {
  TempDir t;
  auto p = t.write("v.blktrace.0", blktrace_event(1, 8, 4096, blktrace::kIssue, blktrace::kCatRead,
                                                  1, make_dev(8, 0), "", 6));
  expect_error(p, p + ": blktrace version 6 at byte offset 0 (this reader knows version 7)", {},
               ErrorKind::kUnsupported);
}

TEST(BadInput, BlktraceProcessNameAcrossTheReadBuffer) {
  TempDir t;
  using namespace blktrace;
  const uint32_t dev = make_dev(8, 0);
  // Fillers, then a process-name event whose header ends inside the reader's
  // 1 MiB buffer and whose 64-byte payload crosses its end.
  std::string f;
  while (f.size() + 48 + 64 <= (1u << 20)) f += blktrace_event(1, 0, 0, kPlug, 0, 1, dev);
  ASSERT_LE(f.size() + 48, 1u << 20);
  std::string name("mysqld");
  name.resize(64, '\0');
  f += blktrace_event(2, 0, 0, kNotifyProcess, kCatNotify, 77, dev, name);
  f += blktrace_event(3, 100, 4096, kIssue, kCatWrite, 77, dev);
  f += blktrace_event(4, 100, 4096, kComplete, kCatWrite, 77, dev);
  auto p = t.write("x.blktrace.0", f);
  auto s = open_source({p}, {});
  ASSERT_TRUE(s) << s.error().message;
  Request r;
  auto got = (*s)->next(r);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(r.comm_view(), "mysqld");  // was garbage: a stale pointer into the moved buffer
}

TEST(BadInput, BlktraceDirectoryIsNotAnEmptyTrace) {
  TempDir t;
  ASSERT_EQ(::mkdir(t.file("cap.blktrace.0").c_str(), 0755), 0);
  expect_error(t.file("cap"), "cap.blktrace.0 is a directory");
}

TEST(BadInput, DispatchesWithoutCompletionsStayBounded) {
  TempDir t;
  using namespace blktrace;
  const uint32_t dev = make_dev(8, 0);
  std::string f;
  const uint64_t n = kMaxInFlight + 1000;
  f.reserve(n * 48);
  for (uint64_t i = 0; i < n; ++i) f += blktrace_event(5, i * 8, 4096, kIssue, kCatRead, 1, dev);
  auto p = t.write("d.blktrace.0", f);
  auto s = open_source({p}, {});
  ASSERT_TRUE(s) << s.error().message;
  Request r;
  uint64_t out = 0;
  // Requests come out while the input is still being read: the pairer holds
  // at most kMaxInFlight of them.
  while (*(*s)->next(r)) ++out;
  EXPECT_EQ(out, n);
  auto c = (*s)->counters();
  EXPECT_EQ(c["no completion event: given up, more than 262144 requests in flight"], 1000u);
  EXPECT_EQ(c["no completion event"], n);
}

// ---- native traces ----

void put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}

std::string native_with_header(const std::string& json) {
  std::string s = "BLKRRTRC";
  s += std::string("\x01\x00\x01\x00", 4);
  put32(s, static_cast<uint32_t>(json.size()));
  s += json;
  put32(s, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(json.data()),
                                       static_cast<uInt>(json.size()))));
  return s;
}

TEST(BadInput, DeeplyNestedNativeHeaderIsAnErrorNotACrash) {
  TempDir t;
  std::string deep =
      "{\"settings\":{\"a\":" + std::string(200000, '[') + std::string(200000, ']') + "}}";
  auto p = t.write("deep.blkrr", native_with_header(deep));
  expect_error(p, "header at offset 16 is nested deeper than 64 levels");
}

// Found by fuzz_header (a 5.6e65 anchor was converted to uint64_t: undefined
// behaviour, flagged by UBSan): numbers in the header must be integers that
// fit, device numbers within dev_t.
TEST(BadInput, NativeHeaderNumbersMustBeIntegersThatFit) {
  TempDir t;
  const std::pair<std::string, std::string> cases[] = {
      {R"({"real_anchor_ns":5.5e65})",
       "header at offset 16 is malformed: 'real_anchor_ns' is 5.5e+65, not an integer"},
      {R"({"mono_anchor_ns":-1})", "'mono_anchor_ns' is -1, not an integer"},
      {R"({"mono_anchor_ns":1.5})", "'mono_anchor_ns' is 1.5, not an integer"},
      {R"({"devices":[{"dev":"8:0","logical_block_size":4294967296}]})",
       "'logical_block_size' is 4294967296, not an integer in 0..4294967295"},
      {R"({"devices":[{"dev":"8:0","partitions":[{"dev":"8:1","nr_sectors":-8}]}]})",
       "'nr_sectors' is -8"},
      {R"({"devices":[{"dev":"-1:0"}]})", "device '-1:0' is not MAJOR:MINOR"},
      {R"({"devices":[{"dev":"4096:0"}]})", "device '4096:0' is not MAJOR:MINOR"},
  };
  int i = 0;
  for (const auto& [json, want] : cases) {
    auto p = t.write("h" + std::to_string(i++) + ".blkrr", native_with_header(json));
    expect_error(p, want);
  }
  auto ok = t.write("ok.blkrr",
                    native_with_header(R"({"mono_anchor_ns":18446744073709551615,)"
                                       R"("devices":[{"dev":"4095:1048575","size_bytes":0}]})"));
  EXPECT_EQ(read_error(ok), "");
}

TEST(BadInput, DataAfterTheNativeTrailer) {
  TempDir t;
  std::string s = native_with_header("{}");
  std::string js = "{}";
  put32(s, 0x524c5254);
  put32(s, 2);
  put32(s, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(js.data()), 2)));
  s += js;
  auto ok = t.write("ok.blkrr", s);
  EXPECT_EQ(read_error(ok), "");
  auto p = t.write("tail.blkrr", s + "garbage");
  expect_error(p, "7 bytes of unknown data after the trailer");
}

// ---- text streams ----

TEST(BadInput, CutOffLastLineOfACompressedFileIsAnError) {
  TempDir t;
  std::string text =
      "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n0.1 ; 4096 ; 8 ; R";
  auto p = t.write_gz("cut.load.gz", text);
  expect_error(p, p + ":2: the last line has no end (compressed file cut off?)");
  // A plain file written by hand may end without a newline; it is read,
  // and counted so that the summary shows it ("4096" cut to "40" was silent).
  auto plain = t.write("hand.load", text);
  EXPECT_EQ(read_error(plain), "");
  const std::pair<std::string, std::string> cut[] = {
      {"hand.load", text},
      {"hand.csv", "1,h,0,Read,0,512,5\n2,h,0,Read,0,512,40"},
      {"hand.iolog", "fio version 3 iolog\n10 /dev/sdb read 0 512\n20 /dev/sdb read 4096 512"},
      {"hand.txt",
       "  8,0    0        1     0.000000000  10  D   W 8 + 8 [a]\n"
       "  8,0    0        2     0.000001000  10  D   W 16 + 8 [a]"}};
  for (const auto& [name, body] : cut) {
    Counters c;
    count_requests(t.write(name, body), {}, &c);
    EXPECT_EQ(c["last line without a newline (file cut off?)"], 1u) << name;
    count_requests(t.write(name, body + "\n"), {}, &c);
    EXPECT_EQ(c.count("last line without a newline (file cut off?)"), 0u) << name;
  }
}

TEST(BadInput, PipeWithoutFromIsDetectedFromOneRead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "  8,0    0 " + std::to_string(i + 1) + " 0." + std::to_string(100000000 + i) +
            "  10  Q   W " + std::to_string(i * 8) + " + 8 [a]\n";
  std::thread w([&] {
    ssize_t n = ::write(fds[1], text.data(), text.size());
    EXPECT_EQ(n, static_cast<ssize_t>(text.size()));
    ::close(fds[1]);
  });
  std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  EXPECT_EQ(count_requests(path, SourceOptions{.blktrace_action = 'Q'}), 5000u);
  w.join();
  ::close(fds[0]);
}

TEST(BadInput, OutFileIsAtomic) {
  TempDir t;
  auto p = t.file("o.load.gz");
  {
    auto f = OutFile::create(p);
    ASSERT_TRUE(f);
    f->append("half a file\n");
    ASSERT_TRUE(f->flush());
  }  // an error path: never closed
  EXPECT_NE(::access(p.c_str(), F_OK), 0);
  auto full = OutFile::create("/dev/full");
  ASSERT_TRUE(full);
  full->append("x\n");
  auto st = full->close();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("cannot write /dev/full"), std::string::npos);
}

TEST(BadInput, ReorderBufferIsBoundedWithEqualTimes) {
  TempDir t;
  TraceHeader h;
  auto w = TraceWriter::create(t.file("eq.blkrr"), h);
  ASSERT_TRUE(w);
  Request r;
  r.bytes = 4096;
  r.issue_ns = 1000;
  r.complete_ns = 2000;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(w->append(r));
  ASSERT_TRUE(w->close({}));
  ConvertOptions o;
  o.inputs = {t.file("eq.blkrr")};
  o.output = t.file("eq.load");
  o.reorder_max_items = 100;
  auto s = run_convert(o);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->out, 1000u);
  EXPECT_EQ(s->reorder_full, 900u);
  EXPECT_NE(s->text().find("reorder buffer: full 900 times"), std::string::npos) << s->text();
}

TEST(BadInput, ConvertRefusesToOverwriteItsInputAlsoForDerive) {
  TempDir t;
  auto in = t.write("a.load", "start ; sector; length ; op\n0.1 ; 8 ; 8 ; R\n");
  ConvertOptions o;
  o.inputs = {in};
  o.output = t.file("a.load");
  auto s = run_convert(o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("-o " + in + " is the input " + in), std::string::npos);
  auto d = t.write("x.000.load", "precious");
  o.inputs = {d};
  o.output = t.file("x.load");
  o.derive = 2;
  s = run_convert(o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--derive " + d + " is the input"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(testing::slurp(d), "precious");
}

TEST(BadInput, JsonLinesEscapeInvalidUtf8Comm) {
  TempDir t;
  TraceHeader h;
  auto w = TraceWriter::create(t.file("c.blkrr"), h);
  ASSERT_TRUE(w);
  Request r;
  r.bytes = 4096;
  r.issue_ns = 1000;
  r.complete_ns = 2000;
  r.set_comm("a\xff\xc3(b");
  ASSERT_TRUE(w->append(r));
  ASSERT_TRUE(w->close({}));
  ConvertOptions o;
  o.inputs = {t.file("c.blkrr")};
  o.output = t.file("c.jsonl");
  ASSERT_TRUE(run_convert(o));
  EXPECT_NE(testing::slurp(t.file("c.jsonl")).find("\"comm\":\"a\xEF\xBF\xBD\xEF\xBF\xBD(b\""),
            std::string::npos)
      << testing::slurp(t.file("c.jsonl"));
}

}  // namespace
}  // namespace blkrr
