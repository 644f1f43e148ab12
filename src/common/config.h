// Config: every tunable knob of kforge, addressed by a dotted key
// ("pacevolve.momentum_beta"). Modules declare their keys with a default and a
// one-line doc; values come from defaults, then a TOML file, then --set
// overrides. Unknown keys are errors, so a typo never silently does nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"

namespace kforge {

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

struct ConfigKey {
  std::string key;
  ConfigValue default_value;
  std::string doc;
  bool secret = false;  // masked in `config show`
};

class ConfigSchema {
 public:
  // The process-wide schema; modules add their keys from a Register*Config() call.
  static ConfigSchema& Global();

  void Add(ConfigKey key);
  // Open tables accept any key below the prefix (e.g. "prices." for a per-model
  // price table) with values of the given kind.
  void AddOpenTable(const std::string& prefix, std::string doc);

  const ConfigKey* Find(const std::string& key) const;
  bool IsUnderOpenTable(const std::string& key) const;
  const std::map<std::string, ConfigKey>& keys() const { return keys_; }
  const std::map<std::string, std::string>& open_tables() const { return open_tables_; }

 private:
  std::map<std::string, ConfigKey> keys_;
  std::map<std::string, std::string> open_tables_;
};

class Config {
 public:
  explicit Config(const ConfigSchema& schema = ConfigSchema::Global()) : schema_(&schema) {}

  // Reads a TOML file; every leaf becomes a dotted key. Errors are kBadInput.
  Status LoadTomlFile(const std::string& path);
  Status LoadTomlString(const std::string& text, const std::string& origin);
  // "a.b=value": the value is parsed as the declared key's type.
  Status SetOverride(const std::string& assignment);
  Status Set(const std::string& key, const std::string& text);

  bool GetBool(const std::string& key) const;
  int64_t GetInt(const std::string& key) const;
  // An integer key that must lie in [min, max], as an int; kBadInput naming
  // the key, the range and the value otherwise.
  Result<int> GetIntInRange(const std::string& key, int64_t min, int64_t max) const;
  double GetDouble(const std::string& key) const;
  std::string GetString(const std::string& key) const;
  // Keys present below an open-table prefix, e.g. "prices." → {"prices.gpt-4o.input": ...}.
  std::map<std::string, ConfigValue> Table(const std::string& prefix) const;

  // Every declared key with its effective value; secrets masked.
  std::vector<std::pair<std::string, std::string>> EffectiveListing() const;

 private:
  const ConfigValue& Lookup(const std::string& key) const;
  Status SetValue(const std::string& key, ConfigValue value, const std::string& origin);

  const ConfigSchema* schema_;
  std::map<std::string, ConfigValue> values_;
};

std::string ConfigValueToString(const ConfigValue& v);

}  // namespace kforge
