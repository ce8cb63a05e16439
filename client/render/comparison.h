// `gemmprof compare A B`: items of two jobs matched by (shape, pass, recipe, mode,
// groups), a time ratio and a noise-aware verdict per item, and per-layer ratios.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/job.h"

namespace gemmprof::client::render {

enum class Verdict { kFaster, kSame, kSlower };
std::string_view ToString(Verdict v);

// Smallest relative change ever called a difference.
inline constexpr double kMinRelativeChange = 0.02;
// Multiple of the combined relative standard deviation that counts as noise.
inline constexpr double kNoiseSigmas = 3.0;

// One matched item. Times are medians in ms; ratio = b / a (> 1: B is slower).
struct ItemComparison {
  core::GemmOp op;  // from A
  core::Recipe recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
  double a_ms = 0, b_ms = 0;
  double ratio = 1;
  double threshold = kMinRelativeChange;  // relative change needed for a verdict
  Verdict verdict = Verdict::kSame;
};

// The noise threshold of two measurements: max(2%, 3 x sqrt(cv_a^2 + cv_b^2), the
// larger relative p20-p80 spread), where cv = stdev / median.
double NoiseThreshold(const core::SampleStats& a, const core::SampleStats& b);
// faster / slower when |b/a - 1| exceeds the threshold, else same.
Verdict Judge(double a_ms, double b_ms, double threshold);

struct LayerComparison {
  core::Recipe recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
  double a_ms = 0, b_ms = 0;  // per-layer totals
  double ratio = 1;           // b / a
};

struct Comparison {
  std::vector<ItemComparison> items;   // in A's order
  std::vector<std::string> only_in_a;  // item labels with a result only in A
  std::vector<std::string> only_in_b;
  std::vector<LayerComparison> layers;     // recipes complete in both
  std::vector<std::string> context_diffs;  // "cuBLASLt 13.0.1 -> 13.1.0", ...
  int faster = 0, same = 0, slower = 0;
};

Comparison CompareReports(const core::Report& a, const core::Report& b);
// Context differences, per-item table (op, pass, MxKxN, recipe, mode, A ms, B ms,
// B/A, threshold, verdict), per-layer table and a one-line summary.
std::string RenderComparison(const Comparison& c, int64_t job_a, int64_t job_b);

}  // namespace gemmprof::client::render
