#include "search/contrastive/response_protocol.h"

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <vector>

namespace kforge::search {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool StartsWithIgnoringCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

// When `line` is a heading for `name`, the text that follows the name on the
// same line (with ':' and '*' decorations removed). A line without leading
// '#' or '*' counts only when it holds nothing but the name.
std::optional<std::string_view> HeadingRest(std::string_view line, std::string_view name) {
  std::string_view s = Trim(line);
  bool decorated = false;
  while (!s.empty() && (s.front() == '#' || s.front() == '*')) {
    s.remove_prefix(1);
    decorated = true;
  }
  s = Trim(s);
  if (!StartsWithIgnoringCase(s, name)) return std::nullopt;
  s.remove_prefix(name.size());
  while (!s.empty() && (s.front() == ':' || s.front() == '*' ||
                        std::isspace(static_cast<unsigned char>(s.front())))) {
    s.remove_prefix(1);
  }
  if (!decorated && !s.empty()) return std::nullopt;
  return s;
}

std::optional<size_t> FindHeading(const std::vector<std::string_view>& lines, size_t from,
                                  std::string_view name) {
  for (size_t i = from; i < lines.size(); ++i) {
    if (HeadingRest(lines[i], name).has_value()) return i;
  }
  return std::nullopt;
}

std::string SectionText(const std::vector<std::string_view>& lines, size_t heading, size_t end,
                        std::string_view name) {
  std::string out(*HeadingRest(lines[heading], name));
  for (size_t i = heading + 1; i < end; ++i) {
    if (!out.empty()) out += '\n';
    out += lines[i];
  }
  return std::string(Trim(out));
}

std::optional<std::string> LastFencedBlock(const std::vector<std::string_view>& lines, size_t from,
                                           size_t end) {
  std::optional<std::string> last;
  std::optional<std::string> open;
  for (size_t i = from; i < end; ++i) {
    const std::string_view t = Trim(lines[i]);
    if (t.substr(0, 3) == "```") {
      if (open.has_value()) {
        last = std::move(*open);
        open.reset();
      } else {
        open.emplace();
      }
      continue;
    }
    if (open.has_value()) {
      *open += lines[i];
      *open += '\n';
    }
  }
  return last;
}

}  // namespace

Result<ContrastiveResponse> ParseContrastiveResponse(std::string_view text) {
  const std::vector<std::string_view> lines = SplitLines(text);
  const std::optional<size_t> analysis = FindHeading(lines, 0, kPerformanceAnalysisHeading);
  if (!analysis) {
    return Error::BadInput(
        fmt::format("reply has no '{}' section", std::string(kPerformanceAnalysisHeading)));
  }
  const std::optional<size_t> design = FindHeading(lines, *analysis + 1, kAlgorithmDesignHeading);
  if (!design) {
    return Error::BadInput(fmt::format("reply has no '{}' section after '{}'",
                                       kAlgorithmDesignHeading, kPerformanceAnalysisHeading));
  }
  const std::optional<size_t> code = FindHeading(lines, *design + 1, kCodeImplementationHeading);
  if (!code) {
    return Error::BadInput(fmt::format("reply has no '{}' section after '{}'",
                                       kCodeImplementationHeading, kAlgorithmDesignHeading));
  }
  ContrastiveResponse r;
  r.analysis = SectionText(lines, *analysis, *design, kPerformanceAnalysisHeading);
  r.design = SectionText(lines, *design, *code, kAlgorithmDesignHeading);
  std::optional<std::string> block = LastFencedBlock(lines, *code + 1, lines.size());
  if (!block) {
    return Error::BadInput(
        fmt::format("the '{}' section has no fenced code block", kCodeImplementationHeading));
  }
  r.code = std::move(*block);
  return r;
}

}  // namespace kforge::search
