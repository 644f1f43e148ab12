// Text made safe for HTML and SVG: valid UTF-8, markup characters escaped.
#pragma once

#include <string>
#include <string_view>

namespace kforge::report {

// Replaces every invalid UTF-8 sequence (overlong forms, surrogates, code
// points past U+10FFFF, truncated sequences) and every control character
// other than tab, newline and carriage return with U+FFFD, so the document
// stays well-formed whatever bytes a candidate or an LLM produced.
std::string SanitizeUtf8(std::string_view text);

// SanitizeUtf8, then & < > " ' as character references: safe in element
// content and in quoted attribute values, in HTML and in SVG.
std::string EscapeHtml(std::string_view text);

// A fragment identifier made of [A-Za-z0-9_-] only (anything else becomes
// '_'), for id="..." and href="#...".
std::string HtmlId(std::string_view text);

}  // namespace kforge::report
