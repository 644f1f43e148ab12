// A plain-text table for terminals: a header row, a rule, aligned columns.
#pragma once

#include <string>
#include <vector>

namespace kforge::report {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  void AddColumn(std::string header, Align align = Align::kLeft);
  // Missing cells are blank; extra cells are dropped.
  void AddRow(std::vector<std::string> cells);
  std::string Render(const std::string& indent = "  ") const;
  bool empty() const { return rows_.empty(); }

 private:
  struct Column {
    std::string header;
    Align align;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text, counting code points (no wide-glyph tables).
size_t DisplayWidth(const std::string& text);

}  // namespace kforge::report
