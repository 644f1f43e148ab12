#include "search/contrastive/contrastive_config.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace kforge::search {

void RegisterContrastiveConfig(ConfigSchema& schema) {
  const ContrastiveOptions d;
  schema.Add({"contrastive.exemplars", int64_t{d.exemplars},
              "N: scored exemplars per prompt, from N distinct buckets (CUDA-L1: 2)"});
  schema.Add({"contrastive.temperature", d.temperature,
              "tau: softmax temperature over bucket mean scores, in score units (CUDA-L1 gives "
              "no value; ours)"});
  schema.Add({"contrastive.bucket_width", d.bucket_width,
              "Delta s: score width of one exemplar bucket (CUDA-L1 gives no value; ours)"});
  schema.Add({"contrastive.score", std::string(ScoreKindName(d.score)),
              "exemplar score: speedup (reference/runtime, CUDA-L1 eq. 2) or runtime (-ms)"});
}

Status ValidateContrastiveOptions(const ContrastiveOptions& o) {
  if (o.exemplars < 1) {
    return Error::BadInput(
        fmt::format("contrastive.exemplars must be at least 1, got {}", o.exemplars));
  }
  if (!std::isfinite(o.temperature) || o.temperature <= 0.0) {
    return Error::BadInput(
        fmt::format("contrastive.temperature must be positive, got {}", o.temperature));
  }
  if (!std::isfinite(o.bucket_width) || o.bucket_width <= 0.0) {
    return Error::BadInput(
        fmt::format("contrastive.bucket_width must be positive, got {}", o.bucket_width));
  }
  return Status::Ok();
}

Result<ContrastiveOptions> ContrastiveOptionsFromConfig(const Config& config) {
  ContrastiveOptions o;
  auto exemplars = config.GetIntInRange("contrastive.exemplars", 1, 1000);
  if (!exemplars) return exemplars.error();
  o.exemplars = *exemplars;
  o.temperature = config.GetDouble("contrastive.temperature");
  o.bucket_width = config.GetDouble("contrastive.bucket_width");
  Result<ScoreKind> kind = ParseScoreKind(config.GetString("contrastive.score"));
  if (!kind.ok()) return kind.error();
  o.score = *kind;
  if (Status s = ValidateContrastiveOptions(o); !s.ok()) return s.error();
  return o;
}

}  // namespace kforge::search
