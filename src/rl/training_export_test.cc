// Exports of a small run and bench written through the real SQLite store,
// validated against the schemas docs/rl.md prints.
#include "rl/training_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "common/files.h"
#include "llm/json_schema.h"
#include "rl/training_sample.h"

namespace kforge::rl {
namespace {

using nlohmann::json;

const char* kCode = "Here it is:\n```python\nclass ModelNew:\n    pass\n```\n";

struct Spec {
  std::string id;
  std::vector<std::string> parents;
  int milestone;     // -1: not accepted
  double eager = 0;  // speedup.eager when accepted
  std::string verdict = "ok";
  std::string response = kCode;
  std::string call_status = "ok";
  bool record_prompt = true;  // false: the call's request holds no messages
};

std::string EvalJson(const Spec& s) {
  bool accepted = s.milestone > 0;
  return json{
      {"accepted", accepted},
      {"speedup", {{"eager", accepted ? json(s.eager) : json(nullptr)}, {"compile", nullptr}}},
      {"integrity", {{"verdict", s.verdict}, {"flags", json::array()}}},
      {"reward", {{"milestone", s.milestone}, {"speedup_compile", nullptr}}}}
      .dump();
}

// Accepted code, then the same sentence five times.
std::string LoopingReply() {
  std::string text = kCode;
  for (int i = 0; i < 5; ++i) text += "Let me check the kernel again.\n";
  return text;
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(std::filesystem::temp_directory_path(), "kforge-rl-test-");
    ASSERT_TRUE(dir) << dir.error().message;
    dir_ = *dir;
    auto store = OpenStore((dir_ / "kforge.db").string());
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string AddRun(const std::string& id, const std::string& task,
                     const std::vector<Spec>& specs) {
    RunRecord run;
    run.id = id;
    run.task_name = task;
    run.task_hash = "hash-" + task;
    run.strategy = "greedy";
    run.llm_spec = "openai:test-model";
    run.device = "cpu";
    EXPECT_TRUE(store_->CreateRun(run));
    int64_t iteration = 0;
    for (const Spec& s : specs) {
      LlmCallRecordRow call;
      call.run_id = id;
      call.stage = "refine";
      call.model_spec = "openai:test-model";
      call.request_hash = "h-" + s.id;
      call.request_json = json{
          {"messages",
           {{{"role", "system"}, {"content", "You write kernels."}},
            {{"role", "user"}, {"content", "Optimize " + task}}}},
          {"max_output_tokens",
           0}}.dump();
      if (!s.record_prompt) call.request_json = "{}";
      call.response_json = json{
          {"text", s.response},
          {"model", "test-model"},
          {"tool_calls", json::array()},
          {"finish_reason",
           "stop"}}.dump();
      call.text = s.response;
      call.status = s.call_status;
      auto recorded = store_->RecordLlmCall(call);
      EXPECT_TRUE(recorded) << recorded.error().message;
      CandidateRecord c;
      c.id = s.id;
      c.run_id = id;
      c.sha256 = "sha-" + s.id;
      c.source = "class ModelNew: pass\n";
      c.format = "cpp";
      c.parent_ids = s.parents;
      c.iteration = iteration++;
      c.llm_call_id = recorded->id;
      EXPECT_TRUE(store_->AddCandidate(c));
      EvaluationRecord e;
      e.candidate_id = s.id;
      e.eval_json = EvalJson(s);
      e.accepted = s.milestone > 0;
      if (e.accepted) e.speedup_eager = s.eager;
      e.verdict = s.verdict;
      EXPECT_TRUE(store_->RecordEvaluation(e));
    }
    return id;
  }

  // Run A: three root candidates (one looping), one suspect, two children
  // of c1, one whose call failed, one whose call has no prompt.
  std::string RunA() {
    return AddRun("run-a", "row_softmax",
                  {{"c1", {}, 2, 1.3},
                   {"c2", {}, -1},
                   {"c3", {}, 3, 2.0, "ok", LoopingReply()},
                   {"c4", {}, 3, 9.0, "suspect"},
                   {"c5", {"c1"}, 3, 1.8},
                   {"c6", {"c1"}, 1, 0.9},
                   {"c7", {"c1"}, 2, 1.2, "ok", kCode, "failed"},
                   {"c8", {"c1"}, 2, 1.2, "ok", kCode, "ok", /*record_prompt=*/false}});
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

// The schema docs/rl.md prints after "<!-- schema:FORMAT -->".
json DocumentedSchema(ExportFormat format) {
  auto doc = ReadFile(std::filesystem::path(KFORGE_SOURCE_DIR) / "docs" / "rl.md");
  if (!doc) return nullptr;
  std::string marker = "<!-- schema:" + ExportFormatName(format) + " -->";
  size_t at = doc->find(marker);
  if (at == std::string::npos) return nullptr;
  size_t open = doc->find("```json\n", at);
  size_t close = doc->find("\n```", open + 8);
  if (open == std::string::npos || close == std::string::npos) return nullptr;
  return json::parse(doc->substr(open + 8, close - open - 8), nullptr, false);
}

std::vector<json> ExportChecked(const std::vector<TrainingSample>& samples, ExportFormat format,
                                const ExportOptions& options = {},
                                ExportSummary* summary = nullptr) {
  json schema = DocumentedSchema(format);
  EXPECT_TRUE(schema.is_object()) << "docs/rl.md has no schema for " << ExportFormatName(format);
  EXPECT_EQ(schema, RecordSchema(format))
      << "docs/rl.md's " << ExportFormatName(format) << " schema differs from the code's:\n"
      << RecordSchema(format).dump(2);
  Status st = llm::CheckSchema(schema);
  EXPECT_TRUE(st) << st.error().message;
  std::vector<json> records = ExportRecords(samples, format, options, summary);
  for (const json& r : records) {
    // Each record is one line of JSON Lines.
    EXPECT_EQ(r.dump().find('\n'), std::string::npos);
    std::vector<std::string> errors = llm::ValidateAgainstSchema(r, schema);
    EXPECT_TRUE(errors.empty()) << ExportFormatName(format) << ": " << errors.front() << "\n"
                                << r.dump(2);
  }
  return records;
}

std::vector<std::string> CandidateIds(const json& records) {
  std::vector<std::string> ids;
  for (const json& r : records) ids.push_back(r["metadata"]["candidate_id"]);
  return ids;
}

TEST_F(ExportTest, LoadsOneSamplePerEvaluatedCandidateWithACall) {
  auto loaded = LoadTrainingSamples(*store_, RunA());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<TrainingSample>* samples = &loaded->samples;
  ASSERT_EQ(samples->size(), 6u);  // c7's call failed, c8's has no prompt
  EXPECT_EQ(loaded->without_prompt, 1u);
  const TrainingSample& c1 = samples->front();
  EXPECT_EQ(c1.candidate_id, "c1");
  EXPECT_EQ(c1.task_name, "row_softmax");
  EXPECT_EQ(c1.prompt.size(), 2u);
  EXPECT_EQ(c1.prompt[1]["content"], "Optimize row_softmax");
  EXPECT_EQ(c1.response, kCode);
  EXPECT_EQ(c1.reward(), 2);
  EXPECT_EQ(*c1.speedup_eager, 1.3);
  EXPECT_EQ(c1.model, "openai:test-model");
}

TEST_F(ExportTest, UnknownIdIsNotFound) {
  RunA();
  auto samples = LoadTrainingSamples(*store_, "nope");
  ASSERT_FALSE(samples);
  EXPECT_EQ(samples.error().kind, ErrorKind::kNotFound);
  EXPECT_FALSE(ParseExportFormat("ppo"));
}

TEST_F(ExportTest, SftKeepsAcceptedCandidatesButNotSuspectOnes) {
  auto loaded = LoadTrainingSamples(*store_, RunA());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<TrainingSample>* samples = &loaded->samples;
  EXPECT_EQ(CandidateIds(ExportChecked(*samples, ExportFormat::kSft)),
            (std::vector<std::string>{"c1", "c3", "c5", "c6"}));
  ExportOptions with_suspect;
  with_suspect.include_suspect = true;
  EXPECT_EQ(ExportChecked(*samples, ExportFormat::kSft, with_suspect).size(), 5u);
}

TEST_F(ExportTest, RftDropsTheLoopingReply) {
  auto loaded = LoadTrainingSamples(*store_, RunA());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<TrainingSample>* samples = &loaded->samples;
  ExportSummary summary;
  std::vector<json> records = ExportChecked(*samples, ExportFormat::kRft, {}, &summary);
  EXPECT_EQ(CandidateIds(records), (std::vector<std::string>{"c1", "c5", "c6"}));
  EXPECT_EQ(summary.degenerate, 1u);
  EXPECT_EQ(summary.suspect, 1u);
  EXPECT_EQ(summary.records, 3u);
  for (const json& r : records) EXPECT_GT(r["reward"].get<int>(), 0);
}

// An agent run: each candidate's trajectory counts come from its
// agent_episode event; RFT drops whole episodes that hallucinated a tool or
// looped, however good their candidate (CUDA Agent's filter).
TEST_F(ExportTest, RftDropsAgentEpisodesWithInvalidOrRepeatedToolCalls) {
  // The submitting turn answers with a tool call and no code block: not degenerate by itself.
  AddRun("run-agent", "gelu",
         {{"a1", {}, 3, 2.0, "ok", "Submitting."},
          {"a2", {}, 3, 2.5, "ok", "Submitting."},
          {"a3", {}, 2, 1.5, "ok", "Submitting."},
          {"a4", {}, 2, 1.4, "ok", "Submitting."}});
  auto episode = [&](const std::string& candidate, int invalid, int repeated) {
    EventRecord e;
    e.run_id = "run-agent";
    e.type = "agent_episode";
    e.detail_json = json{{"end", "submitted"},
                         {"candidate_id", candidate},
                         {"tokens", 5000},
                         {"invalid_tool_calls", invalid},
                         {"repeated_tool_calls", repeated},
                         {"turns", json::array({json::object(), json::object()})}}
                        .dump();
    ASSERT_TRUE(store_->RecordEvent(e));
  };
  episode("a1", 0, 0);
  episode("a2", 1, 0);  // called a tool it was not given
  episode("a3", 0, 2);  // the same call again with nothing written in between
  // a4: no episode event (a candidate of another strategy): single-reply rules only
  EventRecord failed;  // an episode without a submission names no candidate
  failed.run_id = "run-agent";
  failed.type = "agent_episode";
  failed.detail_json = json{{"end", "turn_limit"}, {"candidate_id", nullptr}}.dump();
  ASSERT_TRUE(store_->RecordEvent(failed));

  auto loaded = LoadTrainingSamples(*store_, "run-agent");
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->samples.size(), 4u);
  ASSERT_TRUE(loaded->samples[0].agent.has_value());
  EXPECT_EQ(loaded->samples[0].agent->turns, 2);
  EXPECT_EQ(loaded->samples[0].agent->tokens, 5000);
  EXPECT_FALSE(loaded->samples[3].agent.has_value());
  for (TrainingSample& s : loaded->samples) {
    s.response_tool_calls = {{"submit", "{}"}};
    s.tool_names = {"write_file", "compile", "verify", "submit"};
  }

  ExportSummary summary;
  std::vector<json> records = ExportChecked(loaded->samples, ExportFormat::kRft, {}, &summary);
  EXPECT_EQ(CandidateIds(records), (std::vector<std::string>{"a1", "a4"}));
  EXPECT_EQ(summary.degenerate, 2u);
  EXPECT_EQ(records[0]["metadata"]["agent"]["end"], "submitted");
  EXPECT_EQ(records[0]["metadata"]["agent"]["invalid_tool_calls"], 0);
  EXPECT_TRUE(records[1]["metadata"]["agent"].is_null());
  // The other formats keep them, saying why they are degenerate.
  std::vector<json> sft = ExportChecked(loaded->samples, ExportFormat::kSft);
  ASSERT_EQ(sft.size(), 4u);
  EXPECT_NE(sft[1]["metadata"]["degenerate_reason"].get<std::string>().find("invalid tool call"),
            std::string::npos);
  EXPECT_NE(sft[2]["metadata"]["degenerate_reason"].get<std::string>().find("a loop"),
            std::string::npos);
}

TEST_F(ExportTest, GrpoGroupsByParentWithNormalisedAdvantages) {
  auto loaded = LoadTrainingSamples(*store_, RunA());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<TrainingSample>* samples = &loaded->samples;
  std::vector<json> groups = ExportChecked(*samples, ExportFormat::kGrpo);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["group"]["parent_ids"], json::array());
  EXPECT_EQ(CandidateIds(groups[0]["samples"]), (std::vector<std::string>{"c1", "c2", "c3"}));
  EXPECT_EQ(groups[1]["group"]["parent_ids"], json::array({"c1"}));
  EXPECT_EQ(CandidateIds(groups[1]["samples"]), (std::vector<std::string>{"c5", "c6"}));
  // Rewards 3 and 1: mean 2, std 1.
  EXPECT_DOUBLE_EQ(groups[1]["reward_mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(groups[1]["samples"][0]["advantage"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(groups[1]["samples"][1]["advantage"].get<double>(), -1.0);
  double sum = 0;
  for (const json& s : groups[0]["samples"]) sum += s["advantage"].get<double>();
  EXPECT_NEAR(sum, 0, 1e-12);
}

TEST_F(ExportTest, DpoPairsWithinAGroupChosenFirst) {
  auto loaded = LoadTrainingSamples(*store_, RunA());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<TrainingSample>* samples = &loaded->samples;
  std::set<std::pair<std::string, std::string>> pairs;
  for (const json& r : ExportChecked(*samples, ExportFormat::kDpo)) {
    EXPECT_GT(r["chosen"]["reward"].get<int>(), r["rejected"]["reward"].get<int>());
    EXPECT_TRUE(r["same_prompt"].get<bool>());
    pairs.emplace(r["chosen"]["metadata"]["candidate_id"],
                  r["rejected"]["metadata"]["candidate_id"]);
  }
  EXPECT_EQ(pairs, (std::set<std::pair<std::string, std::string>>{
                       {"c1", "c2"}, {"c3", "c1"}, {"c3", "c2"}, {"c5", "c6"}}));
}

TEST_F(ExportTest, PreferenceBreaksMilestoneTiesOnlyBeyondFivePercent) {
  TrainingSample a, b;
  a.milestone = b.milestone = 2;
  a.speedup_eager = 1.30;
  b.speedup_eager = 1.25;
  EXPECT_FALSE(Preferred(a, b));
  EXPECT_FALSE(Preferred(b, a));
  a.speedup_eager = 1.40;
  EXPECT_TRUE(Preferred(a, b));
  a.milestone = b.milestone = -1;
  EXPECT_FALSE(Preferred(a, b));
}

TEST_F(ExportTest, BenchIdExpandsToItsRuns) {
  RunA();
  AddRun("run-b", "fused_bias_relu6_scale", {{"d1", {}, 2, 1.2}, {"d2", {}, 1, 1.0}});
  BenchRecord bench;
  bench.id = "bench-test";
  bench.suite = "examples/tasks";
  ASSERT_TRUE(store_->CreateBench(bench));
  int64_t position = 0;
  using TaskRun = std::pair<std::string, std::string>;
  for (const auto& [task, run] :
       std::vector<TaskRun>{{"row_softmax", "run-a"}, {"fused_bias_relu6_scale", "run-b"}}) {
    BenchRunRecord entry;
    entry.bench_id = "bench-test";
    entry.task = task;
    entry.position = position++;
    entry.run_id = run;
    ASSERT_TRUE(store_->AddBenchRun(entry));
  }
  auto loaded = LoadTrainingSamples(*store_, "bench-test");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const std::vector<TrainingSample>* samples = &loaded->samples;
  EXPECT_EQ(samples->size(), 8u);
  std::vector<json> sft = ExportChecked(*samples, ExportFormat::kSft);
  EXPECT_EQ(CandidateIds(sft), (std::vector<std::string>{"c1", "c3", "c5", "c6", "d1", "d2"}));
  EXPECT_EQ(sft.back()["metadata"]["bench_id"], "bench-test");
  EXPECT_EQ(sft.back()["metadata"]["task"], "fused_bias_relu6_scale");
  // Groups never span runs.
  for (const json& g : ExportChecked(*samples, ExportFormat::kGrpo)) {
    std::set<std::string> runs;
    for (const json& s : g["samples"]) runs.insert(s["metadata"]["run_id"]);
    EXPECT_EQ(runs.size(), 1u);
  }
}

}  // namespace
}  // namespace kforge::rl
