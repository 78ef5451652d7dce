#include "validate/pairing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "converters/load_format.h"
#include "core/trace_format.h"
#include "validate/offline.h"

namespace blkrr::validate {
namespace {

constexpr uint64_t kS = 1'000'000'000;
constexpr uint64_t kT0 = 1'790'000'000 * kS;  // a wall-clock instant

ReplayOrigin origin() {
  return origin_from_info({"INFO: device /dev/loop1 (block device, 64.0 MiB, logical block 512)",
                           "INFO: device_number 7:1", "INFO: opened_unix_ns " + std::to_string(kT0),
                           "INFO: command blkrr replay x.load /dev/loop1",
                           "INFO: host lab1 kernel 6.18.0"});
}

TraceExtent extent(DevT dev, uint64_t first, uint64_t last, const std::string& host = "lab1") {
  TraceExtent t;
  t.host = host;
  DeviceInfo d;
  d.dev = dev;
  d.name = "loop" + std::to_string(dev_minor(dev));
  t.devices = {d};
  t.first_unix_ns = first;
  t.last_unix_ns = last;
  return t;
}

TEST(Pairing, TheInfoLinesOfAReplayResult) {
  ReplayOrigin o = origin();
  EXPECT_EQ(o.host, "lab1");
  EXPECT_EQ(o.device, make_dev(7, 1));
  EXPECT_EQ(o.opened_unix_ns, kT0);
  EXPECT_EQ(o.device_text, "/dev/loop1 (block device, 64.0 MiB, logical block 512)");
  ReplayOrigin old = origin_from_info({"INFO: device /dev/loop1", "INFO: device_number x:y"});
  EXPECT_FALSE(old.device.has_value());
  EXPECT_FALSE(old.opened_unix_ns.has_value());
}

TEST(Pairing, TheTraceOfTheReplaysDeviceWhileItRanFits) {
  EXPECT_TRUE(
      check_pairing(origin(), 30 * kS, extent(make_dev(7, 1), kT0 - kS, kT0 + 31 * kS), false)
          .ok());
  // Recorded from a little after the start, or stopped a little early.
  EXPECT_TRUE(
      check_pairing(origin(), 30 * kS, extent(make_dev(7, 1), kT0 + 5 * kS, kT0 + 20 * kS), false)
          .ok());
}

TEST(Pairing, AnotherDeviceIsNamed) {
  auto st = check_pairing(origin(), 30 * kS, extent(make_dev(7, 0), kT0, kT0 + 30 * kS), false);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kUsage);
  EXPECT_NE(st.error().message.find("the trace is of another device: it records loop0 (7:0) on "
                                    "lab1, the replay ran on 7:1 (/dev/loop1"),
            std::string::npos)
      << st.error().message;
  // -d chose the device, or the trace is from another host: numbers say nothing.
  EXPECT_TRUE(
      check_pairing(origin(), 30 * kS, extent(make_dev(7, 0), kT0, kT0 + 30 * kS), true).ok());
  EXPECT_TRUE(
      check_pairing(origin(), 30 * kS, extent(make_dev(7, 0), kT0, kT0 + 30 * kS, "prod"), false)
          .ok());
}

TEST(Pairing, ATraceOfAnotherTimeIsNamed) {
  auto before = check_pairing(origin(), 30 * kS,
                              extent(make_dev(7, 1), kT0 - 100 * kS, kT0 - 60 * kS), false);
  ASSERT_FALSE(before.ok());
  EXPECT_NE(before.error().message.find("the trace was recorded before the replay"),
            std::string::npos)
      << before.error().message;
  auto after =
      check_pairing(origin(), 30 * kS, extent(make_dev(7, 1), kT0 + 50 * kS, kT0 + 60 * kS), false);
  ASSERT_FALSE(after.ok());
  EXPECT_NE(after.error().message.find("recorded after the replay"), std::string::npos);
  // Without the trace's clock anchors nothing can be said.
  TraceExtent t = extent(make_dev(7, 1), 0, 0);
  t.first_unix_ns.reset();
  t.last_unix_ns.reset();
  EXPECT_TRUE(check_pairing(origin(), 30 * kS, t, false).ok());
}

// The INFO lines blkrr replay writes and a native trace's header and clock
// anchors reach check_pairing through the readers `validate` uses.
TEST(Pairing, FromTheFilesValidateReads) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("blkrr-pairing-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string replay = (dir / "r.replay").string(), trace = (dir / "t.blkrr").string();
  {
    auto w = LoadWriter::create(replay, LoadKind::kReplay, {"a replay"});
    ASSERT_TRUE(w) << w.error().message;
    ASSERT_TRUE(w->write_line("INFO: device /dev/loop1 (block device)"));
    ASSERT_TRUE(w->write_line("INFO: device_number 7:1"));
    ASSERT_TRUE(w->write_line("INFO: opened_unix_ns " + std::to_string(kT0)));
    ASSERT_TRUE(w->write_line("INFO: settings {\"timing\":\"timestamp\",\"speedup\":1}"));
    ASSERT_TRUE(w->write_line("INFO: host lab1 kernel 6.18.0"));
    LoadRecord l;
    l.start_ns = 1'000'000;
    l.sector = 8;
    l.sectors = 8;
    l.duration_ns = 50'000;
    ASSERT_TRUE(w->write(l));
    ASSERT_TRUE(w->close());
  }
  {
    TraceHeader h;
    h.host = "lab1";
    h.mono_anchor_ns = 5 * kS;
    h.real_anchor_ns = kT0 - 3600 * kS;  // recorded an hour before the replay
    DeviceInfo d;
    d.dev = make_dev(7, 1);
    d.name = "loop1";
    h.devices = {d};
    auto t = TraceWriter::create(trace, h);
    ASSERT_TRUE(t) << t.error().message;
    Request r;
    r.issue_ns = 6 * kS;
    r.complete_ns = 6 * kS + 50'000;
    r.sector = 8;
    r.bytes = 4096;
    r.dev = r.part = d.dev;
    ASSERT_TRUE(t->append(r));
    ASSERT_TRUE(t->close({}));
  }
  auto in = read_replay_input(replay);
  ASSERT_TRUE(in) << in.error().message;
  auto tr = read_trace_input({trace}, "");
  ASSERT_TRUE(tr) << tr.error().message;
  EXPECT_EQ(in->origin.device, make_dev(7, 1));
  EXPECT_EQ(tr->extent.first_unix_ns, kT0 - 3600 * kS + kS);
  auto st = check_pairing(in->origin, in->span_ns(), tr->extent, false);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("recorded before the replay"), std::string::npos)
      << st.error().message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace blkrr::validate
