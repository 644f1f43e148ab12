#include "rl/training_sample.h"

#include <fmt/format.h>

#include <map>

namespace kforge::rl {

namespace {

using nlohmann::json;

std::optional<double> NumberAt(const json& j, const char* object, const char* key) {
  auto o = j.find(object);
  if (o == j.end() || !o->is_object()) return std::nullopt;
  auto v = o->find(key);
  if (v == o->end() || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

// False when the call's request holds no messages.
bool FillFromCall(const LlmCallRecordRow& call, TrainingSample& s) {
  json request = json::parse(call.request_json, nullptr, false);
  if (!request.is_object() || !request.contains("messages") || !request["messages"].is_array() ||
      request["messages"].empty()) {
    return false;
  }
  s.prompt = request["messages"];
  if (auto tools = request.find("tools"); tools != request.end() && tools->is_array()) {
    for (const json& t : *tools) {
      if (t.is_object() && t.contains("name") && t["name"].is_string()) {
        s.tool_names.push_back(t["name"].get<std::string>());
      }
    }
  }
  s.response = call.text;
  s.model = call.model_spec;
  s.stage = call.stage;
  json response = json::parse(call.response_json, nullptr, false);
  if (response.is_object()) {
    s.finish_reason = response.value("finish_reason", "");
    if (auto calls = response.find("tool_calls"); calls != response.end() && calls->is_array()) {
      for (const json& c : *calls) {
        ToolCallText t;
        if (c.is_object()) {
          if (c.contains("name") && c["name"].is_string()) t.name = c["name"].get<std::string>();
          if (c.contains("arguments") && c["arguments"].is_string()) {
            t.arguments_json = c["arguments"].get<std::string>();
          }
        }
        s.response_tool_calls.push_back(std::move(t));
      }
    }
  }
  return true;
}

Status FillFromEvaluation(const EvaluatedCandidate& ec, TrainingSample& s) {
  json eval = json::parse(ec.evaluation.eval_json, nullptr, false);
  if (!eval.is_object()) {
    return Error::BadInput(
        fmt::format("evaluation of candidate {} is not a JSON object", ec.candidate.id));
  }
  s.accepted = ec.evaluation.accepted;
  s.verdict = ec.evaluation.verdict;
  s.speedup_eager = NumberAt(eval, "speedup", "eager");
  s.speedup_compile = NumberAt(eval, "speedup", "compile");
  std::optional<double> milestone = NumberAt(eval, "reward", "milestone");
  if (!milestone) {
    return Error::BadInput(
        fmt::format("evaluation of candidate {} has no reward.milestone", ec.candidate.id));
  }
  s.milestone = static_cast<int>(*milestone);
  return Status::Ok();
}

Status AppendRun(Store& store, const std::string& run_id, const std::string& bench_id,
                 LoadedSamples& out) {
  auto run = store.GetRun(run_id);
  if (!run) return run.error();
  auto evaluated = store.EvaluationsOfRun(run_id);
  if (!evaluated) return evaluated.error();
  auto calls = store.LlmCallsOfRun(run_id);
  if (!calls) return calls.error();
  std::map<std::string, const LlmCallRecordRow*> by_id;
  for (const LlmCallRecordRow& c : *calls) by_id[c.id] = &c;
  auto events = store.EventsOfRun(run_id);
  if (!events) return events.error();
  std::map<std::string, AgentEpisodeStats> episode_of;  // by candidate id
  for (const EventRecord& e : *events) {
    if (e.type != "agent_episode") continue;
    json d = json::parse(e.detail_json, nullptr, false);
    if (!d.is_object() || !d.contains("candidate_id") || !d["candidate_id"].is_string()) continue;
    AgentEpisodeStats a;
    a.end = d.value("end", "");
    a.turns =
        d.contains("turns") && d["turns"].is_array() ? static_cast<int64_t>(d["turns"].size()) : 0;
    a.tokens = d.value("tokens", int64_t{0});
    a.invalid_tool_calls = d.value("invalid_tool_calls", int64_t{0});
    a.repeated_tool_calls = d.value("repeated_tool_calls", int64_t{0});
    episode_of[d["candidate_id"].get<std::string>()] = a;
  }

  for (const EvaluatedCandidate& ec : *evaluated) {
    auto call = by_id.find(ec.candidate.llm_call_id);
    if (call == by_id.end() || call->second->status != "ok") continue;
    TrainingSample s;
    s.run_id = run_id;
    s.bench_id = bench_id;
    s.task_name = run->task_name;
    s.task_hash = run->task_hash;
    s.candidate_id = ec.candidate.id;
    s.llm_call_id = ec.candidate.llm_call_id;
    s.format = ec.candidate.format;
    s.parent_ids = ec.candidate.parent_ids;
    s.iteration = ec.candidate.iteration;
    s.island = ec.candidate.island;
    if (auto ep = episode_of.find(ec.candidate.id); ep != episode_of.end()) s.agent = ep->second;
    if (!FillFromCall(*call->second, s)) {
      ++out.without_prompt;
      continue;
    }
    if (Status st = FillFromEvaluation(ec, s); !st) return st;
    out.samples.push_back(std::move(s));
  }
  return Status::Ok();
}

}  // namespace

Result<LoadedSamples> LoadTrainingSamples(Store& store, const std::string& id) {
  LoadedSamples samples;
  auto run = store.GetRun(id);
  if (run) {
    if (Status st = AppendRun(store, id, "", samples); !st) return st.error();
    return samples;
  }
  if (run.error().kind != ErrorKind::kNotFound) return run.error();
  auto bench = store.GetBench(id);
  if (!bench) {
    if (bench.error().kind != ErrorKind::kNotFound) return bench.error();
    return Error::NotFound(fmt::format("no run or bench '{}' in {}", id, store.location()));
  }
  auto runs = store.ListBenchRuns(id);
  if (!runs) return runs.error();
  for (const BenchRunRecord& r : *runs) {
    if (r.run_id.empty()) continue;
    if (Status st = AppendRun(store, r.run_id, id, samples); !st) return st.error();
  }
  return samples;
}

}  // namespace kforge::rl
