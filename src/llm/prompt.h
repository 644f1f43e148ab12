// A prompt built from named sections with priorities, so it can be fitted
// into a model's context window by trimming the least important managed
// sections (older history first) instead of failing.
//
// Size is estimated, not tokenised: tokens ≈ characters / 4 (plus a few per
// message). English prose runs about 4 characters a token; code and other
// languages run denser, so the window keeps a safety margin (see
// PromptBudgetTokens) rather than trusting the estimate to the last token.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llm/llm_error.h"
#include "llm/types.h"

namespace kforge::llm {

enum class TrimPolicy {
  kKeep,        // never trimmed: the task, the instructions, the answer format
  kDropWhole,   // removed whole when space runs short (optional hints)
  kDropOldest,  // items dropped oldest first, then the oldest text cut (history)
  kCutTail,     // text cut from the end (a long log whose start matters most)
};

struct PromptSection {
  std::string name;         // for trim notes ("history", "kb_hints")
  std::string title;        // rendered as "## title" above the items; kept while items remain
  Role role = Role::kUser;  // kSystem or kUser
  int priority = 100;       // lower is trimmed first
  TrimPolicy trim = TrimPolicy::kKeep;
  std::vector<std::string> items;  // oldest first; joined by blank lines
};

struct TrimNote {
  std::string section;
  std::string action;  // "dropped", "dropped 3 oldest items", "cut 1200 characters"
};

struct FittedPrompt {
  std::vector<ChatMessage> messages;
  std::vector<TrimNote> trimmed;
  int64_t estimated_tokens = 0;
};

// ≈ tokens of a text under the chars/4 heuristic.
int64_t EstimateTokens(size_t chars);
int64_t EstimateTokens(const std::vector<ChatMessage>& messages);
// What a prompt may use of a window: the window less the reserved output and
// a 10% margin for the estimate's error.
int64_t PromptBudgetTokens(int64_t context_window, int64_t max_output_tokens);

class Prompt {
 public:
  Prompt& Add(PromptSection section);
  Prompt& System(std::string name, std::string text);
  // A fixed user section.
  Prompt& Text(std::string name, std::string text, int priority = 100);
  // A history-like section: items oldest first, dropped oldest first.
  Prompt& History(std::string name, std::string title, std::vector<std::string> items,
                  int priority);
  // A section dropped whole when space runs short.
  Prompt& Optional(std::string name, std::string text, int priority);

  const std::vector<PromptSection>& sections() const { return sections_; }
  // Every section, untrimmed: one system message (if any system section) and
  // one user message.
  std::vector<ChatMessage> Render() const;
  // Trims until the estimate fits `budget_tokens`; kContextOverflow when the
  // kept sections alone do not fit.
  LlmResult<FittedPrompt> Fit(int64_t budget_tokens) const;

 private:
  std::vector<PromptSection> sections_;
};

}  // namespace kforge::llm
