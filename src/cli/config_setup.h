// Builds the effective Config for a command: every module's keys registered,
// then the TOML file, then --set overrides. Errors end the command (exit 2).
#pragma once

#include "cli/command.h"
#include "common/config.h"

namespace kforge::cli {

void RegisterAllConfig();
Config LoadConfig(const ConfigFlags& flags);

}  // namespace kforge::cli
