#include "rl/reply_degeneracy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/reply_parsing.h"

namespace kforge::rl {

namespace {

constexpr size_t kMaxBlockLines = 50;
constexpr size_t kMinLineCopies = 4;
constexpr size_t kMinBlockChars = 16;
constexpr size_t kMinUnit = 8, kMaxUnit = 100;
constexpr size_t kMinUnitCopies = 8;
constexpr size_t kMinDistinctChars = 3;

bool IsSpace(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::vector<std::string_view> LinesOf(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    while (!line.empty() && IsSpace(line.back())) line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

size_t NonSpace(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return !IsSpace(c); }));
}

std::optional<std::string> LineLoop(std::string_view text) {
  std::vector<std::string_view> lines = LinesOf(text);
  std::vector<size_t> hash(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) hash[i] = std::hash<std::string_view>{}(lines[i]);
  for (size_t p = 1; p <= kMaxBlockLines && 2 * p <= lines.size(); ++p) {
    // run: how many lines in a row so far equal the line p before them.
    size_t run = 0;
    for (size_t i = p; i < lines.size(); ++i) {
      run = (hash[i] == hash[i - p] && lines[i] == lines[i - p]) ? run + 1 : 0;
      // run ≥ (copies − 1)·p: the block before has repeated `copies` times.
      if (run < (kMinLineCopies - 1) * p) continue;
      size_t start = i + 1 - run - p;
      size_t chars = 0;
      for (size_t k = start; k < start + p; ++k) chars += NonSpace(lines[k]);
      if (chars >= kMinBlockChars) {
        return fmt::format("a block of {} line{} repeats {}+ times from line {}", p,
                           p == 1 ? "" : "s", kMinLineCopies, start + 1);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> CharacterLoop(std::string_view text) {
  for (size_t q = kMinUnit; q <= kMaxUnit && 2 * q <= text.size(); ++q) {
    size_t run = 0;
    for (size_t i = q; i < text.size(); ++i) {
      run = text[i] == text[i - q] ? run + 1 : 0;
      if (run < (kMinUnitCopies - 1) * q) continue;
      size_t start = i + 1 - run - q;
      std::string_view unit = text.substr(start, q);
      std::set<char> distinct;
      for (char c : unit) {
        if (!IsSpace(c)) distinct.insert(c);
      }
      if (distinct.size() >= kMinDistinctChars) {
        return fmt::format("a {}-character unit repeats {}+ times from offset {}", q,
                           kMinUnitCopies, start);
      }
      run = 0;  // a unit of too few characters: look on for another
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FindRepetitionLoop(std::string_view text) {
  if (auto why = LineLoop(text)) return why;
  return CharacterLoop(text);
}

std::optional<std::string> DegenerateReason(const TrainingSample& sample) {
  if (auto loop = FindRepetitionLoop(sample.response)) return "repetition loop: " + *loop;
  if (sample.finish_reason == "length") return "reply cut at the output token limit";
  for (const ToolCallText& call : sample.response_tool_calls) {
    if (std::find(sample.tool_names.begin(), sample.tool_names.end(), call.name) ==
        sample.tool_names.end()) {
      return fmt::format("tool call to '{}', which the request did not offer", call.name);
    }
    nlohmann::json args = nlohmann::json::parse(call.arguments_json, nullptr, false);
    if (!args.is_object()) {
      return fmt::format("tool call to '{}' with arguments that are not a JSON object", call.name);
    }
  }
  if (sample.agent) {
    // The whole episode is the sample: its tool use must be clean throughout.
    if (sample.agent->invalid_tool_calls > 0) {
      return fmt::format(
          "the agent episode made {} invalid tool call(s) (an unknown tool, or "
          "arguments that do not fit it)",
          sample.agent->invalid_tool_calls);
    }
    if (sample.agent->repeated_tool_calls > 0) {
      return fmt::format(
          "the agent episode repeated {} identical tool call(s) with no file "
          "written in between (a loop)",
          sample.agent->repeated_tool_calls);
    }
  }
  if (sample.response_tool_calls.empty() && llm::ExtractCodeBlocks(sample.response).empty()) {
    return "no closed fenced code block";
  }
  return std::nullopt;
}

}  // namespace kforge::rl
