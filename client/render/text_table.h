// A table of strings rendered as aligned plain text or as a Markdown table.
#pragma once

#include <string>
#include <vector>

namespace gemmprof::client::render {

// Column alignment; numbers are right-aligned, labels left-aligned.
enum class Align { kLeft, kRight };

// Rows of cells under a header. Value type; pure rendering, no I/O.
class TextTable {
 public:
  // `headers` fixes the column count; `align` (same length, or empty for
  // left/right-by-position: first column left, the rest right) sets alignment.
  explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});

  // Appends a row; missing cells are blank, extra cells are dropped.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  size_t num_rows() const { return rows_.size(); }

  // Columns padded to their widest cell (UTF-8 aware), two spaces between columns, a
  // dashed rule under the header, each line ending in '\n' and indented by `indent`.
  std::string RenderText(int indent = 2) const;
  // GitHub-flavoured Markdown with alignment markers; '|' in cells is escaped.
  std::string RenderMarkdown() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text: code points, not bytes.
size_t DisplayWidth(const std::string& s);

}  // namespace gemmprof::client::render
