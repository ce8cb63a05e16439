#include "client/commands/plot_command.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "client/commands/follow_job.h"
#include "client/render/report_charts.h"

namespace gemmprof::client {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return absl::PermissionDeniedError("-o: cannot write \"" + path +
                                       "\": " + std::strerror(errno));
  out << text;
  out.close();
  if (!out)
    return absl::DataLossError("-o: writing \"" + path + "\" failed: " + std::strerror(errno));
  return absl::OkStatus();
}

}  // namespace

PlotCommand::PlotCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("plot", "Write a job's charts as an SVG file");
  AddJobIdArgument(*app_, "JOB", job_id_);
  app_->add_option("-o,--output", output_, "SVG file to write")->required();
  app_->add_option("--kind", kind_, "layer (default), modes, tflops, speedup or all");
  app_->footer(R"(Charts:
  layer    per-layer GEMM time by recipe, Fprop+Dgrad (solid) and Wgrad (light) stacked
  modes    autocast vs prequant per recipe: the quantization overhead
  tflops   per-GEMM TFLOP/s by recipe
  speedup  full-model speedup vs bf16
  all      the four, stacked in one file
Every recipe has one colour in every chart. Examples:
  gemmprof plot 42 -o layer.svg
  gemmprof plot 42 -o all.svg --kind all)");
}

absl::Status PlotCommand::Run(CommandContext& ctx) {
  const auto kind = render::ParseChartKind(kind_);
  if (!kind)
    return absl::InvalidArgumentError("--kind: unknown chart \"" + kind_ +
                                      "\"; valid: " + render::ChartKindList());
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::Report report, client->GetReport(job_id_));
  ASSIGN_OR_RETURN(const std::string svg, render::RenderChartSvg(report, *kind));
  RETURN_IF_ERROR(WriteFile(output_, svg));
  ctx.out << "wrote " << output_ << " (" << render::ToString(*kind) << ", job " << job_id_ << ")\n";
  return absl::OkStatus();
}

}  // namespace gemmprof::client
