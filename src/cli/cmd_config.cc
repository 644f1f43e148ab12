// kforge config show: the effective configuration, secrets masked.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/config_setup.h"

namespace kforge::cli {

namespace {

struct ConfigArgs {
  bool json = false;
  ConfigFlags config;
};

int RunConfigShow(const ConfigArgs& a) {
  Config config = LoadConfig(a.config);
  const auto& schema = ConfigSchema::Global();
  if (a.json) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : config.EffectiveListing()) j[k] = v;
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  for (const auto& [k, v] : config.EffectiveListing()) {
    const ConfigKey* decl = schema.Find(k);
    std::cout << fmt::format("{} = {}", k, v);
    if (decl) std::cout << fmt::format("    # {}", decl->doc);
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

void AddConfigCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ConfigArgs>();
  CLI::App* cmd = root.add_subcommand("config", "Inspect the configuration");
  cmd->require_subcommand(1);
  CLI::App* show = cmd->add_subcommand("show", "Print the effective config (secrets masked)");
  show->add_flag("--json", args->json, "JSON output");
  AddConfigFlags(show, args->config);
  show->callback([&table, args] { table.selected = [args] { return RunConfigShow(*args); }; });
}

}  // namespace kforge::cli
