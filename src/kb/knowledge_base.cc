#include "kb/knowledge_base.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kforge::kb {

namespace {

constexpr const char* kFormat = "kforge-kb";
constexpr int kVersion = 1;

// Uniform in (0, 1) from 53 bits: our own transform, the same on every platform.
double OpenUniform(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

Optimization* FindIn(PerformanceStateEntry& s, const std::string& technique) {
  for (auto& o : s.optimizations) {
    if (o.technique == technique) return &o;
  }
  return nullptr;
}

}  // namespace

double Optimization::MeanLogSpeedup() const {
  return attempts > 0 ? sum_log_speedup / static_cast<double>(attempts) : 0.0;
}

double Optimization::PredictedGain() const {
  double w = KnowledgeBase::kPriorWeight;
  return std::exp((w * prior_log_gain + sum_log_speedup) / (w + static_cast<double>(attempts)));
}

PerformanceStateEntry& KnowledgeBase::AddState(const std::string& name,
                                               const std::string& description) {
  auto [it, added] = states_.try_emplace(name);
  if (added) it->second.name = name;
  if (it->second.description.empty()) it->second.description = description;
  return it->second;
}

Optimization& KnowledgeBase::AddOptimization(const std::string& state, const Optimization& opt) {
  PerformanceStateEntry& s = AddState(state);
  if (Optimization* o = FindIn(s, opt.technique)) return *o;
  s.optimizations.push_back(opt);
  return s.optimizations.back();
}

const Optimization* KnowledgeBase::Find(const std::string& state,
                                        const std::string& technique) const {
  auto it = states_.find(state);
  if (it == states_.end()) return nullptr;
  for (const auto& o : it->second.optimizations) {
    if (o.technique == technique) return &o;
  }
  return nullptr;
}

const Optimization& KnowledgeBase::Record(const std::string& state, const std::string& technique,
                                          const Outcome& outcome) {
  Optimization blank;
  blank.technique = technique;
  Optimization& o = AddOptimization(state, blank);
  ++o.attempts;
  bool usable = outcome.accepted && outcome.speedup > 0 && std::isfinite(outcome.speedup);
  o.sum_log_speedup += usable ? std::log(outcome.speedup) : kFailedLogSpeedup;
  if (usable && outcome.speedup >= kSuccessSpeedup) ++o.successes;
  return o;
}

Status KnowledgeBase::RewriteNotes(const std::string& state, const std::string& technique,
                                   const std::string& notes) {
  return RewriteText(state, technique, &Optimization::notes, notes);
}

Status KnowledgeBase::RewriteDescription(const std::string& state, const std::string& technique,
                                         const std::string& description) {
  return RewriteText(state, technique, &Optimization::description, description);
}

Status KnowledgeBase::RewriteText(const std::string& state, const std::string& technique,
                                  std::string Optimization::*field, const std::string& text) {
  auto it = states_.find(state);
  Optimization* o = it == states_.end() ? nullptr : FindIn(it->second, technique);
  if (!o) return Error::NotFound(fmt::format("no optimization {} in state {}", technique, state));
  o->*field = text;
  return Status::Ok();
}

std::vector<const Optimization*> KnowledgeBase::Select(const std::string& state,
                                                       const SelectionOptions& opt,
                                                       std::mt19937_64& rng) const {
  std::vector<const Optimization*> out;
  auto it = states_.find(state);
  if (it == states_.end() || opt.k == 0) return out;
  const double t = std::max(opt.temperature, 1e-6);
  // Key u^(1/w) with w = exp(log(gain)/t); in logs: log(u) / w. Larger wins.
  std::vector<std::pair<double, const Optimization*>> keyed;
  double max_log_w = -INFINITY;
  for (const auto& o : it->second.optimizations) {
    max_log_w = std::max(max_log_w, std::log(o.PredictedGain()) / t);
  }
  for (const auto& o : it->second.optimizations) {
    double log_w = std::log(o.PredictedGain()) / t - max_log_w;  // ≤ 0, no overflow
    double key = std::log(OpenUniform(rng)) / std::exp(log_w);
    keyed.emplace_back(key, &o);
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < keyed.size() && i < opt.k; ++i) out.push_back(keyed[i].second);
  return out;
}

void KnowledgeBase::Merge(const KnowledgeBase& other) {
  for (const auto& [name, theirs] : other.states_) {
    PerformanceStateEntry& ours = AddState(name, theirs.description);
    if (ours.signature.empty()) ours.signature = theirs.signature;
    for (const auto& t : theirs.optimizations) {
      Optimization* o = FindIn(ours, t.technique);
      if (!o) {
        ours.optimizations.push_back(t);
        continue;
      }
      o->attempts += t.attempts;
      o->successes += t.successes;
      o->sum_log_speedup += t.sum_log_speedup;
      if (o->description.empty()) o->description = t.description;
      if (o->notes.empty()) o->notes = t.notes;
    }
  }
}

nlohmann::json KnowledgeBase::ToJson() const {
  nlohmann::json states = nlohmann::json::array();
  for (const auto& [name, s] : states_) {
    nlohmann::json opts = nlohmann::json::array();
    for (const auto& o : s.optimizations) {
      opts.push_back({{"technique", o.technique},
                      {"description", o.description},
                      {"notes", o.notes},
                      {"attempts", o.attempts},
                      {"successes", o.successes},
                      {"sum_log_speedup", o.sum_log_speedup},
                      {"prior_log_gain", o.prior_log_gain},
                      {"mean_log_speedup", o.MeanLogSpeedup()},
                      {"predicted_gain", o.PredictedGain()}});
    }
    states.push_back({{"name", name},
                      {"description", s.description},
                      {"signature", s.signature},
                      {"optimizations", opts}});
  }
  return {{"format", kFormat}, {"version", kVersion}, {"arch", arch_}, {"states", states}};
}

nlohmann::json KnowledgeBase::ToContractJson() const {
  nlohmann::json states = nlohmann::json::array(), opts = nlohmann::json::array();
  for (const auto& [name, s] : states_) {
    states.push_back(
        {{"id", name}, {"name", name}, {"description", s.description}, {"signature", s.signature}});
    for (const auto& o : s.optimizations) {
      opts.push_back({{"id", name + "/" + o.technique},
                      {"state", name},
                      {"technique", o.technique},
                      {"description", o.description},
                      {"attempts", o.attempts},
                      {"successes", o.successes},
                      {"mean_log_speedup", o.MeanLogSpeedup()},
                      {"predicted_gain", o.PredictedGain()}});
    }
  }
  return {{"states", states}, {"optimizations", opts}};
}

Result<KnowledgeBase> KnowledgeBase::FromJson(const nlohmann::json& j) {
  auto bad = [](const std::string& what) { return Error::BadInput("knowledge base: " + what); };
  if (!j.is_object() || j.value("format", "") != kFormat) return bad("not a kforge-kb document");
  if (j.value("version", 0) != kVersion) {
    return bad(
        fmt::format("version {} is not supported (expected {})", j.value("version", 0), kVersion));
  }
  if (!j.contains("states") || !j["states"].is_array()) return bad("'states' must be an array");
  KnowledgeBase kb(j.value("arch", ""));
  try {
    for (const auto& s : j["states"]) {
      std::string name = s.at("name").get<std::string>();
      if (name.empty()) return bad("a state without a name");
      PerformanceStateEntry& entry = kb.AddState(name, s.value("description", ""));
      if (entry.signature.empty()) entry.signature = s.value("signature", "");
      for (const auto& o : s.value("optimizations", nlohmann::json::array())) {
        Optimization opt;
        opt.technique = o.at("technique").get<std::string>();
        if (opt.technique.empty())
          return bad(fmt::format("state {}: a technique without a name", name));
        opt.description = o.value("description", "");
        opt.notes = o.value("notes", "");
        opt.attempts = o.value("attempts", int64_t{0});
        opt.successes = o.value("successes", int64_t{0});
        opt.sum_log_speedup = o.value("sum_log_speedup", 0.0);
        opt.prior_log_gain = o.value("prior_log_gain", 0.0);
        if (opt.attempts < 0 || opt.successes < 0 || opt.successes > opt.attempts ||
            !std::isfinite(opt.sum_log_speedup) || !std::isfinite(opt.prior_log_gain)) {
          return bad(
              fmt::format("state {}, technique {}: inconsistent statistics", name, opt.technique));
        }
        kb.AddOptimization(name, opt);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return bad(e.what());
  }
  return kb;
}

}  // namespace kforge::kb
