// A line diff (Myers' O((N+M)·D) algorithm) and unified-diff hunks, for the
// report's "diff against the parent candidate".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::report {

enum class DiffKind { kSame, kRemoved, kAdded };

struct DiffLine {
  DiffKind kind = DiffKind::kSame;
  std::string text;  // without its newline
  int old_line = 0;  // 1-based; 0 for an added line
  int new_line = 0;  // 1-based; 0 for a removed line
};

struct DiffHunk {
  int old_start = 0, old_count = 0;  // as in "@@ -old_start,old_count ..."
  int new_start = 0, new_count = 0;
  std::vector<DiffLine> lines;
};

// Splits on '\n'; a final line without a newline is still a line, and an empty
// text has no lines.
std::vector<std::string> SplitLines(std::string_view text);

// Beyond this many differing lines the diff is not searched for: the old text
// is reported removed and the new one added (a rewrite, not an edit).
constexpr int kMaxEditDistance = 4000;

// Every line of both texts in order, as a shortest edit script (removals
// before additions within a change).
std::vector<DiffLine> DiffLines(const std::vector<std::string>& old_lines,
                                const std::vector<std::string>& new_lines);

// The changes with `context` unchanged lines around each; nearby changes share
// a hunk. Empty when the texts are equal.
std::vector<DiffHunk> UnifiedHunks(std::string_view old_text, std::string_view new_text,
                                   int context = 3);

// The hunks as `diff -u` text with "--- old_name" / "+++ new_name" headers.
std::string UnifiedDiff(std::string_view old_text, std::string_view new_text,
                        std::string_view old_name, std::string_view new_name, int context = 3);

}  // namespace kforge::report
