#include "client/commands/plot_command.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "client/render/png_export.h"
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

// "svg" or "png": --format when given, else the output file's extension.
absl::StatusOr<std::string> ChartFormat(const std::string& flag, const std::string& path) {
  if (!flag.empty()) {
    if (flag == "svg" || flag == "png") return flag;
    return absl::InvalidArgumentError("--format: unknown value \"" + flag + "\"; valid: svg, png");
  }
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::EndsWith(lower, ".svg")) return std::string("svg");
  if (absl::EndsWith(lower, ".png")) return std::string("png");
  return absl::InvalidArgumentError("-o " + path +
                                    ": cannot tell the format from the extension; name the file "
                                    ".svg or .png, or give --format svg|png");
}

}  // namespace

PlotCommand::PlotCommand(CLI::App& parent)
    : JobCommand(parent, "plot", "Write a job's charts as an SVG or PNG file") {
  app_->add_option("-o,--output", output_, "File to write: .svg or .png")->required();
  app_->add_option("--kind", kind_,
                   "layer (default), modes, tflops, speedup, roofline, energy or all");
  app_->add_option("--format", format_,
                   "svg | png (default: from the extension of -o). PNG is the SVG rendered by "
                   "rsvg-convert (Debian librsvg2-bin)");
  app_->footer(R"(Charts:
  layer    per-layer GEMM time by recipe, Fprop+Dgrad (solid) and Wgrad (light) stacked
  modes    autocast vs prequant per recipe: the quantization overhead
  tflops   per-GEMM TFLOP/s by recipe; for an inference sweep (--sweep-m), TFLOP/s
           against M, one line per recipe x mode, p20..p80 whiskers
  speedup  full-model speedup vs bf16
  roofline every item: FLOP per byte against TFLOP/s, log-log, with each recipe type's
           dense peak at the measured SM clock and the measured copy bandwidth
  energy   per-layer joules by recipe and mode with 95% intervals, labelled with the
           energy ratio vs bf16 (jobs submitted with --energy)
  all      the four, stacked in one file
Every recipe has one colour in every chart. Examples:
  gemmprof plot 42 -o layer.svg
  gemmprof plot 42 -o all.svg --kind all
  gemmprof plot 42 -o layer.png           # PNG for documents and slides)");
}

absl::Status PlotCommand::Run(CommandContext& ctx) {
  const auto kind = render::ParseChartKind(kind_);
  if (!kind)
    return absl::InvalidArgumentError("--kind: unknown chart \"" + kind_ +
                                      "\"; valid: " + render::ChartKindList());
  ASSIGN_OR_RETURN(const std::string format, ChartFormat(format_, output_));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::Report report, client->GetReport(job_id_));
  ASSIGN_OR_RETURN(const std::string svg, render::RenderChartSvg(report, *kind));
  if (format == "png") {
    RETURN_IF_ERROR(render::WritePngFromSvg(svg, output_));
  } else {
    RETURN_IF_ERROR(WriteFile(output_, svg));
  }
  ctx.out << "wrote " << output_ << " (" << render::ToString(*kind) << ", job " << job_id_ << ")\n";
  return absl::OkStatus();
}

}  // namespace gemmprof::client
