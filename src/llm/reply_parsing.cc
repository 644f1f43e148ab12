#include "llm/reply_parsing.h"

#include <algorithm>
#include <cctype>

namespace kforge::llm {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

struct Fence {
  char ch = 0;
  size_t len = 0;
  std::string_view info;
};

// A fence line: up to three spaces, then three or more ` or ~.
std::optional<Fence> ParseFence(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return std::nullopt;
  Fence f;
  f.ch = line[i];
  size_t start = i;
  while (i < line.size() && line[i] == f.ch) ++i;
  f.len = i - start;
  if (f.len < 3) return std::nullopt;
  f.info = line.substr(i);
  // A backtick fence's info string may not contain backticks (that is inline code).
  if (f.ch == '`' && f.info.find('`') != std::string_view::npos) return std::nullopt;
  return f;
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<CodeBlock> ExtractCodeBlocks(std::string_view text) {
  std::vector<CodeBlock> blocks;
  std::optional<Fence> open;
  CodeBlock current;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto fence = ParseFence(line);
    if (!open) {
      if (fence) {
        open = fence;
        std::string_view info = TrimView(fence->info);
        current = CodeBlock{Lower(info.substr(0, info.find_first_of(" \t{"))), ""};
      }
      continue;
    }
    if (fence && fence->ch == open->ch && fence->len >= open->len &&
        TrimView(fence->info).empty()) {
      blocks.push_back(std::move(current));
      current = CodeBlock{};
      open.reset();
      continue;
    }
    current.code.append(line);
    current.code.push_back('\n');
  }
  return blocks;
}

std::optional<CodeBlock> ExtractLastCodeBlock(std::string_view text,
                                              const std::vector<std::string>& preferred_langs) {
  std::vector<CodeBlock> blocks = ExtractCodeBlocks(text);
  if (blocks.empty()) return std::nullopt;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    for (const std::string& lang : preferred_langs) {
      if (it->lang == Lower(lang)) return *it;
    }
  }
  return blocks.back();
}

std::optional<nlohmann::json> ParseJsonReply(std::string_view text) {
  auto parse = [](std::string_view s) -> std::optional<nlohmann::json> {
    nlohmann::json j = nlohmann::json::parse(s, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  };
  if (auto j = parse(TrimView(text))) return j;
  if (auto block = ExtractLastCodeBlock(text, {"json"})) {
    if (auto j = parse(block->code)) return j;
  }
  size_t open = text.find('{');
  size_t close = text.rfind('}');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    if (auto j = parse(text.substr(open, close - open + 1))) return j;
  }
  return std::nullopt;
}

}  // namespace kforge::llm
