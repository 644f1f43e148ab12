// Summaries of timing samples, and the noise-based stopping rule.
#pragma once

#include <vector>

namespace kforge {

struct SampleSummary {
  double median = 0, mean = 0, p10 = 0, p90 = 0, stddev = 0, rel_stddev = 0;
  int samples = 0;
};

SampleSummary Summarize(std::vector<double> samples);

// Relative standard error of the median (≈ 1.2533·σ/√n / median), the noise
// measure the stopping rule drives below its target.
double RelativeMedianError(const std::vector<double>& samples);

}  // namespace kforge
