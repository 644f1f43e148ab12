#include "search/contrastive/exemplar_store.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace kforge::search {

std::string_view ScoreKindName(ScoreKind kind) {
  return kind == ScoreKind::kSpeedup ? "speedup" : "runtime";
}

Result<ScoreKind> ParseScoreKind(std::string_view name) {
  if (name == "speedup") return ScoreKind::kSpeedup;
  if (name == "runtime") return ScoreKind::kRuntime;
  return Error::BadInput(
      fmt::format("contrastive score '{}' is not one of: speedup, runtime", name));
}

ExemplarStore::ExemplarStore(ScoreKind kind, double reference_ms, double bucket_width)
    : kind_(kind), reference_ms_(reference_ms), bucket_width_(bucket_width) {}

double ExemplarStore::ScoreOf(double runtime_ms) const {
  return kind_ == ScoreKind::kSpeedup ? reference_ms_ / runtime_ms : -runtime_ms;
}

bool ExemplarStore::Add(std::string candidate_id, double runtime_ms, int island,
                        int64_t iteration) {
  if (!std::isfinite(runtime_ms) || runtime_ms <= 0.0) return false;
  if (Find(candidate_id) != nullptr) return false;
  Exemplar e;
  e.candidate_id = std::move(candidate_id);
  e.runtime_ms = runtime_ms;
  e.score = ScoreOf(runtime_ms);
  e.island = island;
  e.iteration = iteration;
  entries_.push_back(std::move(e));
  return true;
}

std::vector<ScoreBucket> ExemplarStore::Buckets() const {
  std::map<int64_t, ScoreBucket> by_index;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const int64_t k = static_cast<int64_t>(std::floor(entries_[i].score / bucket_width_));
    ScoreBucket& b = by_index[k];
    b.index = k;
    b.members.push_back(i);
  }
  std::vector<ScoreBucket> out;
  out.reserve(by_index.size());
  for (auto& [k, b] : by_index) {
    b.lower = static_cast<double>(k) * bucket_width_;
    b.upper = static_cast<double>(k + 1) * bucket_width_;
    double sum = 0.0;
    for (size_t m : b.members) sum += entries_[m].score;
    b.mean_score = sum / static_cast<double>(b.members.size());
    out.push_back(std::move(b));
  }
  return out;
}

void ExemplarStore::Truncate(size_t n) {
  if (n < entries_.size()) entries_.resize(n);
}

const Exemplar* ExemplarStore::Find(std::string_view candidate_id) const {
  for (const Exemplar& e : entries_) {
    if (e.candidate_id == candidate_id) return &e;
  }
  return nullptr;
}

const Exemplar* ExemplarStore::Best() const {
  const Exemplar* best = nullptr;
  for (const Exemplar& e : entries_) {
    if (best == nullptr || e.score > best->score) best = &e;
  }
  return best;
}

nlohmann::json ExemplarStore::ToJson() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const Exemplar& e : entries_) {
    entries.push_back({{"candidate_id", e.candidate_id},
                       {"runtime_ms", e.runtime_ms},
                       {"island", e.island},
                       {"iteration", e.iteration}});
  }
  return {{"score", ScoreKindName(kind_)},
          {"reference_ms", reference_ms_},
          {"bucket_width", bucket_width_},
          {"entries", entries}};
}

Result<ExemplarStore> ExemplarStore::FromJson(const nlohmann::json& j) {
  try {
    Result<ScoreKind> kind = ParseScoreKind(j.at("score").get<std::string>());
    if (!kind.ok()) return kind.error();
    const double reference_ms = j.at("reference_ms").get<double>();
    const double width = j.at("bucket_width").get<double>();
    if (!(reference_ms > 0.0) || !(width > 0.0)) {
      return Error::BadInput("exemplar store: reference_ms and bucket_width must be positive");
    }
    ExemplarStore store(*kind, reference_ms, width);
    for (const auto& e : j.at("entries")) {
      if (!store.Add(e.at("candidate_id").get<std::string>(), e.at("runtime_ms").get<double>(),
                     e.at("island").get<int>(), e.at("iteration").get<int64_t>())) {
        return Error::BadInput("exemplar store: duplicate candidate or invalid runtime");
      }
    }
    return store;
  } catch (const nlohmann::json::exception& e) {
    return Error::BadInput(fmt::format("exemplar store JSON: {}", e.what()));
  }
}

}  // namespace kforge::search
