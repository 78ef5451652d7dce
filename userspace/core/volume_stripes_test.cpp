#include "core/volume_stripes.h"

#include <gtest/gtest.h>

#include "core/volume_map.h"

namespace blkrr {
namespace {

const DevT kSda = make_dev(8, 0);
const DevT kSdb = make_dev(8, 16);
const DevT kSda2 = make_dev(8, 2);
const DevT kSdb1 = make_dev(8, 17);
const DevT kDm0 = make_dev(253, 0);
const DevT kDm1 = make_dev(253, 1);

Extent striped(uint64_t vol, uint64_t len, DevT dev, uint64_t at, uint32_t stripe, uint32_t stripes,
               uint64_t chunk, uint64_t phase = 0) {
  Extent e{vol, len, dev, at};
  e.stripes = stripes;
  e.stripe = stripe;
  e.chunk = chunk;
  e.phase = phase;
  return e;
}

// 64 sectors in chunks of 8 over sda at 1000 and sdb at 0: chunks 0, 2, 4,
// 6 on sda, 1, 3, 5, 7 on sdb, each member holding 32 sectors.
ExtentMap two_stripes() {
  auto m = parse_dm_target("striped", 0, 64, "2 8 8:0 1000 8:16 0");
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? *m : ExtentMap{};
}

Request disk_request(DevT dev, uint64_t sector, uint32_t bytes) {
  Request r;
  r.dev = r.part = dev;
  r.sector = sector;
  r.bytes = bytes;
  r.op = Op::kWrite;
  r.disk_time_ns = 1000;
  return r;
}

TEST(VolumeStripes, StripedTargetIsOneExtentPerStripe) {
  EXPECT_EQ(two_stripes(),
            (ExtentMap{striped(0, 56, kSda, 1000, 0, 2, 8), striped(8, 56, kSdb, 0, 1, 2, 8)}));
  for (const auto& e : two_stripes()) EXPECT_EQ(dev_len(e), 32u);
  auto at = parse_dm_target("striped", 4096, 48, "3 16 8:0 0 8:16 0 8:2 0");
  ASSERT_TRUE(at.ok()) << at.error().message;
  EXPECT_EQ(at->at(2), striped(4096 + 32, 16, kSda2, 0, 2, 3, 16));
  auto one = parse_dm_target("striped", 0, 64, "1 8 8:0 100");  // one stripe: linear
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (ExtentMap{{0, 64, kSda, 100}}));
}

TEST(VolumeStripes, BadStripedParamsSayWhatIsWrong) {
  struct Case {
    uint64_t len;
    const char* params;
    const char* says;
  };
  for (const Case& c : {
           Case{64, "0 8 8:0 0", "number of stripes"},
           Case{64, "x 8 8:0 0", "number of stripes"},
           Case{64, "2 0 8:0 0 8:16 0", "a chunk size of 0 sectors"},
           Case{64, "2 8 8:0 0", "stripe 1 of 2"},
           Case{64, "2 8 8:0 0 sdb 0", "stripe 1 of 2"},
           Case{60, "2 8 8:0 0 8:16 0", "no whole number of rows"},
           Case{64, "2 8 8:0 18446744073709551600 8:16 0", "stripe 0 on 8:0 runs past"},
           Case{64, "2 9223372036854775808 8:0 0 8:16 0", "overflows"},
       }) {
    auto r = parse_dm_target("striped", 0, c.len, c.params);
    ASSERT_FALSE(r.ok()) << c.params;
    EXPECT_EQ(r.error().kind, ErrorKind::kBadInput) << c.params;
    EXPECT_NE(r.error().message.find("striped target at sector 0"), std::string::npos);
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
  }
}

// Volume sectors 4..20: the end of chunk 0 (sda), chunk 1 (sdb), the start
// of chunk 2 (sda again).
TEST(VolumeStripes, ARangeMapsToEachMembersShareAndSplitsAtChunks) {
  EXPECT_EQ(map_range(two_stripes(), 4, 16),
            (ExtentMap{striped(4, 16, kSda, 1004, 0, 2, 8, 4), striped(8, 8, kSdb, 0, 1, 2, 8)}));
  EXPECT_EQ(chunk_pieces(two_stripes(), 4, 16),
            (ExtentMap{{4, 4, kSda, 1004}, {8, 8, kSdb, 0}, {16, 4, kSda, 1008}}));
  auto all = chunk_pieces(two_stripes(), 0, 64);  // every chunk, rows of both stripes
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all[5], (Extent{40, 8, kSdb, 16}));
  EXPECT_EQ(all[6], (Extent{48, 8, kSda, 1024}));
  EXPECT_TRUE(map_range(two_stripes(), 64, 8).empty());
  EXPECT_EQ(map_range(two_stripes(), 9, 2), (ExtentMap{striped(9, 2, kSdb, 1, 1, 2, 8, 1)}));
}

TEST(VolumeStripes, MemberSectorsMapBackToTheVolume) {
  const ExtentMap m = two_stripes();
  EXPECT_EQ(volume_sector_of(m, kSdb, 0, 8), 8u);
  EXPECT_EQ(volume_sector_of(m, kSdb, 8, 8), 24u);
  EXPECT_EQ(volume_sector_of(m, kSda, 1012, 4), 20u);
  EXPECT_EQ(volume_sector_of(m, kSda, 1031, 1), 55u);
  EXPECT_EQ(volume_sector_of(m, kSda, 1012, 8), std::nullopt);  // into the next chunk
  EXPECT_EQ(volume_sector_of(m, kSdb, 32, 1), std::nullopt);    // past the member's share
  EXPECT_EQ(volume_sector_of(m, kSda, 999, 1), std::nullopt);
  EXPECT_EQ(filter_ranges(m, kSda, 8), (std::vector<std::pair<uint64_t, uint64_t>>{{1000, 1032}}));
  EXPECT_EQ(filter_ranges(m, kSdb, 8), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 32}}));
}

// One request on sdb over sectors 4..20 holds the end of chunk 1, chunk 3
// and the start of chunk 5: three records, bytes and disk time shared.
TEST(VolumeStripes, AMemberRequestAcrossChunksBecomesOneRecordPerChunk) {
  auto v = requests_on_volume(disk_request(kSdb, 4, 16 * 512), two_stripes(), kDm0);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].sector, 12u);
  EXPECT_EQ(v[0].bytes, 2048u);
  EXPECT_EQ(v[1].sector, 24u);
  EXPECT_EQ(v[1].bytes, 4096u);
  EXPECT_EQ(v[2].sector, 40u);
  EXPECT_EQ(v[2].bytes, 2048u);
  EXPECT_EQ(v[0].disk_time_ns + v[1].disk_time_ns + v[2].disk_time_ns, 1000u);
  EXPECT_EQ(v[1].disk_time_ns, 500u);
  EXPECT_EQ(v[1].dev, kDm0);
  auto in_one = requests_on_volume(disk_request(kSda, 1008, 4096), two_stripes(), kDm0);
  ASSERT_EQ(in_one.size(), 1u);
  EXPECT_EQ(in_one[0].sector, 16u);
  EXPECT_EQ(in_one[0].disk_time_ns, 1000u);
  EXPECT_TRUE(requests_on_volume(disk_request(kSdb, 32, 4096), two_stripes(), kDm0).empty());
}

// dm-crypt over a striped volume (dm-0), 20 sectors in: the crypt volume's
// sector 0 is dm-0's 20, 4 sectors into chunk 2 (sda).
TEST(VolumeStripes, CryptOverStripesKeepsThePatternShifted) {
  auto c = compose({{0, 40, kDm0, 20}}, kDm0, two_stripes());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c,
            (ExtentMap{striped(0, 36, kSda, 1012, 0, 2, 8, 4), striped(4, 36, kSdb, 8, 1, 2, 8)}));
  EXPECT_EQ(dev_len((*c)[0]) + dev_len((*c)[1]), 40u);
  EXPECT_EQ(volume_sector_of(*c, kSda, 1016, 1), 12u);
  EXPECT_EQ(volume_sector_of(*c, kSdb, 8, 8), 4u);
  EXPECT_EQ(format_extents(*c), "0+36>8:0@1012/0.2*8+4,4+36>8:16@8/1.2*8");
  auto past = compose({{0, 48, kDm0, 20}}, kDm0, two_stripes());  // 20..68: past dm-0's end
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().kind, ErrorKind::kBadInput);
}

// Stripes over two partitions, and over a linear volume of two segments
// (member dm-1: its sectors 0..20 on sda at 5000, the rest on sdb at 0).
TEST(VolumeStripes, StripesOverLinearLevelsComposeMemberRanges) {
  auto m = parse_dm_target("striped", 0, 64, "2 8 8:2 100 8:17 0");
  ASSERT_TRUE(m.ok());
  auto a = compose(*m, kSda2, {{0, 5000, kSda, 2048}});
  ASSERT_TRUE(a.ok());
  auto b = compose(*a, kSdb1, {{0, 5000, kSdb, 2048}});
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(*b,
            (ExtentMap{striped(0, 56, kSda, 2148, 0, 2, 8), striped(8, 56, kSdb, 2048, 1, 2, 8)}));

  auto s = parse_dm_target("striped", 0, 64, "2 8 253:1 0 8:16 0");
  ASSERT_TRUE(s.ok());
  auto c = compose(*s, kDm1, {{0, 20, kSda, 5000}, {20, 100, kSdb, 1000}});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, (ExtentMap{striped(0, 36, kSda, 5000, 0, 2, 8), striped(8, 56, kSdb, 0, 1, 2, 8),
                           striped(36, 20, kSdb, 1000, 0, 2, 8, 4)}));
  EXPECT_EQ(volume_sector_of(*c, kSdb, 1004, 4), 48u);
  // Segments that continue each other on one disk join back into one extent.
  auto d = compose(*s, kDm1, {{0, 20, kSda, 5000}, {20, 100, kSda, 5020}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(coalesce(*d),
            (ExtentMap{striped(0, 56, kSda, 5000, 0, 2, 8), striped(8, 56, kSdb, 0, 1, 2, 8)}));
  auto short_below = compose(*s, kDm1, {{0, 20, kSda, 5000}});
  ASSERT_FALSE(short_below.ok());
  EXPECT_NE(short_below.error().message.find("does not hold whole"), std::string::npos);
}

// A stripe over a mirror (dm-0: RAID1 of sda and sdc at 16) and sdb: the
// mirror's members each hold stripe 0, the second one's copy for reads.
TEST(VolumeStripes, StripesOverAMirrorKeepTheMembersRoles) {
  const DevT sdc = make_dev(8, 32);
  auto s = parse_dm_target("striped", 0, 64, "2 8 253:0 0 8:16 0");
  ASSERT_TRUE(s.ok());
  Extent second{0, 1000, sdc, 16, true, 1};
  auto c = compose(*s, kDm0, {{0, 1000, kSda, 0}, second});
  ASSERT_TRUE(c.ok()) << c.error().message;
  Extent copy = striped(0, 56, sdc, 16, 0, 2, 8);
  copy.reads_only = true;
  copy.copy = 1;
  EXPECT_EQ(*c,
            (ExtentMap{striped(0, 56, kSda, 0, 0, 2, 8), copy, striped(8, 56, kSdb, 0, 1, 2, 8)}));
  EXPECT_EQ(mirror_copies(*c), std::vector<uint32_t>{1});
  Request w = disk_request(sdc, 16 + 8, 4096);  // the second copy of chunk 2
  EXPECT_TRUE(requests_on_volume(w, *c, kDm1).empty());
  auto v = requests_on_volume(w, mirror_view(*c, 1), kDm1);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].sector, 16u);
}

TEST(VolumeStripes, StripesOverStripesAreRefused) {
  auto upper = parse_dm_target("striped", 0, 32, "2 4 253:0 0 8:16 100");
  ASSERT_TRUE(upper.ok());
  auto r = compose(*upper, kDm0, two_stripes());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(r.error().message.find("striped level over a striped device"), std::string::npos);
}

// 64 TiB in chunks of 64 KiB over 4 members, under a crypt volume: four
// extents whatever the size; arithmetic at the far end.
TEST(VolumeStripes, AHugeVolumeStaysOneExtentPerMember) {
  const uint64_t len = uint64_t{1} << 37;
  auto m = parse_dm_target("striped", 0, len, "4 128 8:0 0 8:16 0 8:32 0 8:48 2048");
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto c = compose({{0, len - 4096, kDm0, 4096}}, kDm0, *m);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->size(), 4u);
  EXPECT_EQ(coalesce(*c).size(), 4u);
  EXPECT_EQ(map_range(*c, 0, len).size(), 4u);
  EXPECT_EQ(chunk_pieces(*c, len - 4096 - 256, 256).size(), 2u);
  // The last chunk of the volume is the last chunk of member 3 (8:48).
  const uint64_t last = 2048 + len / 4 - 128;
  EXPECT_EQ(volume_sector_of(*c, make_dev(8, 48), last, 128), len - 4096 - 128);
  auto v = requests_on_volume(disk_request(make_dev(8, 48), last - 64, 65536), *c, kDm1);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].sector, len - 4096 - 128);
  EXPECT_EQ(filter_ranges(*c, make_dev(8, 48), 8).size(), 1u);
  EXPECT_LT(format_extents(*c).size(), 400u);
}

// Attribution takes every member of a striped volume, one piece each with
// its stripe, chunk and phase (dm-crypt over it: the crypt volume's map);
// a striped volume whose members do not all fit is left out whole.
TEST(VolumeStripes, AttributionPiecesHoldEveryStripedMember) {
  std::vector<DevT> left;
  auto crypt = compose({{0, 40, kDm0, 20}}, kDm0, two_stripes());
  ASSERT_TRUE(crypt.ok()) << crypt.error().message;
  auto p = attribution_pieces(
      {{kDm0, two_stripes()}, {kDm1, {{0, 10, kSda, 0}}}, {make_dev(253, 2), *crypt}}, 64, &left);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0], (VolumePiece{kDm0, striped(0, 56, kSda, 1000, 0, 2, 8)}));
  EXPECT_EQ(p[1], (VolumePiece{kDm0, striped(8, 56, kSdb, 0, 1, 2, 8)}));
  EXPECT_EQ(p[2], (VolumePiece{kDm1, {0, 10, kSda, 0}}));
  // Crypt sector 0 is dm-0 sector 20: 4 sectors into chunk 2 (sda's second).
  EXPECT_EQ(p[3], (VolumePiece{make_dev(253, 2), striped(0, 36, kSda, 1012, 0, 2, 8, 4)}));
  EXPECT_EQ(p[4], (VolumePiece{make_dev(253, 2), striped(4, 36, kSdb, 8, 1, 2, 8)}));
  EXPECT_TRUE(left.empty());
  p = attribution_pieces({{kDm1, {{0, 10, kSda, 0}}}, {kDm0, two_stripes()}}, 2, &left);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(left, std::vector<DevT>{kDm0});  // its two members do not fit in the one left
}

}  // namespace
}  // namespace blkrr
