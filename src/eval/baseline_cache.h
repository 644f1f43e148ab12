// BaselineCache: reference measurements per (task hash, GPU name, torch
// version, dtype), so timeouts, the speed-of-light ceilings and baselines are
// not re-measured for every candidate. A JSON file per key under
// <cache dir>/baselines/.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kforge {

struct BaselineKey {
  std::string task_sha256, device_name, torch_version, dtype;
  std::string Digest() const;
};

class BaselineCache {
 public:
  explicit BaselineCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  static BaselineCache Default();

  std::optional<nlohmann::json> Load(const BaselineKey& key) const;
  void Save(const BaselineKey& key, const nlohmann::json& value) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kforge
