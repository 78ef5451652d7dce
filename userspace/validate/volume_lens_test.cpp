// Validation through a stack: the disks' requests taken back to the volume's
// sectors serve the replayed requests; a request split at a segment boundary
// is covered by its two pieces; a mirror's writes are followed on each member.
#include "validate/volume_lens.h"

#include <gtest/gtest.h>

#include "validate/report_io.h"

namespace blkrr::validate {
namespace {

const DevT kVdb = make_dev(254, 16);
const DevT kVdc = make_dev(254, 32);
const DevT kDm0 = make_dev(253, 0);
constexpr uint64_t kMs = 1'000'000;

// A dm-linear volume of two segments: 0..64 at 32768 of vdb, 64..1064 at 0 of vdc.
VolumeMap linear() {
  VolumeMap v;
  v.volume = kDm0;
  v.name = "dm-0";
  v.label = "vg-data";
  v.stack = "dm-0 (vg-data) > {vdb, vdc}";
  v.extents = {{0, 64, kVdb, 32768}, {64, 1000, kVdc, 0}};
  return v;
}

// A RAID1 of vdb (data at 2048) and vdc (data at 16).
VolumeMap mirror() {
  VolumeMap v = linear();
  v.name = "md0";
  v.label.clear();
  v.stack = "md0 (raid1) > {vdb, vdc}";
  v.extents = {{0, 1000, kVdb, 2048, false}, {0, 1000, kVdc, 16, true, 1}};
  return v;
}

// A dm striped volume of 64 sectors in chunks of 8: chunks 0, 2, 4, 6 on vdb
// (at 2048), 1, 3, 5, 7 on vdc (at 16).
VolumeMap stripes() {
  VolumeMap v = linear();
  v.stack = "dm-0 (vg-data) > {vdb, vdc}";
  auto m = parse_dm_target("striped", 0, 64, "2 8 254:16 2048 254:32 16");
  EXPECT_TRUE(m.ok());
  if (m.ok()) v.extents = *m;
  return v;
}

ReplayedRequest replayed(uint64_t id, uint64_t sector, uint32_t sectors, Op op) {
  ReplayedRequest r;
  r.id = id;
  r.sector = sector;
  r.sectors = sectors;
  r.op = op;
  r.submit_ns = (10 + id * 10) * kMs;
  r.complete_ns = r.submit_ns + 2 * kMs;
  return r;
}

Request disk(DevT dev, uint64_t sector, uint32_t sectors, Op op, uint64_t at) {
  Request b;
  b.dev = b.part = dev;
  b.sector = sector;
  b.bytes = sectors * 512;
  b.op = op;
  b.issue_ns = at + kMs / 10;
  b.complete_ns = at + kMs;
  return b;
}

struct LensRun {
  WindowMatcher main{MatchOptions{}};
  VolumeLens lens;
  explicit LensRun(VolumeMap v) : lens(std::move(v), MatchOptions{}) {}
  void replay(const ReplayedRequest& r) {
    main.add_replayed(r);
    lens.add_replayed(r);
  }
  Report finish() {
    Report rep = main.finish(Losses{});
    lens.finish(rep, Losses{});
    return rep;
  }
};

TEST(VolumeLens, RequestsSplitAtASegmentBoundaryAreCoveredByTheirPieces) {
  LensRun run(linear());
  auto a = replayed(0, 8, 16, Op::kWrite);   // in the first segment
  auto b = replayed(1, 60, 8, Op::kRead);    // 60..64 on vdb, 64..68 on vdc
  auto c = replayed(2, 500, 8, Op::kWrite);  // in the second
  for (const auto& r : {a, b, c}) run.replay(r);
  run.lens.add_block(disk(kVdb, 32768 + 8, 16, Op::kWrite, a.submit_ns), run.main);
  run.lens.add_block(disk(kVdb, 32768 + 60, 4, Op::kRead, b.submit_ns), run.main);
  run.lens.add_block(disk(kVdc, 0, 4, Op::kRead, b.submit_ns), run.main);
  run.lens.add_block(disk(kVdc, 436, 8, Op::kWrite, c.submit_ns), run.main);
  run.lens.add_block(disk(kVdb, 0, 8, Op::kRead, c.submit_ns), run.main);  // outside the volume
  Report rep = run.finish();
  EXPECT_EQ(rep.verdict, Verdict::kComplete) << rep.verdict_reason;
  EXPECT_EQ(rep.submitted, 3u);
  EXPECT_EQ(rep.covered, 3u);
  EXPECT_EQ(rep.split_requests, 1u);
  ASSERT_TRUE(rep.stack);
  ASSERT_EQ(rep.stack->disks.size(), 2u);
  EXPECT_EQ(rep.stack->disks[0].requests, 3u);  // vdb, with the one outside
  EXPECT_EQ(rep.stack->disks[1].requests, 2u);
  EXPECT_EQ(rep.stack->volume_records, 4u);
  EXPECT_EQ(rep.stack->outside, 1u);
  EXPECT_EQ(rep.stack->split, 0u);
  EXPECT_TRUE(rep.stack->mirrors.empty());
  EXPECT_EQ(rep.stack->volume, "dm-0 (vg-data)");
  EXPECT_EQ(rep.stack->map, "0+64>254:16@32768,64+1000>254:32@0");
}

TEST(VolumeLens, AReplayedRequestNotSeenOnTheDisksIsMissing) {
  LensRun run(linear());
  run.replay(replayed(0, 8, 8, Op::kWrite));
  run.replay(replayed(1, 100, 8, Op::kWrite));
  run.lens.add_block(disk(kVdb, 32768 + 8, 8, Op::kWrite, 10 * kMs), run.main);
  Report rep = run.finish();
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
  EXPECT_EQ(rep.missing_count, 1u);
  ASSERT_EQ(rep.missing.size(), 1u);
  EXPECT_EQ(rep.missing[0].sector, 100u);
}

// Writes reach both members, reads one: complete; a write that missed the
// second member makes the verdict incomplete, naming the copy.
TEST(VolumeLens, MirrorWritesAreFollowedOnEachMember) {
  for (bool lose_one : {false, true}) {
    LensRun run(mirror());
    auto w1 = replayed(0, 8, 8, Op::kWrite), w2 = replayed(1, 64, 8, Op::kWrite);
    auto r1 = replayed(2, 8, 8, Op::kRead);
    for (const auto& r : {w1, w2, r1}) run.replay(r);
    run.lens.add_block(disk(kVdb, 2048 + 8, 8, Op::kWrite, w1.submit_ns), run.main);
    run.lens.add_block(disk(kVdc, 16 + 8, 8, Op::kWrite, w1.submit_ns), run.main);
    run.lens.add_block(disk(kVdb, 2048 + 64, 8, Op::kWrite, w2.submit_ns), run.main);
    if (!lose_one) run.lens.add_block(disk(kVdc, 16 + 64, 8, Op::kWrite, w2.submit_ns), run.main);
    run.lens.add_block(disk(kVdc, 16 + 8, 8, Op::kRead, r1.submit_ns), run.main);
    Report rep = run.finish();
    ASSERT_TRUE(rep.stack);
    EXPECT_EQ(rep.covered, 3u);
    EXPECT_EQ(rep.foreign_count, 0u);
    ASSERT_EQ(rep.stack->mirrors.size(), 1u);
    const auto& m = rep.stack->mirrors[0];
    EXPECT_EQ(m.copy, 1u);
    EXPECT_EQ(m.extents, "0+1000>254:32@16(reads)");
    EXPECT_EQ(m.writes, 2u);
    EXPECT_EQ(rep.stack->mirror_writes, lose_one ? 1u : 2u);
    EXPECT_EQ(rep.stack->outside, 0u);
    if (!lose_one) {
      EXPECT_EQ(rep.verdict, Verdict::kComplete) << rep.verdict_reason;
      EXPECT_EQ(m.covered, 2u);
      EXPECT_EQ(m.missing, 0u);
    } else {
      EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
      EXPECT_EQ(m.covered, 1u);
      EXPECT_EQ(m.missing, 1u);
      ASSERT_EQ(m.missing_list.size(), 1u);
      EXPECT_EQ(m.missing_list[0].sector, 64u);
      EXPECT_NE(rep.verdict_reason.find("not seen on mirror copy 1"), std::string::npos)
          << rep.verdict_reason;
    }
    auto j = to_json(rep);
    EXPECT_EQ(j["stack"]["mirrors"][0]["writes"], 2u);
    EXPECT_EQ(j["stack"]["disks"][1]["name"].get<std::string>().empty(), false);
  }
}

// A replayed write over sectors 4..20 is split by the stripe into three
// pieces on two disks, each served by its own disk request; without the
// piece on vdc the write is not covered (short).
TEST(VolumeLens, StripedRequestsAreFollowedIntoEachChunk) {
  for (bool lose_one : {false, true}) {
    LensRun run(stripes());
    auto w = replayed(0, 4, 16, Op::kWrite), r = replayed(1, 24, 8, Op::kRead);
    run.replay(w);
    run.replay(r);
    run.lens.add_block(disk(kVdb, 2048 + 4, 4, Op::kWrite, w.submit_ns), run.main);
    if (!lose_one) run.lens.add_block(disk(kVdc, 16, 8, Op::kWrite, w.submit_ns), run.main);
    run.lens.add_block(disk(kVdb, 2048 + 8, 4, Op::kWrite, w.submit_ns), run.main);
    run.lens.add_block(disk(kVdc, 16 + 8, 8, Op::kRead, r.submit_ns), run.main);
    Report rep = run.finish();
    ASSERT_TRUE(rep.stack);
    EXPECT_EQ(rep.stack->replayed_split, 1u);
    EXPECT_EQ(rep.stack->replayed_pieces, 3u);
    EXPECT_EQ(rep.stack->split, 0u);
    EXPECT_EQ(rep.stack->outside, 0u);
    EXPECT_EQ(rep.stack->map, "0+56>254:16@2048/0.2*8,8+56>254:32@16/1.2*8");
    if (!lose_one) {
      EXPECT_EQ(rep.verdict, Verdict::kComplete) << rep.verdict_reason;
      EXPECT_EQ(rep.covered, 2u);
      EXPECT_EQ(rep.stack->volume_records, 4u);
      EXPECT_EQ(to_json(rep)["stack"]["replayed_pieces"], 3u);
    } else {
      // The chunks on vdb served 8 of its 16 sectors: the write is short.
      EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
      EXPECT_EQ(rep.covered, 1u);
      ASSERT_EQ(rep.altered.size(), 1u);
      EXPECT_EQ(rep.altered[0].req.sector, 4u);
      EXPECT_EQ(rep.altered[0].covered_sectors, 8u);
    }
  }
}

}  // namespace
}  // namespace blkrr::validate
