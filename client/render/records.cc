#include "client/render/records.h"

#include "report/report_csv.h"

namespace gemmprof::client::render {

using report::CsvField;
using report::CsvNumber;

namespace {

struct CsvCell {
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return CsvNumber(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const { return CsvField(v); }
};

struct JsonCell {
  nlohmann::ordered_json operator()(std::monostate) const { return nullptr; }
  template <typename T>
  nlohmann::ordered_json operator()(const T& v) const {
    return v;
  }
};

}  // namespace

void Records::Add(std::vector<Cell> row) {
  row.resize(columns.size());
  rows.push_back(std::move(row));
}

std::string RenderRecordsCsv(const Records& records) {
  std::string out;
  for (size_t c = 0; c < records.columns.size(); ++c)
    out += (c ? "," : "") + CsvField(records.columns[c]);
  out += "\n";
  for (const auto& row : records.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + std::visit(CsvCell{}, row[c]);
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json RecordsJson(const Records& records) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : records.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < row.size(); ++c)
      object[records.columns[c]] = std::visit(JsonCell{}, row[c]);
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace gemmprof::client::render
