#include "common/config.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kforge {

ConfigSchema& ConfigSchema::Global() {
  static ConfigSchema schema;
  return schema;
}

void ConfigSchema::Add(ConfigKey key) {
  std::string name = key.key;
  keys_[name] = std::move(key);
}

void ConfigSchema::AddOpenTable(const std::string& prefix, std::string doc) {
  open_tables_[prefix] = std::move(doc);
}

const ConfigKey* ConfigSchema::Find(const std::string& key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &it->second;
}

bool ConfigSchema::IsUnderOpenTable(const std::string& key) const {
  for (const auto& [prefix, doc] : open_tables_) {
    if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

std::string ConfigValueToString(const ConfigValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

namespace {

Result<ConfigValue> ParseAs(const ConfigValue& like, const std::string& text,
                            const std::string& key) {
  auto bad = [&](const char* what) {
    return Error::BadInput(fmt::format("config key '{}': '{}' is not {}", key, text, what));
  };
  if (std::holds_alternative<bool>(like)) {
    if (text == "true" || text == "1" || text == "yes") return ConfigValue(true);
    if (text == "false" || text == "0" || text == "no") return ConfigValue(false);
    return bad("a boolean");
  }
  if (std::holds_alternative<int64_t>(like)) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size()) return bad("an integer");
    return ConfigValue(v);
  }
  if (std::holds_alternative<double>(like)) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) return bad("a number");
    return ConfigValue(v);
  }
  return ConfigValue(text);
}

// Guess a type for a value under an open table given on the command line.
ConfigValue GuessValue(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  int64_t i = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && p == text.data() + text.size()) return i;
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size()) return d;
  return text;
}

void Flatten(const toml::table& table, const std::string& prefix,
             std::vector<std::pair<std::string, ConfigValue>>& out, std::string& error) {
  for (const auto& [k, node] : table) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = node.as_table()) {
      Flatten(*sub, key, out, error);
    } else if (auto b = node.value<bool>(); b && node.is_boolean()) {
      out.emplace_back(key, *b);
    } else if (node.is_integer()) {
      out.emplace_back(key, static_cast<int64_t>(*node.value<int64_t>()));
    } else if (node.is_floating_point()) {
      out.emplace_back(key, *node.value<double>());
    } else if (node.is_string()) {
      out.emplace_back(key, *node.value<std::string>());
    } else {
      error = fmt::format("config key '{}': arrays and dates are not supported", key);
      return;
    }
  }
}

}  // namespace

Status Config::SetValue(const std::string& key, ConfigValue value, const std::string& origin) {
  const ConfigKey* decl = schema_->Find(key);
  if (decl == nullptr) {
    if (!schema_->IsUnderOpenTable(key)) {
      return Error::BadInput(fmt::format("unknown config key '{}' (from {})", key, origin));
    }
    values_[key] = std::move(value);
    return {};
  }
  const ConfigValue& like = decl->default_value;
  if (value.index() != like.index()) {
    // Integers are acceptable where a number is declared.
    if (std::holds_alternative<double>(like) && std::holds_alternative<int64_t>(value)) {
      value = static_cast<double>(std::get<int64_t>(value));
    } else {
      return Error::BadInput(fmt::format("config key '{}' (from {}): wrong type for value '{}'",
                                         key, origin, ConfigValueToString(value)));
    }
  }
  values_[key] = std::move(value);
  return {};
}

Status Config::LoadTomlString(const std::string& text, const std::string& origin) {
  toml::table table;
  try {
    table = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Error::BadInput(fmt::format("{}: invalid TOML: {}", origin, e.description()));
  }
  std::vector<std::pair<std::string, ConfigValue>> flat;
  std::string error;
  Flatten(table, "", flat, error);
  if (!error.empty()) return Error::BadInput(fmt::format("{}: {}", origin, error));
  for (auto& [k, v] : flat) {
    if (Status s = SetValue(k, std::move(v), origin); !s) return s;
  }
  return {};
}

Status Config::LoadTomlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error::BadInput(fmt::format("config file '{}' cannot be read", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return LoadTomlString(ss.str(), path);
}

Status Config::Set(const std::string& key, const std::string& text) {
  const ConfigKey* decl = schema_->Find(key);
  if (decl == nullptr) {
    if (!schema_->IsUnderOpenTable(key)) {
      return Error::BadInput(fmt::format("unknown config key '{}'", key));
    }
    return SetValue(key, GuessValue(text), "--set");
  }
  auto parsed = ParseAs(decl->default_value, text, key);
  if (!parsed) return parsed.error();
  return SetValue(key, std::move(parsed).value(), "--set");
}

Status Config::SetOverride(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Error::BadInput(fmt::format("--set expects KEY=VALUE, got '{}'", assignment));
  }
  return Set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

const ConfigValue& Config::Lookup(const std::string& key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  const ConfigKey* decl = schema_->Find(key);
  if (decl == nullptr) throw std::logic_error("config key not declared: " + key);
  return decl->default_value;
}

bool Config::GetBool(const std::string& key) const {
  return std::get<bool>(Lookup(key));
}
int64_t Config::GetInt(const std::string& key) const {
  return std::get<int64_t>(Lookup(key));
}
Result<int> Config::GetIntInRange(const std::string& key, int64_t min, int64_t max) const {
  const int64_t v = GetInt(key);
  if (v < min || v > max) {
    return Error::BadInput(
        fmt::format("config key '{}' must be between {} and {}, got {}", key, min, max, v));
  }
  return static_cast<int>(v);
}
double Config::GetDouble(const std::string& key) const {
  const ConfigValue& v = Lookup(key);
  if (std::holds_alternative<int64_t>(v)) return static_cast<double>(std::get<int64_t>(v));
  return std::get<double>(v);
}
std::string Config::GetString(const std::string& key) const {
  return std::get<std::string>(Lookup(key));
}

std::map<std::string, ConfigValue> Config::Table(const std::string& prefix) const {
  std::map<std::string, ConfigValue> out;
  for (const auto& [k, v] : values_) {
    if (k.compare(0, prefix.size(), prefix) == 0) out[k] = v;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Config::EffectiveListing() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, decl] : schema_->keys()) {
    std::string v = ConfigValueToString(Lookup(k));
    if (decl.secret && !v.empty()) v = "****";
    out.emplace_back(k, v);
  }
  for (const auto& [k, v] : values_) {
    if (schema_->Find(k) == nullptr) out.emplace_back(k, ConfigValueToString(v));
  }
  return out;
}

}  // namespace kforge
