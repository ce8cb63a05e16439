// A listing's machine-readable form: named columns and rows of typed cells, written as
// CSV (RFC 4180, a header row) or as JSON (an array of objects keyed by column). The
// text and Markdown forms of the same listing come from a Document (document.h); a
// listing builds both from one pass over its data (listings.h). Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace gemmprof::client::render {

// An absent value (a figure not measured, a field not set) is std::monostate: an empty
// CSV cell and JSON null.
using Cell = std::variant<std::monostate, int64_t, double, bool, std::string>;

struct Records {
  std::vector<std::string> columns;  // snake_case, units in the name (median_ms)
  std::vector<std::vector<Cell>> rows;

  // Appends a row; a row with fewer cells than columns is padded with absent cells.
  void Add(std::vector<Cell> row);
};

// Header plus one line per row, '\n' line ends; doubles written so they read back the
// same, strings quoted only when they hold a comma, quote, CR or LF.
std::string RenderRecordsCsv(const Records& records);
// [{column: value, ...}, ...] in row order, columns in their order.
nlohmann::ordered_json RecordsJson(const Records& records);

}  // namespace gemmprof::client::render
