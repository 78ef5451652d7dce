#include "core/trace_header_json.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

// A header or trailer that is not what blkrr writes is bad input, whatever the flaw.
TEST(TraceHeaderJson, MalformedHeadersAndTrailersAreBadInput) {
  EXPECT_EQ(parse_json_unique_keys("{not json").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(parse_json_unique_keys("[1, 2]").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(parse_json_unique_keys(R"({"a": 1, "a": 2})").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(header_from_json(nlohmann::json{{"format", "other"}}).error().kind,
            ErrorKind::kBadInput);
  EXPECT_EQ(
      header_from_json(nlohmann::json::parse(R"({"devices": [{"dev": "8:x"}]})")).error().kind,
      ErrorKind::kBadInput);
  EXPECT_EQ(trailer_counters(R"({"lost": -1})").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(trailer_counters(R"({"lost": "x"})").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(trailer_counters("{").error().kind, ErrorKind::kBadInput);
  auto ok = trailer_counters(R"({"lost": 3})");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->at("lost"), 3u);
}

}  // namespace
}  // namespace blkrr
