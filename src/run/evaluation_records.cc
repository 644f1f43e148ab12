#include "run/evaluation_records.h"

#include <fmt/format.h>

#include "llm/types.h"

namespace kforge::run {

namespace {

std::optional<double> OptionalNumber(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

EvaluationRecord MakeEvaluationRecord(const std::string& candidate_id, const nlohmann::json& eval) {
  EvaluationRecord r;
  r.candidate_id = candidate_id;
  r.eval_json = llm::DumpJson(eval);
  r.accepted = eval.value("accepted", false);
  if (auto it = eval.find("speedup"); it != eval.end()) {
    r.speedup_eager = OptionalNumber(*it, "eager");
    r.speedup_compile = OptionalNumber(*it, "compile");
  }
  r.verdict = "ok";
  if (auto it = eval.find("integrity"); it != eval.end() && it->is_object()) {
    r.verdict = it->value("verdict", "ok");
  }
  return r;
}

Result<search::Observation> MakeObservation(const CandidateRecord& candidate,
                                            const std::string& eval_json) {
  nlohmann::json eval = nlohmann::json::parse(eval_json, nullptr, /*allow_exceptions=*/false);
  if (eval.is_discarded()) {
    return Error::BadInput(
        fmt::format("the stored evaluation of candidate {} is not JSON", candidate.id));
  }
  auto summary = search::EvalSummary::FromContractJson(eval);
  if (!summary) {
    return Error::BadInput(fmt::format("the stored evaluation of candidate {}: {}", candidate.id,
                                       summary.error().message));
  }
  search::Observation o;
  o.candidate_id = candidate.id;
  o.source = candidate.source;
  o.iteration = candidate.iteration;
  o.island = static_cast<int>(candidate.island);
  o.parent_ids = candidate.parent_ids;
  o.eval = std::move(summary).value();
  return o;
}

}  // namespace kforge::run
