#include "cli/command.h"

namespace kforge::cli {

void AddConfigFlags(CLI::App* cmd, ConfigFlags& flags) {
  cmd->add_option("--config", flags.config_file, "TOML config file")->envname("KFORGE_CONFIG");
  cmd->add_option("--set", flags.sets, "Override one config key: KEY=VALUE (repeatable)");
}

void AddDbOption(CLI::App* cmd, std::string& db) {
  cmd->add_option("--db", db, "Database: PATH, sqlite:PATH (default ./kforge.db)")
      ->envname("KFORGE_DB")
      ->default_val("kforge.db");
}

}  // namespace kforge::cli
