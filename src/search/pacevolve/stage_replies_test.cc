#include "search/pacevolve/stage_replies.h"

#include <gtest/gtest.h>

#include <set>

namespace kforge::search::pacevolve {
namespace {

using nlohmann::json;

// OpenAI strict mode: every object lists all its properties as required and
// forbids others, recursively.
void ExpectStrict(const json& schema, const std::string& where) {
  if (schema.contains("type") && schema["type"] == "object") {
    ASSERT_TRUE(schema.contains("properties")) << where;
    ASSERT_EQ(schema.value("additionalProperties", true), false) << where;
    std::set<std::string> props, required;
    for (const auto& [k, v] : schema["properties"].items()) {
      props.insert(k);
      ExpectStrict(v, where + "." + k);
    }
    for (const auto& r : schema["required"]) required.insert(r.get<std::string>());
    EXPECT_EQ(props, required) << where;
  }
  if (schema.contains("items")) ExpectStrict(schema["items"], where + "[]");
}

TEST(StageRepliesTest, SchemasAreStrict) {
  ExpectStrict(IdeaGenerationReply::Schema(), "idea_generation");
  ExpectStrict(ClassificationReply::Schema(), "classification");
  ExpectStrict(SelectionReply::Schema(), "selection");
  ExpectStrict(SummaryReply::Schema(), "summary");
  ExpectStrict(PruningReply::Schema(), "pruning");
  EXPECT_EQ(ClassificationReply::Schema()["properties"]["idea_id"]["type"],
            json::array({"integer", "null"}));
  EXPECT_EQ(IdeaGenerationReply::SchemaName(), "pacevolve_idea_generation");
}

TEST(StageRepliesTest, IdeaGeneration) {
  Result<IdeaGenerationReply> r = IdeaGenerationReply::FromJson(
      json::parse(R"({"ideas": [{"description": "fuse", "reasoning": "fewer launches"}]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->ideas.size(), 1u);
  EXPECT_EQ(r->ideas[0].reasoning, "fewer launches");
  EXPECT_EQ(IdeaGenerationReply::FromJson(r->ToJson())->ideas[0].description, "fuse");
  EXPECT_FALSE(IdeaGenerationReply::FromJson(json::parse(R"({"ideas": "fuse"})")).ok());
  EXPECT_FALSE(
      IdeaGenerationReply::FromJson(json::parse(R"({"ideas": [{"description": 3}]})")).ok());
  EXPECT_FALSE(IdeaGenerationReply::FromJson(json::array()).ok());
}

TEST(StageRepliesTest, Classification) {
  Result<ClassificationReply> merged = ClassificationReply::FromJson(
      json::parse(R"({"idea_exists": true, "idea_id": 3, "description": "Tile by 64."})"));
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->idea_id, 3);
  Result<ClassificationReply> fresh = ClassificationReply::FromJson(
      json::parse(R"({"idea_exists": false, "idea_id": 7, "description": "New."})"));
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->idea_id.has_value());  // an id without a match is dropped
  EXPECT_EQ(ClassificationReply::FromJson(fresh->ToJson())->description, "New.");
  Result<ClassificationReply> bad = ClassificationReply::FromJson(
      json::parse(R"({"idea_exists": true, "idea_id": null, "description": "x"})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_FALSE(ClassificationReply::FromJson(
                   json::parse(R"({"idea_exists": "yes", "idea_id": 1, "description": "x"})"))
                   .ok());
  EXPECT_FALSE(ClassificationReply::FromJson(
                   json::parse(R"({"idea_exists": true, "idea_id": 1.5, "description": "x"})"))
                   .ok());
}

TEST(StageRepliesTest, SelectionSummaryPruning) {
  Result<SelectionReply> s =
      SelectionReply::FromJson(json::parse(R"({"idea_id": 2, "experiment": "block 128"})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->idea_id, 2);
  EXPECT_EQ(SelectionReply::FromJson(s->ToJson())->experiment, "block 128");
  EXPECT_FALSE(
      SelectionReply::FromJson(json::parse(R"({"idea_id": "2", "experiment": "x"})")).ok());
  EXPECT_FALSE(
      SelectionReply::FromJson(json::parse(R"({"idea_id": 99999999999, "experiment": "x"})")).ok());

  Result<SummaryReply> k =
      SummaryReply::FromJson(json::parse(R"({"key_findings": "tiling wins"})"));
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(SummaryReply::FromJson(k->ToJson())->key_findings, "tiling wins");
  EXPECT_FALSE(SummaryReply::FromJson(json::parse(R"({"findings": "x"})")).ok());

  Result<PruningReply> p =
      PruningReply::FromJson(json::parse(R"({"drop_idea_ids": [1, 4], "rationale": "stale"})"));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->drop_idea_ids, (std::vector<int>{1, 4}));
  EXPECT_EQ(PruningReply::FromJson(p->ToJson())->rationale, "stale");
  EXPECT_FALSE(
      PruningReply::FromJson(json::parse(R"({"drop_idea_ids": [1, "4"], "rationale": ""})")).ok());
  EXPECT_FALSE(PruningReply::FromJson(json::parse(R"({"drop_idea_ids": [1]})")).ok());
}

}  // namespace
}  // namespace kforge::search::pacevolve
