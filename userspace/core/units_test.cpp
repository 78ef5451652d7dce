#include "core/units.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

TEST(Units, BytesInBinaryUnits) {
  EXPECT_EQ(fmt_bytes(512), "512 B");
  EXPECT_EQ(fmt_bytes(4096), "4.00 KiB");
  EXPECT_EQ(fmt_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
  EXPECT_EQ(byte_scale(5e12).unit, "TiB");
  EXPECT_EQ(byte_scale(0).unit, "B");
}

TEST(Units, Durations) {
  EXPECT_EQ(fmt_duration_ns(850'000), "850 us");
  EXPECT_EQ(fmt_duration_ns(1'234'567), "1.23 ms");
  EXPECT_EQ(fmt_duration_ns(2.5e9), "2.50 s");
  EXPECT_EQ(fmt_elapsed(45.25), "45.2 s");
  EXPECT_EQ(fmt_elapsed(725), "12 min 5 s");
  EXPECT_EQ(fmt_elapsed(30 * 3600 + 60), "30 h 1 min");
  EXPECT_EQ(fmt_elapsed(120), "2 min");
  EXPECT_EQ(fmt_elapsed(5), "5 s");
  EXPECT_EQ(fmt_elapsed(0.5), "0.500 s");
}

TEST(Units, PowerOfTwoSizeLabels) {
  EXPECT_EQ(size_label(512), "512");
  EXPECT_EQ(size_label(4096), "4K");
  EXPECT_EQ(size_label(128 * 1024), "128K");
  EXPECT_EQ(size_label(1 << 20), "1M");
  EXPECT_EQ(size_label(2ull << 30), "2G");
}

TEST(Units, UtcTime) {
  EXPECT_EQ(fmt_utc(0), "1970-01-01 00:00:00 UTC");
}

TEST(Units, StrfmtHasNoLengthLimit) {
  EXPECT_EQ(strfmt("%d %s", 42, "x"), "42 x");
  const std::string big(1000, 'a');
  EXPECT_EQ(strfmt("<%s>", big.c_str()), "<" + big + ">");
  EXPECT_EQ(strfmt("%s", ""), "");
}

}  // namespace
}  // namespace blkrr
