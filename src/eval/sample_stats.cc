#include "eval/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kforge {

namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] * (1 - frac) + sorted[hi] * frac;
}

}  // namespace

SampleSummary Summarize(std::vector<double> samples) {
  SampleSummary s;
  s.samples = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = Quantile(samples, 0.5);
  s.p10 = Quantile(samples, 0.1);
  s.p90 = Quantile(samples, 0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  double var = 0;
  for (double x : samples) var += (x - s.mean) * (x - s.mean);
  s.stddev = samples.size() > 1 ? std::sqrt(var / (samples.size() - 1)) : 0;
  s.rel_stddev = s.mean > 0 ? s.stddev / s.mean : 0;
  return s;
}

double RelativeMedianError(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::infinity();
  SampleSummary s = Summarize(samples);
  if (s.median <= 0) return std::numeric_limits<double>::infinity();
  return 1.2533 * s.stddev / std::sqrt(static_cast<double>(samples.size())) / s.median;
}

}  // namespace kforge
