// Attribution through the stack with the real programs, on a machine
// without device-mapper or md: a loop device over another one with direct
// I/O is a stacking driver too (the upper device's requests become bios on
// the lower one, submitted by the loop driver's worker thread). Given the
// upper device as a stacked volume's piece, the lower device's requests are
// charged to the process that wrote to the upper one. The kernel matrix runs
// dm-linear, dm-crypt, md RAID1, dm striped, md RAID0 and dm-crypt over it.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "capture/capture.h"
#include "core/device.h"
#include "core/volume_stripes.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {
namespace {

constexpr uint64_t kBytes = 64 << 20;

struct Stacked {
  std::optional<LoopDevice> lower, upper;
};

Stacked stacked() {
  Stacked s;
  auto lower = LoopDevice::create(kBytes);
  EXPECT_TRUE(lower) << lower.error().message;
  if (!lower) return s;
  s.lower.emplace(std::move(*lower));
  auto upper = LoopDevice::create_over(*s.lower);
  EXPECT_TRUE(upper) << upper.error().message;
  if (upper) s.upper.emplace(std::move(*upper));
  return s;
}

// How the capture sees the upper device: not at all, as one linear piece,
// or as a striped volume of one row whose members are the lower device's
// 32 slices in order (the same sectors: a striped map that the loop
// driver's linear one agrees with, so that the programs' chunk arithmetic
// decides which member takes each bio and where).
enum class Follow { kNo, kLinear, kStriped };

std::vector<VolumePiece> pieces_of(const Stacked& s, Follow follow) {
  const uint64_t n = kBytes / 512, chunk = n / 32;
  if (follow == Follow::kNo) return {};
  if (follow == Follow::kLinear) return {{s.upper->dev(), Extent{0, n, s.lower->dev(), 0}}};
  std::vector<std::pair<DevT, uint64_t>> members;
  for (uint64_t i = 0; i < 32; ++i) members.emplace_back(s.lower->dev(), i * chunk);
  auto map = striped_area("test stripes", 0, n, chunk, members);
  EXPECT_TRUE(map) << map.error().message;
  if (!map) return {};
  auto p = attribution_pieces({{s.upper->dev(), *map}}, 64, nullptr);
  EXPECT_EQ(p.size(), 32u);
  return p;
}

// A capture of the lower device, following the upper one's bios as `follow`
// says.
Result<std::unique_ptr<Capture>> capture_of(const Stacked& s, Follow follow, bool aggregate) {
  CaptureConfig cfg;
  auto sel = resolve_device(s.lower->path());
  if (!sel) return sel.error();
  cfg.devices.push_back(*sel);
  cfg.stack_pieces = pieces_of(s, follow);
  cfg.aggregate = aggregate;
  cfg.emit_events = !aggregate;
  return Capture::start(cfg);
}

// The lower device's records of a child's load on the upper one.
std::vector<Request> records_of_load(const Stacked& s, Follow follow, Counters* counters) {
  auto cap = capture_of(s, follow, false);
  EXPECT_TRUE(cap) << cap.error().message;
  if (!cap) return {};
  auto kid = IoChild::spawn("blkrr-stack", s.upper->path(), make_known_load(2, 10, 0, 20000));
  EXPECT_TRUE(kid) << kid.error().message;
  if (!kid) return {};
  kid->go();
  EXPECT_EQ(kid->wait(), 0);
  std::vector<Request> got;
  auto fn = [&](const Request& r) { got.push_back(r); };
  EXPECT_TRUE((*cap)->poll(100, fn));
  EXPECT_TRUE((*cap)->stop(fn));
  *counters = (*cap)->counters();
  return got;
}

TEST(StackAttribution, RequestsBelowAVolumeNameTheBioSubmitter) {
  SKIP_UNLESS_CAPTURE();
  Stacked s = stacked();
  ASSERT_TRUE(s.lower && s.upper);
  Counters plain_c, c;
  // Without the volume: the loop driver's worker made every request below.
  auto plain = records_of_load(s, Follow::kNo, &plain_c);
  size_t plain_ours = 0;
  for (const auto& r : plain) plain_ours += r.comm_view() == "blkrr-stack" ? 1 : 0;
  EXPECT_EQ(plain_ours, 0u) << "the lower device's requests came from the writer itself";
  EXPECT_GE(plain.size(), 20u);

  for (Follow f : {Follow::kLinear, Follow::kStriped}) {
    SCOPED_TRACE(f == Follow::kLinear ? "one linear piece" : "32 striped members");
    auto got = records_of_load(s, f, &c);
    if (c.count("volume_bios_noted") && c.at("volume_bios_noted") == 0 && got.empty())
      GTEST_SKIP() << "no block_bio_queue here";
    uint64_t ours = 0, from_bio = 0;
    for (const auto& r : got) {
      EXPECT_EQ(r.dev, s.lower->dev());
      if (r.comm_view() != "blkrr-stack") continue;
      ++ours;
      if (r.rec_flags & kRecTaskFromBio) ++from_bio;
      EXPECT_FALSE(r.rec_flags & kRecKernelViaStack);
    }
    EXPECT_EQ(ours, got.size()) << "requests left with the loop worker";
    EXPECT_EQ(from_bio, ours);
    EXPECT_GE(c.at("volume_bios_noted"), 20u);
    EXPECT_EQ(c.at("volume_submitter_found"), ours);
    EXPECT_EQ(c.at("volume_submitter_unknown"), 0u);
  }
}

// top's in-kernel rows: the volume's I/O shown on the volume, charged to
// the writer through it.
TEST(StackAttribution, AggregatesShowTheVolume) {
  SKIP_UNLESS_CAPTURE();
  Stacked s = stacked();
  ASSERT_TRUE(s.lower && s.upper);
  auto cap = capture_of(s, Follow::kLinear, true);
  ASSERT_TRUE(cap) << cap.error().message;
  auto kid = IoChild::spawn("blkrr-stack-top", s.upper->path(), make_known_load(1, 12, 0, 20000));
  ASSERT_TRUE(kid) << kid.error().message;
  kid->go();
  ASSERT_EQ(kid->wait(), 0);
  auto aggs = (*cap)->aggregates();
  ASSERT_TRUE(aggs) << aggs.error().message;
  uint64_t requests = 0, others = 0;
  for (const auto& e : *aggs) {
    if (std::string(e.key.comm.data()) != "blkrr-stack-top") {
      others += e.value.requests;
      continue;
    }
    EXPECT_EQ(e.key.dev, s.upper->dev());
    EXPECT_EQ(e.key.disk, s.lower->dev());
    EXPECT_EQ(e.key.via, kRecTaskFromBio);
    requests += e.value.requests;
  }
  EXPECT_GE(requests, 12u);  // a bio the loop driver splits is two requests
  EXPECT_EQ(others, 0u);
}

}  // namespace
}  // namespace blkrr::testing
