#include "kb/kb_store.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace kforge::kb {

Result<KnowledgeBase> DefaultKnowledgeBase(const std::string& arch) {
  nlohmann::json j = nlohmann::json::parse(DefaultKnowledgeBaseJson(), nullptr, false);
  if (j.is_discarded()) return Error::Internal("the embedded default knowledge base is not JSON");
  j["arch"] = arch;
  auto kb = KnowledgeBase::FromJson(j);
  if (!kb) return Error::Internal("the embedded default knowledge base: " + kb.error().message);
  return kb;
}

Result<KnowledgeBase> LoadKnowledgeBase(Store& store, const std::string& arch) {
  auto stored = store.GetKnowledgeBase(arch);
  if (!stored) return stored.error();
  if (!*stored) return DefaultKnowledgeBase(arch);
  nlohmann::json j = nlohmann::json::parse(**stored, nullptr, false);
  if (j.is_discarded()) {
    return Error::Internal(fmt::format("the stored knowledge base of {} is not JSON", arch));
  }
  auto kb = KnowledgeBase::FromJson(j);
  if (!kb) return kb.error();
  if (kb->arch() != arch) {
    return Error::Internal(
        fmt::format("the knowledge base stored for {} says it is for '{}'", arch, kb->arch()));
  }
  return kb;
}

Status SaveKnowledgeBase(Store& store, const KnowledgeBase& kb) {
  if (kb.arch().empty()) return Error::BadInput("a knowledge base to store needs an architecture");
  return store.PutKnowledgeBase(kb.arch(), kb.ToJson().dump());
}

std::string ArchFromCapability(const std::string& capability) {
  std::string digits;
  for (char c : capability) {
    if (c >= '0' && c <= '9') digits += c;
  }
  return digits.empty() ? std::string() : "sm_" + digits;
}

}  // namespace kforge::kb
