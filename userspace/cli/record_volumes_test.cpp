// record -d VOLUME's records: a striped volume's member requests written as
// one record per chunk in the volume's sectors, counted.
#include "cli/record_volumes.h"

#include <gtest/gtest.h>

namespace blkrr::cli {
namespace {

const DevT kSda = make_dev(8, 0);
const DevT kSdb = make_dev(8, 16);
const DevT kSdc = make_dev(8, 32);
const DevT kDm0 = make_dev(253, 0);

// 64 sectors in chunks of 8 over sda at 1000 and sdb at 0; with `mirror`,
// sdc at 16 holds a second copy of stripe 0 (reads only).
VolumeMap striped_volume(bool mirror) {
  VolumeMap v;
  v.volume = kDm0;
  v.name = "dm-0";
  auto m = parse_dm_target("striped", 0, 64, "2 8 8:0 1000 8:16 0");
  EXPECT_TRUE(m.ok());
  if (m.ok()) v.extents = *m;
  if (mirror) {
    Extent copy = v.extents[0];
    copy.dev = kSdc;
    copy.dev_start = 16;
    copy.reads_only = true;
    copy.copy = 1;
    v.extents.push_back(copy);
  }
  v.nr_sectors = 64;
  return v;
}

Request disk_request(DevT dev, uint64_t sector, uint32_t bytes, Op op) {
  Request r;
  r.dev = r.part = dev;
  r.sector = sector;
  r.bytes = bytes;
  r.op = op;
  r.disk_time_ns = 900;
  return r;
}

struct Recorded {
  VolumeRecords records;
  std::vector<Request> out;
  explicit Recorded(const VolumeMap& v) : records({v}, config(v)) {}
  static CaptureConfig config(const VolumeMap& v) {
    CaptureConfig cfg;
    cfg.devices = volume_selections(v, "dm-0", 8);
    return cfg;
  }
  void add(const Request& r) {
    records.translate(r, [&](const Request& x) { out.push_back(x); });
  }
  Counters counters() const {
    Counters c;
    records.add_counters(c);
    return c;
  }
};

TEST(VolumeRecords, AMemberRequestOverChunksIsOneRecordPerChunk) {
  Recorded rec(striped_volume(false));
  ASSERT_TRUE(rec.records.active());
  rec.add(disk_request(kSdb, 4, 16 * 512, Op::kWrite));  // end of chunk 1, chunk 3, chunk 5
  rec.add(disk_request(kSda, 1008, 4096, Op::kRead));    // chunk 2
  ASSERT_EQ(rec.out.size(), 4u);
  EXPECT_EQ(rec.out[0].sector, 12u);
  EXPECT_EQ(rec.out[1].sector, 24u);
  EXPECT_EQ(rec.out[2].sector, 40u);
  EXPECT_EQ(rec.out[2].bytes, 2048u);
  EXPECT_EQ(rec.out[0].disk_time_ns + rec.out[1].disk_time_ns + rec.out[2].disk_time_ns, 900u);
  EXPECT_EQ(rec.out[3].sector, 16u);
  for (const auto& r : rec.out) EXPECT_EQ(r.dev, kDm0);
  auto c = rec.counters();
  EXPECT_EQ(c["volume_split"], 2u);
  EXPECT_EQ(c.count("volume_outside"), 0u);
}

// A write to the second copy of a mirrored stripe is counted, not written;
// a read from it is the volume's; a request past the member's share is outside.
TEST(VolumeRecords, MirroredStripeCopiesAndOutsideAreCounted) {
  Recorded rec(striped_volume(true));
  rec.add(disk_request(kSdc, 16 + 8, 4096, Op::kWrite));
  EXPECT_TRUE(rec.out.empty());
  rec.add(disk_request(kSdc, 16 + 8, 4096, Op::kRead));
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(rec.out[0].sector, 16u);
  rec.add(disk_request(kSdb, 32, 4096, Op::kRead));
  rec.add(disk_request(kSdc, 16 + 40, 4096, Op::kWrite));  // past the copy's 32 sectors
  EXPECT_EQ(rec.out.size(), 1u);
  auto c = rec.counters();
  EXPECT_EQ(c["volume_mirror_copies"], 1u);
  EXPECT_EQ(c["volume_outside"], 2u);
}

}  // namespace
}  // namespace blkrr::cli
