#include "search/strategy.h"

#include <fmt/format.h>

namespace kforge::search {

namespace {

using nlohmann::json;

// A field that may be absent or null; present with the wrong type is an error.
template <class T>
Status ReadOptional(const json& obj, const char* key, std::optional<T>& out) {
  if (!obj.is_object()) return Status::Ok();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    return Error::BadInput(fmt::format("eval result field '{}' has the wrong type", key));
  }
  return Status::Ok();
}

template <class T>
Status ReadValue(const json& obj, const char* key, T& out) {
  std::optional<T> value;
  if (Status st = ReadOptional(obj, key, value); !st) return st;
  if (value) out = std::move(*value);
  return Status::Ok();
}

const json& Member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

}  // namespace

Result<EvalSummary> EvalSummary::FromContractJson(const json& eval) {
  if (!eval.is_object()) return Error::BadInput("an eval result must be a JSON object");
  EvalSummary s;
  Status st;
  auto check = [&](Status next) {
    if (st && !next) st = next;
  };
  check(ReadValue(eval, "compiled", s.compiled));
  check(ReadValue(eval, "correct", s.correct));
  check(ReadValue(eval, "accepted", s.accepted));
  check(ReadOptional(eval, "error", s.error));
  check(ReadValue(Member(eval, "task"), "degenerate", s.degenerate));
  check(ReadValue(Member(eval, "device"), "name", s.device_name));
  check(ReadValue(Member(eval, "compile"), "log", s.compile_log));
  const json& corr = Member(eval, "correctness");
  check(ReadValue(corr, "trials", s.trials));
  check(ReadValue(corr, "max_abs_err", s.max_abs_err));
  check(ReadValue(corr, "max_rel_err", s.max_rel_err));
  check(ReadOptional(corr, "detail", s.correctness_detail));
  const json& timing = Member(eval, "timing");
  check(ReadOptional(Member(timing, "candidate_ms"), "median", s.candidate_ms));
  check(ReadOptional(Member(timing, "eager_ms"), "median", s.eager_ms));
  check(ReadOptional(Member(timing, "compile_ms"), "median", s.compile_ms));
  check(ReadOptional(Member(eval, "sol"), "floor_ms", s.sol_floor_ms));
  const json& speedup = Member(eval, "speedup");
  check(ReadOptional(speedup, "eager", s.speedup_eager));
  check(ReadOptional(speedup, "compile", s.speedup_compile));
  const json& integrity = Member(eval, "integrity");
  check(ReadValue(integrity, "verdict", s.verdict));
  check(ReadValue(Member(eval, "reward"), "milestone", s.milestone));
  if (!st) return st.error();
  const json& flags = Member(integrity, "flags");
  if (flags.is_array()) {
    for (const json& f : flags) {
      IntegrityNote note;
      check(ReadValue(f, "check", note.check));
      check(ReadValue(f, "severity", note.severity));
      check(ReadValue(f, "detail", note.detail));
      s.flags.push_back(std::move(note));
    }
  }
  if (!st) return st.error();
  return s;
}

}  // namespace kforge::search
