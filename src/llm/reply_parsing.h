// Turning a model's text into what a stage wants: the last fenced code block
// (code stages) or a JSON value (structured stages).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::llm {

struct CodeBlock {
  std::string lang;  // the fence's info string up to the first space, lower-cased; may be empty
  std::string code;  // without the fences; ends with '\n' unless empty
};

// The last fenced block (``` or ~~~, three or more, closed by a fence of the
// same character at least as long) whose language is one of
// `preferred_langs` (case-insensitive); when none is, the last block of any
// language. An unclosed final fence (a reply cut at max tokens) does not
// count. nullopt when the text has no closed block.
std::optional<CodeBlock> ExtractLastCodeBlock(std::string_view text,
                                              const std::vector<std::string>& preferred_langs);

// Every closed fenced block, in order.
std::vector<CodeBlock> ExtractCodeBlocks(std::string_view text);

// The JSON value a structured reply carries. Strict servers send bare JSON;
// local ones often wrap it in a ```json fence or a sentence, so this tries
// the whole text, then the last fenced block, then the outermost {...}.
std::optional<nlohmann::json> ParseJsonReply(std::string_view text);

}  // namespace kforge::llm
