#include "client/render/document.h"

#include <algorithm>

namespace gemmprof::client::render {

Block KeyValues(std::vector<std::pair<std::string, std::string>> kv) {
  Block b;
  b.kind = Block::Kind::kKeyValues;
  b.key_values = std::move(kv);
  return b;
}

Block Bullets(std::vector<std::string> lines, std::string caption) {
  Block b;
  b.kind = Block::Kind::kBullets;
  b.lines = std::move(lines);
  b.caption = std::move(caption);
  return b;
}

Block Lines(std::vector<std::string> lines) {
  Block b;
  b.kind = Block::Kind::kLines;
  b.lines = std::move(lines);
  return b;
}

Block Table(TextTable table, std::string caption) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.table = std::move(table);
  b.caption = std::move(caption);
  return b;
}

Block Note(std::string text) {
  Block b;
  b.kind = Block::Kind::kNote;
  b.lines = {std::move(text)};
  return b;
}

namespace {

std::string TextBlock(const Block& b) {
  std::string out;
  if (!b.caption.empty()) out += b.caption + "\n";
  switch (b.kind) {
    case Block::Kind::kKeyValues: {
      size_t width = 0;
      for (const auto& [k, v] : b.key_values) width = std::max(width, DisplayWidth(k) + 1);
      for (const auto& [k, v] : b.key_values)
        out += "  " + k + ":" + std::string(width - DisplayWidth(k) - 1 + 2, ' ') + v + "\n";
      break;
    }
    case Block::Kind::kBullets:
      for (const auto& l : b.lines) out += "  - " + l + "\n";
      break;
    case Block::Kind::kLines:
      for (const auto& l : b.lines) out += l + "\n";
      break;
    case Block::Kind::kTable:
      out += b.table->RenderText(b.indent);
      break;
    case Block::Kind::kNote:
      out += "  " + b.lines.front() + "\n";
      break;
  }
  return out;
}

std::string MarkdownBlock(const Block& b) {
  std::string out;
  if (!b.caption.empty()) {
    // A '*' inside the caption would close the bold early.
    std::string caption;
    for (char c : b.caption) caption += c == '*' ? std::string("\\*") : std::string(1, c);
    out += "**" + caption + "**\n\n";
  }
  switch (b.kind) {
    case Block::Kind::kKeyValues:
      for (const auto& [k, v] : b.key_values) out += "- **" + k + "**: " + v + "\n";
      break;
    case Block::Kind::kBullets:
      for (const auto& l : b.lines) out += "- " + l + "\n";
      break;
    case Block::Kind::kLines:
      out += "```\n";
      for (const auto& l : b.lines) out += l + "\n";
      out += "```\n";
      break;
    case Block::Kind::kTable:
      out += b.table->RenderMarkdown();
      break;
    case Block::Kind::kNote:
      out += "_" + b.lines.front() + "_\n";
      break;
  }
  return out;
}

}  // namespace

std::string RenderText(const Document& doc) {
  std::string out;
  if (!doc.title.empty()) out = doc.title + "\n" + std::string(DisplayWidth(doc.title), '=') + "\n";
  for (const Section& s : doc.sections) {
    if (!s.title.empty())
      out += std::string(out.empty() ? "" : "\n") + s.title + "\n" +
             std::string(DisplayWidth(s.title), '-') + "\n";
    for (size_t i = 0; i < s.blocks.size(); ++i) {
      if (i > 0) out += "\n";
      out += TextBlock(s.blocks[i]);
    }
  }
  return out;
}

std::string RenderMarkdown(const Document& doc) {
  std::string out = doc.title.empty() ? "" : "# " + doc.title + "\n";
  for (const Section& s : doc.sections) {
    if (!s.title.empty()) out += std::string(out.empty() ? "" : "\n") + "## " + s.title + "\n";
    for (const Block& b : s.blocks) out += std::string(out.empty() ? "" : "\n") + MarkdownBlock(b);
  }
  return out;
}

}  // namespace gemmprof::client::render
