// A format-neutral document: titled sections of key/value lines, bullets, plain lines
// and tables, rendered as aligned text or Markdown. Lets the table and markdown report
// formats share one layout.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/render/text_table.h"

namespace gemmprof::client::render {

struct Block {
  enum class Kind { kKeyValues, kBullets, kLines, kTable, kNote };
  Kind kind = Kind::kLines;
  std::string caption;  // shown above a table or list; may be empty
  std::vector<std::pair<std::string, std::string>> key_values;
  std::vector<std::string> lines;  // bullets or plain lines (plain lines are verbatim)
  std::optional<TextTable> table;
  int indent = 2;  // a table's left margin in text
};

struct Section {
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<Section> sections;
};

// Convenience constructors.
Block KeyValues(std::vector<std::pair<std::string, std::string>> kv);
Block Bullets(std::vector<std::string> lines, std::string caption = "");
Block Lines(std::vector<std::string> lines);
Block Table(TextTable table, std::string caption = "");
// A sentence explaining the block before it (Markdown: italic).
Block Note(std::string text);

// Plain text: title underlined with '=' (none when the title is empty), sections headed by their
// title underlined with '-', tables indented by two spaces, bullets as "  - ", lines verbatim
// (inside a fenced code block in Markdown). Output ends with a newline.
std::string RenderText(const Document& doc);
// Markdown: '#' title (none when empty), '##' sections, tables as GitHub tables.
std::string RenderMarkdown(const Document& doc);

}  // namespace gemmprof::client::render
