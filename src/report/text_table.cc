#include "report/text_table.h"

#include <algorithm>

namespace kforge::report {

size_t DisplayWidth(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++width;  // count lead bytes only
  }
  return width;
}

void TextTable::AddColumn(std::string header, Align align) {
  columns_.push_back({std::move(header), align});
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(const std::string& indent) const {
  std::vector<size_t> widths;
  for (const Column& c : columns_) widths.push_back(DisplayWidth(c.header));
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string pad(widths[i] - DisplayWidth(cells[i]), ' ');
      bool last = i + 1 == cells.size();
      if (columns_[i].align == Align::kRight) {
        out += pad + cells[i];
      } else {
        out += cells[i];
        if (!last) out += pad;
      }
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
    return out;
  };
  std::vector<std::string> headers;
  std::vector<std::string> rules;
  for (size_t i = 0; i < columns_.size(); ++i) {
    headers.push_back(columns_[i].header);
    rules.push_back(std::string(widths[i], '-'));
  }
  std::string out = line(headers) + line(rules);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace kforge::report
