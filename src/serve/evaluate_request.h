// The body of `POST /v1/evaluate`, parsed into C++ types at the edge: no
// JSON travels past ParseEvaluateRequest.
#pragma once

#include <string>

#include "candidate/candidate.h"
#include "common/result.h"
#include "eval/integrity.h"

namespace kforge::serve {

struct EvaluateRequest {
  std::string task_source;       // a KernelBench-style task file's text
  std::string candidate_source;  // the candidate file's text
  CandidateFormat format = CandidateFormat::kKernelBench;
  Policy policy = Policy::kStrict;
  // The task's file stem (the result's task.name; a KernelBench level is read
  // from it as from a path). "task" when the request names none.
  std::string task_name = "task";
};

// kBadInput, one line naming the field, when the body is not a JSON object
// with string fields `task` and `candidate` (non-empty), optional `format`
// (kernelbench | native | cpp; default kernelbench), `policy` (strict | any;
// default strict) and `task_name` ([A-Za-z0-9_.-], at most 100 characters,
// not starting with a dot). Other fields are refused, so a misspelt one is
// not silently ignored.
Result<EvaluateRequest> ParseEvaluateRequest(const std::string& body);

}  // namespace kforge::serve
