// Findings of a report: plain sentences computed from the numbers. Pure.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/analysis.h"
#include "report/claim.h"

namespace gemmprof::report {

// Dgrad vs Fprop difference per layer above which a finding is written.
inline constexpr double kPassAsymmetryRatio = 0.05;
// A recipe's quantization overhead above this multiple of its bandwidth floor is named
// in the findings: past it, the quantization kernels (not the recipe's bytes) set part
// of the overhead.
inline constexpr double kQuantFloorRatio = 1.15;

// One comparison behind a finding: subject time / reference time and what it supports.
// Winner lines compare every other complete recipe (subject) to the best (reference);
// per-GEMM lines a recipe (subject) to bf16 (reference) on `gemm`.
struct RankClaim {
  core::Mode mode = core::Mode::kAutocast;
  core::RecipeVariant reference = core::Recipe::kBf16, subject = core::Recipe::kBf16;
  core::stats::Interval ratio;
  Claim claim = Claim::kUnknown;
  std::string gemm;  // OpLabel for per-GEMM claims, empty for per-layer ones
};

// Per layer, the bytes recipe `r`'s autocast quantization must move (sum of weight x
// quant_bytes) and the measured copy bandwidth (bytes/s; 0 when not measured).
std::pair<double, double> QuantBytesPerLayer(const Analysis& a, const core::RecipeVariant& r,
                                             core::Mode mode = core::Mode::kAutocast);
// The bandwidth floor of quantization in ms: bytes it must move / measured copy rate.
double OverheadFloorMs(double quant_bytes, double copy_bytes_per_s);

// In order: the fastest recipe per layer in each mode (with its speedup over BF16);
// the quantization overhead per recipe when both modes ran; per-layer Dgrad vs Fprop
// differences above 5%; and every GEMM where a low-precision recipe is not faster than
// BF16 (autocast: "quantization overhead exceeds the GEMM gain"; prequant: the
// low-precision GEMM itself is not faster).
// Words of order ("fastest", "slower than") come only from Claim: the fastest recipe is
// named only when each other complete recipe is slower with an interval above 1, else the
// tie is stated (identical GPU work, or within noise). Results stored before interleaved
// rounds are never ranked. `claims`, when given, receives every comparison made.
std::vector<std::string> BuildFindings(const Analysis& analysis,
                                       std::vector<RankClaim>* claims = nullptr);

}  // namespace gemmprof::report
