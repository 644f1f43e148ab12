// Prompt templates: the text files under prompts/ (see prompts/README.md),
// rendered with {{name}} placeholders. Strategies render every template they
// use once at creation, so a broken template stops the run before its first
// LLM call instead of in the middle of it.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "common/result.h"

namespace kforge::search {

// $KFORGE_PROMPTS_DIR, else <dir of the kforge binary>/../prompts, else the
// source tree's prompts/ (for a build run in place).
std::filesystem::path PromptsDir();

class PromptTemplates {
 public:
  // Every *.txt file of `dir`, by file stem. kBadInput when the directory is
  // missing or holds no template.
  static Result<PromptTemplates> Load(const std::filesystem::path& dir);
  // For tests: templates given as text.
  static PromptTemplates FromMap(std::map<std::string, std::string> templates);

  // The template with every {{key}} replaced by vars[key], surrounding blank
  // lines trimmed. kBadInput for a missing template or a placeholder without a
  // value (naming both).
  Result<std::string> Render(const std::string& name,
                             const std::map<std::string, std::string>& vars = {}) const;
  bool Has(const std::string& name) const { return templates_.count(name) > 0; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::string> templates_;
};

}  // namespace kforge::search
