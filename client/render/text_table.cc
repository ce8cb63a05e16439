#include "client/render/text_table.h"

#include <algorithm>

namespace gemmprof::client::render {
namespace {

std::string Pad(const std::string& s, size_t width, Align align) {
  const size_t w = DisplayWidth(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return align == Align::kLeft ? s + fill : fill + s;
}

std::string EscapeMarkdown(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  if (align_.size() != headers_.size()) {
    align_.assign(headers_.size(), Align::kRight);
    if (!align_.empty()) align_[0] = Align::kLeft;
  }
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::RenderText(int indent) const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) {
    width[c] = DisplayWidth(headers_[c]);
    for (const auto& row : rows_) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  const std::string margin(static_cast<size_t>(std::max(indent, 0)), ' ');
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = margin;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) s += "  ";
      s += Pad(cells[c], width[c], align_[c]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(headers_);
  std::string rule = margin;
  for (size_t c = 0; c < width.size(); ++c) {
    if (c > 0) rule += "  ";
    rule += std::string(width[c], '-');
  }
  out += rule + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string TextTable::RenderMarkdown() const {
  std::string out = "|";
  for (const auto& h : headers_) out += " " + EscapeMarkdown(h) + " |";
  out += "\n|";
  for (Align a : align_) out += a == Align::kLeft ? " :--- |" : " ---: |";
  out += "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (const auto& cell : row) out += " " + EscapeMarkdown(cell) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace gemmprof::client::render
