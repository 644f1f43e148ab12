#include "report/number_format.h"

#include <fmt/format.h>

#include <cmath>

namespace kforge::report {

namespace {

constexpr double kThousand = 1e3;
constexpr double kMillion = 1e6;
constexpr double kMinute = 60;
constexpr double kHour = 3600;

}  // namespace

std::string FormatSpeedup(const std::optional<double>& speedup) {
  if (!speedup) return kMissing;
  return fmt::format("{:.2f}x", *speedup);
}

std::string FormatRate(const std::optional<double>& rate) {
  if (!rate) return kMissing;
  return fmt::format("{:.1f}%", 100 * *rate);
}

std::string FormatUsd(double usd) {
  // Small spends (local models, short runs) still show a non-zero figure.
  if (usd != 0 && std::fabs(usd) < 1) return fmt::format("${:.4f}", usd);
  return fmt::format("${:.2f}", usd);
}

std::string FormatCount(int64_t n) {
  double v = static_cast<double>(n);
  if (std::fabs(v) >= kMillion) return fmt::format("{:.1f}M", v / kMillion);
  if (std::fabs(v) >= 10 * kThousand) return fmt::format("{:.1f}k", v / kThousand);
  return fmt::format("{}", n);
}

std::string FormatSeconds(double seconds) {
  if (seconds >= kHour) return fmt::format("{:.1f} h", seconds / kHour);
  if (seconds >= kMinute) return fmt::format("{:.1f} min", seconds / kMinute);
  return fmt::format("{:.0f} s", seconds);
}

std::string FormatMs(const std::optional<double>& ms) {
  if (!ms) return kMissing;
  return fmt::format("{:.4g} ms", *ms);
}

}  // namespace kforge::report
