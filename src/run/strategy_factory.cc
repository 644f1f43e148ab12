#include "run/strategy_factory.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/files.h"
#include "search/adapters/contrastive_strategy.h"
#include "search/adapters/pacevolve_strategy.h"
#include "search/baseline/agent_strategy.h"
#include "search/baseline/best_of_n_strategy.h"
#include "search/baseline/greedy_strategy.h"

namespace kforge::run {

const std::vector<std::string>& StrategyNames() {
  static const std::vector<std::string> names = {"pacevolve", "contrastive", "greedy", "best-of-n",
                                                 "agent"};
  return names;
}

Status CheckStrategyAvailable(const std::string& name) {
  const auto& names = StrategyNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return Status::Ok();
  return Error::BadInput(
      fmt::format("unknown --strategy '{}' (pacevolve|contrastive|greedy|best-of-n|agent)", name));
}

Result<std::unique_ptr<search::Strategy>> MakeStrategy(const std::string& name,
                                                       const search::StrategyContext& context,
                                                       const search::PromptTemplates& templates,
                                                       const Config& config) {
  if (Status st = CheckStrategyAvailable(name); !st) return st.error();
  if (name == "greedy") {
    auto options = search::GreedyOptionsFromConfig(config);
    if (!options) return options.error();
    auto g = search::GreedyStrategy::Create(context, templates, *options);
    if (!g) return g.error();
    return std::unique_ptr<search::Strategy>(std::move(g).value());
  }
  if (name == "pacevolve" || name == "contrastive") {
    auto greedy = search::GreedyOptionsFromConfig(config);  // greedy.max_log_chars
    if (!greedy) return greedy.error();
    auto options = search::pacevolve::PacEvolveOptionsFromConfig(config);
    if (!options) return options.error();
    if (name == "contrastive") {
      auto c = search::ContrastiveStrategy::Create(context, templates, options->contrastive,
                                                   greedy->max_log_chars);
      if (!c) return c.error();
      return std::unique_ptr<search::Strategy>(std::move(c).value());
    }
    auto p = search::PacEvolveStrategy::Create(context, templates, *options, greedy->max_log_chars);
    if (!p) return p.error();
    return std::unique_ptr<search::Strategy>(std::move(p).value());
  }
  if (name == "agent") {
    auto options = search::AgentOptionsFromConfig(config);
    if (!options) return options.error();
    std::filesystem::path skill_path = templates.dir() / "agent_skill.md";
    auto skill = ReadFile(skill_path);
    if (!skill) {
      return Error::BadInput(fmt::format("the agent's skill file {} cannot be read: {}",
                                         skill_path.string(), skill.error().message));
    }
    auto a = search::AgentStrategy::Create(context, templates, std::move(skill).value(), *options);
    if (!a) return a.error();
    return std::unique_ptr<search::Strategy>(std::move(a).value());
  }
  auto b = search::BestOfNStrategy::Create(context, templates);
  if (!b) return b.error();
  return std::unique_ptr<search::Strategy>(std::move(b).value());
}

}  // namespace kforge::run
