#include "search/baseline/prompt_templates.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kforge::search {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPromptsEnv = "KFORGE_PROMPTS_DIR";

std::string TrimBlankLines(std::string text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r\n");
  // Keep the first line's indentation: only whole blank lines go.
  size_t line_start = text.rfind('\n', begin);
  begin = line_start == std::string::npos ? 0 : line_start + 1;
  return text.substr(begin, end + 1 - begin);
}

}  // namespace

fs::path PromptsDir() {
  if (const char* d = std::getenv(kPromptsEnv); d != nullptr && *d != '\0') return d;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = exe.parent_path().parent_path() / "prompts";
    if (fs::exists(beside / "system.txt", ec)) return beside;
  }
  return fs::path(KFORGE_SOURCE_DIR) / "prompts";
}

Result<PromptTemplates> PromptTemplates::Load(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Error::BadInput(fmt::format(
        "prompt template directory {} does not exist (set {} to the prompts/ directory)",
        dir.string(), kPromptsEnv));
  }
  PromptTemplates out;
  out.dir_ = dir;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) {
      return Error::Io(fmt::format("cannot read prompt template {}", entry.path().string()));
    }
    std::ostringstream text;
    text << in.rdbuf();
    out.templates_[entry.path().stem().string()] = text.str();
  }
  if (ec) {
    return Error::Io(
        fmt::format("cannot list prompt templates in {}: {}", dir.string(), ec.message()));
  }
  if (out.templates_.empty()) {
    return Error::BadInput(fmt::format("no prompt templates (*.txt) in {}", dir.string()));
  }
  return out;
}

PromptTemplates PromptTemplates::FromMap(std::map<std::string, std::string> templates) {
  PromptTemplates out;
  out.dir_ = "(memory)";
  out.templates_ = std::move(templates);
  return out;
}

Result<std::string> PromptTemplates::Render(const std::string& name,
                                            const std::map<std::string, std::string>& vars) const {
  auto it = templates_.find(name);
  if (it == templates_.end()) {
    return Error::BadInput(
        fmt::format("prompt template '{}.txt' is missing from {}", name, dir_.string()));
  }
  const std::string& text = it->second;
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    if (open == std::string::npos) {
      out.append(text, pos, std::string::npos);
      break;
    }
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) {
      out.append(text, pos, std::string::npos);
      break;
    }
    out.append(text, pos, open - pos);
    std::string key = text.substr(open + 2, close - open - 2);
    auto value = vars.find(key);
    if (value == vars.end()) {
      return Error::BadInput(
          fmt::format("prompt template {}/{}.txt uses {{{{{}}}}}, which this "
                      "strategy does not supply",
                      dir_.string(), name, key));
    }
    out += value->second;
    pos = close + 2;
  }
  return TrimBlankLines(std::move(out));
}

}  // namespace kforge::search
