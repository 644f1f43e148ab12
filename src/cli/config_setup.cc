#include "cli/config_setup.h"

#include "common/result.h"
#include "eval/evaluator.h"
#include "llm/llm_settings.h"
#include "run/run_config.h"
#include "search/baseline/agent_strategy.h"
#include "search/baseline/greedy_strategy.h"
#include "search/pacevolve/search_config.h"
#include "store/store.h"

namespace kforge::cli {

void RegisterAllConfig() {
  static bool done = false;
  if (done) return;
  done = true;
  ConfigSchema& s = ConfigSchema::Global();
  RegisterEvalConfig(s);
  RegisterStoreConfig(s);
  llm::RegisterLlmConfig(s);
  RegisterSearchConfig(s);
  search::RegisterBaselineStrategyConfig(s);
  search::RegisterAgentStrategyConfig(s);
  run::RegisterRunConfig(s);
}

Config LoadConfig(const ConfigFlags& flags) {
  RegisterAllConfig();
  Config config;
  if (!flags.config_file.empty()) {
    if (Status st = config.LoadTomlFile(flags.config_file); !st) throw OperationError{st.error()};
  }
  for (const auto& s : flags.sets) {
    if (Status st = config.SetOverride(s); !st) throw OperationError{st.error()};
  }
  return config;
}

}  // namespace kforge::cli
