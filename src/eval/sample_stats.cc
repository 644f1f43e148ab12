#include "eval/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kforge {

namespace {

// σ of a normal distribution over its median absolute deviation.
constexpr double kMadToSigma = 1.4826;
// Standard error of the median over σ/√n, for normal data (√(π/2)).
constexpr double kMedianErrorFactor = 1.2533;
// Fewest batches whose medians say anything about their spread.
constexpr size_t kMinBatches = 3;

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

namespace {

// 1.2533 · 1.4826·MAD / √n: the standard error of the median of `values`.
double MedianError(std::vector<double> values) {
  if (values.size() < 2) return std::numeric_limits<double>::infinity();
  SampleSummary s = Summarize(values);
  // The spread from the median absolute deviation, not the standard
  // deviation: host-clock samples of short GPU calls have rare slow outliers
  // (a descheduled thread, a late wake-up) that inflate σ tenfold while the
  // median, and how well it is known, barely move. 1.4826·MAD equals σ for
  // normal data.
  for (double& x : values) x = std::abs(x - s.median);
  std::sort(values.begin(), values.end());
  double scale = kMadToSigma * Quantile(values, 0.5);
  if (scale <= 0) scale = s.stddev;  // over half the values equal: use σ
  return kMedianErrorFactor * scale / std::sqrt(static_cast<double>(values.size()));
}

}  // namespace

double RelativeMedianError(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::infinity();
  double median = Summarize(samples).median;
  if (median <= 0) return std::numeric_limits<double>::infinity();
  return MedianError(samples) / median;
}

double BatchedMedianError(const std::vector<double>& samples, int batch) {
  if (batch <= 1) return RelativeMedianError(samples);
  std::vector<double> medians;
  for (size_t i = 0; i + batch <= samples.size(); i += batch) {
    medians.push_back(
        Summarize(std::vector<double>(samples.begin() + i, samples.begin() + i + batch)).median);
  }
  if (medians.size() < kMinBatches) return std::numeric_limits<double>::infinity();
  double median = Summarize(samples).median;
  if (median <= 0) return std::numeric_limits<double>::infinity();
  return MedianError(std::move(medians)) / median;
}

RatioEstimate MedianRatio(const std::vector<double>& numerator,
                          const std::vector<double>& denominator, int batch) {
  RatioEstimate r;
  double den = Summarize(denominator).median;
  if (numerator.empty() || den <= 0) {
    r.rel_error = std::numeric_limits<double>::infinity();
    return r;
  }
  r.value = Summarize(numerator).median / den;
  double a = BatchedMedianError(numerator, batch);
  double b = BatchedMedianError(denominator, batch);
  r.rel_error = std::sqrt(a * a + b * b);
  return r;
}

bool ClearlyBelowBest(const RatioEstimate& speedup, const RatioEstimate& best, double sigmas,
                      const std::vector<RatioDecision>& decisions) {
  if (sigmas <= 0 || !std::isfinite(speedup.rel_error) || !std::isfinite(best.rel_error)) {
    return false;
  }
  if (!(speedup.Upper(sigmas) < best.Lower(sigmas))) return false;
  for (const RatioDecision& d : decisions) {
    if (!std::isfinite(d.ratio.rel_error) || !d.ratio.ClearOf(d.threshold, sigmas)) return false;
  }
  return true;
}

}  // namespace kforge
