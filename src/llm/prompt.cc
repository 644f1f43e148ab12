#include "llm/prompt.h"

#include <fmt/format.h>

#include <algorithm>

namespace kforge::llm {

namespace {

constexpr int64_t kCharsPerToken = 4;
constexpr int64_t kTokensPerMessage = 4;  // role and framing
constexpr std::string_view kCutFrontMarker = "[... earlier text trimmed ...]\n";
constexpr std::string_view kCutBackMarker = "\n[... rest trimmed ...]";

std::string RenderSection(const PromptSection& s) {
  std::string out;
  if (!s.title.empty()) out = "## " + s.title + "\n";
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (i > 0) out += "\n\n";
    out += s.items[i];
  }
  return out;
}

std::vector<ChatMessage> RenderSections(const std::vector<PromptSection>& sections) {
  std::string system;
  std::string user;
  for (const PromptSection& s : sections) {
    if (s.items.empty()) continue;
    std::string& target = s.role == Role::kSystem ? system : user;
    if (!target.empty()) target += "\n\n";
    target += RenderSection(s);
  }
  std::vector<ChatMessage> out;
  if (!system.empty()) out.push_back(ChatMessage::System(std::move(system)));
  out.push_back(ChatMessage::User(std::move(user)));
  return out;
}

// Removes about `chars` characters from the front, starting the kept text at
// a line boundary when one is near.
std::string CutFront(const std::string& text, size_t chars) {
  size_t from = std::min(text.size(), chars + kCutFrontMarker.size());
  if (size_t nl = text.find('\n', from); nl != std::string::npos && nl - from < 200) from = nl + 1;
  if (from >= text.size()) return "";
  return std::string(kCutFrontMarker) + text.substr(from);
}

std::string CutBack(const std::string& text, size_t chars) {
  size_t cut = chars + kCutBackMarker.size();
  if (cut >= text.size()) return "";
  size_t keep = text.size() - cut;
  if (size_t nl = text.rfind('\n', keep); nl != std::string::npos && keep - nl < 200) keep = nl;
  if (keep == 0) return "";
  return text.substr(0, keep) + std::string(kCutBackMarker);
}

}  // namespace

int64_t EstimateTokens(size_t chars) {
  return (static_cast<int64_t>(chars) + kCharsPerToken - 1) / kCharsPerToken;
}

int64_t EstimateTokens(const std::vector<ChatMessage>& messages) {
  int64_t total = 0;
  for (const ChatMessage& m : messages) {
    total += kTokensPerMessage + EstimateTokens(m.content.size());
    for (const ToolCall& c : m.tool_calls) {
      total += EstimateTokens(c.name.size() + c.arguments_json.size());
    }
  }
  return total;
}

int64_t PromptBudgetTokens(int64_t context_window, int64_t max_output_tokens) {
  return std::max<int64_t>(0, context_window - max_output_tokens - context_window / 10);
}

Prompt& Prompt::Add(PromptSection section) {
  sections_.push_back(std::move(section));
  return *this;
}

Prompt& Prompt::System(std::string name, std::string text) {
  PromptSection s;
  s.name = std::move(name);
  s.role = Role::kSystem;
  s.items.push_back(std::move(text));
  return Add(std::move(s));
}

Prompt& Prompt::Text(std::string name, std::string text, int priority) {
  PromptSection s;
  s.name = std::move(name);
  s.priority = priority;
  s.items.push_back(std::move(text));
  return Add(std::move(s));
}

Prompt& Prompt::History(std::string name, std::string title, std::vector<std::string> items,
                        int priority) {
  PromptSection s;
  s.name = std::move(name);
  s.title = std::move(title);
  s.priority = priority;
  s.trim = TrimPolicy::kDropOldest;
  s.items = std::move(items);
  return Add(std::move(s));
}

Prompt& Prompt::Optional(std::string name, std::string text, int priority) {
  PromptSection s;
  s.name = std::move(name);
  s.priority = priority;
  s.trim = TrimPolicy::kDropWhole;
  s.items.push_back(std::move(text));
  return Add(std::move(s));
}

std::vector<ChatMessage> Prompt::Render() const {
  return RenderSections(sections_);
}

LlmResult<FittedPrompt> Prompt::Fit(int64_t budget_tokens) const {
  std::vector<PromptSection> work = sections_;
  // Counted per section so one note says "dropped 3 oldest items", not three notes.
  std::vector<int> dropped_items(work.size(), 0);
  std::vector<size_t> cut_chars(work.size(), 0);
  std::vector<bool> dropped(work.size(), false);
  for (;;) {
    std::vector<ChatMessage> messages = RenderSections(work);
    int64_t estimate = EstimateTokens(messages);
    if (estimate <= budget_tokens) {
      FittedPrompt fitted{std::move(messages), {}, estimate};
      for (size_t i = 0; i < work.size(); ++i) {
        if (dropped[i]) {
          fitted.trimmed.push_back({work[i].name, "dropped"});
          continue;
        }
        std::vector<std::string> parts;
        if (dropped_items[i] > 0) {
          parts.push_back(fmt::format("dropped {} oldest item{}", dropped_items[i],
                                      dropped_items[i] == 1 ? "" : "s"));
        }
        if (cut_chars[i] > 0) parts.push_back(fmt::format("cut {} characters", cut_chars[i]));
        if (!parts.empty()) {
          fitted.trimmed.push_back(
              {work[i].name, parts.size() == 1 ? parts[0] : parts[0] + ", " + parts[1]});
        }
      }
      return fitted;
    }
    // The least important trimmable section; among equals, the one added first.
    int victim = -1;
    for (size_t i = 0; i < work.size(); ++i) {
      if (work[i].trim == TrimPolicy::kKeep || work[i].items.empty()) continue;
      if (victim < 0 || work[i].priority < work[static_cast<size_t>(victim)].priority) {
        victim = static_cast<int>(i);
      }
    }
    if (victim < 0) {
      return LlmError::Make(
          LlmErrorKind::kContextOverflow,
          fmt::format("the prompt needs about {} tokens but only {} fit the context window, "
                      "and nothing more can be trimmed",
                      estimate, budget_tokens));
    }
    size_t v = static_cast<size_t>(victim);
    PromptSection& s = work[v];
    size_t excess_chars = static_cast<size_t>((estimate - budget_tokens) * kCharsPerToken);
    switch (s.trim) {
      case TrimPolicy::kKeep:
        break;
      case TrimPolicy::kDropWhole:
        s.items.clear();
        dropped[v] = true;
        break;
      case TrimPolicy::kDropOldest:
        if (s.items.size() > 1) {
          s.items.erase(s.items.begin());
          ++dropped_items[v];
        } else {
          std::string cut = CutFront(s.items[0], excess_chars);
          cut_chars[v] += s.items[0].size() - std::min(s.items[0].size(), cut.size());
          if (cut.empty()) {
            s.items.clear();
            dropped[v] = true;
          } else {
            s.items[0] = std::move(cut);
          }
        }
        break;
      case TrimPolicy::kCutTail: {
        std::string all =
            RenderSection(PromptSection{s.name, "", s.role, s.priority, s.trim, s.items});
        std::string cut = CutBack(all, excess_chars);
        cut_chars[v] += all.size() - std::min(all.size(), cut.size());
        s.items.clear();
        if (cut.empty()) {
          dropped[v] = true;
        } else {
          s.items.push_back(std::move(cut));
        }
        break;
      }
    }
  }
}

}  // namespace kforge::llm
