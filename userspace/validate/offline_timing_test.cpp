// Offline validation of replays with recorded timing settings (speedup,
// start, fullspeed), the replayer's own probe, pairing by order, and the
// comparison with live validation of the same simulated replay.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "converters/load_format.h"
#include "core/trace_format.h"
#include "validate/matcher.h"
#include "validate/offline.h"
#include "validate/report_io.h"

namespace blkrr::validate {
namespace {

constexpr uint64_t kUs = 1000, kMs = 1'000'000;
constexpr uint64_t kT0 = 86'400'000'000'000ull;  // start instant on the block layer's clock
constexpr uint32_t kPid = 4242;

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("blkrr-validate-timing-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& n) const { return (path_ / n).string(); }

 private:
  std::filesystem::path path_;
};

// One replay seen from both sides: the result file's lines, the replayer's
// requests on the block layer's clock (what the live validator gets), and
// the block layer's requests (probe, replay, foreign).
struct Sim {
  std::vector<LoadRecord> lines;
  std::vector<ReplayedRequest> live;
  std::vector<Request> probe, block, foreign;
};

Request block_req(uint64_t sector, uint32_t sectors, Op op, uint64_t issue, uint64_t complete,
                  uint32_t pid, const char* comm) {
  Request b;
  b.sector = sector;
  b.bytes = sectors * 512;
  b.op = op;
  b.issue_ns = issue;
  b.complete_ns = complete;
  b.dev = b.part = make_dev(7, 0);
  b.pid = b.tgid = pid;
  b.set_comm(comm);
  return b;
}

// n requests 1 ms (plus jitter) apart in load time from `start` on, replayed
// at `speedup` (0: fullspeed, one every 25 us). Every 4th request goes to one
// of 50 hot sectors, every 10th is 512 sectors and split in two. Latencies
// 40-139 us; the block layer issues 3 us after the submission and completes
// 6 us before the replayer sees it.
void add_request(Sim& s, int i, double speedup, uint64_t start) {
  const uint64_t load =
      start + static_cast<uint64_t>(i) * kMs + static_cast<uint64_t>(i % 5) * 37 * kUs;
  const uint64_t due =
      speedup == 0
          ? 0
          : static_cast<uint64_t>(std::llround(static_cast<double>(load - start) / speedup));
  const uint64_t submit_rel = speedup == 0 ? static_cast<uint64_t>(i) * 25 * kUs
                                           : due + 2 * kUs + static_cast<uint64_t>(i % 7) * kUs;
  const uint64_t lat = 40 * kUs + static_cast<uint64_t>((i * 7919) % 100) * kUs;
  const bool big = i % 10 == 5;
  const uint64_t sector = i % 4 == 0 ? 2048 + static_cast<uint64_t>(i % 50) * 1024
                                     : 1'000'000 + static_cast<uint64_t>(i) * 1024;
  const Op op = i % 3 ? Op::kRead : Op::kWrite;
  LoadRecord l;
  l.start_ns = static_cast<int64_t>(load);
  l.sector = sector;
  l.sectors = big ? 512 : 8;
  l.op = op;
  l.delay_ns = static_cast<int64_t>(submit_rel) - static_cast<int64_t>(due);
  l.duration_ns = static_cast<int64_t>(lat);
  s.lines.push_back(l);
  ReplayedRequest r;
  r.id = static_cast<uint64_t>(i);
  r.sector = sector;
  r.sectors = l.sectors;
  r.op = op;
  r.submit_ns = kT0 + submit_rel;
  r.complete_ns = r.submit_ns + lat;
  s.live.push_back(r);
  if (big) {
    s.block.push_back(
        block_req(sector, 256, op, r.submit_ns + 3 * kUs, r.complete_ns - 6 * kUs, kPid, "blkrr"));
    s.block.push_back(block_req(sector + 256, 256, op, r.submit_ns + 5 * kUs,
                                r.complete_ns - 8 * kUs, kPid, "blkrr"));
  } else {
    s.block.push_back(
        block_req(sector, 8, op, r.submit_ns + 3 * kUs, r.complete_ns - 6 * kUs, kPid, "blkrr"));
  }
}

Sim simulate(int n, double speedup, uint64_t start = 0) {
  Sim s;
  for (int i = 0; i < n; i++) add_request(s, i, speedup, start);
  // libblkid's probe of the device 40 ms to 5 ms before the start, also on
  // the replay's hot sectors: 96 reads.
  for (uint64_t k = 0; k < 96; k++) {
    uint64_t t = kT0 - 40 * kMs + k * 350 * kUs;
    s.probe.push_back(block_req(k < 48 ? 2048 + (k % 50) * 1024 : 8'000'000 + k * 8, 8, Op::kRead,
                                t, t + 20 * kUs, kPid, "blkrr"));
  }
  // Another process reading during the replay.
  for (uint64_t k = 0; k < 20; k++) {
    uint64_t t = kT0 + 1 * kMs + k * 400 * kUs;
    s.foreign.push_back(block_req(5'000'000 + k * 8, 8, Op::kRead, t, t + 30 * kUs, 777, "dd"));
  }
  return s;
}

void write_replay(const Sim& s, const std::string& path, const std::string& settings) {
  auto w = LoadWriter::create(path, LoadKind::kReplay, {"simulated replay"});
  ASSERT_TRUE(w) << w.error().message;
  if (!settings.empty()) {
    ASSERT_TRUE(w->write_line("INFO: settings " + settings));
  }
  // Written in completion order, as the replayer does.
  std::vector<size_t> order(s.lines.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return s.live[a].complete_ns < s.live[b].complete_ns; });
  for (size_t i : order) ASSERT_TRUE(w->write(s.lines[i]));
  ASSERT_TRUE(w->close());
}

void write_trace(const Sim& s, const std::string& path, bool with_probe = true) {
  TraceHeader h;
  h.host = "test";
  auto t = TraceWriter::create(path, h);
  ASSERT_TRUE(t) << t.error().message;
  if (with_probe) {
    for (const auto& b : s.probe) ASSERT_TRUE(t->append(b));
  }
  for (const auto& b : s.block) ASSERT_TRUE(t->append(b));
  for (const auto& b : s.foreign) ASSERT_TRUE(t->append(b));
  ASSERT_TRUE(t->close({{"ringbuf_reserve_failed", 0}}));
}

std::string settings_json(double speedup, uint64_t start = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "{\"timing\":\"%s\",\"speedup\":%g,\"start_s\":%g,\"start_at\":null,\"pid\":%u}",
                speedup == 0 ? "fullspeed" : "timestamp", speedup == 0 ? 1.0 : speedup,
                static_cast<double>(start) / 1e9, kPid);
  return buf;
}

Report offline(const std::string& replay, const std::string& trace) {
  auto in = read_replay_input(replay);
  EXPECT_TRUE(in) << in.error().message;
  auto tr = read_trace_input({trace}, "");
  EXPECT_TRUE(tr) << tr.error().message;
  if (!in || !tr) return {};
  OfflineOptions o;
  o.match.pre_slack_ns = o.match.post_slack_ns = 5 * kMs;  // blkrr validate's default
  return validate_offline(std::move(*in), *tr, o);
}

// Live: the capture starts after the safety checks (no probe) and both
// sides read one clock.
Report live(const Sim& s) {
  std::vector<Request> seen = s.block;
  seen.insert(seen.end(), s.foreign.begin(), s.foreign.end());
  return match_requests(s.live, seen, {}, MatchOptions{});
}

void expect_same(const Report& off, const Report& on) {
  EXPECT_EQ(off.verdict, on.verdict);
  EXPECT_EQ(off.submitted, on.submitted);
  EXPECT_EQ(off.covered, on.covered);
  EXPECT_EQ(off.missing_count, on.missing_count);
  EXPECT_EQ(off.altered_count, on.altered_count);
  EXPECT_EQ(off.split_requests, on.split_requests);
  EXPECT_EQ(off.foreign_count, on.foreign_count);
  EXPECT_EQ(off.matched_block, on.matched_block);
  ASSERT_TRUE(off.latency_known) << off.latency_reason;
  ASSERT_TRUE(on.latency_known) << on.latency_reason;
  auto near = [](const Summary& a, const Summary& b, const char* what) {
    EXPECT_EQ(a.count, b.count) << what;
    for (auto [x, y] : {std::pair{a.p50, b.p50}, {a.p90, b.p90}, {a.p99, b.p99}})
      EXPECT_NEAR(x, y, 0.05 * y) << what;
  };
  near(off.replay_latency_us, on.replay_latency_us, "replay");
  near(off.block_latency_us, on.block_latency_us, "block");
  near(off.overhead_us, on.overhead_us, "overhead");
  EXPECT_GE(off.overhead_us.min, 0.0);
}

std::string notes(const Report& r) {
  std::string s;
  for (const auto& n : r.notes) s += n + "\n";
  return s;
}

class SpeedupTest : public ::testing::TestWithParam<double> {};

TEST_P(SpeedupTest, OfflineAgreesWithLive) {
  const double speedup = GetParam();
  TempDir d;
  Sim s = simulate(2000, speedup, 60'000'000'000ull);
  write_replay(s, d.file("r.replay.gz"), settings_json(speedup, 60'000'000'000ull));
  write_trace(s, d.file("t.blkrr"));
  Report off = offline(d.file("r.replay.gz"), d.file("t.blkrr"));
  Report on = live(s);
  EXPECT_EQ(on.verdict, Verdict::kComplete);
  EXPECT_EQ(on.covered, 2000u);
  EXPECT_EQ(on.foreign_count, 20u);
  EXPECT_EQ(on.split_requests, 200u);
  expect_same(off, on);
  EXPECT_NE(notes(off).find("aligned to the trace by an offset"), std::string::npos) << notes(off);
  // The probe is the replayer's, not foreign.
  ASSERT_EQ(off.own_probe.size(), 1u);
  EXPECT_EQ(off.own_probe[0].pid, kPid);
  EXPECT_EQ(off.own_probe[0].requests, 96u);
  EXPECT_EQ(off.own_probe[0].bytes, 96u * 4096);
  ASSERT_EQ(off.foreign_by_process.size(), 1u);
  EXPECT_EQ(off.foreign_by_process[0].comm, "dd");
  std::string text = format_text(off);
  EXPECT_NE(text.find("own probe before its first request (not foreign): blkrr[4242]: 96 "
                      "requests"),
            std::string::npos)
      << text;
}

INSTANTIATE_TEST_SUITE_P(Offline, SpeedupTest, ::testing::Values(0.5, 1.0, 2.0, 20.0, 0.0),
                         [](const auto& tp) {
                           if (tp.param == 0) return std::string("fullspeed");
                           if (tp.param == 0.5) return std::string("half");
                           char b[32];
                           std::snprintf(b, sizeof b, "x%g", tp.param);
                           return std::string(b);
                         });

TEST(OfflineTiming, SpeedupWithoutSettingsIsPairedByOrderAndSaysSo) {
  // A result without the settings line (blkreplay's, or the speedup lost):
  // times 20x too far apart, no offset fits.
  TempDir d;
  Sim s = simulate(1000, 20.0);
  write_replay(s, d.file("r.replay.gz"), "");
  write_trace(s, d.file("t.blkrr"), false);
  Report off = offline(d.file("r.replay.gz"), d.file("t.blkrr"));
  EXPECT_NE(notes(off).find("paired by order and sector"), std::string::npos) << notes(off);
  EXPECT_EQ(off.verdict, Verdict::kComplete);
  EXPECT_EQ(off.covered, 1000u);
  EXPECT_EQ(off.foreign_count, 20u);
  ASSERT_TRUE(off.latency_known) << off.latency_reason;
  Report on = live(s);
  EXPECT_DOUBLE_EQ(off.replay_latency_us.p50, on.replay_latency_us.p50);
  EXPECT_DOUBLE_EQ(off.block_latency_us.p50, on.block_latency_us.p50);
  EXPECT_GE(off.overhead_us.min, 0.0);
}

TEST(OfflineTiming, OlderResultWithoutPidNamesTheProbeByComm) {
  TempDir d;
  Sim s = simulate(500, 2.0);
  std::string settings = settings_json(2.0);
  settings.replace(settings.find(",\"pid\":4242"), 11, "");
  write_replay(s, d.file("r.replay.gz"), settings);
  write_trace(s, d.file("t.blkrr"));
  Report off = offline(d.file("r.replay.gz"), d.file("t.blkrr"));
  EXPECT_EQ(off.verdict, Verdict::kComplete);
  ASSERT_EQ(off.own_probe.size(), 1u);
  EXPECT_EQ(off.own_probe[0].requests, 96u);
  EXPECT_EQ(off.foreign_count, 20u);
  EXPECT_NE(notes(off).find("recognized by the name 'blkrr'"), std::string::npos) << notes(off);
}

TEST(OfflineTiming, ReplayerIoAfterTheStartStaysForeign) {
  // A request of the replayer's process serving no replayed request after
  // the first submission is not the probe.
  TempDir d;
  Sim s = simulate(300, 1.0);
  s.foreign.push_back(
      block_req(9'000'000, 8, Op::kRead, kT0 + 50 * kMs, kT0 + 50 * kMs + 9 * kUs, kPid, "blkrr"));
  write_replay(s, d.file("r.replay.gz"), settings_json(1.0));
  write_trace(s, d.file("t.blkrr"));
  Report off = offline(d.file("r.replay.gz"), d.file("t.blkrr"));
  EXPECT_EQ(off.foreign_count, 21u);
  ASSERT_EQ(off.own_probe.size(), 1u);
  EXPECT_EQ(off.own_probe[0].requests, 96u);
}

TEST(OfflineTiming, StartAtWithClockAnchorsIsCrossChecked) {
  TempDir d;
  Sim s = simulate(300, 1.0);
  const double start_at = 1'700'000'000.25;
  std::string settings = settings_json(1.0);
  settings.replace(settings.find("\"start_at\":null"), 15, "\"start_at\":1700000000.25");
  write_replay(s, d.file("r.replay.gz"), settings);
  TraceHeader h;
  h.host = "test";
  h.mono_anchor_ns = kT0;  // CLOCK_MONOTONIC read at the --start-at instant
  h.real_anchor_ns = static_cast<uint64_t>(std::llround(start_at * 1e9));
  auto t = TraceWriter::create(d.file("t.blkrr"), h);
  ASSERT_TRUE(t);
  for (const auto& b : s.block) ASSERT_TRUE(t->append(b));
  ASSERT_TRUE(t->close({{"ringbuf_reserve_failed", 0}}));
  Report off = offline(d.file("r.replay.gz"), d.file("t.blkrr"));
  EXPECT_EQ(off.covered, 300u);
  // The vote's offset is the midpoint of [issue - complete, issue - submit]
  // agreeing over all requests; within a few us of the --start-at instant.
  EXPECT_NE(notes(off).find("--start-at instant recorded in the replay gives an offset"),
            std::string::npos)
      << notes(off);
}

TEST(OfflineTiming, EmptyReplayIsNothingToValidate) {
  TempDir d;
  auto w = LoadWriter::create(d.file("empty.replay.gz"), LoadKind::kReplay, {"no requests"});
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->close());
  auto in = read_replay_input(d.file("empty.replay.gz"));
  ASSERT_FALSE(in);
  EXPECT_NE(in.error().message.find("nothing to validate"), std::string::npos)
      << in.error().message;
  EXPECT_NE(in.error().message.find("empty.replay.gz"), std::string::npos);
  EXPECT_NE(in.error().message.find("replay result header but not one request"), std::string::npos)
      << in.error().message;
  std::FILE* f = std::fopen(d.file("zero").c_str(), "w");
  ASSERT_TRUE(f);
  std::fclose(f);
  auto z = read_replay_input(d.file("zero"));
  ASSERT_FALSE(z);
  EXPECT_NE(z.error().message.find("no header and no request line"), std::string::npos)
      << z.error().message;
}

TEST(OfflineTiming, NegativeOverheadMeansUnknownLatency) {
  // A wrong pairing: the block request took longer than the replayer saw.
  std::vector<ReplayedRequest> rs(2);
  for (uint64_t i = 0; i < 2; i++) {
    rs[i].id = i;
    rs[i].sector = 100 + i * 8;
    rs[i].sectors = 8;
    rs[i].submit_ns = 1'000 * kUs + i * kMs;
    rs[i].complete_ns = rs[i].submit_ns + 50 * kUs;
  }
  std::vector<Request> bs = {
      block_req(100, 8, Op::kRead, 990 * kUs, 1'045 * kUs, 1, "x"),  // 55 us > 50 us
      block_req(108, 8, Op::kRead, 2'001 * kUs, 2'040 * kUs, 1, "x"),
  };
  Report rep = match_requests(rs, bs, {}, MatchOptions{.pre_slack_ns = 20 * kUs});
  EXPECT_EQ(rep.covered, 2u);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_FALSE(rep.latency_known);
  EXPECT_EQ(rep.latency_inconsistent, 1u);
  EXPECT_EQ(rep.overhead_us.count, 0u);
  EXPECT_NE(rep.verdict_reason.find("latency unknown: 1 of 2 requests"), std::string::npos)
      << rep.verdict_reason;
  std::string text = format_text(rep);
  EXPECT_NE(text.find("validate: COMPLETE, LATENCY UNKNOWN"), std::string::npos) << text;
  EXPECT_EQ(text.find("latency us"), std::string::npos) << text;
  auto j = to_json(rep);
  EXPECT_FALSE(j["latency_known"].get<bool>());
  EXPECT_FALSE(j["latency_ns"].contains("overhead"));
  EXPECT_EQ(j["latency_ns"]["inconsistent"], 1);
}

}  // namespace
}  // namespace blkrr::validate
