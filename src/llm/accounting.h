// Token and cost accounting, and the budget caps that stop a run cleanly.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "llm/llm_error.h"
#include "llm/types.h"

namespace kforge::llm {

struct ModelPrice {
  double input_per_mtok = 0;   // USD per million input tokens
  double output_per_mtok = 0;  // USD per million output tokens
};

// Prices by model name. Built-in defaults cover a few well-known models
// (list prices when written; they change, so override them in config:
// prices.<model>.input_per_mtok / .output_per_mtok). A model matches its
// exact entry, else the longest entry that prefixes it ("gpt-4o-2024-08-06"
// is priced as "gpt-4o"). Unknown models (local servers) cost nothing.
class PriceTable {
 public:
  static PriceTable BuiltIn();
  // The built-in table overlaid with the config's "prices." entries.
  // kBadInput for a key other than input_per_mtok / output_per_mtok or a
  // negative price.
  static Result<PriceTable> FromConfig(const Config& config);

  void Set(const std::string& model, ModelPrice price) { prices_[model] = price; }
  std::optional<ModelPrice> Find(const std::string& model) const;
  double Cost(const std::string& model, const Usage& usage) const;
  const std::map<std::string, ModelPrice>& entries() const { return prices_; }

 private:
  std::map<std::string, ModelPrice> prices_;
};

// Caps: 0 means no cap.
struct BudgetLimits {
  double max_usd = 0;
  int64_t max_tokens = 0;  // input + output
  int64_t max_calls = 0;
};

struct BudgetSpend {
  int64_t calls = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
};

// Checked before every call. Reserve() counts the call at once, so
// concurrent callers cannot all pass a nearly spent call cap; tokens and
// cost are known only afterwards (Settle), so a cap on them can be passed by
// the calls already in flight when it was reached, never by a new one.
class Budget {
 public:
  explicit Budget(BudgetLimits limits = {}) : limits_(limits) {}

  // kBudgetExhausted when a cap is reached; otherwise the call is counted.
  LlmResult<bool> Reserve();
  void Settle(const Usage& usage, double cost_usd);
  // A resumed run starts from what its recorded calls already spent.
  void Restore(const BudgetSpend& spend);
  BudgetSpend spend() const;
  const BudgetLimits& limits() const { return limits_; }
  // The cap that is reached, if any ("usd", "tokens", "calls").
  std::optional<std::string> Exhausted() const;

 private:
  std::optional<std::string> ExhaustedLocked() const;

  BudgetLimits limits_;
  mutable std::mutex mu_;
  BudgetSpend spend_;
};

}  // namespace kforge::llm
