#include "llm/json_schema.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

using nlohmann::json;

const json kIdeasSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "ideas": {
      "type": "array", "minItems": 1, "maxItems": 3,
      "items": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "minLength": 3},
          "kind": {"enum": ["memory", "compute", "launch"]},
          "gain": {"type": "number", "minimum": 0, "maximum": 1},
          "priority": {"type": "integer"}
        },
        "required": ["title", "kind", "gain"],
        "additionalProperties": false
      }
    },
    "note": {"type": ["string", "null"], "description": "free text"}
  },
  "required": ["ideas", "note"],
  "additionalProperties": false
})");

TEST(JsonSchema, AcceptsAValidValue) {
  ASSERT_TRUE(CheckSchema(kIdeasSchema).ok());
  json v = json::parse(R"({"ideas": [{"title": "tile it", "kind": "memory", "gain": 0.5,
                                      "priority": 2}], "note": null})");
  EXPECT_TRUE(ValidateAgainstSchema(v, kIdeasSchema).empty());
  v["ideas"][0]["priority"] = 3.0;  // a whole float is an integer
  EXPECT_TRUE(ValidateAgainstSchema(v, kIdeasSchema).empty());
}

TEST(JsonSchema, ReportsEveryViolationWithItsPath) {
  json v = json::parse(R"({"ideas": [{"title": "ab", "kind": "magic", "gain": 1.5,
                                      "priority": 1.5, "extra": 1},
                                     {"kind": "memory", "gain": -1}],
                           "other": true})");
  auto errors = ValidateAgainstSchema(v, kIdeasSchema);
  auto has = [&](const std::string& needle) {
    for (const auto& e : errors) {
      if (e.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("/: missing required property 'note'")) << ::testing::PrintToString(errors);
  EXPECT_TRUE(has("/: property 'other' is not allowed"));
  EXPECT_TRUE(has("/ideas/0/title: string of length 2 is shorter than 3"));
  EXPECT_TRUE(has("/ideas/0/kind: \"magic\" is not one of"));
  EXPECT_TRUE(has("/ideas/0/gain: 1.5 is above the maximum 1"));
  EXPECT_TRUE(has("/ideas/0/priority: expected integer, got number"));
  EXPECT_TRUE(has("/ideas/0: property 'extra' is not allowed"));
  EXPECT_TRUE(has("/ideas/1: missing required property 'title'"));
  EXPECT_TRUE(has("/ideas/1/gain: -1 is below the minimum 0"));
  EXPECT_EQ(errors.size(), 9u) << ::testing::PrintToString(errors);
}

TEST(JsonSchema, ArrayBoundsAndTypes) {
  json too_many = {{"ideas", json::array()}, {"note", "x"}};
  for (int i = 0; i < 4; ++i)
    too_many["ideas"].push_back({{"title", "abc"}, {"kind", "compute"}, {"gain", 0}});
  auto errors = ValidateAgainstSchema(too_many, kIdeasSchema);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "/ideas: 4 items, more than the maximum 3");
  json none = {{"ideas", json::array()}, {"note", "x"}};
  EXPECT_EQ(ValidateAgainstSchema(none, kIdeasSchema)[0],
            "/ideas: 0 items, fewer than the minimum 1");
  auto wrong = ValidateAgainstSchema(json::array(), kIdeasSchema);
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0], "/: expected object, got array");
  EXPECT_FALSE(ValidateAgainstSchema(json{{"ideas", 1}, {"note", 2}}, kIdeasSchema).empty());
}

TEST(JsonSchema, AnyOfConstExclusiveBoundsAndSchemaValuedAdditionalProperties) {
  json schema = json::parse(R"({
    "type": "object",
    "additionalProperties": {"type": "integer", "exclusiveMinimum": 0},
    "properties": {"v": {"anyOf": [{"type": "string"}, {"const": 3}]}}
  })");
  ASSERT_TRUE(CheckSchema(schema).ok());
  EXPECT_TRUE(ValidateAgainstSchema(json{{"v", "s"}, {"a", 1}}, schema).empty());
  EXPECT_TRUE(ValidateAgainstSchema(json{{"v", 3}}, schema).empty());
  EXPECT_EQ(ValidateAgainstSchema(json{{"v", 4}}, schema)[0],
            "/v: matches none of the anyOf alternatives");
  EXPECT_EQ(ValidateAgainstSchema(json{{"a", 0}}, schema)[0], "/a: 0 is not above 0");
}

TEST(JsonSchema, CountsStringLengthInCodePoints) {
  json schema = {{"type", "string"}, {"maxLength", 2}};
  EXPECT_TRUE(ValidateAgainstSchema(json("é€"), schema).empty());
  EXPECT_FALSE(ValidateAgainstSchema(json("abc"), schema).empty());
}

TEST(JsonSchema, RefusesKeywordsItDoesNotEnforce) {
  auto st = CheckSchema(
      json::parse(R"({"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}})"));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("/properties/s"), std::string::npos);
  EXPECT_NE(st.error().message.find("'pattern'"), std::string::npos);
  EXPECT_FALSE(CheckSchema(json{{"type", "float"}}).ok());
  EXPECT_FALSE(CheckSchema(json{{"required", "x"}}).ok());
  EXPECT_FALSE(CheckSchema(json{{"minItems", -1}}).ok());
  EXPECT_FALSE(CheckSchema(json{{"enum", json::array()}}).ok());
  EXPECT_FALSE(CheckSchema(json("object")).ok());
  EXPECT_TRUE(CheckSchema(json{{"$schema", "x"}, {"title", "t"}, {"default", 1}}).ok());
}

}  // namespace
}  // namespace kforge::llm
