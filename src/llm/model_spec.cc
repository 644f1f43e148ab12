#include "llm/model_spec.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace kforge::llm {

namespace {

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Error Bad(std::string_view spec, std::string_view why) {
  return Error::BadInput(fmt::format(
      "bad --llm spec '{}': {} (expected openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL] "
      "or replay:RUN_ID, optionally followed by *WEIGHT)",
      spec, why));
}

}  // namespace

std::string_view ProviderName(Provider provider) {
  switch (provider) {
    case Provider::kOpenAi:
      return "openai";
    case Provider::kAnthropic:
      return "anthropic";
    case Provider::kReplay:
      return "replay";
  }
  return "openai";
}

std::string ModelSpec::ToString() const {
  if (provider == Provider::kReplay) return "replay:" + run_id;
  std::string out = fmt::format("{}:{}", ProviderName(provider), model);
  if (!base_url.empty()) out += "@" + base_url;
  return out;
}

Result<ModelSpec> ParseModelSpec(std::string_view text) {
  std::string_view item = TrimView(text);
  if (item.empty()) return Bad(text, "empty spec");
  ModelSpec spec;
  if (size_t star = item.rfind('*'); star != std::string_view::npos) {
    std::string w(TrimView(item.substr(star + 1)));
    char* end = nullptr;
    double weight = std::strtod(w.c_str(), &end);
    if (w.empty() || end != w.c_str() + w.size()) return Bad(item, "weight is not a number");
    if (!std::isfinite(weight) || weight <= 0) return Bad(item, "weight must be positive");
    spec.weight = weight;
    item = TrimView(item.substr(0, star));
  }
  size_t colon = item.find(':');
  if (colon == std::string_view::npos) return Bad(item, "no provider prefix");
  std::string_view provider = item.substr(0, colon);
  std::string_view rest = item.substr(colon + 1);
  if (provider == "replay") {
    spec.provider = Provider::kReplay;
    if (rest.empty()) return Bad(item, "replay needs a run id");
    if (rest.find_first_of("@/ \t") != std::string_view::npos) {
      return Bad(item, "a run id has no '@', '/' or spaces");
    }
    spec.run_id = std::string(rest);
    return spec;
  }
  if (provider == "openai") {
    spec.provider = Provider::kOpenAi;
  } else if (provider == "anthropic") {
    spec.provider = Provider::kAnthropic;
  } else {
    return Bad(item, fmt::format("unknown provider '{}'", provider));
  }
  size_t at = std::string_view::npos;
  for (std::string_view scheme : {"@http://", "@https://"}) {
    at = std::min(at, rest.find(scheme));
  }
  if (at == std::string_view::npos && rest.find('@') != std::string_view::npos) {
    std::string_view after = rest.substr(rest.find('@') + 1);
    if (after.find("://") != std::string_view::npos) {
      return Bad(item, "a base URL must start with http:// or https://");
    }
  }
  spec.model = std::string(rest.substr(0, at));
  if (spec.model.empty()) return Bad(item, "no model name");
  if (at != std::string_view::npos) {
    std::string url(rest.substr(at + 1));
    size_t host = url.find("://") + 3;
    while (url.size() > host && url.back() == '/') url.pop_back();
    if (host >= url.size()) return Bad(item, "base URL has no host");
    spec.base_url = std::move(url);
  }
  return spec;
}

Result<std::vector<ModelSpec>> ParseModelSpecs(std::string_view text) {
  std::vector<ModelSpec> out;
  if (TrimView(text).empty()) return Bad(text, "empty spec");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    auto spec = ParseModelSpec(item);
    if (!spec) return spec.error();
    out.push_back(std::move(spec).value());
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

namespace {

std::vector<double> Weights(const std::vector<EnsembleClient::Member>& members) {
  std::vector<double> w;
  for (const auto& m : members) w.push_back(m.weight);
  return w;
}

}  // namespace

EnsembleClient::EnsembleClient(std::vector<Member> members, uint64_t seed)
    : members_(std::move(members)), rng_(seed) {
  std::vector<double> w = Weights(members_);
  choose_ = std::discrete_distribution<size_t>(w.begin(), w.end());
}

LlmClient* EnsembleClient::Pick() {
  size_t i = 0;
  if (members_.size() > 1) {
    std::lock_guard<std::mutex> lock(mu_);
    i = choose_(rng_);
  }
  return members_[i].client->Pick();
}

LlmResult<LlmResponse> EnsembleClient::Complete(const LlmRequest& request,
                                                const TextDeltaFn& on_text) {
  return Pick()->Complete(request, on_text);
}

std::string EnsembleClient::spec() const {
  std::string out;
  for (const auto& m : members_) {
    if (!out.empty()) out += ",";
    out += m.client->spec();
    if (members_.size() > 1) out += fmt::format("*{}", m.weight);
  }
  return out;
}

std::string EnsembleClient::model() const {
  return members_.size() == 1 ? members_.front().client->model() : "ensemble";
}

}  // namespace kforge::llm
