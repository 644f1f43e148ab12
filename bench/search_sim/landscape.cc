#include "landscape.h"

#include <cmath>
#include <limits>

namespace kforge::bench {
namespace {

constexpr int kSmemTiling = 4;
constexpr int kRegisterBlocking = 5;
constexpr int kTensorCores = 6;
constexpr int kAsyncPipeline = 7;

}  // namespace

double Gaussian(search::Rng& rng) {
  const double u1 = 1.0 - rng.Uniform();  // (0, 1]
  const double u2 = rng.Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Landscape::Landscape() {
  techniques_ = {
      {"coalesced_access", {0, 0.15, 0.25, 0.28}, Family::kCommon, 0.20, 0.05},
      {"loop_unroll", {0, 0.04, 0.06, 0.03}, Family::kCommon, 0.10, 0.05},
      {"launch_config", {0, 0.05, 0.08, 0.02, -0.03}, Family::kCommon, 0.10, 0.02},
      {"kernel_fusion", {0, 0.20, 0.30}, Family::kCommon, 0.12, 0.15},
      {"smem_tiling", {0, 0.25, 0.40, 0.45}, Family::kSharedMemory, 0.22, 0.10},
      {"register_blocking", {0, 0.10, 0.18, 0.20}, Family::kSharedMemory, 0.08, 0.10},
      {"tensor_cores", {0, -0.10, 0.35, 0.75}, Family::kTensorCore, 0.05, 0.25},
      {"async_pipeline", {0, 0.05, 0.25, 0.35}, Family::kTensorCore, 0.03, 0.20},
      {"fast_math", {0, 0.03, 0.05}, Family::kCommon, 0.06, 0.50},
      {"persistent_kernel", {0, -0.05, -0.02, 0.02}, Family::kCommon, 0.04, 0.10},
  };
  floor_ms_ = baseline_ms() * std::exp(-2.3);

  // Exhaustive optimum (≈7·10^5 programs).
  optimum_ms_ = std::numeric_limits<double>::infinity();
  trap_ms_ = std::numeric_limits<double>::infinity();
  Program p{};
  while (true) {
    const double t = TrueRuntime(p);
    optimum_ms_ = std::min(optimum_ms_, t);
    if (p[kTensorCores] == 0 && p[kAsyncPipeline] == 0) trap_ms_ = std::min(trap_ms_, t);
    int i = 0;
    while (i < kTechniques && ++p[i] == Levels(i)) p[i++] = 0;
    if (i == kTechniques) break;
  }
}

double Landscape::TrueRuntime(const Program& p) const {
  double common = 0.0, smem = 0.0, tensor = 0.0;
  for (int t = 0; t < kTechniques; ++t) {
    double g = techniques_[t].gain[p[t]];
    // Register blocking only works on top of shared-memory tiles.
    if (t == kRegisterBlocking && p[kSmemTiling] == 0) g = 0.0;
    // The async pipeline only pays off feeding tensor cores; otherwise it costs.
    if (t == kAsyncPipeline && p[kTensorCores] < 2) g = -0.05 * p[t];
    switch (techniques_[t].family) {
      case Family::kCommon:
        common += g;
        break;
      case Family::kSharedMemory:
        smem += g;
        break;
      case Family::kTensorCore:
        tensor += g;
        break;
    }
  }
  const bool uses_smem = p[kSmemTiling] > 0 || p[kRegisterBlocking] > 0;
  const bool uses_tensor = p[kTensorCores] > 0 || p[kAsyncPipeline] > 0;
  if (uses_smem && uses_tensor) tensor = 0.25 * tensor - 0.10;  // incompatible layouts
  return baseline_ms() * std::exp(-(common + smem + tensor));
}

double Landscape::Measure(const Program& p, search::Rng& rng) const {
  return TrueRuntime(p) * std::exp(0.02 * Gaussian(rng));
}

std::string Landscape::Signature(const Program& p) const {
  std::string out;
  for (int t = 0; t < kTechniques; ++t) {
    if (p[t] == 0) continue;
    if (!out.empty()) out += ' ';
    out += techniques_[t].name + "=" + std::to_string(p[t]);
  }
  return out.empty() ? "reference" : out;
}

int Landscape::FindTechnique(const std::string& name) const {
  for (int t = 0; t < kTechniques; ++t) {
    if (techniques_[t].name == name) return t;
  }
  return -1;
}

}  // namespace kforge::bench
