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

}  // namespace kforge
