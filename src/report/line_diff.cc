#include "report/line_diff.h"

#include <fmt/format.h>

#include <algorithm>

namespace kforge::report {

namespace {

using Lines = std::vector<std::string>;

// One step of the edit script over the middle part (common prefix and
// suffix removed): a line kept, removed from the old text or added.
struct Edit {
  DiffKind kind;
  int old_index;  // into the old lines, -1 for an addition
  int new_index;  // into the new lines, -1 for a removal
};

// Myers' greedy forward search, keeping the furthest-reaching x of every
// diagonal per edit distance d so the path can be walked back. Memory is
// O(D²); beyond kMaxEditDistance the caller falls back to a rewrite.
bool MyersEdits(const Lines& a, int a0, int n, const Lines& b, int b0, int m,
                std::vector<Edit>& out) {
  const int max_d = std::min(n + m, kMaxEditDistance);
  const int offset = max_d + 1;
  std::vector<int> v(2 * static_cast<size_t>(max_d) + 3, 0);
  std::vector<std::vector<int>> trace;  // trace[d][k + d] = V[k] after step d
  int final_d = -1;
  for (int d = 0; d <= max_d && final_d < 0; ++d) {
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[k - 1 + offset] < v[k + 1 + offset]))
                  ? v[k + 1 + offset]
                  : v[k - 1 + offset] + 1;
      int y = x - k;
      while (x < n && y < m && a[a0 + x] == b[b0 + y]) {
        ++x;
        ++y;
      }
      v[k + offset] = x;
      if (x >= n && y >= m) final_d = d;
    }
    trace.emplace_back(v.begin() + (offset - d), v.begin() + (offset + d + 1));
  }
  if (final_d < 0) return false;

  std::vector<Edit> reversed;
  int x = n, y = m;
  for (int d = final_d; d > 0; --d) {
    const std::vector<int>& prev = trace[d - 1];  // diagonals -(d-1)..(d-1)
    auto prev_at = [&](int k) { return prev[k + d - 1]; };
    int k = x - y;
    bool down = k == -d || (k != d && prev_at(k - 1) < prev_at(k + 1));
    int prev_k = down ? k + 1 : k - 1;
    int prev_x = prev_at(prev_k);
    int prev_y = prev_x - prev_k;
    int mid_x = down ? prev_x : prev_x + 1;  // where the snake of step d started
    while (x > mid_x) {
      --x;
      --y;
      reversed.push_back({DiffKind::kSame, a0 + x, b0 + y});
    }
    if (down) {
      reversed.push_back({DiffKind::kAdded, -1, b0 + prev_y});
    } else {
      reversed.push_back({DiffKind::kRemoved, a0 + prev_x, -1});
    }
    x = prev_x;
    y = prev_y;
  }
  while (x > 0) {
    --x;
    --y;
    reversed.push_back({DiffKind::kSame, a0 + x, b0 + y});
  }
  out.insert(out.end(), reversed.rbegin(), reversed.rend());
  return true;
}

// Within each run of changes, removals first: how people read a replacement.
void RemovalsFirst(std::vector<Edit>& edits) {
  size_t i = 0;
  while (i < edits.size()) {
    if (edits[i].kind == DiffKind::kSame) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < edits.size() && edits[j].kind != DiffKind::kSame) ++j;
    std::stable_partition(edits.begin() + static_cast<long>(i),
                          edits.begin() + static_cast<long>(j),
                          [](const Edit& e) { return e.kind == DiffKind::kRemoved; });
    i = j;
  }
}

}  // namespace

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<DiffLine> DiffLines(const Lines& old_lines, const Lines& new_lines) {
  const int n = static_cast<int>(old_lines.size());
  const int m = static_cast<int>(new_lines.size());
  int prefix = 0;
  while (prefix < n && prefix < m && old_lines[prefix] == new_lines[prefix]) ++prefix;
  int suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix &&
         old_lines[n - 1 - suffix] == new_lines[m - 1 - suffix]) {
    ++suffix;
  }

  std::vector<Edit> edits;
  for (int i = 0; i < prefix; ++i) edits.push_back({DiffKind::kSame, i, i});
  const int mid_n = n - prefix - suffix;
  const int mid_m = m - prefix - suffix;
  std::vector<Edit> middle;
  if (!MyersEdits(old_lines, prefix, mid_n, new_lines, prefix, mid_m, middle)) {
    middle.clear();
    for (int i = 0; i < mid_n; ++i) middle.push_back({DiffKind::kRemoved, prefix + i, -1});
    for (int j = 0; j < mid_m; ++j) middle.push_back({DiffKind::kAdded, -1, prefix + j});
  }
  RemovalsFirst(middle);
  edits.insert(edits.end(), middle.begin(), middle.end());
  for (int i = 0; i < suffix; ++i) {
    edits.push_back({DiffKind::kSame, n - suffix + i, m - suffix + i});
  }

  std::vector<DiffLine> lines;
  lines.reserve(edits.size());
  for (const Edit& e : edits) {
    DiffLine line;
    line.kind = e.kind;
    line.text = e.kind == DiffKind::kAdded ? new_lines[e.new_index] : old_lines[e.old_index];
    line.old_line = e.old_index >= 0 ? e.old_index + 1 : 0;
    line.new_line = e.new_index >= 0 ? e.new_index + 1 : 0;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<DiffHunk> UnifiedHunks(std::string_view old_text, std::string_view new_text,
                                   int context) {
  std::vector<DiffLine> lines = DiffLines(SplitLines(old_text), SplitLines(new_text));
  const int total = static_cast<int>(lines.size());
  // Lines of each text before index i, for hunk headers.
  std::vector<int> old_before(total + 1, 0), new_before(total + 1, 0);
  for (int i = 0; i < total; ++i) {
    old_before[i + 1] = old_before[i] + (lines[i].kind != DiffKind::kAdded ? 1 : 0);
    new_before[i + 1] = new_before[i] + (lines[i].kind != DiffKind::kRemoved ? 1 : 0);
  }

  std::vector<DiffHunk> hunks;
  int i = 0;
  while (i < total) {
    if (lines[i].kind == DiffKind::kSame) {
      ++i;
      continue;
    }
    int begin = std::max(0, i - context);
    int end = i;  // one past the last change of this hunk
    int j = i;
    while (j < total) {
      if (lines[j].kind != DiffKind::kSame) {
        end = j + 1;
        ++j;
        continue;
      }
      // A gap of at most 2·context unchanged lines joins two changes.
      int next = j;
      while (next < total && lines[next].kind == DiffKind::kSame) ++next;
      if (next < total && next - j <= 2 * context) {
        j = next;
        continue;
      }
      break;
    }
    int stop = std::min(total, end + context);
    DiffHunk h;
    h.old_count = old_before[stop] - old_before[begin];
    h.new_count = new_before[stop] - new_before[begin];
    // diff -u names the line before an empty range.
    h.old_start = old_before[begin] + (h.old_count > 0 ? 1 : 0);
    h.new_start = new_before[begin] + (h.new_count > 0 ? 1 : 0);
    h.lines.assign(lines.begin() + begin, lines.begin() + stop);
    hunks.push_back(std::move(h));
    i = stop;
  }
  return hunks;
}

std::string UnifiedDiff(std::string_view old_text, std::string_view new_text,
                        std::string_view old_name, std::string_view new_name, int context) {
  std::vector<DiffHunk> hunks = UnifiedHunks(old_text, new_text, context);
  if (hunks.empty()) return "";
  std::string out = fmt::format("--- {}\n+++ {}\n", old_name, new_name);
  for (const DiffHunk& h : hunks) {
    out += fmt::format("@@ -{},{} +{},{} @@\n", h.old_start, h.old_count, h.new_start, h.new_count);
    for (const DiffLine& l : h.lines) {
      char mark = l.kind == DiffKind::kSame ? ' ' : l.kind == DiffKind::kRemoved ? '-' : '+';
      out += mark;
      out += l.text;
      out += '\n';
    }
  }
  return out;
}

}  // namespace kforge::report
