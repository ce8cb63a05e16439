// Findings of a report: plain sentences computed from the numbers. Pure.
#pragma once

#include <string>
#include <vector>

#include "client/render/report_analysis.h"

namespace gemmprof::client::render {

// Dgrad vs Fprop difference per layer above which a finding is written.
inline constexpr double kPassAsymmetryRatio = 0.05;

// In order: the fastest recipe per layer in each mode (with its speedup over BF16);
// the quantization overhead per recipe when both modes ran; per-layer Dgrad vs Fprop
// differences above 5%; and every GEMM where a low-precision recipe is not faster than
// BF16 (autocast: "quantization overhead exceeds the GEMM gain"; prequant: the
// low-precision GEMM itself is not faster).
std::vector<std::string> BuildFindings(const ReportAnalysis& analysis);

}  // namespace gemmprof::client::render
