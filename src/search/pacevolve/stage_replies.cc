#include "search/pacevolve/stage_replies.h"

#include <fmt/format.h>

#include <cstdint>

namespace kforge::search::pacevolve {
namespace {

using nlohmann::json;

json StringProperty(std::string_view description) {
  return {{"type", "string"}, {"description", description}};
}

json IntegerProperty(std::string_view description) {
  return {{"type", "integer"}, {"description", description}};
}

// A strict-mode object: every listed property is required, nothing else allowed.
json StrictObject(json properties) {
  json required = json::array();
  for (const auto& [name, _] : properties.items()) required.push_back(name);
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

// Shape checks shared by the FromJson functions: the LLM layer validates the
// schema too, but a reply can also come from a replayed run or a test.
Status ExpectObject(const json& j, std::string_view stage) {
  if (!j.is_object()) return Error::BadInput(fmt::format("{} reply must be a JSON object", stage));
  return Status::Ok();
}

Result<std::string> RequiredString(const json& j, const char* key, std::string_view stage) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return Error::BadInput(fmt::format("{} reply: '{}' must be a string", stage, key));
  }
  return it->get<std::string>();
}

Result<int> RequiredInt(const json& j, const char* key, std::string_view stage) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    return Error::BadInput(fmt::format("{} reply: '{}' must be an integer", stage, key));
  }
  const int64_t v = it->get<int64_t>();
  if (v < INT32_MIN || v > INT32_MAX) {
    return Error::BadInput(fmt::format("{} reply: '{}' is out of range", stage, key));
  }
  return static_cast<int>(v);
}

}  // namespace

json IdeaGenerationReply::Schema() {
  json idea = StrictObject(
      {{"description", StringProperty("The idea: a direction for making the kernel faster.")},
       {"reasoning",
        StringProperty("Why it should help and why the experiment is worth running.")}});
  return StrictObject(
      {{"ideas", {{"type", "array"}, {"description", "The proposed ideas."}, {"items", idea}}}});
}

Result<IdeaGenerationReply> IdeaGenerationReply::FromJson(const json& j) {
  constexpr std::string_view kStage = "idea generation";
  if (Status s = ExpectObject(j, kStage); !s.ok()) return s.error();
  auto it = j.find("ideas");
  if (it == j.end() || !it->is_array()) {
    return Error::BadInput("idea generation reply: 'ideas' must be an array");
  }
  IdeaGenerationReply r;
  for (const json& item : *it) {
    if (Status s = ExpectObject(item, kStage); !s.ok()) return s.error();
    Result<std::string> d = RequiredString(item, "description", kStage);
    if (!d.ok()) return d.error();
    Result<std::string> why = RequiredString(item, "reasoning", kStage);
    if (!why.ok()) return why.error();
    r.ideas.push_back({std::move(*d), std::move(*why)});
  }
  return r;
}

json IdeaGenerationReply::ToJson() const {
  json ideas_json = json::array();
  for (const IdeaProposal& p : ideas) {
    ideas_json.push_back({{"description", p.description}, {"reasoning", p.reasoning}});
  }
  return {{"ideas", ideas_json}};
}

json ClassificationReply::Schema() {
  return StrictObject(
      {{"idea_exists",
        {{"type", "boolean"},
         {"description", "True when the proposal belongs to an idea already in the pool."}}},
       {"idea_id",
        {{"type", json::array({"integer", "null"})},
         {"description", "Id of the matching idea when idea_exists, otherwise null."}}},
       {"description",
        StringProperty("When idea_exists: the idea's updated description merging the proposal, "
                       "at most two sentences. Otherwise: the new idea's description.")}});
}

Result<ClassificationReply> ClassificationReply::FromJson(const json& j) {
  constexpr std::string_view kStage = "classification";
  if (Status s = ExpectObject(j, kStage); !s.ok()) return s.error();
  ClassificationReply r;
  auto exists = j.find("idea_exists");
  if (exists == j.end() || !exists->is_boolean()) {
    return Error::BadInput("classification reply: 'idea_exists' must be a boolean");
  }
  r.idea_exists = exists->get<bool>();
  auto id = j.find("idea_id");
  if (id == j.end() || !(id->is_null() || id->is_number_integer())) {
    return Error::BadInput("classification reply: 'idea_id' must be an integer or null");
  }
  if (id->is_number_integer()) {
    Result<int> v = RequiredInt(j, "idea_id", kStage);
    if (!v.ok()) return v.error();
    r.idea_id = *v;
  }
  if (r.idea_exists && !r.idea_id) {
    return Error::BadInput("classification reply: 'idea_exists' is true but 'idea_id' is null");
  }
  if (!r.idea_exists) r.idea_id.reset();  // an id without a match means nothing
  Result<std::string> d = RequiredString(j, "description", kStage);
  if (!d.ok()) return d.error();
  r.description = std::move(*d);
  return r;
}

json ClassificationReply::ToJson() const {
  return {{"idea_exists", idea_exists},
          {"idea_id", idea_id ? json(*idea_id) : json(nullptr)},
          {"description", description}};
}

json SelectionReply::Schema() {
  return StrictObject(
      {{"idea_id", IntegerProperty("Id of an idea in the pool; no other id is valid.")},
       {"experiment", StringProperty("A concrete, concise description of the experiment to run "
                                     "under that idea.")}});
}

Result<SelectionReply> SelectionReply::FromJson(const json& j) {
  constexpr std::string_view kStage = "selection";
  if (Status s = ExpectObject(j, kStage); !s.ok()) return s.error();
  Result<int> id = RequiredInt(j, "idea_id", kStage);
  if (!id.ok()) return id.error();
  Result<std::string> e = RequiredString(j, "experiment", kStage);
  if (!e.ok()) return e.error();
  return SelectionReply{*id, std::move(*e)};
}

json SelectionReply::ToJson() const {
  return {{"idea_id", idea_id}, {"experiment", experiment}};
}

json SummaryReply::Schema() {
  return StrictObject(
      {{"key_findings",
        StringProperty("The experiment history condensed: the best result so far, which "
                       "variations worked and which did not.")}});
}

Result<SummaryReply> SummaryReply::FromJson(const json& j) {
  constexpr std::string_view kStage = "summary";
  if (Status s = ExpectObject(j, kStage); !s.ok()) return s.error();
  Result<std::string> k = RequiredString(j, "key_findings", kStage);
  if (!k.ok()) return k.error();
  return SummaryReply{std::move(*k)};
}

json SummaryReply::ToJson() const {
  return {{"key_findings", key_findings}};
}

json PruningReply::Schema() {
  return StrictObject({{"drop_idea_ids",
                        {{"type", "array"},
                         {"items", {{"type", "integer"}}},
                         {"description", "Ids of the ideas to drop."}}},
                       {"rationale", StringProperty("Why these ideas are the least promising.")}});
}

Result<PruningReply> PruningReply::FromJson(const json& j) {
  constexpr std::string_view kStage = "pruning";
  if (Status s = ExpectObject(j, kStage); !s.ok()) return s.error();
  auto ids = j.find("drop_idea_ids");
  if (ids == j.end() || !ids->is_array()) {
    return Error::BadInput("pruning reply: 'drop_idea_ids' must be an array of integers");
  }
  PruningReply r;
  for (const json& id : *ids) {
    if (!id.is_number_integer()) {
      return Error::BadInput("pruning reply: 'drop_idea_ids' must be an array of integers");
    }
    const int64_t v = id.get<int64_t>();
    if (v < INT32_MIN || v > INT32_MAX) {
      return Error::BadInput("pruning reply: an idea id is out of range");
    }
    r.drop_idea_ids.push_back(static_cast<int>(v));
  }
  Result<std::string> why = RequiredString(j, "rationale", kStage);
  if (!why.ok()) return why.error();
  r.rationale = std::move(*why);
  return r;
}

json PruningReply::ToJson() const {
  return {{"drop_idea_ids", drop_idea_ids}, {"rationale", rationale}};
}

}  // namespace kforge::search::pacevolve
