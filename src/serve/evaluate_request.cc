#include "serve/evaluate_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace kforge::serve {

namespace {

using nlohmann::json;

// The string field `name`, or an error naming it. A missing optional field
// is an empty string with `present` false.
Result<std::string> StringField(const json& body, const char* name, bool required, bool& present) {
  auto it = body.find(name);
  present = it != body.end();
  if (!present) {
    if (required) return Error::BadInput(fmt::format("missing field '{}'", name));
    return std::string();
  }
  if (!it->is_string()) {
    return Error::BadInput(
        fmt::format("field '{}' must be a string, not {}", name, it->type_name()));
  }
  return it->get<std::string>();
}

bool ValidTaskName(const std::string& name) {
  if (name.empty() || name.size() > 100 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

Result<EvaluateRequest> ParseEvaluateRequest(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error::BadInput("request body is not valid JSON");
  if (!j.is_object()) {
    return Error::BadInput(
        fmt::format("request body must be a JSON object, not {}", j.type_name()));
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "task" && key != "candidate" && key != "format" && key != "policy" &&
        key != "task_name") {
      return Error::BadInput(fmt::format(
          "unknown field '{}' (fields: task, candidate, format, policy, task_name)", key));
    }
  }
  EvaluateRequest r;
  bool present = false;
  auto task = StringField(j, "task", true, present);
  if (!task) return task.error();
  if (task->empty()) return Error::BadInput("field 'task' is empty");
  r.task_source = std::move(*task);

  auto candidate = StringField(j, "candidate", true, present);
  if (!candidate) return candidate.error();
  if (candidate->empty()) return Error::BadInput("field 'candidate' is empty");
  r.candidate_source = std::move(*candidate);

  auto format = StringField(j, "format", false, present);
  if (!format) return format.error();
  if (present) {
    auto parsed = ParseCandidateFormat(*format);
    if (!parsed) {
      return Error::BadInput(
          fmt::format("field 'format' must be kernelbench, native or cpp, not '{}'", *format));
    }
    r.format = *parsed;
  }

  auto policy = StringField(j, "policy", false, present);
  if (!policy) return policy.error();
  if (present) {
    if (*policy == "strict") {
      r.policy = Policy::kStrict;
    } else if (*policy == "any") {
      r.policy = Policy::kAny;
    } else {
      return Error::BadInput(
          fmt::format("field 'policy' must be strict or any, not '{}'", *policy));
    }
  }

  auto name = StringField(j, "task_name", false, present);
  if (!name) return name.error();
  if (present) {
    if (!ValidTaskName(*name)) {
      return Error::BadInput(
          "field 'task_name' must be 1-100 characters of [A-Za-z0-9_.-], not starting with '.'");
    }
    r.task_name = std::move(*name);
  }
  return r;
}

}  // namespace kforge::serve
