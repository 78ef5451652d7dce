#include <gtest/gtest.h>

#include <vector>

#include "replay/verify_state.h"
#include "replay/verify_tag.h"

namespace blkrr::replay {
namespace {

TEST(VerifyTag, RoundTrip) {
  std::vector<uint8_t> s(512, 0xee);
  SectorTag t{0x1122334455667788ull, 42, 3, 123456789, 16, 7};
  encode_tag(t, s.data());
  auto d = decode_tag(s.data());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, t);
  EXPECT_EQ(s[kTagBytes], 0xee);  // the rest of the sector is left alone
  EXPECT_EQ(s[0], 'B');
  EXPECT_EQ(s[1], 'L');
}

TEST(VerifyTag, NoMagicNoTag) {
  std::vector<uint8_t> s(512, 0);
  EXPECT_FALSE(decode_tag(s.data()).has_value());
}

TEST(VerifyState, ReadAfterWriteMatches) {
  VerifyState v(7);
  std::vector<uint8_t> buf(4 * 512);
  v.begin_write(5, 100, 4, buf.data());
  v.end_write(5, 100, 4, true);
  std::vector<VerifyError> errs;
  v.check_read(VerifyPass::kRead, 9, 100, 4, buf.data(), v.begin_read(), errs);
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(v.sectors_checked(), 4u);
  auto t = decode_tag(buf.data() + 2 * 512);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->offset, 2u);
  EXPECT_EQ(t->req_sectors, 4u);
  EXPECT_EQ(t->sector, 102u);
  EXPECT_EQ(t->version, 1u);
}

TEST(VerifyState, DetectsStaleAndForeignSectors) {
  VerifyState v(7);
  std::vector<uint8_t> first(512), second(512);
  v.begin_write(1, 10, 1, first.data());
  v.end_write(1, 10, 1, true);
  v.begin_write(2, 10, 1, second.data());
  v.end_write(2, 10, 1, true);
  std::vector<VerifyError> errs;
  v.check_read(VerifyPass::kRead, 3, 10, 1, first.data(), v.begin_read(), errs);  // stale
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].expected.version, 2u);
  ASSERT_TRUE(errs[0].found);
  EXPECT_EQ(errs[0].found->version, 1u);
  std::vector<uint8_t> zero(512, 0);
  v.check_read(VerifyPass::kFinal, 0, 10, 1, zero.data(), v.begin_read(), errs);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_FALSE(errs[1].found);
  EXPECT_NE(errs[1].to_line().find("VERIFY ERROR sector=10 pass=final"), std::string::npos);
}

TEST(VerifyState, OverlappingWritesAreUnverifiable) {
  VerifyState v(7);
  std::vector<uint8_t> a(512), b(512);
  v.begin_write(1, 10, 1, a.data());
  v.begin_write(2, 10, 1, b.data());
  v.end_write(2, 10, 1, true);
  v.end_write(1, 10, 1, true);
  std::vector<VerifyError> errs;
  v.check_read(VerifyPass::kRead, 3, 10, 1, a.data(), v.begin_read(), errs);
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(v.sectors_unverifiable(), 1u);
  EXPECT_TRUE(v.known_extents(256).empty());
}

TEST(VerifyState, ReadOverlappingAWriteInFlightIsNotChecked) {
  VerifyState v(7);
  std::vector<uint8_t> a(512), junk(512, 0);
  v.begin_write(1, 10, 1, a.data());
  v.end_write(1, 10, 1, true);
  uint64_t snap = v.begin_read();
  v.begin_write(2, 10, 1, a.data());  // starts while the read runs
  v.end_write(2, 10, 1, true);
  std::vector<VerifyError> errs;
  v.check_read(VerifyPass::kRead, 3, 10, 1, junk.data(), snap, errs);
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(v.sectors_unverifiable(), 1u);
}

TEST(VerifyState, KnownExtentsAreContiguousRuns) {
  VerifyState v(1);
  std::vector<uint8_t> buf(8 * 512);
  v.begin_write(1, 100, 8, buf.data());
  v.end_write(1, 100, 8, true);
  v.begin_write(2, 200, 2, buf.data());
  v.end_write(2, 200, 2, true);
  auto e = v.known_extents(4);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], std::make_pair(uint64_t{100}, uint32_t{4}));
  EXPECT_EQ(e[1], std::make_pair(uint64_t{104}, uint32_t{4}));
  EXPECT_EQ(e[2], std::make_pair(uint64_t{200}, uint32_t{2}));
}

}  // namespace
}  // namespace blkrr::replay
