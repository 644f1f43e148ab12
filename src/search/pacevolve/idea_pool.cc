#include "search/pacevolve/idea_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "search/pacevolve/failure_log.h"

namespace kforge::search::pacevolve {

nlohmann::json Hypothesis::ToJson() const {
  nlohmann::json j = {{"description", description}, {"candidate_id", candidate_id},
                      {"accepted", accepted},       {"runtime_ms", nullptr},
                      {"outcome", outcome},         {"iteration", iteration}};
  if (runtime_ms) j["runtime_ms"] = *runtime_ms;
  return j;
}

Result<Hypothesis> Hypothesis::FromJson(const nlohmann::json& j) {
  try {
    Hypothesis h;
    h.description = j.at("description").get<std::string>();
    h.candidate_id = j.at("candidate_id").get<std::string>();
    h.accepted = j.at("accepted").get<bool>();
    if (!j.at("runtime_ms").is_null()) h.runtime_ms = j.at("runtime_ms").get<double>();
    h.outcome = j.at("outcome").get<std::string>();
    h.iteration = j.at("iteration").get<int64_t>();
    return h;
  } catch (const nlohmann::json::exception& e) {
    return Error::BadInput(fmt::format("hypothesis JSON: {}", e.what()));
  }
}

nlohmann::json Idea::ToJson() const {
  nlohmann::json hyps = nlohmann::json::array();
  for (const Hypothesis& h : hypotheses) hyps.push_back(h.ToJson());
  nlohmann::json j = {{"id", id},
                      {"description", description},
                      {"reasoning", reasoning},
                      {"hypotheses", hyps},
                      {"key_findings", key_findings},
                      {"summarized_hypotheses", summarized_hypotheses},
                      {"total_hypotheses", TotalHypotheses()},
                      {"best_runtime_ms", nullptr},
                      {"best_candidate_id", best_candidate_id},
                      {"origin_island", origin_island}};
  if (best_runtime_ms) j["best_runtime_ms"] = *best_runtime_ms;
  return j;
}

Result<Idea> Idea::FromJson(const nlohmann::json& j) {
  try {
    Idea idea;
    idea.id = j.at("id").get<int>();
    idea.description = j.at("description").get<std::string>();
    idea.reasoning = j.at("reasoning").get<std::string>();
    for (const auto& h : j.at("hypotheses")) {
      Result<Hypothesis> hyp = Hypothesis::FromJson(h);
      if (!hyp.ok()) return hyp.error();
      idea.hypotheses.push_back(std::move(*hyp));
    }
    idea.key_findings = j.at("key_findings").get<std::string>();
    idea.summarized_hypotheses = j.at("summarized_hypotheses").get<int>();
    if (!j.at("best_runtime_ms").is_null()) {
      idea.best_runtime_ms = j.at("best_runtime_ms").get<double>();
    }
    idea.best_candidate_id = j.at("best_candidate_id").get<std::string>();
    idea.origin_island = j.at("origin_island").get<int>();
    return idea;
  } catch (const nlohmann::json::exception& e) {
    return Error::BadInput(fmt::format("idea JSON: {}", e.what()));
  }
}

int IdeaPool::Add(std::string description, std::string reasoning) {
  Idea idea;
  idea.id = next_id_++;
  idea.description = std::move(description);
  idea.reasoning = std::move(reasoning);
  ideas_.push_back(std::move(idea));
  return ideas_.back().id;
}

Idea* IdeaPool::FindMutable(int id) {
  for (Idea& idea : ideas_) {
    if (idea.id == id) return &idea;
  }
  return nullptr;
}

const Idea* IdeaPool::Find(int id) const {
  for (const Idea& idea : ideas_) {
    if (idea.id == id) return &idea;
  }
  return nullptr;
}

const Idea* IdeaPool::FindByDescription(std::string_view description) const {
  const std::vector<std::string> words = FailureLog::NormalizedWords(description);
  for (const Idea& idea : ideas_) {
    if (FailureLog::NormalizedWords(idea.description) == words) return &idea;
  }
  return nullptr;
}

Status IdeaPool::Merge(int id, std::string updated_description) {
  Idea* idea = FindMutable(id);
  if (idea == nullptr) return Error::NotFound(fmt::format("idea {} is not in the pool", id));
  idea->description = std::move(updated_description);
  return Status::Ok();
}

Status IdeaPool::Record(int id, Hypothesis hypothesis) {
  Idea* idea = FindMutable(id);
  if (idea == nullptr) return Error::NotFound(fmt::format("idea {} is not in the pool", id));
  if (hypothesis.accepted && hypothesis.runtime_ms &&
      (!idea->best_runtime_ms || *hypothesis.runtime_ms < *idea->best_runtime_ms)) {
    idea->best_runtime_ms = hypothesis.runtime_ms;
    idea->best_candidate_id = hypothesis.candidate_id;
  }
  idea->hypotheses.push_back(std::move(hypothesis));
  return Status::Ok();
}

bool IdeaPool::NeedsSummary(int id) const {
  const Idea* idea = Find(id);
  return idea != nullptr && static_cast<int>(idea->hypotheses.size()) > max_hypotheses_;
}

Status IdeaPool::ApplySummary(int id, std::string key_findings) {
  Idea* idea = FindMutable(id);
  if (idea == nullptr) return Error::NotFound(fmt::format("idea {} is not in the pool", id));
  idea->summarized_hypotheses += static_cast<int>(idea->hypotheses.size());
  idea->hypotheses.clear();
  idea->key_findings = std::move(key_findings);
  return Status::Ok();
}

Result<std::vector<Idea>> IdeaPool::Remove(const std::vector<int>& ids) {
  std::set<int> seen;
  for (int id : ids) {
    if (!seen.insert(id).second) {
      return Error::BadInput(fmt::format("idea {} is listed twice", id));
    }
    if (!Contains(id)) return Error::NotFound(fmt::format("idea {} is not in the pool", id));
  }
  std::vector<Idea> removed;
  std::vector<Idea> kept;
  for (Idea& idea : ideas_) {
    (seen.count(idea.id) ? removed : kept).push_back(std::move(idea));
  }
  ideas_ = std::move(kept);
  return removed;
}

int IdeaPool::Import(const Idea& idea, int origin_island) {
  Idea copy = idea;
  copy.id = next_id_++;
  copy.origin_island = origin_island;
  ideas_.push_back(std::move(copy));
  return ideas_.back().id;
}

std::vector<int> IdeaPool::RankedIds() const {
  std::vector<const Idea*> order;
  for (const Idea& idea : ideas_) order.push_back(&idea);
  std::stable_sort(order.begin(), order.end(), [](const Idea* a, const Idea* b) {
    if (a->best_runtime_ms.has_value() != b->best_runtime_ms.has_value()) {
      return a->best_runtime_ms.has_value();
    }
    if (a->best_runtime_ms && *a->best_runtime_ms != *b->best_runtime_ms) {
      return *a->best_runtime_ms < *b->best_runtime_ms;
    }
    return a->id < b->id;
  });
  std::vector<int> ids;
  for (const Idea* idea : order) ids.push_back(idea->id);
  return ids;
}

void IdeaPool::RestoreFrom(const IdeaPool& snapshot) {
  const int counter = std::max(next_id_, snapshot.next_id_);
  *this = snapshot;
  next_id_ = counter;
}

nlohmann::json IdeaPool::ToJson() const {
  nlohmann::json ideas = nlohmann::json::array();
  for (const Idea& idea : ideas_) ideas.push_back(idea.ToJson());
  return {{"max_ideas", max_ideas_},
          {"max_hypotheses", max_hypotheses_},
          {"next_id", next_id_},
          {"ideas", ideas}};
}

Result<IdeaPool> IdeaPool::FromJson(const nlohmann::json& j) {
  try {
    IdeaPool pool(j.at("max_ideas").get<int>(), j.at("max_hypotheses").get<int>());
    pool.next_id_ = j.at("next_id").get<int>();
    for (const auto& i : j.at("ideas")) {
      Result<Idea> idea = Idea::FromJson(i);
      if (!idea.ok()) return idea.error();
      if (pool.Contains(idea->id) || idea->id >= pool.next_id_) {
        return Error::BadInput(fmt::format("idea pool JSON: bad or duplicate id {}", idea->id));
      }
      pool.ideas_.push_back(std::move(*idea));
    }
    return pool;
  } catch (const nlohmann::json::exception& e) {
    return Error::BadInput(fmt::format("idea pool JSON: {}", e.what()));
  }
}

int CountSentences(std::string_view text) {
  int count = 0;
  bool pending = false;  // non-blank text since the last sentence end
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!std::isspace(static_cast<unsigned char>(c))) pending = true;
    if (c != '.' && c != '!' && c != '?') continue;
    size_t j = i + 1;
    while (j < text.size() && (text[j] == '.' || text[j] == '!' || text[j] == '?')) ++j;
    size_t k = j;
    while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
    const bool at_end = k == text.size();
    const bool next_starts_sentence =
        k > j && k < text.size() && std::isupper(static_cast<unsigned char>(text[k]));
    if (at_end || next_starts_sentence) {
      ++count;
      pending = false;
      i = j - 1;
    }
  }
  return count + (pending ? 1 : 0);
}

}  // namespace kforge::search::pacevolve
