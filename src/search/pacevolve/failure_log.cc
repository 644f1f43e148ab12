#include "search/pacevolve/failure_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace kforge::search::pacevolve {

std::string_view FailureKindName(FailureKind kind) {
  return kind == FailureKind::kPrunedIdea ? "pruned_idea" : "rejected_hypothesis";
}

nlohmann::json FailureEntry::ToJson() const {
  nlohmann::json j = {{"kind", FailureKindName(kind)},
                      {"text", text},
                      {"island", island},
                      {"idea_id", idea_id},
                      {"iteration", iteration},
                      {"runtime_ms", nullptr},
                      {"reason", reason}};
  if (runtime_ms) j["runtime_ms"] = *runtime_ms;
  return j;
}

Result<FailureEntry> FailureEntry::FromJson(const nlohmann::json& j) {
  try {
    FailureEntry e;
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "pruned_idea") {
      e.kind = FailureKind::kPrunedIdea;
    } else if (kind == "rejected_hypothesis") {
      e.kind = FailureKind::kRejectedHypothesis;
    } else {
      return Error::BadInput(fmt::format("failure log: unknown kind '{}'", kind));
    }
    e.text = j.at("text").get<std::string>();
    e.island = j.at("island").get<int>();
    e.idea_id = j.at("idea_id").get<int>();
    e.iteration = j.at("iteration").get<int64_t>();
    if (!j.at("runtime_ms").is_null()) e.runtime_ms = j.at("runtime_ms").get<double>();
    e.reason = j.at("reason").get<std::string>();
    return e;
  } catch (const nlohmann::json::exception& ex) {
    return Error::BadInput(fmt::format("failure log entry JSON: {}", ex.what()));
  }
}

std::vector<std::string> FailureLog::NormalizedWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      word += static_cast<char>(std::tolower(u));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

double FailureLog::Similarity(std::string_view a, std::string_view b) {
  const std::vector<std::string> wa = NormalizedWords(a);
  const std::vector<std::string> wb = NormalizedWords(b);
  if (wa == wb) return 1.0;
  const std::set<std::string> sa(wa.begin(), wa.end());
  const std::set<std::string> sb(wb.begin(), wb.end());
  size_t common = 0;
  for (const std::string& w : sa) common += sb.count(w);
  const size_t uni = sa.size() + sb.size() - common;
  return uni == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(uni);
}

void FailureLog::Add(FailureEntry entry) {
  entries_.push_back(std::move(entry));
}

const FailureEntry* FailureLog::FindMatch(FailureKind kind, std::string_view text) const {
  if (NormalizedWords(text).empty()) return nullptr;
  for (const FailureEntry& e : entries_) {
    if (e.kind != kind || NormalizedWords(e.text).empty()) continue;
    if (Similarity(e.text, text) >= threshold_) return &e;
  }
  return nullptr;
}

nlohmann::json FailureLog::ToJson() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const FailureEntry& e : entries_) arr.push_back(e.ToJson());
  return arr;
}

Result<FailureLog> FailureLog::FromJson(const nlohmann::json& j, double match_threshold) {
  if (!j.is_array()) return Error::BadInput("failure log JSON must be an array");
  FailureLog log(match_threshold);
  for (const auto& e : j) {
    Result<FailureEntry> entry = FailureEntry::FromJson(e);
    if (!entry.ok()) return entry.error();
    log.Add(std::move(*entry));
  }
  return log;
}

}  // namespace kforge::search::pacevolve
