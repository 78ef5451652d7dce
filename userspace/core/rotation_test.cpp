#include "core/rotation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace blkrr {
namespace {

// 2026-11-27 03:12:00 UTC
constexpr uint64_t kReal = 1795749120ull * 1'000'000'000ull + 999'999'999ull;

TEST(Rotation, NameHasSequenceFirstThenUtcStart) {
  EXPECT_EQ(piece_file_name("/var/lib/blkrr/prod", 42, kReal),
            "/var/lib/blkrr/prod.000042.20261127T031200Z.blkrr");
  EXPECT_EQ(piece_file_name("p", 1234567, 0), "p.1234567.19700101T000000Z.blkrr");
}

TEST(Rotation, NamesSortBySequenceWhenTheWallClockStepsBack) {
  std::vector<std::string> names = {piece_file_name("s", 10, kReal),
                                    piece_file_name("s", 11, kReal - 3600'000'000'000ull),
                                    piece_file_name("s", 9, kReal + 60'000'000'000ull)};
  std::sort(names.begin(), names.end());
  EXPECT_EQ(*parse_piece_file_name("s", names[0]), 9u);
  EXPECT_EQ(*parse_piece_file_name("s", names[1]), 10u);
  EXPECT_EQ(*parse_piece_file_name("s", names[2]), 11u);
}

TEST(Rotation, ParseAcceptsOnlyTheExactPatternOfTheStem) {
  EXPECT_EQ(parse_piece_file_name("prod", "prod.000042.20261127T031200Z.blkrr"), 42u);
  EXPECT_EQ(parse_piece_file_name("prod", "prod.1000000.20261127T031200Z.blkrr"), 1000000u);
  for (const char* other : {
           "prod.000042.20261127T031200Z.blkrr.open",  // still being written
           "prod.blkrr",                               // a single recording
           "prod2.000042.20261127T031200Z.blkrr",      // another stem
           "prod.x.000042.20261127T031200Z.blkrr",     // another stem with a dot
           "prod.00042.20261127T031200Z.blkrr",        // 5 digits
           "prod.000042.20261127T0312Z.blkrr",         // short time
           "prod.000042.20261127X031200Z.blkrr",       // no T
           "prod.000042.20261127T031200.blkrr",        // no Z
           "prod.000042.20261127T031200Z.load",        // other extension
           "prod.-00042.20261127T031200Z.blkrr",
           "xprod.000042.20261127T031200Z.blkrr",
       })
    EXPECT_FALSE(parse_piece_file_name("prod", other)) << other;
}

TEST(Rotation, RecordingIdsAre32HexDigitsAndDiffer) {
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    auto id = new_recording_id();
    ASSERT_EQ(id.size(), 32u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 50u);
}

// Requests are assigned by their issue time, whatever their completion.
TEST(Rotation, RequestBelongsToThePieceOfItsIssue) {
  const std::vector<uint64_t> starts = {1000, 2000, 3000};
  EXPECT_EQ(piece_of(0, starts), 0u);     // before the recording: the first piece
  EXPECT_EQ(piece_of(999, starts), 0u);   // issued before the first start
  EXPECT_EQ(piece_of(1000, starts), 0u);  // at the start
  EXPECT_EQ(piece_of(1999, starts), 0u);  // issued before the boundary, completes after it
  EXPECT_EQ(piece_of(2000, starts), 1u);  // at the boundary: the new piece
  EXPECT_EQ(piece_of(2500, starts), 1u);
  EXPECT_EQ(piece_of(3000, starts), 2u);
  EXPECT_EQ(piece_of(UINT64_MAX, starts), 2u);
  EXPECT_EQ(piece_of(5, {7}), 0u);
}

// Records arrive in completion order: constructed events around a boundary
// at 2000 land once each, in the piece of their issue.
TEST(Rotation, InFlightAtTheBoundaryIsWrittenOnceWithItsCompletion) {
  struct Ev {
    uint64_t issue, complete;
  };
  // completion order: 1500->1900, 1990->2100 (in flight at the boundary),
  // 2010->2050, 1200->2600 (long, in flight), 2300->2400
  const std::vector<Ev> arrivals = {
      {1500, 1900}, {2010, 2050}, {1990, 2100}, {2300, 2400}, {1200, 2600}};
  const std::vector<uint64_t> starts = {1000, 2000};
  std::vector<std::vector<Ev>> pieces(2);
  for (const auto& e : arrivals) pieces[piece_of(e.issue, starts)].push_back(e);
  ASSERT_EQ(pieces[0].size(), 3u);
  EXPECT_EQ(pieces[0][1].complete, 2100u);
  EXPECT_EQ(pieces[0][2].complete, 2600u);
  ASSERT_EQ(pieces[1].size(), 2u);
  EXPECT_EQ(pieces[1][0].issue, 2010u);
  EXPECT_EQ(pieces[1][1].issue, 2300u);
}

TEST(Rotation, PieceClosesOnlyWhenNothingIssuedBeforeItsEndCanArrive) {
  const uint64_t end = 1'000'000'000;
  CloseView v;
  v.walk_ns = end + kWalkMarginNs;
  v.drained_since_walk = true;
  EXPECT_TRUE(piece_can_close(end, v));  // nothing in flight
  v.oldest_inflight_ns = end;            // only requests of the next piece
  EXPECT_TRUE(piece_can_close(end, v));
  v.oldest_inflight_ns = end - 1;  // issued before the boundary, still in flight
  EXPECT_FALSE(piece_can_close(end, v));
  v.oldest_inflight_ns = UINT64_MAX;
  v.held = 1;  // a record of the piece held for its disk time
  EXPECT_FALSE(piece_can_close(end, v));
  v.held = 0;
  v.drained_since_walk = false;  // its record may be in the ring buffer still
  EXPECT_FALSE(piece_can_close(end, v));
  v.drained_since_walk = true;
  v.walk_ns = end + kWalkMarginNs - 1;  // too soon after the boundary
  EXPECT_FALSE(piece_can_close(end, v));
  v.walk_ns = 0;  // no walk yet
  EXPECT_FALSE(piece_can_close(end, v));
}

std::vector<PieceFile> files(std::initializer_list<std::pair<uint64_t, uint64_t>> seq_bytes) {
  std::vector<PieceFile> out;
  for (auto [s, b] : seq_bytes) out.push_back({"f" + std::to_string(s), s, b});
  return out;
}

std::vector<uint64_t> seqs(const std::vector<PieceFile>& v) {
  std::vector<uint64_t> out;
  for (const auto& f : v) out.push_back(f.seq);
  return out;
}

TEST(Rotation, KeepDeletesTheOldestClosedPieces) {
  auto closed = files({{7, 10}, {3, 10}, {5, 10}, {4, 10}});
  EXPECT_EQ(seqs(retention_victims(closed, 2, 0, 0)), (std::vector<uint64_t>{3, 4}));
  EXPECT_TRUE(retention_victims(closed, 4, 0, 0).empty());
  EXPECT_TRUE(retention_victims(closed, 0, 0, 1'000'000).empty());  // no limit
  EXPECT_EQ(seqs(retention_victims(closed, 1, 0, 0)), (std::vector<uint64_t>{3, 4, 5}));
}

TEST(Rotation, MaxTotalCountsTheOpenFilesAndNeverChoosesThem) {
  auto closed = files({{1, 100}, {2, 200}, {3, 300}});
  // 600 closed + 50 open = 650
  EXPECT_TRUE(retention_victims(closed, 0, 650, 50).empty());
  EXPECT_EQ(seqs(retention_victims(closed, 0, 649, 50)), (std::vector<uint64_t>{1}));
  EXPECT_EQ(seqs(retention_victims(closed, 0, 400, 50)), (std::vector<uint64_t>{1, 2}));
  // The open files alone exceed the limit: every closed piece goes, no more.
  EXPECT_EQ(seqs(retention_victims(closed, 0, 10, 50)), (std::vector<uint64_t>{1, 2, 3}));
  // Both limits: the stricter wins.
  EXPECT_EQ(seqs(retention_victims(closed, 1, 10'000, 0)), (std::vector<uint64_t>{1, 2}));
}

}  // namespace
}  // namespace blkrr
