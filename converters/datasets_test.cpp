// Readers of the public multi-volume datasets (Alibaba, Tencent CBS with its
// .tgz archives, systor'17, K5cloud) on samples in their exact layouts
// (tests/data/datasets), and their errors on malformed lines.
#include <gtest/gtest.h>

#include <cstring>

#include "converters/dataset_csv.h"
#include "converters/dataset_lines.h"
#include "converters/source.h"
#include "converters/test_bad_input.h"
#include "converters/converter_fixtures.h"

namespace blkrr {
namespace {

using testing::data_path;
using testing::expect_error;
using testing::TempDir;

// spread_second_ns(1538323200, i, 3, seed 1) - 1538323200 s, for i = 0, 1.
constexpr uint64_t kSpreadExample0 = 66668767;
constexpr uint64_t kSpreadExample1 = 434826516;

std::string ds(const std::string& name) {
  return data_path("datasets/" + name);
}

struct Read {
  std::vector<Request> all;
  Counters counters;
  SourceInfo info;
};

Result<Read> read_all(const std::string& path, const SourceOptions& o = {}) {
  auto s = open_source({path}, o);
  if (!s) return s.error();
  Read out;
  Request r;
  for (;;) {
    auto got = (*s)->next(r);
    if (!got) return got.error();
    if (!*got) break;
    out.all.push_back(r);
  }
  out.counters = (*s)->counters();
  out.info = (*s)->info();
  return out;
}

SourceOptions volume(const std::string& id) {
  SourceOptions o;
  o.device_id = id;
  return o;
}

void expect_request(const Request& r, uint64_t ns, uint64_t sector, uint32_t bytes, Op op,
                    uint32_t vol, uint64_t latency = kNoTime) {
  EXPECT_EQ(r.issue_ns, ns);
  EXPECT_EQ(r.sector, sector);
  EXPECT_EQ(r.bytes, bytes);
  EXPECT_EQ(r.op, op);
  EXPECT_EQ(r.dev, make_dev(0, vol));
  if (latency == kNoTime)
    EXPECT_FALSE(r.completed());
  else
    EXPECT_EQ(r.latency_ns(), latency);
}

// A tar member as tar writes it (ustar header, data padded to 512 bytes).
// base256: the size in GNU's binary form (as for members of 8 GiB and more).
std::string tar_member(const std::string& name, const std::string& data, char type = '0',
                       bool base256 = false) {
  char h[512] = {};
  // Tar header fields are fixed-width, not NUL-terminated strings.
  // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
  std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(h + 100, 8, "%07o", 0644);
  std::snprintf(h + 124, 12, "%011o", static_cast<unsigned>(data.size()));
  if (base256) {
    std::memset(h + 124, 0, 12);
    h[124] = static_cast<char>(0x80);
    h[134] = static_cast<char>(data.size() >> 8);
    h[135] = static_cast<char>(data.size() & 0xff);
  }
  std::snprintf(h + 136, 12, "%011o", 1538326800u);
  h[156] = type;
  // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
  std::memcpy(h + 257,
              "ustar\0"
              "00",
              8);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : std::string(h, 512)) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  std::string out(h, 512);
  out += data;
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

std::string tar_end() {
  return std::string(1024, '\0');
}

TEST(Datasets, DetectsEachFormatByContent) {
  EXPECT_EQ(*detect_format(ds("alibaba.csv")), InputFormat::kAlibaba);
  EXPECT_EQ(*detect_format(ds("tencent.csv")), InputFormat::kTencent);
  EXPECT_EQ(*detect_format(ds("tencent-2018-10-01-01.tgz")), InputFormat::kTencent);
  EXPECT_EQ(*detect_format(ds("systor17.csv")), InputFormat::kSystor);
  EXPECT_EQ(*detect_format(ds("k5cloud.csv")), InputFormat::kK5cloud);
  EXPECT_EQ(parse_input_format("systor17"), InputFormat::kSystor);
  EXPECT_EQ(input_format_name(InputFormat::kK5cloud), "k5cloud");
}

TEST(Datasets, AlibabaOneDeviceExactRequests) {
  auto r = read_all(ds("alibaba.csv"), volume("7"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all.size(), 3u);
  expect_request(r->all[0], 1577808000000626000u, 247468056, 4096, Op::kRead, 7);
  expect_request(r->all[1], 1577808000001000000u, 16, 8192, Op::kWrite, 7);
  expect_request(r->all[2], 1577808000003000000u, 8, 512, Op::kRead, 7);
  EXPECT_EQ(r->counters["requests of other volumes (not --device-id)"], 2u);
  EXPECT_EQ(r->counters["offsets not 512-byte aligned (rounded down)"], 1u);
  EXPECT_EQ(r->info.dataset, "Alibaba cloud block trace");
  EXPECT_TRUE(r->info.absolute_time);
}

TEST(Datasets, MixedVolumesNeedDeviceId) {
  expect_error(ds("alibaba.csv"),
               ds("alibaba.csv") +
                   ":3: the trace mixes volumes 7 and 12; choose one with "
                   "--device-id ID, or write one load per volume with --split-by");
  expect_error(ds("alibaba.csv"), "--device-id must be a volume number", volume("sda"),
               ErrorKind::kUsage);
  SourceOptions d;
  d.device = "8:0";
  expect_error(ds("alibaba.csv"), "select a volume with --device-id", d, ErrorKind::kUsage);
}

TEST(Datasets, TencentSpreadsEachSecondInFileOrder) {
  auto r = read_all(ds("tencent.csv"), volume("1063"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all.size(), 4u);
  const uint64_t s0 = 1538323200;
  // Second s0 holds three requests (two of 1063, one of 77): slots 0 and 1 of 3.
  expect_request(r->all[0], spread_second_ns(s0, 0, 3, 1), 12910952, 65536, Op::kRead, 1063);
  expect_request(r->all[1], spread_second_ns(s0, 1, 3, 1), 2048, 4096, Op::kWrite, 1063);
  expect_request(r->all[2], spread_second_ns(s0 + 1, 0, 1, 1), 100, 4096, Op::kRead, 1063);
  expect_request(r->all[3], spread_second_ns(s0 + 3, 0, 2, 1), 200, 8192, Op::kWrite, 1063);
  // Volume 77 gets the slots it had among all the second's requests.
  auto v77 = read_all(ds("tencent.csv"), volume("77"));
  ASSERT_TRUE(v77.ok()) << v77.error().message;
  ASSERT_EQ(v77->all.size(), 2u);
  EXPECT_EQ(v77->all[0].issue_ns, spread_second_ns(s0, 2, 3, 1));
  EXPECT_EQ(v77->all[1].issue_ns, spread_second_ns(s0 + 3, 1, 2, 1));
  ASSERT_EQ(r->info.assumptions.size(), 2u);
  EXPECT_NE(r->info.assumptions[1].find("times were spread"), std::string::npos);
  EXPECT_EQ(r->info.time_resolution, "1 s (whole seconds of Unix time)");
}

TEST(Datasets, SpreadRuleStaysInItsSlotAndIsSeeded) {
  const uint64_t sec = 1538323200, base = sec * 1000000000u;
  for (uint64_t n : {1u, 2u, 3u, 7u, 1000u}) {
    uint64_t last = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t t = spread_second_ns(sec, i, n, 1);
      EXPECT_GE(t, base + i * 1000000000u / n) << i << "/" << n;
      EXPECT_LT(t, base + ((i + 1) * 1000000000u + n - 1) / n) << i << "/" << n;
      EXPECT_GE(t, last);
      last = t;
      EXPECT_EQ(t, spread_second_ns(sec, i, n, 1));  // deterministic
    }
  }
  EXPECT_NE(spread_second_ns(sec, 0, 1, 1), spread_second_ns(sec, 0, 1, 2));
  // The rule pinned: these values are in docs/formats.md's example.
  EXPECT_EQ(spread_second_ns(sec, 0, 3, 1) - base, kSpreadExample0);
  EXPECT_EQ(spread_second_ns(sec, 1, 3, 1) - base, kSpreadExample1);
}

TEST(Datasets, TencentTgzReadsTraceMembersInOrder) {
  const std::string tgz = ds("tencent-2018-10-01-01.tgz");
  auto r = read_all(tgz, volume("1063"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all.size(), 4u);
  const uint64_t s = 1538326800;
  expect_request(r->all[0], spread_second_ns(s, 0, 2, 1), 1000, 4096, Op::kRead, 1063);
  expect_request(r->all[1], spread_second_ns(s, 1, 2, 1), 2000, 8192, Op::kWrite, 1063);
  expect_request(r->all[2], spread_second_ns(s + 2, 0, 2, 1), 4000, 4096, Op::kRead, 1063);
  expect_request(r->all[3], spread_second_ns(s + 2, 1, 2, 1), 5000, 16384, Op::kWrite, 1063);
  EXPECT_EQ(r->counters["archive members read"], 2u);
  EXPECT_EQ(r->counters["archive members skipped (not trace files)"], 2u);  // README, ._x
  EXPECT_EQ(r->counters["archive entries without data (directories, links)"], 1u);
  EXPECT_EQ(r->counters["archive members whose last line has no newline"], 1u);
  EXPECT_EQ(r->counters["requests of other volumes (not --device-id)"], 1u);
  // A pax archive (extended header with the member's path).
  auto p = read_all(ds("tencent-pax.tgz"));
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->all.size(), 1u);
  expect_request(p->all[0], spread_second_ns(1538330400, 0, 1, 1), 64, 4096, Op::kRead, 5);
}

TEST(Datasets, TgzErrorsNameMemberAndLine) {
  TempDir t;
  const std::string good = "1538326800,1000,8,0,1\n";
  auto a = t.write_gz("bad.tgz", tar_member("h/00", good) +
                                     tar_member("h/01", good + good + "1538326800,9,8,2,1\n") +
                                     tar_end());
  expect_error(a, a + "[h/01]:3: bad IOType (expected 0 = read or 1 = write)");
  SourceOptions skip;
  skip.skip_bad = true;
  auto r = read_all(a, skip);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->all.size(), 3u);
  EXPECT_EQ(r->counters["skipped: bad IOType (expected 0 = read or 1 = write)"], 1u);
  // GNU base-256 size, a directory entry and a member that is no trace file.
  auto g = t.write_gz("gnu.tgz", tar_member("d/", "", '5') + tar_member("d/README", "text\n") +
                                     tar_member("d/big", good + good, '0', true) + tar_end());
  auto gr = read_all(g);
  ASSERT_TRUE(gr.ok()) << gr.error().message;
  EXPECT_EQ(gr->all.size(), 2u);
  EXPECT_EQ(gr->counters["archive members skipped (not trace files)"], 1u);
  // A damaged header (checksum) and an archive cut inside a member.
  std::string m = tar_member("h/02", good);
  m[0] = 'x';
  auto b = t.write_gz("damaged.tgz", tar_member("h/00", good) + m + tar_end());
  expect_error(b, b + ": damaged tar header at byte 1024", {.format = InputFormat::kTencent});
  std::string cut = tar_member("h/00", good + good);
  auto c = t.write_gz("cut.tgz", cut.substr(0, 512 + 30));
  expect_error(c, c + ": the archive ends inside member h/00");
}

TEST(Datasets, SystorEmptyIoTypeLeftOutAndCounted) {
  auto r = read_all(ds("systor17.csv"), volume("0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all.size(), 2u);
  expect_request(r->all[0], 1456167600034095000u, 4720056, 4096, Op::kRead, 0, 286000);
  expect_request(r->all[1], 1456167600034512000u, 4720064, 8192, Op::kWrite, 0, 512000);
  EXPECT_EQ(r->counters["lines with an empty IOType (left out)"], 1u);
  auto l1 = read_all(ds("systor17.csv"), volume("1"));
  ASSERT_TRUE(l1.ok()) << l1.error().message;
  ASSERT_EQ(l1->all.size(), 2u);
  expect_request(l1->all[0], 1456167600035001000u, 128, 4096, Op::kRead, 1);  // empty Response
  expect_request(l1->all[1], 1456167600036000000u, 256, 16384, Op::kWrite, 1, 1000000);
  EXPECT_TRUE(l1->info.has_completion);
}

TEST(Datasets, K5cloudExactRequests) {
  auto r = read_all(ds("k5cloud.csv"), volume("0"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all.size(), 3u);
  expect_request(r->all[0], 0, 8, 4096, Op::kRead, 0);
  expect_request(r->all[1], 350000, 2088, 8192, Op::kWrite, 0);
  expect_request(r->all[2], 1250000000, 16, 4096, Op::kWrite, 0);
}

TEST(Datasets, BadLinesNamePositionAndReason) {
  TempDir t;
  struct Case {
    InputFormat f;
    std::string text, want;
  };
  const std::string tencent_ok = "1538323200,1,8,0,1\n";
  const std::vector<Case> cases = {
      {InputFormat::kAlibaba, "7,R,0,4096,1\n7,X,0,4096,2\n", ":2: bad opcode (expected R or W)"},
      {InputFormat::kAlibaba, "7,R,0,0,1\n", ":1: size 0"},
      {InputFormat::kAlibaba, "7,R,0,4096\n", ":1: too few fields"},
      {InputFormat::kAlibaba, "7,R,0,4096,1,9\n", ":1: too many fields"},
      {InputFormat::kAlibaba, "2000000,R,0,4096,1\n", ":1: bad device_id (0..1048575)"},
      {InputFormat::kAlibaba, "7,R,0,4096,99999999999999999999\n", ":1: bad timestamp"},
      {InputFormat::kAlibaba, "7,R,0,8589934592,1\n", ":1: size larger than 4 GiB"},
      {InputFormat::kTencent, tencent_ok + "1538323200,1,99999999999,0,1\n", ":2: bad Size"},
      {InputFormat::kTencent, "99999999999,1,8,0,1\n", ":1: Timestamp too large"},
      {InputFormat::kSystor, "1.5,0.1,R,0,0,4096\n1.6,x,R,0,0,4096\n", ":2: bad Response"},
      {InputFormat::kSystor, "1.5,90000,R,0,0,4096\n", ":1: Response longer than a day"},
      {InputFormat::kK5cloud, "0,-1.0,R,0,4096\n", ":1: bad Timestamp"},
      {InputFormat::kK5cloud, "0,1.0,R,0,4096\n" + std::string(5000, '1') + "\n",
       ":2: line longer than 4096 bytes"},
  };
  int i = 0;
  for (const auto& c : cases) {
    auto p = t.write("bad" + std::to_string(i++) + ".csv", c.text);
    SourceOptions o;
    o.format = c.f;
    expect_error(p, p + c.want, o);
  }
  // --skip-bad: skipped and counted by reason, the rest read.
  auto p = t.write("skip.csv", "7,R,0,4096,1\n7,X,0,4096,2\n7,W,512,4096,3\n");
  SourceOptions o;
  o.skip_bad = true;
  auto r = read_all(p, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all.size(), 2u);
  expect_request(r->all[1], 3000, 1, 4096, Op::kWrite, 7);
  EXPECT_EQ(r->counters["lines_skipped"], 1u);
  EXPECT_EQ(r->counters["skipped: bad opcode (expected R or W)"], 1u);
}

TEST(Datasets, TraceMembersByName) {
  EXPECT_TRUE(is_trace_member("2018-10-01-01"));
  EXPECT_TRUE(is_trace_member("a/b/io_traces.csv"));
  EXPECT_FALSE(is_trace_member("a/._2018-10-01-01"));
  EXPECT_FALSE(is_trace_member("README"));
  EXPECT_FALSE(is_trace_member("x/readme.md"));
  EXPECT_FALSE(is_trace_member("md5_check.md5"));
  EXPECT_FALSE(is_trace_member("dir/"));
}

}  // namespace
}  // namespace blkrr
