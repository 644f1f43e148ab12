#include "kb/textual_gradient.h"

#include <fmt/format.h>

namespace kforge::kb {

using nlohmann::json;

namespace {

constexpr size_t kMaxNewTechniques = 3;

json StringProp(const std::string& what) {
  return {{"type", "string"}, {"description", what}};
}

json Object(json properties, const std::vector<std::string>& required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", required},
          {"additionalProperties", false}};
}

// What every stage is shown: the entry and the measured step.
std::string StepContext(const KnowledgeBase& kb, const AppliedStep& s) {
  const Optimization* o = kb.Find(s.state, s.technique);
  std::string entry =
      o ? fmt::format(
              "Technique `{}` in state `{}`: {}\nNotes so far: {}\nStatistics: {} attempts, "
              "{} successes, mean log-speedup {:.3f}, predicted gain {:.3f}x.",
              s.technique, s.state, o->description, o->notes.empty() ? "(none)" : o->notes,
              o->attempts, o->successes, o->MeanLogSpeedup(), o->PredictedGain())
        : fmt::format("Technique `{}` in state `{}` (not in the knowledge base yet).", s.technique,
                      s.state);
  std::string result =
      s.accepted ? fmt::format("accepted, {:.3f}x over the program it was applied to", s.speedup)
                 : "not accepted";
  return fmt::format(
      "## Knowledge-base entry\n{}\n\n## Expected\nPredicted gain when selected: {:.3f}x.\n\n"
      "## Achieved\nResult: {}.\n{}\n\n## Profile before\n{}\n\n## Profile after\n{}\n",
      entry, s.predicted_gain, result, s.outcome,
      s.profile_before.empty() ? "(none)" : s.profile_before,
      s.profile_after.empty() ? "(not profiled)" : s.profile_after);
}

}  // namespace

json PolicyEvaluationSchema() {
  json verdict = {{"type", "string"}, {"enum", {"better", "as_expected", "worse", "failed"}}};
  return Object({{"verdict", verdict},
                 {"expected", StringProp("what the entry led us to expect, with numbers")},
                 {"achieved", StringProp("what the evaluation measured, with numbers")},
                 {"evidence", StringProp("the profile or outcome facts behind the verdict")}},
                {"verdict", "expected", "achieved", "evidence"});
}

json PerfGapAnalysisSchema() {
  return Object(
      {{"explanation", StringProp("why the achieved result differs from the expectation")},
       {"causes", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 5}}},
       {"state_after", StringProp("the performance state the candidate is in now")}},
      {"explanation", "causes", "state_after"});
}

json ParameterUpdateSchema() {
  json state_object = Object({{"name", StringProp("snake_case state name")},
                              {"description", StringProp("the bottleneck, in words")},
                              {"signature", StringProp("how a profile shows this state")}},
                             {"name", "description", "signature"});
  json new_state = {{"anyOf", json::array({json{{"type", "null"}}, state_object})}};
  json technique = Object({{"technique", StringProp("snake_case technique id")},
                           {"description", StringProp("what to do, for a prompt")}},
                          {"technique", "description"});
  json techniques = {{"type", "array"}, {"items", technique}, {"maxItems", kMaxNewTechniques}};
  return Object(
      {{"notes", StringProp("the entry's rewritten notes: when it works, when not, pitfalls")},
       {"description", StringProp("a sharper description of the technique, or empty to keep it")},
       {"new_state", new_state},
       {"new_techniques", techniques}},
      {"notes", "description", "new_state", "new_techniques"});
}

std::string PolicyEvaluationPrompt(const KnowledgeBase& kb, const AppliedStep& step) {
  return "You maintain a knowledge base of CUDA optimizations keyed by performance states. "
         "Compare what the entry below predicted with what the evaluation measured, and give "
         "a verdict.\n\n" +
         StepContext(kb, step);
}

std::string PerfGapAnalysisPrompt(const KnowledgeBase& kb, const AppliedStep& step,
                                  const json& evaluation) {
  return "Explain the gap between the expected and the achieved result below: what in the "
         "kernel, the profile or the outcome caused it, and which performance state the "
         "candidate is in now.\n\n" +
         StepContext(kb, step) + "\n## Policy evaluation\n" + evaluation.dump(2) + "\n";
}

std::string ParameterUpdatePrompt(const KnowledgeBase& kb, const AppliedStep& step,
                                  const json& evaluation, const json& gap) {
  return "Rewrite the knowledge-base entry below so that the next attempt in this state "
         "benefits: new notes (when the technique works, when it does not, pitfalls), a "
         "sharper description if needed, a new performance state only if the analysis found "
         "one the existing states do not describe, and at most " +
         std::to_string(kMaxNewTechniques) + " new techniques worth trying.\n\n" +
         StepContext(kb, step) + "\n## Policy evaluation\n" + evaluation.dump(2) +
         "\n\n## Gap analysis\n" + gap.dump(2) + "\n";
}

Result<json> ApplyParameterUpdate(KnowledgeBase& kb, const AppliedStep& step, const json& reply) {
  if (!kb.Find(step.state, step.technique)) {
    return Error::NotFound(
        fmt::format("no optimization {} in state {} to update", step.technique, step.state));
  }
  json changed = {{"state", step.state}, {"technique", step.technique}};
  std::string notes = reply.value("notes", "");
  if (Status st = kb.RewriteNotes(step.state, step.technique, notes); !st) return st.error();
  changed["notes"] = notes;
  std::string description = reply.value("description", "");
  if (!description.empty()) {
    if (Status st = kb.RewriteDescription(step.state, step.technique, description); !st) {
      return st.error();
    }
    changed["description"] = description;
  }
  const json& ns = reply.contains("new_state") ? reply["new_state"] : json(nullptr);
  if (ns.is_object() && !ns.value("name", "").empty()) {
    std::string name = ns.value("name", "");
    bool existed = kb.states().count(name) > 0;
    PerformanceStateEntry& entry = kb.AddState(name, ns.value("description", ""));
    if (entry.signature.empty()) entry.signature = ns.value("signature", "");
    if (!existed) changed["new_state"] = name;
  }
  json added = json::array();
  for (const auto& t : reply.value("new_techniques", json::array())) {
    std::string id = t.value("technique", "");
    if (id.empty() || kb.Find(step.state, id)) continue;
    Optimization o;
    o.technique = id;
    o.description = t.value("description", "");
    kb.AddOptimization(step.state, o);  // prior_log_gain 0: a neutral prior
    added.push_back(id);
  }
  if (!added.empty()) changed["new_techniques"] = added;
  return changed;
}

}  // namespace kforge::kb
