// The charts of `gemmprof plot`, built from a report: per-layer time by recipe and
// pass (the seed tutorial's Figure 1), autocast vs prequant (Figure 2), per-GEMM
// TFLOP/s and speedup vs BF16. Every recipe keeps its colour (recipe_style.h). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "client/render/svg_chart.h"
#include "core/job.h"
#include "core/status.h"
#include "report/analysis.h"

namespace gemmprof::client::render {

enum class ChartKind { kLayer, kModes, kTflops, kSpeedup, kRoofline, kEnergy, kAll };

std::string_view ToString(ChartKind kind);
std::optional<ChartKind> ParseChartKind(std::string_view s);
// "layer, modes, tflops, speedup, roofline, energy, all".
std::string ChartKindList();

// One chart (kAll is not a single chart: use RenderChartSvg). Charts without data carry
// an empty_message saying why.
BarChart BuildChart(const report::Analysis& analysis, ChartKind kind);

// A complete SVG document; kAll stacks the four charts vertically in one file.
// Errors: FailedPrecondition when no recipe of the job has a complete set of results
// (nothing to draw), naming the job and its state; for kEnergy, when the job has no
// energy figures (it was not submitted with --energy, or its board has no counter).
absl::StatusOr<std::string> RenderChartSvg(const core::Report& report, ChartKind kind);

}  // namespace gemmprof::client::render
