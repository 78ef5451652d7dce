// The test validator itself (test_schema_check.h): each keyword accepts what it
// should and names the path of what it rejects.
#include "tests/cli/test_schema_check.h"

#include <gtest/gtest.h>

namespace blkrr::testing {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "test",
  "type": "object",
  "required": ["schema", "n"],
  "additionalProperties": false,
  "properties": {
    "schema": {"const": {"name": "t", "version": 1}},
    "n": {"type": "integer", "minimum": 0},
    "x": {"type": ["number", "null"]},
    "op": {"enum": ["read", "write"]},
    "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}},
    "counters": {"type": "object", "additionalProperties": {"type": "integer"}}
  },
  "$defs": {
    "row": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
  }
})");

json valid() {
  return json::parse(R"({"schema": {"name": "t", "version": 1}, "n": 3, "x": 1.5, "op": "read",
                         "rows": [{"id": "1"}, {"id": "2", "extra": true}],
                         "counters": {"a": 1}})");
}

TEST(SchemaCheck, AcceptsAValidDocument) {
  EXPECT_EQ(schema_violations(kSchema, valid()), std::vector<std::string>{});
  json j = valid();
  j["x"] = nullptr;  // a list of types
  j["n"] = 0;        // minimum is inclusive
  EXPECT_TRUE(schema_violations(kSchema, j).empty());
}

TEST(SchemaCheck, NamesThePathOfEachViolation) {
  json j = valid();
  j["n"] = "3";
  EXPECT_EQ(schema_violations(kSchema, j),
            std::vector<std::string>{"/n: is string, expected \"integer\""});
  j = valid();
  j["n"] = -1;
  EXPECT_EQ(schema_violations(kSchema, j), std::vector<std::string>{"/n: -1 is below 0"});
  j = valid();
  j["x"] = "1";
  EXPECT_EQ(schema_violations(kSchema, j).size(), 1u);
  j = valid();
  j["op"] = "flush";
  EXPECT_EQ(schema_violations(kSchema, j),
            std::vector<std::string>{"/op: \"flush\" is not one of [\"read\",\"write\"]"});
  j = valid();
  j["rows"][1]["id"] = 2;
  EXPECT_EQ(schema_violations(kSchema, j),
            std::vector<std::string>{"/rows/1/id: is integer, expected \"string\""});
  j = valid();
  j["rows"][0].erase("id");
  EXPECT_EQ(schema_violations(kSchema, j),
            std::vector<std::string>{"/rows/0: lacks the required key id"});
  j = valid();
  j["counters"]["b"] = 0.5;
  EXPECT_EQ(schema_violations(kSchema, j),
            std::vector<std::string>{"/counters/b: is number, expected \"integer\""});
}

TEST(SchemaCheck, RequiredKeysAndUnlistedKeys) {
  json j = valid();
  j.erase("n");
  j["surprise"] = 1;
  EXPECT_EQ(schema_violations(kSchema, j),
            (std::vector<std::string>{"/: lacks the required key n",
                                      "/: has the key surprise that the schema does not list"}));
  j = valid();
  j["schema"]["version"] = 2;
  EXPECT_EQ(schema_violations(kSchema, j).size(), 1u);
}

// An integer is a number; a number is not an integer.
TEST(SchemaCheck, IntegersAreNumbers) {
  json s = {{"type", "number"}};
  EXPECT_TRUE(schema_violations(s, 3).empty());
  EXPECT_TRUE(schema_violations(s, 3.5).empty());
  EXPECT_FALSE(schema_violations({{"type", "integer"}}, 3.5).empty());
  EXPECT_TRUE(schema_violations({{"type", "integer"}}, uint64_t{1} << 63).empty());
}

// A keyword the validator does not implement is an error, not a silent pass.
TEST(SchemaCheck, UnsupportedKeywordsAndRefsAreErrors) {
  EXPECT_EQ(schema_violations({{"pattern", "^a"}}, "b"),
            std::vector<std::string>{
                "/: schema keyword 'pattern' is not supported by the test validator"});
  EXPECT_FALSE(schema_violations({{"$ref", "other.json#/x"}}, 1).empty());
  EXPECT_FALSE(schema_violations({{"$ref", "#/$defs/missing"}}, 1).empty());
}

}  // namespace
}  // namespace blkrr::testing
