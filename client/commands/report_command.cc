#include "client/commands/report_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "client/commands/campaign_flag.h"
#include "client/render/comparison.h"
#include "client/render/report_document.h"
#include "report/comparison.h"
#include "report/json_document.h"
#include "report/report_csv.h"

namespace gemmprof::client {

ReportCommand::ReportCommand(CLI::App& parent)
    : JobCommand(parent, "report", "Print a job's report") {
  app_->add_option("--format", format_, "table (default), csv, json or markdown");
  app_->add_flag("--chart", chart_, "Append a terminal bar chart (table and markdown)");
  // JOB or --campaign.
  app_->get_option("JOB")->required(false);
  app_->add_option("--campaign", campaign_,
                   "Instead of JOB: the jobs of a campaign (submit --where model:A,model:B), "
                   "each device's job compared with the first's per GEMM and per layer, with "
                   "B/A intervals and each device's context (driver, cuBLASLt, clocks, power)");
  app_->footer(R"(Examples:
  gemmprof report 42                     context, notices, per-GEMM, per-layer, speedups, findings
  gemmprof report 42 --chart
  gemmprof report 42 --format csv > job42.csv     one row per item, every context column
  gemmprof report 42 --format json                schema: report/REPORT_JSON.md
  gemmprof report 42 --format markdown >> NOTES.md
  gemmprof report --campaign c1764331200000        one campaign across device models
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
  if ((job_id_ == 0) == campaign_.empty()) {
    return absl::InvalidArgumentError(
        "report: give a JOB id or --campaign NAME (exactly one of them)");
  }
  RETURN_IF_ERROR(CheckCampaignFilter(campaign_));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  if (!campaign_.empty()) return RunCampaign(ctx, *client);
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

absl::Status ReportCommand::RunCampaign(CommandContext& ctx, GemmProfClient& client) {
  // A campaign is one job per device model: one page holds it.
  constexpr int32_t kMaxJobs = 1000;
  ASSIGN_OR_RETURN(std::vector<core::JobRecord> jobs,
                   client.ListJobs(std::nullopt, kMaxJobs, "", campaign_));
  std::sort(jobs.begin(), jobs.end(),
            [](const core::JobRecord& a, const core::JobRecord& b) { return a.id < b.id; });
  if (jobs.empty()) {
    return absl::NotFoundError(
        absl::StrCat("--campaign ", campaign_,
                     ": no job belongs to this campaign (gemmprof jobs lists the jobs and "
                     "their campaigns)"));
  }
  const render::ListingFormat format = format_ == "csv"        ? render::ListingFormat::kCsv
                                       : format_ == "json"     ? render::ListingFormat::kJson
                                       : format_ == "markdown" ? render::ListingFormat::kMarkdown
                                                               : render::ListingFormat::kTable;
  if (format == render::ListingFormat::kCsv && jobs.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--format csv: campaign ", campaign_, " has ", jobs.size(), " jobs, so ",
                     jobs.size() - 1, " comparisons, and one CSV holds one; use --format json"));
  }
  std::vector<core::Report> reports;
  for (const core::JobRecord& job : jobs) {
    ASSIGN_OR_RETURN(core::Report r, client.GetReport(job.id));
    reports.push_back(std::move(r));
  }
  nlohmann::json doc = {{"campaign", campaign_},
                        {"jobs", nlohmann::json::array()},
                        {"comparisons", nlohmann::json::array()}};
  std::string text;
  if (format == render::ListingFormat::kTable || format == render::ListingFormat::kMarkdown) {
    absl::StrAppend(&text, "Campaign ", campaign_, ": ", jobs.size(), " jobs\n");
  }
  for (const core::JobRecord& job : jobs) {
    const core::DeviceInfo& d = job.device;
    doc["jobs"].push_back({{"id", job.id},
                           {"state", std::string(core::ToString(job.state))},
                           {"where", core::ToString(job.spec.where)},
                           {"device", d.name},
                           {"driver", d.driver_version},
                           {"cublaslt", d.cublaslt_version},
                           {"finished_items", job.finished_items},
                           {"total_items", job.total_items}});
    if (format == render::ListingFormat::kTable || format == render::ListingFormat::kMarkdown) {
      absl::StrAppend(
          &text, "  job ", job.id, "  ", std::string(core::ToString(job.state)), "  ", d.name,
          d.driver_version.empty() ? "" : absl::StrCat("  driver ", d.driver_version),
          d.cublaslt_version.empty() ? "" : absl::StrCat("  cuBLASLt ", d.cublaslt_version), "  ",
          job.finished_items, "/", job.total_items, " items\n");
    }
  }
  if (jobs.size() == 1) {
    absl::StrAppend(&text, "Only one job: nothing to compare across devices yet.\n");
  }
  for (size_t i = 1; i < jobs.size(); ++i) {
    const report::Comparison c = report::CompareReports(reports.front(), reports[i]);
    const std::string listing =
        render::RenderListing(render::ComparisonListing(c, jobs.front().id, jobs[i].id), format);
    if (format == render::ListingFormat::kJson) {
      doc["comparisons"].push_back(
          {{"job_a", jobs.front().id},
           {"job_b", jobs[i].id},
           {"device_a", jobs.front().device.name},
           {"device_b", jobs[i].device.name},
           {"comparison", nlohmann::json::parse(listing, nullptr, false)}});
    } else if (format == render::ListingFormat::kCsv) {
      text += listing;
    } else {
      absl::StrAppend(&text, "\n", jobs[i].device.name, " (job ", jobs[i].id, ") against ",
                      jobs.front().device.name, " (job ", jobs.front().id,
                      "); B/A > 1: B is slower\n", listing);
    }
  }
  ctx.out << (format == render::ListingFormat::kJson ? doc.dump(2) + "\n" : text);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
