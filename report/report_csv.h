// `gemmprof report --format csv` and GET /api/v1/jobs/{id}/report.csv: one row per item
// with every context column, so a spreadsheet or pandas needs nothing else. RFC 4180 quoting; '\n'
// line ends.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"

namespace gemmprof::report {

// The header row's column names, in order (units in the names).
const std::vector<std::string>& ReportCsvColumns();
// Header plus one row per item in seq order. Items without a measurement leave the
// measurement columns empty.
std::string RenderReportCsv(const core::Report& report);
// Quotes a field when it holds a comma, quote, CR or LF.
std::string CsvField(const std::string& s);
// The shortest text that reads back as the same double, so CSV loses nothing.
std::string CsvNumber(double v);

}  // namespace gemmprof::report
