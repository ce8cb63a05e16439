#include "measure/stop_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/stats.h"

namespace gemmprof::measure {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string Seconds(double s) {
  // 2.0 s, 0.05 s: one decimal unless that would hide the value.
  const double tenths = s * 10;
  return std::abs(tenths - std::round(tenths)) < 1e-9 ? absl::StrFormat("%.1f", s)
                                                      : absl::StrFormat("%.2f", s);
}

}  // namespace

StopDecision ShouldStop(const StopOptions& options, int32_t rounds, double elapsed_s,
                        double precision) {
  if (options.fixed_rounds > 0) {
    if (rounds < options.fixed_rounds) return {};
    return {true, absl::StrCat("fixed ", options.fixed_rounds, " rounds")};
  }
  if (std::isnan(precision)) precision = kInf;
  const std::string achieved = core::stats::PlusMinusPercent(precision);
  if (rounds >= std::max(options.min_rounds, 2) && precision <= options.precision_target) {
    return {true, absl::StrCat("precision ", achieved, " reached")};
  }
  if (elapsed_s >= options.budget_s) {
    return {true, absl::StrCat("budget ", Seconds(options.budget_s), " s spent (", achieved, ")")};
  }
  if (options.max_rounds > 0 && rounds >= options.max_rounds) {
    return {true, absl::StrCat("round limit ", options.max_rounds, " (", achieved, ")")};
  }
  return {};
}

double GroupPrecision(const std::vector<std::vector<double>>& series) {
  if (series.empty()) return kInf;  // nothing measured: nothing can be claimed
  double worst = 0;
  for (const std::vector<double>& s : series) {
    const core::Estimate e = core::stats::EstimateOf(s);
    if (e.rounds < 2 || !(e.center_ms > 0)) return kInf;
    worst = std::max(worst, e.RelHalfWidth());
  }
  for (size_t i = 0; i < series.size(); ++i) {
    for (size_t j = i + 1; j < series.size(); ++j) {
      const core::stats::Interval r = core::stats::PairedRatio(series[i], series[j]);
      if (!r.valid) return kInf;
      worst = std::max(worst, r.RelHalfWidth());
    }
  }
  return worst;
}

}  // namespace gemmprof::measure
