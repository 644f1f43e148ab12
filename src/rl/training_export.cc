#include "rl/training_export.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "common/hash.h"
#include "rl/reply_degeneracy.h"

namespace kforge::rl {

namespace {

using nlohmann::json;

json NullOr(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json Metadata(const TrainingSample& s) {
  std::optional<std::string> degenerate = DegenerateReason(s);
  return {{"run_id", s.run_id},
          {"bench_id", s.bench_id.empty() ? json(nullptr) : json(s.bench_id)},
          {"task", s.task_name},
          {"task_hash", s.task_hash},
          {"candidate_id", s.candidate_id},
          {"parent_ids", s.parent_ids},
          {"iteration", s.iteration},
          {"island", s.island},
          {"stage", s.stage},
          {"model", s.model},
          {"llm_call_id", s.llm_call_id},
          {"format", s.format},
          {"prompt_sha256", Sha256Hex(s.prompt.dump())},
          {"accepted", s.accepted},
          {"verdict", s.verdict},
          {"milestone", s.milestone},
          {"speedup", {{"eager", NullOr(s.speedup_eager)}, {"compile", NullOr(s.speedup_compile)}}},
          {"degenerate_reason", degenerate ? json(*degenerate) : json(nullptr)},
          {"agent", s.agent ? json{{"end", s.agent->end},
                                   {"turns", s.agent->turns},
                                   {"tokens", s.agent->tokens},
                                   {"invalid_tool_calls", s.agent->invalid_tool_calls},
                                   {"repeated_tool_calls", s.agent->repeated_tool_calls}}
                            : json(nullptr)}};
}

// Samples with the same prompt context: the run, its task, the parents.
struct Group {
  const TrainingSample* first = nullptr;
  std::vector<const TrainingSample*> members;
};

std::vector<Group> GroupByContext(const std::vector<const TrainingSample*>& samples) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (const TrainingSample* s : samples) {
    std::string key = s->run_id + "\n" + s->task_hash;
    for (const std::string& p : s->parent_ids) key += "\n" + p;
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) groups.push_back({s, {}});
    groups[it->second].members.push_back(s);
  }
  return groups;
}

json GroupJson(const TrainingSample& s) {
  return {{"run_id", s.run_id},
          {"bench_id", s.bench_id.empty() ? json(nullptr) : json(s.bench_id)},
          {"task", s.task_name},
          {"task_hash", s.task_hash},
          {"parent_ids", s.parent_ids}};
}

// --- schemas ---

json StringType() {
  return {{"type", "string"}};
}
json StringArray() {
  return {{"type", "array"}, {"items", StringType()}};
}
json NullableString() {
  return {{"type", json::array({"string", "null"})}};
}
json NullableNumber() {
  return {{"type", json::array({"number", "null"})}};
}
json Milestone() {
  return {{"type", "integer"}, {"enum", {-1, 1, 2, 3}}};
}

json Strict(json properties) {
  json required = json::array();
  for (const auto& [key, value] : properties.items()) required.push_back(key);
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

json MessagesSchema() {
  json message = {
      {"type", "object"},
      {"properties",
       {{"role", {{"type", "string"}, {"enum", {"system", "user", "assistant", "tool"}}}},
        {"content", StringType()},
        {"tool_calls", {{"type", "array"}}},
        {"tool_call_id", StringType()}}},
      {"required", {"role", "content"}},
      {"additionalProperties", false}};
  return {{"type", "array"}, {"minItems", 1}, {"items", std::move(message)}};
}

json AgentSchema() {
  json count = {{"type", "integer"}, {"minimum", 0}};
  return {{"anyOf",
           json::array(
               {{{"type", "null"}},
                Strict({{"end",
                         {{"type", "string"},
                          {"enum",
                           {"submitted", "stopped", "turn_limit", "token_limit", "model_error"}}}},
                        {"turns", count},
                        {"tokens", count},
                        {"invalid_tool_calls", count},
                        {"repeated_tool_calls", count}})})}};
}

json MetadataSchema() {
  return Strict({{"run_id", {{"type", "string"}, {"minLength", 1}}},
                 {"bench_id", NullableString()},
                 {"task", StringType()},
                 {"task_hash", StringType()},
                 {"candidate_id", {{"type", "string"}, {"minLength", 1}}},
                 {"parent_ids", StringArray()},
                 {"iteration", {{"type", "integer"}, {"minimum", 0}}},
                 {"island", {{"type", "integer"}, {"minimum", 0}}},
                 {"stage", StringType()},
                 {"model", StringType()},
                 {"llm_call_id", {{"type", "string"}, {"minLength", 1}}},
                 {"format", StringType()},
                 {"prompt_sha256", {{"type", "string"}, {"minLength", 64}, {"maxLength", 64}}},
                 {"accepted", {{"type", "boolean"}}},
                 {"verdict", {{"type", "string"}, {"enum", {"ok", "suspect", "rejected"}}}},
                 {"milestone", Milestone()},
                 {"speedup", Strict({{"eager", NullableNumber()}, {"compile", NullableNumber()}})},
                 {"degenerate_reason", NullableString()},
                 {"agent", AgentSchema()}});
}

json SampleSchema() {
  return Strict({{"prompt", MessagesSchema()},
                 {"response", StringType()},
                 {"reward", Milestone()},
                 {"metadata", MetadataSchema()}});
}

json GroupSchema() {
  return Strict({{"run_id", {{"type", "string"}, {"minLength", 1}}},
                 {"bench_id", NullableString()},
                 {"task", StringType()},
                 {"task_hash", StringType()},
                 {"parent_ids", StringArray()}});
}

}  // namespace

Result<ExportFormat> ParseExportFormat(const std::string& name) {
  if (name == "sft") return ExportFormat::kSft;
  if (name == "rft") return ExportFormat::kRft;
  if (name == "grpo") return ExportFormat::kGrpo;
  if (name == "dpo") return ExportFormat::kDpo;
  return Error::BadInput(fmt::format("--format must be sft, rft, grpo or dpo, not '{}'", name));
}

std::string ExportFormatName(ExportFormat format) {
  switch (format) {
    case ExportFormat::kSft:
      return "sft";
    case ExportFormat::kRft:
      return "rft";
    case ExportFormat::kGrpo:
      return "grpo";
    case ExportFormat::kDpo:
      return "dpo";
  }
  return "?";
}

json SampleRecord(const TrainingSample& s) {
  return {{"prompt", s.prompt},
          {"response", s.response},
          {"reward", s.milestone},
          {"metadata", Metadata(s)}};
}

bool Preferred(const TrainingSample& a, const TrainingSample& b) {
  if (a.milestone != b.milestone) return a.milestone > b.milestone;
  if (a.milestone < 1 || !a.speedup_eager || !b.speedup_eager) return false;
  return *a.speedup_eager > 1.05 * *b.speedup_eager;
}

std::vector<json> ExportRecords(const std::vector<TrainingSample>& samples, ExportFormat format,
                                const ExportOptions& options, ExportSummary* summary) {
  ExportSummary local;
  ExportSummary& sum = summary ? *summary : local;
  sum = {};
  sum.samples = samples.size();
  std::vector<const TrainingSample*> kept;
  for (const TrainingSample& s : samples) {
    if (s.verdict == "suspect" && !options.include_suspect) {
      ++sum.suspect;
      continue;
    }
    kept.push_back(&s);
  }
  std::vector<json> records;
  switch (format) {
    case ExportFormat::kSft:
      for (const TrainingSample* s : kept) {
        if (s->accepted) records.push_back(SampleRecord(*s));
      }
      break;
    case ExportFormat::kRft:
      for (const TrainingSample* s : kept) {
        if (s->reward() <= 0) continue;
        if (DegenerateReason(*s)) {
          ++sum.degenerate;
          continue;
        }
        records.push_back(SampleRecord(*s));
      }
      break;
    case ExportFormat::kGrpo:
      for (const Group& g : GroupByContext(kept)) {
        if (g.members.size() < 2) continue;
        double mean = 0, var = 0;
        for (const TrainingSample* s : g.members) mean += s->reward();
        mean /= static_cast<double>(g.members.size());
        for (const TrainingSample* s : g.members)
          var += (s->reward() - mean) * (s->reward() - mean);
        double sd = std::sqrt(var / static_cast<double>(g.members.size()));
        json group_samples = json::array();
        for (const TrainingSample* s : g.members) {
          json r = SampleRecord(*s);
          r["advantage"] = sd > 0 ? (s->reward() - mean) / sd : 0.0;
          group_samples.push_back(std::move(r));
        }
        records.push_back({{"group", GroupJson(*g.first)},
                           {"samples", std::move(group_samples)},
                           {"reward_mean", mean},
                           {"reward_std", sd}});
      }
      break;
    case ExportFormat::kDpo:
      for (const Group& g : GroupByContext(kept)) {
        for (size_t i = 0; i < g.members.size(); ++i) {
          for (size_t j = i + 1; j < g.members.size(); ++j) {
            const TrainingSample* a = g.members[i];
            const TrainingSample* b = g.members[j];
            if (Preferred(*b, *a)) std::swap(a, b);
            if (!Preferred(*a, *b)) continue;
            auto side = [](const TrainingSample& s) {
              return json{
                  {"response", s.response}, {"reward", s.milestone}, {"metadata", Metadata(s)}};
            };
            records.push_back({{"prompt", a->prompt},
                               {"chosen", side(*a)},
                               {"rejected", side(*b)},
                               {"same_prompt", a->prompt == b->prompt},
                               {"group", GroupJson(*g.first)}});
          }
        }
      }
      break;
  }
  sum.records = records.size();
  return records;
}

json RecordSchema(ExportFormat format) {
  json schema;
  switch (format) {
    case ExportFormat::kSft:
      schema = SampleSchema();
      schema["properties"]["metadata"]["properties"]["accepted"] = {{"const", true}};
      break;
    case ExportFormat::kRft:
      schema = SampleSchema();
      schema["properties"]["reward"] = {{"type", "integer"}, {"enum", {1, 2, 3}}};
      schema["properties"]["metadata"]["properties"]["degenerate_reason"] = {{"type", "null"}};
      break;
    case ExportFormat::kGrpo: {
      json sample = SampleSchema();
      sample["properties"]["advantage"] = {{"type", "number"}};
      sample["required"].push_back("advantage");
      schema = Strict({{"group", GroupSchema()},
                       {"samples", {{"type", "array"}, {"minItems", 2}, {"items", sample}}},
                       {"reward_mean", {{"type", "number"}}},
                       {"reward_std", {{"type", "number"}, {"minimum", 0}}}});
      break;
    }
    case ExportFormat::kDpo: {
      json side = Strict(
          {{"response", StringType()}, {"reward", Milestone()}, {"metadata", MetadataSchema()}});
      schema = Strict({{"prompt", MessagesSchema()},
                       {"chosen", side},
                       {"rejected", side},
                       {"same_prompt", {{"type", "boolean"}}},
                       {"group", GroupSchema()}});
      break;
    }
  }
  schema["title"] = fmt::format("kforge export --format {} record", ExportFormatName(format));
  return schema;
}

}  // namespace kforge::rl
