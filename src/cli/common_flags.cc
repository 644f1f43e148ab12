#include "cli/command.h"

namespace kforge::cli {

void AddConfigFlags(CLI::App* cmd, ConfigFlags& flags) {
  cmd->add_option("--config", flags.config_file, "TOML config file")->envname("KFORGE_CONFIG");
  cmd->add_option("--set", flags.sets, "Override one config key: KEY=VALUE (repeatable)");
}

}  // namespace kforge::cli
