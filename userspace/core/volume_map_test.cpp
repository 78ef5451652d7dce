#include "core/volume_map.h"

#include <gtest/gtest.h>

#include "core/volume_stack.h"

namespace blkrr {
namespace {

const DevT kSda = make_dev(8, 0);
const DevT kSdb = make_dev(8, 16);
const DevT kSda2 = make_dev(8, 2);
const DevT kDm0 = make_dev(253, 0);

TEST(VolumeMap, LinearTargetIsItsDeviceAndOffset) {
  auto e = parse_dm_target("linear", 0, 409600, "8:2 2048");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(*e, (ExtentMap{{0, 409600, kSda2, 2048}}));
  auto f = parse_dm_target("linear", 409600, 8, "  8:16   0 ");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (ExtentMap{{409600, 8, kSdb, 0}}));
}

// A crypt table holds the key: only the device and offset are read, and no
// message carries any of the parameters.
TEST(VolumeMap, CryptTargetKeepsDeviceAndOffsetNeverTheKey) {
  const char* key = "0123456789abcdef0123456789abcdef";
  auto e = parse_dm_target(
      "crypt", 0, 1000, std::string("aes-xts-plain64 ") + key + " 0 253:0 4096 1 allow_discards");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(*e, (ExtentMap{{0, 1000, kDm0, 4096}}));
  auto bad = parse_dm_target("crypt", 0, 1000, std::string("aes-xts-plain64 ") + key + " 0 x y");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find(key), std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().message.find("aes"), std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
}

TEST(VolumeMap, NonLinearTargetsAreRefusedByName) {
  for (const char* type : {"raid", "thin", "snapshot", "cache", "mirror"}) {
    auto s = parse_dm_target(type, 0, 1000, "2 128 8:0 0 8:16 0");
    ASSERT_FALSE(s.ok()) << type;
    EXPECT_EQ(s.error().kind, ErrorKind::kUnsupported);
    EXPECT_NE(s.error().message.find(std::string("'") + type + "'"), std::string::npos);
    EXPECT_NE(s.error().message.find("record the devices below it"), std::string::npos);
  }
  EXPECT_FALSE(parse_dm_target("linear", 0, 10, "8:0").ok());     // no offset
  EXPECT_FALSE(parse_dm_target("linear", 0, 10, "sda 0").ok());   // not MAJ:MIN
  EXPECT_FALSE(parse_dm_target("linear", 0, 10, "8:0 -1").ok());  // not a number
  EXPECT_FALSE(parse_dm_target("linear", 10, 10, "8:0 18446744073709551610").ok());
}

// Two segments: volume 0..100 on sda at 1000, volume 100..150 on sdb at 0.
ExtentMap two_segments() {
  return {{0, 100, kSda, 1000}, {100, 50, kSdb, 0}};
}

TEST(VolumeMap, RangeInsideOneSegmentMapsWithItsOffset) {
  EXPECT_EQ(map_range(two_segments(), 10, 8), (ExtentMap{{10, 8, kSda, 1010}}));
  EXPECT_EQ(map_range(two_segments(), 100, 50), (ExtentMap{{100, 50, kSdb, 0}}));
}

TEST(VolumeMap, RangeCrossingSegmentsIsSplitAtTheBoundary) {
  EXPECT_EQ(map_range(two_segments(), 96, 8), (ExtentMap{{96, 4, kSda, 1096}, {100, 4, kSdb, 0}}));
  EXPECT_TRUE(map_range(two_segments(), 150, 8).empty());  // past the end
  EXPECT_EQ(map_range(two_segments(), 146, 8), (ExtentMap{{146, 4, kSdb, 46}}));
}

TEST(VolumeMap, DiskSectorsMapBackToTheVolume) {
  EXPECT_EQ(volume_sector_of(two_segments(), kSda, 1000, 8), 0u);
  EXPECT_EQ(volume_sector_of(two_segments(), kSda, 1092, 8), 92u);
  EXPECT_EQ(volume_sector_of(two_segments(), kSdb, 42, 8), 142u);
  EXPECT_EQ(volume_sector_of(two_segments(), kSda, 999, 1), std::nullopt);   // before
  EXPECT_EQ(volume_sector_of(two_segments(), kSda, 1096, 8), std::nullopt);  // runs past
  EXPECT_EQ(volume_sector_of(two_segments(), kSda2, 1000, 8), std::nullopt);
}

// dm-0 (linear on sda2 at 2048) under a crypt volume at offset 4096 of dm-0,
// sda2 starting at sector 2048 of sda: three levels to the disk.
TEST(VolumeMap, NestedLevelsComposeDownToTheDisk) {
  ExtentMap crypt = {{0, 1000, kDm0, 4096}};
  ExtentMap dm0 = {{0, 3000, kSda2, 2048}, {3000, 5000, kSdb, 0}};
  ExtentMap sda2 = {{0, 100000, kSda, 2048}};
  auto a = compose(crypt, kDm0, dm0);  // 4096.. is in dm-0's second segment
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(*a, (ExtentMap{{0, 1000, kSdb, 1096}}));
  ExtentMap crypt2 = {{0, 1000, kDm0, 2500}};  // crosses dm-0's segments
  auto b = compose(crypt2, kDm0, dm0);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (ExtentMap{{0, 500, kSda2, 4548}, {500, 500, kSdb, 0}}));
  auto c = compose(*b, kSda2, sda2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, (ExtentMap{{0, 500, kSda, 6596}, {500, 500, kSdb, 0}}));
  EXPECT_EQ(volume_sector_of(*c, kSda, 6596 + 10, 8), 10u);
  EXPECT_EQ(volume_sector_of(*c, kSdb, 20, 8), 520u);
}

TEST(VolumeMap, ComposeRefusesAPieceTheDeviceBelowDoesNotHold) {
  ExtentMap upper = {{0, 1000, kDm0, 7500}};
  ExtentMap dm0 = {{0, 8000, kSda, 0}};
  auto r = compose(upper, kDm0, dm0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("volume sectors 0..1000 lie on 253:0 sectors 7500..8500"),
            std::string::npos)
      << r.error().message;
}

TEST(VolumeMap, CoalesceJoinsOnlyContinuingExtents) {
  ExtentMap m = {{0, 10, kSda, 100}, {10, 10, kSda, 110}, {20, 10, kSda, 200}, {30, 5, kSdb, 210}};
  EXPECT_EQ(coalesce(m), (ExtentMap{{0, 20, kSda, 100}, {20, 10, kSda, 200}, {30, 5, kSdb, 210}}));
}

// More extents on one disk than the capture's filter holds: the smallest
// gaps are closed, every extent stays covered.
TEST(VolumeMap, FilterRangesCloseTheSmallestGaps) {
  ExtentMap m;
  for (uint64_t i = 0; i < 5; ++i) m.push_back({i * 10, 10, kSda, 1000 * i + (i == 3 ? 5 : 0)});
  m.push_back({50, 10, kSdb, 0});
  auto all = filter_ranges(m, kSda, 8);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[3], (std::pair<uint64_t, uint64_t>{3005, 3015}));
  auto three = filter_ranges(m, kSda, 3);
  // Gaps: 990, 990, 995, 985 -> close 3015..4000, then 10..1000 (the first of two 990s).
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0], (std::pair<uint64_t, uint64_t>{0, 1010}));
  EXPECT_EQ(three[1], (std::pair<uint64_t, uint64_t>{2000, 2010}));
  EXPECT_EQ(three[2], (std::pair<uint64_t, uint64_t>{3005, 4010}));
  auto touching = filter_ranges({{0, 10, kSda, 0}, {10, 10, kSda, 10}}, kSda, 8);
  EXPECT_EQ(touching.size(), 1u);
  EXPECT_TRUE(filter_ranges(m, kSda2, 8).empty());
}

Request disk_request(DevT dev, uint64_t sector, uint32_t bytes) {
  Request r;
  r.dev = r.part = dev;
  r.sector = sector;
  r.bytes = bytes;
  r.disk_time_ns = 1000;
  r.pid = 42;
  return r;
}

TEST(VolumeMap, RequestsTakeTheVolumesDeviceAndSectors) {
  auto v = requests_on_volume(disk_request(kSdb, 10, 4096), two_segments(), kDm0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].dev, kDm0);
  EXPECT_EQ(v[0].part, kDm0);
  EXPECT_EQ(v[0].sector, 110u);
  EXPECT_EQ(v[0].bytes, 4096u);
  EXPECT_EQ(v[0].disk_time_ns, 1000u);
  EXPECT_EQ(v[0].pid, 42u);
  EXPECT_TRUE(requests_on_volume(disk_request(kSda, 0, 4096), two_segments(), kDm0).empty());
  auto flush = requests_on_volume(disk_request(kSda, 1000, 0), two_segments(), kDm0);
  ASSERT_EQ(flush.size(), 1u);
  EXPECT_EQ(flush[0].sector, 0u);
  EXPECT_EQ(flush[0].bytes, 0u);
}

// Two places of the volume side by side on the disk, one disk request over
// both (bios merged): two records in volume order, bytes and disk time shared.
TEST(VolumeMap, ARequestAcrossExtentsBecomesOneRecordPerPlace) {
  ExtentMap m = {{0, 8, kSda, 108}, {100, 8, kSda, 100}};
  auto v = requests_on_volume(disk_request(kSda, 100, 8192), m, kDm0);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].sector, 0u);
  EXPECT_EQ(v[0].bytes, 4096u);
  EXPECT_EQ(v[1].sector, 100u);
  EXPECT_EQ(v[1].bytes, 4096u);
  EXPECT_EQ(v[0].disk_time_ns + v[1].disk_time_ns, 1000u);
  EXPECT_EQ(v[0].disk_time_ns, 500u);
}

// A mirror: writes through the first member only, reads through any; a
// volume composed onto a mirror keeps the members' roles.
TEST(VolumeMap, MirrorTakesWritesFromTheFirstMemberReadsFromAny) {
  ExtentMap mirror = {{0, 1000, kSda, 2048, false}, {0, 1000, kSdb, 2048, true, 1}};
  Request w = disk_request(kSdb, 2048 + 8, 4096);
  w.op = Op::kWrite;
  EXPECT_TRUE(requests_on_volume(w, mirror, kDm0).empty());
  w.dev = kSda;
  ASSERT_EQ(requests_on_volume(w, mirror, kDm0).size(), 1u);
  EXPECT_EQ(requests_on_volume(w, mirror, kDm0)[0].sector, 8u);
  Request r = disk_request(kSdb, 2048 + 8, 4096);
  ASSERT_EQ(requests_on_volume(r, mirror, kDm0).size(), 1u);
  EXPECT_EQ(requests_on_volume(r, mirror, kDm0)[0].sector, 8u);
  auto up = compose({{0, 100, kDm0, 500}}, kDm0, mirror);
  ASSERT_TRUE(up.ok()) << up.error().message;
  EXPECT_EQ(*up, (ExtentMap{{0, 100, kSda, 2548, false}, {0, 100, kSdb, 2548, true, 1}}));
  EXPECT_EQ(format_extents(*up), "0+100>8:0@2548,0+100>8:16@2548(reads)");
}

// Each member of a mirror as the one that takes the writes, in turn: a
// write on the second member maps back to the volume only in its view.
TEST(VolumeMap, MirrorViewsGiveEachMemberTheWrites) {
  ExtentMap mirror = {{0, 1000, kSda, 2048, false}, {0, 1000, kSdb, 16, true, 1}};
  EXPECT_EQ(mirror_copies(mirror), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(mirror_copies(two_segments()).empty());
  EXPECT_EQ(mirror_view(mirror, 0), mirror);
  ExtentMap second = mirror_view(mirror, 1);
  EXPECT_EQ(second, (ExtentMap{{0, 1000, kSda, 2048, true}, {0, 1000, kSdb, 16, false, 1}}));
  Request w = disk_request(kSdb, 16 + 40, 4096);
  w.op = Op::kWrite;
  auto v = requests_on_volume(w, second, kDm0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].sector, 40u);
  w.dev = kSda;
  w.sector = 2048 + 40;
  EXPECT_TRUE(requests_on_volume(w, second, kDm0).empty());
}

// A linear volume of two segments on a mirror whose second member lies in
// two pieces: every piece keeps its member's copy, the copies of two
// mirrors stacked combine.
TEST(VolumeMap, CopiesFollowTheMembersThroughLevels) {
  ExtentMap lv = {{0, 100, kDm0, 500}, {100, 100, kDm0, 0}};
  ExtentMap md = {
      {0, 1000, kSda, 16, false}, {0, 600, kSdb, 0, true, 1}, {600, 400, kSda2, 0, true, 1}};
  auto c = compose(lv, kDm0, md);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, (ExtentMap{{0, 100, kSda, 516, false},
                           {0, 100, kSdb, 500, true, 1},
                           {100, 100, kSda, 16, false},
                           {100, 100, kSdb, 0, true, 1}}));
  ExtentMap across = {{0, 200, kDm0, 500}};  // crosses the second member's pieces
  auto d = compose(across, kDm0, md);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, (ExtentMap{{0, 200, kSda, 516, false},
                           {0, 100, kSdb, 500, true, 1},
                           {100, 100, kSda2, 0, true, 1}}));
  EXPECT_EQ(mirror_copies(*d), (std::vector<uint32_t>{1}));
  ExtentMap upper_mirror = {{0, 200, kDm0, 500, false}, {0, 200, kDm0, 500, true, 1}};
  auto e = compose(upper_mirror, kDm0, md);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(mirror_copies(*e), (std::vector<uint32_t>{1, kMirrorCopyBase, kMirrorCopyBase + 1}));
}

// A volume's map onto a disk range by range: the offsets of each segment,
// a range at the end of a segment, and nothing past the volume.
TEST(VolumeMap, RangesMapThroughEveryOffset) {
  ExtentMap m = {{0, 64, kSda, 4096}, {64, 64, kSdb, 100}, {128, 32, kSda, 0}};
  EXPECT_EQ(map_range(m, 60, 72),
            (ExtentMap{{60, 4, kSda, 4156}, {64, 64, kSdb, 100}, {128, 4, kSda, 0}}));
  EXPECT_EQ(map_range(m, 159, 8), (ExtentMap{{159, 1, kSda, 31}}));
  EXPECT_TRUE(map_range(m, 160, 8).empty());
  EXPECT_EQ(volume_sector_of(m, kSda, 0, 32), 128u);
  EXPECT_EQ(volume_sector_of(m, kSda, 4096 + 63, 1), 63u);
  EXPECT_EQ(volume_sector_of(m, kSdb, 164, 8), std::nullopt);  // past the segment
}

// The capture's selections of a volume: per disk below it, its pieces as
// sector ranges named by the volume (a mirror's members each on their disk).
TEST(VolumeMap, SelectionsArePerDiskRangesNamedByTheVolume) {
  VolumeMap v;
  v.volume = kDm0;
  v.name = "dm-0";
  v.extents = {{0, 100, kSda, 1000}, {100, 50, kSdb, 0}, {150, 10, kSda, 5000}};
  auto sel = volume_selections(v, "vg/data", 8);
  ASSERT_EQ(sel.size(), 3u);
  EXPECT_EQ(sel[0].disk, kSda);
  ASSERT_TRUE(sel[0].part);
  EXPECT_EQ(sel[0].part->dev, kDm0);
  EXPECT_EQ(sel[0].part->name, "dm-0");
  EXPECT_EQ(sel[0].part->start_sector, 1000u);
  EXPECT_EQ(sel[0].part->nr_sectors, 100u);
  EXPECT_EQ(sel[1].disk, kSda);
  EXPECT_EQ(sel[1].part->start_sector, 5000u);
  EXPECT_EQ(sel[2].disk, kSdb);
  EXPECT_EQ(sel[2].part->nr_sectors, 50u);
  EXPECT_EQ(sel[2].spec, "vg/data");
  auto one = volume_selections(v, "vg/data", 1);  // the gap on sda closed
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].part->start_sector, 1000u);
  EXPECT_EQ(one[0].part->nr_sectors, 4010u);
}

TEST(VolumeMap, FormatsAsOneLine) {
  EXPECT_EQ(format_extents(two_segments()), "0+100>8:0@1000,100+50>8:16@0");
  EXPECT_EQ(format_extents({}), "");
}

// Attribution through the stack: every piece of each volume (a mirror's
// members all, since a write reaches each), joined where it continues on the
// disk; a volume given twice once; one that does not fit left out whole.
TEST(VolumeMap, AttributionPiecesKeepMirrorsAndLeaveOutWholeVolumes) {
  const DevT kMd0 = make_dev(9, 0), kDm1 = make_dev(253, 1);
  ExtentMap linear = {{0, 100, kSda, 1000}, {100, 50, kSda, 1100}, {150, 10, kSdb, 0}};
  ExtentMap mirror = {{0, 500, kSda, 2048}, {0, 500, kSdb, 2048, true}};
  ExtentMap big = {{0, 1, kSda, 0}, {1, 1, kSdb, 0}, {2, 1, kSda, 9}};
  std::vector<DevT> left;
  auto p =
      attribution_pieces({{kDm0, linear}, {kMd0, mirror}, {kDm0, linear}, {kDm1, big}}, 5, &left);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], (VolumePiece{kDm0, {0, 150, kSda, 1000}}));  // joined
  EXPECT_EQ(p[1], (VolumePiece{kDm0, {150, 10, kSdb, 0}}));
  EXPECT_EQ(p[2], (VolumePiece{kMd0, {0, 500, kSda, 2048}}));
  EXPECT_EQ(p[3], (VolumePiece{kMd0, {0, 500, kSdb, 2048, true}}));  // the other member
  EXPECT_EQ(left, std::vector<DevT>{kDm1});  // 3 more pieces do not fit in 5
  left.clear();
  EXPECT_EQ(attribution_pieces({{kDm1, big}}, 3, &left).size(), 3u);
  EXPECT_TRUE(left.empty());
  EXPECT_TRUE(attribution_pieces({}, 64, nullptr).empty());
}

}  // namespace
}  // namespace blkrr
