#include "converters/device_map.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

MappedExtent map_ok(DeviceMap& m, uint64_t s, uint32_t n) {
  MappedExtent e;
  auto r = m.map(s, n, e, "test");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(*r, DeviceMap::Outcome::kMapped);
  return e;
}

TEST(DeviceMap, InsideIsUnchanged) {
  auto m = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1000, 512, 0});
  ASSERT_TRUE(m.ok());
  auto e = map_ok(*m, 992, 8);
  EXPECT_EQ(e.sector, 992u);
  EXPECT_EQ(e.sectors, 8u);
  EXPECT_EQ(m->counters().wrapped, 0u);
}

TEST(DeviceMap, WrapsModuloDeviceSize) {
  auto m = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1000, 512, 0});
  auto e = map_ok(*m, 2504, 8);
  EXPECT_EQ(e.sector, 504u);
  EXPECT_EQ(m->counters().wrapped, 1u);
  EXPECT_DOUBLE_EQ(m->wraparound_factor(), 2.512);
  // wraps to a position that would cross the end: moved back
  auto c = map_ok(*m, 1996, 8);
  EXPECT_EQ(c.sector, 992u);
  EXPECT_EQ(m->counters().clamped, 1u);
}

TEST(DeviceMap, ScaleIsProportional) {
  auto m = DeviceMap::create({MapMode::kScale, AlignMode::kRound, 1000, 512, 4000});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(map_ok(*m, 2000, 8).sector, 500u);
  EXPECT_EQ(map_ok(*m, 0, 8).sector, 0u);
  EXPECT_EQ(map_ok(*m, 3992, 8).sector, 992u);
  EXPECT_EQ(m->counters().wrapped, 0u);
}

TEST(DeviceMap, ScaleKeepsLogicalBlockAlignment) {
  auto m = DeviceMap::create({MapMode::kScale, AlignMode::kRound, 1024, 4096, 3000});
  ASSERT_TRUE(m.ok());
  auto e = map_ok(*m, 1000, 8);  // 1000 * 1024 / 3000 = 341.3 -> 336
  EXPECT_EQ(e.sector, 336u);
}

TEST(DeviceMap, AlignRound) {
  auto m = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 8000, 4096, 0});
  auto e = map_ok(*m, 13, 3);  // [13,16) -> [8,16)
  EXPECT_EQ(e.sector, 8u);
  EXPECT_EQ(e.sectors, 8u);
  auto f = map_ok(*m, 14, 4);  // [14,18) -> [8,24)
  EXPECT_EQ(f.sector, 8u);
  EXPECT_EQ(f.sectors, 16u);
  EXPECT_EQ(m->counters().misaligned, 2u);
  EXPECT_EQ(m->counters().rounded, 2u);
  map_ok(*m, 16, 8);
  EXPECT_EQ(m->counters().misaligned, 2u);
}

TEST(DeviceMap, AlignSkip) {
  auto m = DeviceMap::create({MapMode::kWrap, AlignMode::kSkip, 8000, 4096, 0});
  MappedExtent e;
  auto r = m->map(13, 8, e, "x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, DeviceMap::Outcome::kSkipped);
  EXPECT_EQ(m->counters().skipped_align, 1u);
}

TEST(DeviceMap, AlignFailNamesTheRequest) {
  auto m = DeviceMap::create({MapMode::kWrap, AlignMode::kFail, 8000, 4096, 0});
  MappedExtent e;
  auto r = m->map(16, 3, e, "request 7 of the load");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r.error().message.find("request 7 of the load"), std::string::npos);
  EXPECT_NE(r.error().message.find("4096"), std::string::npos);
}

TEST(DeviceMap, TooLargeIsSkipped) {
  auto m = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 16, 512, 0});
  MappedExtent e;
  EXPECT_EQ(*m->map(0, 32, e, "x"), DeviceMap::Outcome::kSkipped);
  EXPECT_EQ(m->counters().too_large, 1u);
}

TEST(DeviceMap, RejectsBadGeometry) {
  // A logical block size the kernel would not give; an empty target; --scale of an empty load.
  EXPECT_EQ(DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1000, 1000, 0}).error().kind,
            ErrorKind::kUnsupported);
  EXPECT_EQ(DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 0, 512, 0}).error().kind,
            ErrorKind::kUsage);
  EXPECT_EQ(DeviceMap::create({MapMode::kScale, AlignMode::kRound, 1000, 512, 0}).error().kind,
            ErrorKind::kBadInput);
}

}  // namespace
}  // namespace blkrr
