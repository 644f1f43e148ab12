#include "search/pacevolve/momentum.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kforge::search::pacevolve {

double PerformanceGap(double score, double target) {
  return score - target;
}

double RelativeProgress(double previous_best, double current_best, double target) {
  if (!(current_best < previous_best)) return 0.0;  // also false for NaN
  const double previous_gap = previous_best - target;
  if (previous_gap <= 0.0) return 1.0;
  return std::clamp((previous_best - current_best) / previous_gap, 0.0, 1.0);
}

double AbsoluteProgress(double initial_score, double current_best, double target) {
  const double initial_gap = initial_score - target;
  if (!(initial_gap > 0.0) || !std::isfinite(current_best)) return 0.0;
  return std::clamp((initial_score - current_best) / initial_gap, 0.0, 1.0);
}

MomentumTracker::MomentumTracker(double beta, double target, double initial_score)
    : beta_(beta), target_(target), best_(initial_score) {}

MomentumTracker::Step MomentumTracker::Observe(double score) {
  Step step;
  step.score = score;
  const double previous = best_;
  step.improved = score < previous;  // NaN and +∞ never improve
  step.best = step.improved ? score : previous;
  step.gap = PerformanceGap(step.best, target_);
  step.relative_progress = RelativeProgress(previous, step.best, target_);
  momentum_ = beta_ * momentum_ + (1.0 - beta_) * step.relative_progress;
  step.momentum = momentum_;
  best_ = step.best;
  return step;
}

void MomentumTracker::Restart(double best) {
  best_ = best;
  momentum_ = 1.0;
}

nlohmann::json MomentumTracker::ToJson() const {
  return {{"beta", beta_}, {"target", target_}, {"best", best_}, {"momentum", momentum_}};
}

Result<MomentumTracker> MomentumTracker::FromJson(const nlohmann::json& j) {
  try {
    MomentumTracker t(j.at("beta").get<double>(), j.at("target").get<double>(),
                      j.at("best").get<double>());
    t.momentum_ = j.at("momentum").get<double>();
    return t;
  } catch (const nlohmann::json::exception& e) {
    return Error::BadInput(fmt::format("momentum JSON: {}", e.what()));
  }
}

std::vector<double> BacktrackDistribution(size_t num_states, double alpha) {
  std::vector<double> p(num_states);
  double sum = 0.0;
  for (size_t k = 0; k < num_states; ++k) {
    p[k] = std::pow(static_cast<double>(k + 1), -alpha);
    sum += p[k];
  }
  for (double& x : p) x /= sum;
  return p;
}

size_t SampleBacktrackState(size_t num_states, double alpha, Rng& rng) {
  return rng.Categorical(BacktrackDistribution(num_states, alpha));
}

}  // namespace kforge::search::pacevolve
