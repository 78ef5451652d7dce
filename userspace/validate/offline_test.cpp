#include "validate/offline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "converters/load_format.h"
#include "core/trace_format.h"
#include "validate/matcher.h"

namespace blkrr::validate {
namespace {

constexpr uint64_t kUs = 1000;

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("blkrr-validate-test-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& n) const { return (path_ / n).string(); }

 private:
  std::filesystem::path path_;
};

// A replay of `n` requests, 100 us apart, 50 us latency; the block layer
// issues each 5 us after the replayer's submission, `offset` later on its clock.
struct Crafted {
  std::vector<LoadRecord> replay;
  std::vector<Request> trace;
};
Crafted craft(int n, uint64_t offset_ns, int skip = -1) {
  Crafted c;
  for (int i = 0; i < n; i++) {
    LoadRecord r;
    r.start_ns = i * 100 * kUs;
    r.delay_ns = 3 * kUs;
    r.duration_ns = 50 * kUs;
    r.sector = 1000 + static_cast<uint64_t>(i % 7) * 4096 + static_cast<uint64_t>(i) * 16;
    r.sectors = 8;
    r.op = i % 3 ? Op::kRead : Op::kWrite;
    c.replay.push_back(r);
    if (i == skip) continue;
    Request b;
    b.issue_ns = offset_ns + r.start_ns + r.delay_ns + 5 * kUs;
    b.complete_ns = b.issue_ns + 40 * kUs;
    b.sector = r.sector;
    b.bytes = r.sectors * 512;
    b.op = r.op;
    b.dev = b.part = make_dev(7, 0);
    b.pid = b.tgid = 300;
    b.set_comm("blkrr");
    c.trace.push_back(b);
  }
  return c;
}

std::string all_notes(const Report& rep) {
  std::string s;
  for (const auto& n : rep.notes) s += n + "\n";
  return s;
}

void write_files(const Crafted& c, const std::string& replay, const std::string& trace,
                 bool trailer = true, const Counters& counters = {{"ringbuf_reserve_failed", 0}}) {
  auto w = LoadWriter::create(replay, LoadKind::kReplay, {"crafted replay"});
  ASSERT_TRUE(w) << w.error().message;
  for (const auto& r : c.replay) ASSERT_TRUE(w->write(r));
  ASSERT_TRUE(w->close());
  TraceHeader h;
  h.host = "test";
  auto t = TraceWriter::create(trace, h);
  ASSERT_TRUE(t) << t.error().message;
  for (const auto& b : c.trace) ASSERT_TRUE(t->append(b));
  if (trailer) {
    ASSERT_TRUE(t->close(counters));
  } else {
    ASSERT_TRUE(t->flush());
  }
}

TEST(Offline, ReplayResultAgainstNativeTrace) {
  TempDir d;
  Crafted c = craft(2000, 987'654'321'000ull, 1234);
  write_files(c, d.file("r.replay.gz"), d.file("t.blkrr"));
  auto in = read_replay_input(d.file("r.replay.gz"));
  ASSERT_TRUE(in) << in.error().message;
  EXPECT_TRUE(in->is_replay_result);
  ASSERT_EQ(in->requests.size(), 2000u);
  EXPECT_EQ(in->requests[1].submit_ns, 103 * kUs);
  EXPECT_EQ(in->requests[1].complete_ns, 153 * kUs);
  auto tr = read_trace_input({d.file("t.blkrr")}, "");
  ASSERT_TRUE(tr) << tr.error().message;
  EXPECT_EQ(tr->format, "native");
  EXPECT_FALSE(tr->losses.counters_missing);
  Report rep = validate_offline(std::move(*in), *tr, {});
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
  EXPECT_EQ(rep.covered, 1999u);
  ASSERT_EQ(rep.missing.size(), 1u);
  EXPECT_EQ(rep.missing[0].id, 1234u);
  EXPECT_EQ(rep.foreign_count, 0u);
  EXPECT_NE(all_notes(rep).find("offset of 987.6543"), std::string::npos) << all_notes(rep);
  EXPECT_DOUBLE_EQ(rep.block_latency_us.p50, 40.0);
  EXPECT_DOUBLE_EQ(rep.overhead_us.p50, 10.0);
}

TEST(Offline, TraceWithoutTrailerIsUnknown) {
  TempDir d;
  Crafted c = craft(100, 5'000'000'000ull);
  write_files(c, d.file("r.replay.gz"), d.file("t.blkrr"), false);
  auto in = read_replay_input(d.file("r.replay.gz"));
  ASSERT_TRUE(in);
  auto tr = read_trace_input({d.file("t.blkrr")}, "");
  ASSERT_TRUE(tr) << tr.error().message;
  EXPECT_TRUE(tr->losses.counters_missing);
  Report rep = validate_offline(std::move(*in), *tr, {});
  EXPECT_EQ(rep.covered, 100u);
  EXPECT_EQ(rep.verdict, Verdict::kUnknown);
}

TEST(Offline, TrailerLossesAreUnknown) {
  TempDir d;
  Crafted c = craft(100, 5'000'000'000ull);
  write_files(c, d.file("r.replay.gz"), d.file("t.blkrr"), true, {{"ringbuf_reserve_failed", 9}});
  auto in = read_replay_input(d.file("r.replay.gz"));
  auto tr = read_trace_input({d.file("t.blkrr")}, "");
  ASSERT_TRUE(in && tr);
  EXPECT_EQ(tr->losses.ringbuf_full, 9u);
  EXPECT_EQ(validate_offline(std::move(*in), *tr, {}).verdict, Verdict::kUnknown);
}

TEST(Offline, FullspeedReplayUsesTheDelayAsSubmitTime) {
  TempDir d;
  Crafted c = craft(1000, 3'000'000'000ull);
  // Fullspeed: every request due at 0, so replay_delay is the submit time;
  // the requests ran 3.3x faster than recorded.
  for (size_t i = 0; i < c.replay.size(); i++) {
    c.replay[i].delay_ns = static_cast<int64_t>(i) * 30 * kUs;
    c.trace[i].issue_ns = 3'000'000'000ull + static_cast<uint64_t>(c.replay[i].delay_ns) + 5 * kUs;
    c.trace[i].complete_ns = c.trace[i].issue_ns + 20 * kUs;
  }
  write_files(c, d.file("r.replay.gz"), d.file("t.blkrr"));
  auto in = read_replay_input(d.file("r.replay.gz"));
  auto tr = read_trace_input({d.file("t.blkrr")}, "");
  ASSERT_TRUE(in && tr);
  Report rep = validate_offline(std::move(*in), *tr, {});
  EXPECT_EQ(rep.verdict, Verdict::kComplete) << all_notes(rep);
  EXPECT_EQ(rep.covered, 1000u);
  EXPECT_NE(all_notes(rep).find("replay_delay alone"), std::string::npos) << all_notes(rep);
}

TEST(Align, OffsetVoteIgnoresForeignAndHotSectors) {
  Crafted c = craft(500, 42'000'000'000ull);
  // Foreign requests on the replay's sectors at other times.
  for (int i = 0; i < 300; i++) {
    Request b = c.trace[static_cast<size_t>(i)];
    b.issue_ns += 7'000'000'000ull + static_cast<uint64_t>(i) * 977 * kUs;
    c.trace.push_back(b);
  }
  std::vector<ReplayedRequest> rs;
  for (const auto& r : c.replay) {
    ReplayedRequest q;
    q.sector = r.sector;
    q.sectors = r.sectors;
    q.op = r.op;
    q.submit_ns = static_cast<uint64_t>(r.start_ns + r.delay_ns);
    q.complete_ns = q.submit_ns + static_cast<uint64_t>(r.duration_ns);
    rs.push_back(q);
  }
  Alignment a = align_times(rs, c.trace);
  ASSERT_EQ(a.mode, Alignment::Mode::kOffset);
  // Every request allows offsets from (issue - completion) to (issue -
  // submit), widened by the clock error: [-45 us, +25 us] around the truth.
  EXPECT_EQ(a.votes, 500u);
  EXPECT_EQ(a.spread_ns, 70 * kUs);
  EXPECT_EQ(a.offset_ns, static_cast<int64_t>(42'000'000'000ull - 10 * kUs));
}

TEST(Align, NoCommonOffsetPairsByOrder) {
  // The replay ran at half speed relative to its recorded times and the file
  // does not say so: no single offset fits. The requests are paired by order
  // and sector; latencies stay the replayer's own (never scaled).
  Crafted c = craft(400, 7'000'000'000ull);
  std::vector<ReplayedRequest> rs;
  for (size_t i = 0; i < c.replay.size(); i++) {
    ReplayedRequest q;
    q.id = i;
    q.sector = c.replay[i].sector;
    q.sectors = 8;
    q.op = c.replay[i].op;
    q.submit_ns = static_cast<uint64_t>(c.replay[i].start_ns) * 2;
    q.complete_ns = q.submit_ns + 50 * kUs;
    rs.push_back(q);
  }
  Alignment a = align_times(rs, c.trace, {.sample = 4096, .tolerance_ns = 100 * kUs});
  EXPECT_EQ(a.mode, Alignment::Mode::kOrder);
  EXPECT_NE(a.describe().find("paired by order and sector"), std::string::npos) << a.describe();
  apply_alignment(a, rs);
  EXPECT_EQ(rs[0].submit_ns, c.trace[0].issue_ns);
  EXPECT_EQ(rs[399].complete_ns - rs[399].submit_ns, 50 * kUs);
  MatchOptions mo;
  mo.by_order = true;
  Report rep = match_requests(rs, c.trace, {}, mo);
  EXPECT_EQ(rep.covered, 400u);
  EXPECT_EQ(rep.foreign_count, 0u);
  EXPECT_TRUE(rep.latency_known);
  EXPECT_DOUBLE_EQ(rep.replay_latency_us.p50, 50.0);
  EXPECT_DOUBLE_EQ(rep.block_latency_us.p50, 40.0);
  EXPECT_DOUBLE_EQ(rep.overhead_us.min, 10.0);
}

}  // namespace
}  // namespace blkrr::validate
