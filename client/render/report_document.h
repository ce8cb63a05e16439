// The table and markdown report formats: context, notices, per-GEMM tables per pass
// and mode, per-layer and full-model totals, speedups, autocast vs prequant, findings.
#pragma once

#include <string>

#include "client/render/document.h"
#include "core/job.h"
#include "report/analysis.h"

namespace gemmprof::client::render {

// The report laid out as sections; `with_chart` appends the terminal bar chart.
Document BuildReportDocument(const report::Analysis& analysis, bool with_chart);

// `gemmprof report --format table [--chart]`: aligned plain text.
std::string RenderReportTable(const core::Report& report, bool with_chart = false);
// `gemmprof report --format markdown [--chart]`.
std::string RenderReportMarkdown(const core::Report& report, bool with_chart = false);

}  // namespace gemmprof::client::render
