// `gemmprof compare A B`, the analysis: items of two jobs matched by (shape, pass,
// recipe, mode, groups, op name), a time ratio and a noise-aware verdict per item,
// per-layer ratios, and both jobs' running conditions. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/stats.h"

namespace gemmprof::report {

enum class Verdict { kFaster, kSame, kSlower };
std::string_view ToString(Verdict v);
// The same verdict on joules: "less", "same", "more" (B uses less energy: kFaster).
std::string_view EnergyWord(Verdict v);

// Smallest relative change ever called a difference.
inline constexpr double kMinRelativeChange = 0.02;
// Multiple of the combined relative half-spread that counts as noise.
inline constexpr double kNoiseSigmas = 3.0;
// The noise rule in words, for help text and report footers.
inline constexpr char kNoiseRule[] =
    "max(2%, 3 x sqrt(a^2 + b^2)), where a and b are each side's relative half-spread "
    "(p80 - p20) / (2 x median)";

// One matched item. Times are the headline times in ms (interleaved estimate, or median
// for results stored before rounds); ratio = b / a (> 1: B is slower).
struct ItemComparison {
  core::GemmOp op;  // from A
  core::Recipe recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
  double a_ms = 0, b_ms = 0;
  double ratio = 1;
  double threshold = kMinRelativeChange;  // relative change needed for a verdict
  Verdict verdict = Verdict::kSame;
  // Unpaired 95% interval of `ratio` (two jobs never share rounds); invalid unless both
  // sides have interleaved estimates, and then the verdict is the noise threshold's.
  core::stats::Interval ratio_ci;
  // Back to back, when both sides measured it (0 otherwise).
  double b2b_a_ms = 0, b2b_b_ms = 0;
  core::stats::Interval b2b_ratio_ci;  // center = b2b_b_ms / b2b_a_ms
  Verdict b2b_verdict = Verdict::kSame;
  // Joules per iteration, when both sides measured energy (`submit --energy`; 0
  // otherwise), and B/A with the unpaired 95% interval of the two windows, judged as the
  // times are.
  double a_joules = 0, b_joules = 0;
  core::stats::Interval energy_ratio_ci;  // center = b_joules / a_joules
  Verdict energy_verdict = Verdict::kSame;
  bool has_energy() const { return a_joules > 0 && b_joules > 0; }
};

// With intervals: faster / slower only when the interval excludes 1 and the change
// exceeds kMinRelativeChange (drift between jobs is not inside within-job intervals).
Verdict JudgeInterval(const core::stats::Interval& ratio);

// Relative half-spread of one measurement: (p80 - p20) / (2 x median), 0 without a median.
// Robust where stdev is not: a few outlier samples (clock dips under a power cap) move
// the stdev a lot and the p20/p80 hardly at all.
double RelativeHalfSpread(const core::SampleStats& s);
// The noise threshold of two measurements (a relative change):
// max(kMinRelativeChange, kNoiseSigmas x sqrt(h_a^2 + h_b^2)), h = RelativeHalfSpread.
double NoiseThreshold(const core::SampleStats& a, const core::SampleStats& b);
// faster / slower when |b/a - 1| exceeds the threshold, else same.
Verdict Judge(double a_ms, double b_ms, double threshold);

struct LayerComparison {
  core::RecipeVariant recipe = core::Recipe::kBf16;  // a whole recipe or a variant
  core::Mode mode = core::Mode::kAutocast;
  double a_ms = 0, b_ms = 0;  // per-layer totals
  double ratio = 1;           // b / a
  // Per-layer joules when every term on both sides has an energy figure (0 otherwise).
  double a_joules = 0, b_joules = 0;
};

// An item with a result in one job only.
struct UnmatchedItem {
  std::string label;  // ItemLabel
  core::Recipe recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
};

// The GPU's running state while one job's matched items were measured (NVML telemetry):
// SM clock and temperature as medians over the items, power as their mean, the share
// of telemetry samples taken while a clocks-event reason was active.
struct RunningConditions {
  int items = 0;                // matched items with telemetry; 0: none (host runner, old results)
  double sm_clock_mhz = 0;      // median of the items' mean SM clock (midrange where not recorded)
  double sm_clock_min_mhz = 0;  // median of the items' lowest SM clock
  double power_w = 0;           // mean of the items' average power
  double temp_c = 0;            // median of the items' highest temperature
  double throttled_share = 0;   // throttled samples / samples
};
// Conditions of the given items (those with telemetry samples).
RunningConditions ConditionsOf(const std::vector<const core::Measurement*>& items);
// Where the two jobs' median SM clocks differ by this much or more, compare says so.
inline constexpr double kClockDriftNote = 0.005;

struct Comparison {
  std::vector<ItemComparison> items;     // in A's order
  std::vector<UnmatchedItem> only_in_a;  // with a result only in A, in A's order
  std::vector<UnmatchedItem> only_in_b;
  std::vector<LayerComparison> layers;     // recipes complete in both
  std::vector<std::string> context_diffs;  // "cuBLASLt 13.0.1 -> 13.1.0", ...
  int faster = 0, same = 0, slower = 0;
  // Over the matched items that carry telemetry on both sides.
  RunningConditions conditions_a, conditions_b;
};

Comparison CompareReports(const core::Report& a, const core::Report& b);
}  // namespace gemmprof::report
