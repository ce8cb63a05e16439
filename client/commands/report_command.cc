#include "client/commands/report_command.h"

#include <CLI/CLI.hpp>

#include "client/render/report_document.h"
#include "report/json_document.h"
#include "report/report_csv.h"

namespace gemmprof::client {

ReportCommand::ReportCommand(CLI::App& parent)
    : JobCommand(parent, "report", "Print a job's report") {
  app_->add_option("--format", format_, "table (default), csv, json or markdown");
  app_->add_flag("--chart", chart_, "Append a terminal bar chart (table and markdown)");
  app_->footer(R"(Examples:
  gemmprof report 42                     context, notices, per-GEMM, per-layer, speedups, findings
  gemmprof report 42 --chart
  gemmprof report 42 --format csv > job42.csv     one row per item, every context column
  gemmprof report 42 --format json                schema: report/REPORT_JSON.md
  gemmprof report 42 --format markdown >> NOTES.md
Times in ms: the mean of interleaved rounds with its 95% interval (+-), or the median of
iterations for results stored before rounds; TFLOP/s = flops / time. Only intervals that
exclude 1 make a recipe "faster" or "slower" in findings.)");
}

absl::Status ReportCommand::Run(CommandContext& ctx) {
  if (format_ != "table" && format_ != "csv" && format_ != "json" && format_ != "markdown")
    return absl::InvalidArgumentError("--format: unknown format \"" + format_ +
                                      "\"; valid: table, csv, json, markdown");
  if (chart_ && (format_ == "csv" || format_ == "json"))
    return absl::InvalidArgumentError("--chart works with --format table or markdown, not " +
                                      format_);
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::Report report, client->GetReport(job_id_));
  if (format_ == "csv") {
    ctx.out << report::RenderReportCsv(report);
  } else if (format_ == "json") {
    ctx.out << report::JsonDocument(report);
  } else if (format_ == "markdown") {
    ctx.out << render::RenderReportMarkdown(report, chart_);
  } else {
    ctx.out << render::RenderReportTable(report, chart_);
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::client
