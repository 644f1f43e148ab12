#include "synthetic_llm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kforge::bench {
namespace {

constexpr double kBaseFailure = 0.08;     // any edit can break the build
constexpr double kSideEffectRate = 0.10;  // an edit also nudges another technique
constexpr double kStepUpRate = 0.70;      // prefer the next level up
constexpr double kUsedUpFactor = 0.2;     // the code already does this fully

}  // namespace

std::vector<double> SyntheticLlm::TechniqueWeights(const Program& parent,
                                                   const std::vector<SeenAttempt>& context,
                                                   double anchoring,
                                                   const std::vector<double>& boost) const {
  // Per technique, what a reader takes away from the context: the largest
  // gain it gave, how often it has failed since it last helped, how often it
  // is mentioned at all.
  std::vector<double> best_gain(kTechniques, 0.0);
  std::vector<int> recent_failures(kTechniques, 0), mentions(kTechniques, 0);
  for (const SeenAttempt& a : context) {
    if (a.technique < 0) continue;
    ++mentions[a.technique];
    if (a.improved) {
      best_gain[a.technique] = std::max(best_gain[a.technique], a.gain);
      recent_failures[a.technique] = 0;
    } else {
      ++recent_failures[a.technique];
    }
  }
  std::vector<double> w(kTechniques);
  for (int t = 0; t < kTechniques; ++t) {
    w[t] = land_.techniques()[t].popularity * (1.0 + 5.0 * best_gain[t]) *
           std::pow(0.7, std::min(recent_failures[t], 6)) * std::pow(anchoring, mentions[t]);
    if (parent[t] == land_.Levels(t) - 1) w[t] *= kUsedUpFactor;
    if (t < static_cast<int>(boost.size())) w[t] *= boost[t];
  }
  return w;
}

int SyntheticLlm::ProposeLevel(const Program& parent, int t) {
  const int levels = land_.Levels(t);
  const int current = parent[t];
  if (current + 1 < levels && rng_.Uniform() < kStepUpRate) return current + 1;
  int level = static_cast<int>(rng_.UniformIndex(levels - 1));
  if (level >= current) ++level;  // any level but the current one
  return level;
}

Edit SyntheticLlm::ProposeEdit(const Program& parent, const std::vector<SeenAttempt>& context,
                               double anchoring, const std::vector<double>& boost) {
  const std::vector<double> w = TechniqueWeights(parent, context, anchoring, boost);
  const uint64_t parent_hash = Hash(parent);
  Edit e;
  for (int attempt = 0; attempt < 2; ++attempt) {  // one second look at a visible repeat
    e.technique = static_cast<int>(rng_.Categorical(w));
    e.level = ProposeLevel(parent, e.technique);
    const bool repeat = std::any_of(context.begin(), context.end(), [&](const SeenAttempt& a) {
      return a.parent == parent_hash && a.technique == e.technique && a.level == e.level;
    });
    if (!repeat) break;
  }
  return e;
}

Implemented SyntheticLlm::Implement(const Program& parent, const Edit& edit) {
  Implemented out;
  out.program = parent;
  out.program[edit.technique] = edit.level;
  if (rng_.Uniform() < kSideEffectRate) {
    const int u = static_cast<int>(rng_.UniformIndex(kTechniques));
    const int delta = rng_.Uniform() < 0.5 ? -1 : 1;
    out.program[u] = std::clamp(out.program[u] + delta, 0, land_.Levels(u) - 1);
  }
  out.failed = rng_.Uniform() < kBaseFailure + land_.techniques()[edit.technique].fail_rate;
  return out;
}

Implemented SyntheticLlm::OneShot() {
  Implemented out;
  double survive = 1.0 - kBaseFailure;
  for (int t = 0; t < kTechniques; ++t) {
    const Technique& tech = land_.techniques()[t];
    if (rng_.Uniform() >= std::min(0.9, 2.5 * tech.popularity)) continue;
    out.program[t] = 1 + static_cast<int>(rng_.UniformIndex(land_.Levels(t) - 1));
    survive *= 1.0 - tech.fail_rate;
  }
  out.failed = rng_.Uniform() >= survive;
  return out;
}

std::vector<double> SyntheticLlm::ContrastBoost(
    const std::vector<Program>& exemplars_best_first) const {
  std::vector<double> boost(kTechniques, 1.0);
  if (exemplars_best_first.size() < 2) return boost;
  const Program& best = exemplars_best_first.front();
  for (size_t k = 1; k < exemplars_best_first.size(); ++k) {
    for (int t = 0; t < kTechniques; ++t) {
      if (best[t] > exemplars_best_first[k][t]) boost[t] *= 3.0;  // "this is what made it fast"
    }
  }
  return boost;
}

std::string SyntheticLlm::IdeaText(int t, int angle) const {
  return fmt::format("Apply {} to the kernel, angle {}.", land_.techniques()[t].name, angle);
}

int SyntheticLlm::ParseIdea(const std::string& text) const {
  std::istringstream in(text);
  std::string apply, name;
  in >> apply >> name;
  if (apply != "Apply") return -1;
  if (!name.empty() && name.back() == ',') name.pop_back();
  return land_.FindTechnique(name);
}

std::string SyntheticLlm::ExperimentText(const Edit& e, const Program& parent) const {
  // The parent's hash is part of the text: the same change on different code
  // is a different experiment.
  return fmt::format("Set {} to level {} on program p{:012x}", land_.techniques()[e.technique].name,
                     e.level, Hash(parent));
}

std::optional<Edit> SyntheticLlm::ParseExperiment(const std::string& text) const {
  std::istringstream in(text);
  std::string set, name, to, level_word;
  int level = -1;
  in >> set >> name >> to >> level_word >> level;
  const int t = land_.FindTechnique(name);
  if (set != "Set" || t < 0 || level < 0 || level >= land_.Levels(t)) return std::nullopt;
  return Edit{t, level};
}

uint64_t SyntheticLlm::Hash(const Program& p) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (int v : p) {
    h ^= static_cast<uint64_t>(v + 1);
    h *= 1099511628211ULL;
  }
  return h & 0xffffffffffffULL;  // 48 bits: 12 hex digits in experiment texts
}

}  // namespace kforge::bench
