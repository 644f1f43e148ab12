// Where the knowledge base lives between runs: one document per GPU
// architecture in the store, starting from the default knowledge base that
// ships with kforge (src/kb/data/default_kb.json) when an architecture has
// none yet.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "kb/knowledge_base.h"
#include "store/store.h"

namespace kforge::kb {

// The shipped default, embedded at build time.
std::string_view DefaultKnowledgeBaseJson();
// The default with its architecture set to `arch`.
Result<KnowledgeBase> DefaultKnowledgeBase(const std::string& arch);

// The stored knowledge base of `arch`, or the default when none is stored.
Result<KnowledgeBase> LoadKnowledgeBase(Store& store, const std::string& arch);
// Replaces the stored knowledge base of kb.arch() (which must not be empty).
Status SaveKnowledgeBase(Store& store, const KnowledgeBase& kb);

// A GPU's architecture name from its compute capability: "9.0" → "sm_90".
std::string ArchFromCapability(const std::string& capability);

}  // namespace kforge::kb
