// Pearson's chi-square goodness-of-fit test for the sampler tests (test-only).
// The p-value comes from the regularised upper incomplete gamma function,
// Q(k/2, x/2), computed by its power series below a + 1 and by its continued
// fraction (modified Lentz) above, the textbook split that keeps both fast
// and accurate to ~1e-14.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kforge::search::testing {

inline double RegularizedGammaQ(double a, double x) {
  if (x <= 0.0) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1.0) {
    // P(a, x) = e^{-x} x^a / Γ(a+1) · Σ_n x^n / ((a+1)…(a+n))
    double term = 1.0 / a;
    double sum = term;
    for (int n = 1; n < 10000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-16) break;
    }
    return 1.0 - sum * std::exp(log_prefix);
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// P(X ≥ x) for X ~ χ²(degrees_of_freedom).
inline double ChiSquareSurvival(double x, double degrees_of_freedom) {
  return RegularizedGammaQ(degrees_of_freedom / 2.0, x / 2.0);
}

// Σ (O − E)² / E with E = total · p. Cells with p = 0 must have O = 0 (they
// are checked separately by the callers) and are skipped.
inline double ChiSquareStatistic(const std::vector<int64_t>& observed,
                                 const std::vector<double>& probabilities) {
  int64_t total = 0;
  for (int64_t o : observed) total += o;
  double stat = 0.0;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (probabilities[i] <= 0.0) continue;
    const double expected = static_cast<double>(total) * probabilities[i];
    const double diff = static_cast<double>(observed[i]) - expected;
    stat += diff * diff / expected;
  }
  return stat;
}

// Significance level of every goodness-of-fit test in the search tests: a
// correct sampler fails one in a thousand seeds, and the seeds are fixed.
inline constexpr double kChiSquareAlpha = 0.001;

}  // namespace kforge::search::testing
