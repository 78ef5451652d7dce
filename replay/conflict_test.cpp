#include "replay/conflict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace blkrr::replay {
namespace {

TEST(Conflict, StrongLevels) {
  // strong 0: write/write only
  EXPECT_TRUE(kinds_conflict(0, true, true));
  EXPECT_FALSE(kinds_conflict(0, true, false));
  EXPECT_FALSE(kinds_conflict(0, false, false));
  // strong 1: any write involved
  EXPECT_TRUE(kinds_conflict(1, true, false));
  EXPECT_TRUE(kinds_conflict(1, false, true));
  EXPECT_FALSE(kinds_conflict(1, false, false));
  // strong 2: any overlap
  EXPECT_TRUE(kinds_conflict(2, false, false));
}

TEST(ExtentSet, OverlapAndAdjacency) {
  ExtentSet s;
  s.insert(1, 100, 108, true);
  EXPECT_TRUE(s.conflicts(104, 112, true, 0));
  EXPECT_TRUE(s.conflicts(96, 101, true, 0));
  EXPECT_FALSE(s.conflicts(108, 116, true, 2));  // adjacent, not overlapping
  EXPECT_FALSE(s.conflicts(92, 100, true, 2));
  EXPECT_FALSE(s.conflicts(104, 112, false, 0));  // read vs write at strong 0
  EXPECT_TRUE(s.conflicts(104, 112, false, 1));
}

TEST(ExtentSet, LongExtentFoundFromFarAway) {
  ExtentSet s;
  s.insert(1, 0, 10'000, false);
  s.insert(2, 5000, 5008, false);
  EXPECT_TRUE(s.conflicts(9000, 9008, true, 1));  // inside the long one only
  s.erase(1, 0, 10'000);
  EXPECT_FALSE(s.conflicts(9000, 9008, true, 1));
  EXPECT_TRUE(s.conflicts(5004, 5005, true, 1));
  s.erase(2, 5000, 5008);
  EXPECT_TRUE(s.empty());
}

TEST(ExtentSet, SameStartDifferentIds) {
  ExtentSet s;
  s.insert(1, 50, 58, false);
  s.insert(2, 50, 58, true);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_TRUE(s.conflicts(50, 51, true, 0));
  s.erase(2, 50, 58);
  EXPECT_FALSE(s.conflicts(50, 51, true, 0));
  EXPECT_TRUE(s.conflicts(50, 51, true, 1));
}

TEST(ExtentSet, OverlappingIdsAndConflictsBelowAnId) {
  ExtentSet s;
  s.insert(7, 100, 108, true);
  s.insert(3, 104, 112, true);
  s.insert(9, 200, 208, false);
  std::vector<uint64_t> ids;
  s.overlapping(106, 107, 1, ids);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{3, 7}));
  ids.clear();
  s.overlapping(108, 200, 1, ids);  // touches 104-112 only; 200 is the end
  EXPECT_EQ(ids, (std::vector<uint64_t>{3}));
  EXPECT_TRUE(s.conflicts_below(100, 101, true, 0, 8));     // id 7
  EXPECT_FALSE(s.conflicts_below(100, 101, true, 0, 7));    // only 7 overlaps
  EXPECT_TRUE(s.conflicts_below(105, 106, true, 0, 4));     // id 3
  EXPECT_FALSE(s.conflicts_below(200, 201, true, 0, 100));  // a read, strong 0
  EXPECT_TRUE(s.conflicts_below(200, 201, true, 1, 100));
}

TEST(ExtentSet, OverlappingYieldsTheHeadOfAChain) {
  ExtentSet s;
  for (uint64_t id = 10; id < 20; ++id) s.insert(id, 800, 808, true);  // writes, one sector
  s.insert(30, 800, 808, false);  // a read of the same extent, newer
  std::vector<uint64_t> ids;
  s.overlapping(800, 808, 1, ids);
  EXPECT_EQ(ids, (std::vector<uint64_t>{10}));
  ids.clear();
  s.overlapping(800, 808, 0, ids);  // write/write only: the read does not wait
  EXPECT_EQ(ids, (std::vector<uint64_t>{10, 30}));
  ExtentSet r;  // reads first: other reads do not wait behind them below 2
  r.insert(1, 50, 58, false);
  r.insert(2, 50, 58, false);
  r.insert(3, 50, 58, true);
  ids.clear();
  r.overlapping(50, 51, 1, ids);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));  // the write waits behind read 1
  ids.clear();
  r.overlapping(50, 51, 2, ids);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1}));
  EXPECT_FALSE(s.conflicts_below(800, 808, true, 1, 10));  // the head: nothing older
  EXPECT_TRUE(s.conflicts_below(800, 808, true, 1, 11));
}

TEST(Conflict, Parse) {
  EXPECT_EQ(*parse_cmode("drop"), ConflictMode::kDrop);
  EXPECT_EQ(*parse_cmode("partial"), ConflictMode::kPartial);
  EXPECT_FALSE(parse_cmode("bogus").ok());
  EXPECT_EQ(*parse_strong("2"), 2);
  EXPECT_FALSE(parse_strong("3").ok());
}

}  // namespace
}  // namespace blkrr::replay
