#include "llm/accounting.h"

#include <fmt/format.h>

namespace kforge::llm {

PriceTable PriceTable::BuiltIn() {
  PriceTable t;
  // USD per million tokens, provider list prices (standard tier).
  t.Set("gpt-4o", {2.50, 10.00});
  t.Set("gpt-4o-mini", {0.15, 0.60});
  t.Set("gpt-4.1", {2.00, 8.00});
  t.Set("gpt-4.1-mini", {0.40, 1.60});
  t.Set("gpt-4.1-nano", {0.10, 0.40});
  t.Set("gpt-5", {1.25, 10.00});
  t.Set("gpt-5-mini", {0.25, 2.00});
  t.Set("gpt-5-nano", {0.05, 0.40});
  t.Set("o3", {2.00, 8.00});
  t.Set("o4-mini", {1.10, 4.40});
  t.Set("claude-opus-4", {15.00, 75.00});
  t.Set("claude-sonnet-4", {3.00, 15.00});
  t.Set("claude-3-7-sonnet", {3.00, 15.00});
  t.Set("claude-3-5-haiku", {0.80, 4.00});
  t.Set("claude-haiku-4-5", {1.00, 5.00});
  return t;
}

Result<PriceTable> PriceTable::FromConfig(const Config& config) {
  PriceTable t = BuiltIn();
  static const std::string kPrefix = "prices.";
  std::map<std::string, ModelPrice> overrides;
  for (const auto& [key, value] : config.Table(kPrefix)) {
    // The model name may itself contain dots ("gpt-4.1"): split at the last one.
    std::string rest = key.substr(kPrefix.size());
    size_t dot = rest.rfind('.');
    std::string field = dot == std::string::npos ? rest : rest.substr(dot + 1);
    std::string model = dot == std::string::npos ? "" : rest.substr(0, dot);
    if (model.empty() || (field != "input_per_mtok" && field != "output_per_mtok")) {
      return Error::BadInput(fmt::format(
          "config key '{}': expected prices.<model>.input_per_mtok or .output_per_mtok", key));
    }
    double price = 0;
    if (const auto* d = std::get_if<double>(&value)) {
      price = *d;
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      price = static_cast<double>(*i);
    } else {
      return Error::BadInput(fmt::format("config key '{}': a price must be a number", key));
    }
    if (price < 0) {
      return Error::BadInput(fmt::format("config key '{}': a price cannot be negative", key));
    }
    // A model given one field keeps the other from the entry that priced it before.
    auto it = overrides.try_emplace(model, t.Find(model).value_or(ModelPrice{})).first;
    (field == "input_per_mtok" ? it->second.input_per_mtok : it->second.output_per_mtok) = price;
  }
  for (const auto& [model, price] : overrides) t.Set(model, price);
  return t;
}

std::optional<ModelPrice> PriceTable::Find(const std::string& model) const {
  if (auto it = prices_.find(model); it != prices_.end()) return it->second;
  const ModelPrice* best = nullptr;
  size_t best_len = 0;
  for (const auto& [name, price] : prices_) {
    if (name.size() > best_len && model.compare(0, name.size(), name) == 0) {
      best = &price;
      best_len = name.size();
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

double PriceTable::Cost(const std::string& model, const Usage& usage) const {
  auto price = Find(model);
  if (!price) return 0;
  return (static_cast<double>(usage.input_tokens) * price->input_per_mtok +
          static_cast<double>(usage.output_tokens) * price->output_per_mtok) /
         1e6;
}

std::optional<std::string> Budget::ExhaustedLocked() const {
  if (limits_.max_calls > 0 && spend_.calls >= limits_.max_calls) {
    return fmt::format("calls ({} of {})", spend_.calls, limits_.max_calls);
  }
  int64_t tokens = spend_.input_tokens + spend_.output_tokens;
  if (limits_.max_tokens > 0 && tokens >= limits_.max_tokens) {
    return fmt::format("tokens ({} of {})", tokens, limits_.max_tokens);
  }
  if (limits_.max_usd > 0 && spend_.cost_usd >= limits_.max_usd) {
    return fmt::format("usd (${:.4f} of ${:.4f})", spend_.cost_usd, limits_.max_usd);
  }
  return std::nullopt;
}

std::optional<std::string> Budget::Exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ExhaustedLocked();
}

LlmResult<bool> Budget::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto cap = ExhaustedLocked()) {
    return LlmError::Make(LlmErrorKind::kBudgetExhausted,
                          fmt::format("the LLM budget is spent: {}", *cap));
  }
  ++spend_.calls;
  return true;
}

void Budget::Settle(const Usage& usage, double cost_usd) {
  std::lock_guard<std::mutex> lock(mu_);
  spend_.input_tokens += usage.input_tokens;
  spend_.output_tokens += usage.output_tokens;
  spend_.cost_usd += cost_usd;
}

void Budget::Restore(const BudgetSpend& spend) {
  std::lock_guard<std::mutex> lock(mu_);
  spend_ = spend;
}

BudgetSpend Budget::spend() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spend_;
}

}  // namespace kforge::llm
