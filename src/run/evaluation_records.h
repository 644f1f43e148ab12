// The edge between the evaluator's contract JSON and what the run keeps:
// the store's indexed columns, and the Observation a strategy learns from.
// Live evaluations and resumed ones go through the same functions, so a
// rebuilt strategy sees exactly what the live one saw.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "search/strategy.h"
#include "store/records.h"

namespace kforge::run {

// accepted, speedups and verdict indexed from the contract JSON.
EvaluationRecord MakeEvaluationRecord(const std::string& candidate_id, const nlohmann::json& eval);

// kBadInput when eval_json is not a contract object.
Result<search::Observation> MakeObservation(const CandidateRecord& candidate,
                                            const std::string& eval_json);

}  // namespace kforge::run
