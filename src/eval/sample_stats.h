// Summaries of timing samples, and the noise-based stopping rule.
#pragma once

#include <vector>

namespace kforge {

struct SampleSummary {
  double median = 0, mean = 0, p10 = 0, p90 = 0, stddev = 0, rel_stddev = 0;
  int samples = 0;
};

SampleSummary Summarize(std::vector<double> samples);

// Relative standard error of the median (≈ 1.2533·σ/√n / median, with σ
// estimated robustly as 1.4826·MAD), the noise measure the stopping rule
// drives below its target.
double RelativeMedianError(const std::vector<double>& samples);

// The same for samples taken in batches of `batch` consecutive samples that
// share their conditions (one placement of the buffers, one stretch of clock
// and temperature): samples within a batch are not independent, batch
// medians are, so the error comes from the batch medians' spread over
// √(number of batches). For independent samples it is about 1.2× the
// per-sample estimate; for batches that differ, it is the honest one.
// Infinite with fewer than three complete batches.
double BatchedMedianError(const std::vector<double>& samples, int batch);

// A ratio of two programs' medians from one timing window (a speedup:
// numerator = the baseline's samples, denominator = the candidate's), with
// its relative standard error: the two medians' batched errors combined in
// quadrature (the programs' batches are timed apart, so their errors are
// independent). rel_error is infinite until both errors are known.
struct RatioEstimate {
  double value = 0;
  double rel_error = 0;
  // The interval value·(1 ± sigmas·rel_error).
  double Lower(double sigmas) const { return value * (1 - sigmas * rel_error); }
  double Upper(double sigmas) const { return value * (1 + sigmas * rel_error); }
  // Whether `threshold` lies outside the interval: a decision against it
  // (a reward milestone, a best) no longer depends on more samples.
  bool ClearOf(double threshold, double sigmas) const {
    return Upper(sigmas) < threshold || Lower(sigmas) > threshold;
  }
};

RatioEstimate MedianRatio(const std::vector<double>& numerator,
                          const std::vector<double>& denominator, int batch);

// The racing rule of a timing window: a candidate whose speedup lies,
// `sigmas` standard errors out, below the lower end of the best speedup
// already measured for the task cannot become the best by more samples, so
// its window may end before the noise target, provided every other decision
// drawn from the window is settled too (`decisions`: each ratio with the
// threshold it is compared against, such as a reward milestone's margin).
struct RatioDecision {
  RatioEstimate ratio;
  double threshold = 0;
};
bool ClearlyBelowBest(const RatioEstimate& speedup, const RatioEstimate& best, double sigmas,
                      const std::vector<RatioDecision>& decisions);

}  // namespace kforge
