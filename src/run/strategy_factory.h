// Strategy names (CONTRACT: pacevolve | contrastive | greedy | best-of-n |
// agent) to strategies. `agent` reads its skill file, agent_skill.md, from
// the templates' directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "search/baseline/prompt_templates.h"
#include "search/strategy.h"

namespace kforge::run {

// Every name the contract knows.
const std::vector<std::string>& StrategyNames();

// kBadInput for an unknown name, a broken prompt template, or (agent) a
// skill file that cannot be read.
Result<std::unique_ptr<search::Strategy>> MakeStrategy(const std::string& name,
                                                       const search::StrategyContext& context,
                                                       const search::PromptTemplates& templates,
                                                       const Config& config);

// Whether `name` is a strategy this build can run (checked before a run is created).
Status CheckStrategyAvailable(const std::string& name);

}  // namespace kforge::run
