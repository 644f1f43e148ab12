#include "search/contrastive/rng.h"

#include <limits>
#include <sstream>

namespace kforge::search {

double Rng::Uniform() {
  // The top 53 bits fill a double's mantissa exactly.
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

size_t Rng::UniformIndex(size_t n) {
  const uint64_t bound = static_cast<uint64_t>(n);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - (max % bound);  // reject the biased tail
  uint64_t x = engine_();
  while (x >= limit) x = engine_();
  return static_cast<size_t>(x % bound);
}

size_t Rng::Categorical(const std::vector<double>& weights) {
  double total = 0.0;
  for (double w : weights) total += w;
  const double u = Uniform() * total;
  double cumulative = 0.0;
  size_t last_positive = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0) continue;
    cumulative += weights[i];
    last_positive = i;
    if (u < cumulative) return i;
  }
  // Rounding can leave u at the very top of the range.
  return last_positive;
}

std::string Rng::SaveState() const {
  std::ostringstream out;
  out << engine_;
  return out.str();
}

Status Rng::RestoreState(const std::string& state) {
  std::istringstream in(state);
  std::mt19937_64 engine;
  in >> engine;
  if (in.fail()) return Error::BadInput("random generator state is malformed");
  engine_ = engine;
  return Status::Ok();
}

}  // namespace kforge::search
