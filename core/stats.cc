#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gemmprof::core::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// t_{0.975, df} for df = 1..30.
constexpr double kT975[30] = {12.7062047, 4.3026527, 3.1824463, 2.7764451, 2.5705818, 2.4469119,
                              2.3646243,  2.3060041, 2.2621572, 2.2281389, 2.2009852, 2.1788128,
                              2.1603687,  2.1447867, 2.1314495, 2.1199053, 2.1098156, 2.1009220,
                              2.0930241,  2.0859634, 2.0796138, 2.0738731, 2.0686576, 2.0638986,
                              2.0595386,  2.0555294, 2.0518305, 2.0484071, 2.0452296, 2.0422725};

// Fractional df inside the table: ln t is smooth and nearly cubic in 1/df, so a cubic
// through the four nearest entries keeps the error below 4e-4 even between df 1 and 2,
// where linear interpolation is off by 3%.
double InterpolateTable(double df) {
  int first = static_cast<int>(std::floor(df)) - 1;
  first = std::clamp(first, 1, 27);
  const double u = 1.0 / df;
  double log_t = 0;
  for (int i = first; i < first + 4; ++i) {
    double w = 1;
    for (int j = first; j < first + 4; ++j) {
      if (j != i) w *= (u - 1.0 / j) / (1.0 / i - 1.0 / j);
    }
    log_t += w * std::log(kT975[i - 1]);
  }
  return std::exp(log_t);
}

// Above 30 df: the Cornish-Fisher expansion of t around the normal quantile, four terms
// (error below 1e-7 at df 30, shrinking with df).
double CornishFisher(double df) {
  constexpr double z = 1.959963984540054;
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

bool AllFinite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

double Mean(std::span<const double> v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

// Sample variance (n - 1); 0 below two values.
double Variance(std::span<const double> v) {
  if (v.size() < 2) return 0;
  const double m = Mean(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return ss / (v.size() - 1);
}

double DegreesOfFreedom(double n_eff) { return std::max(1.0, n_eff - 1); }

// A variance with its degrees of freedom, for Welch-Satterthwaite sums.
struct VarPart {
  double var = 0;
  double df = 1;
};

// (Sum var)^2 / Sum (var^2 / df); any df when the total is 0 (the interval is a point).
double Satterthwaite(std::span<const VarPart> parts) {
  double total = 0, denom = 0;
  for (const VarPart& p : parts) {
    total += p.var;
    denom += p.var * p.var / p.df;
  }
  return denom > 0 ? total * total / denom : kInf;
}

// Squared standard error of an estimate's center, recovered from its interval.
VarPart MeanVariance(const Estimate& e) {
  const double df = DegreesOfFreedom(e.n_eff);
  const double se = (e.ci_high_ms - e.ci_low_ms) / 2 / StudentT975(df);
  return {se * se, df};
}

// var(mean) of a series with its autocorrelation-corrected count.
VarPart SeriesMeanVariance(std::span<const double> v) {
  const double n_eff = EffectiveCount(v);
  return {Variance(v) / n_eff, DegreesOfFreedom(n_eff)};
}

Interval Point(double center) { return {center, center, center, false}; }

Interval Symmetric(double center, std::span<const VarPart> parts) {
  double var = 0;
  for (const VarPart& p : parts) var += p.var;
  const double half = var > 0 ? StudentT975(Satterthwaite(parts)) * std::sqrt(var) : 0;
  if (!std::isfinite(center) || !std::isfinite(half)) return Interval{};
  return {center, center - half, center + half, true};
}

// One side of a term: its center, and the variance of that center when known.
struct Side {
  double center = 0;
  bool has_var = false;
  VarPart var;
};

Side SideOf(std::span<const double> series, const Estimate& est) {
  if (series.empty()) {
    // A figure without series: the estimate's interval when it has one, else (an old
    // result) the center alone.
    if (est.rounds >= 2) return {est.center_ms, true, MeanVariance(est)};
    return {est.center_ms, false, {}};
  }
  if (series.size() < 2 || !AllFinite(series)) return {Mean(series), false, {}};
  if (est.rounds >= 2) return {Mean(series), true, MeanVariance(est)};
  return {Mean(series), true, SeriesMeanVariance(series)};
}

// Collects centers and variance parts of `terms`. For paired terms the per-round
// residual w (x_r - k y_r) carries the variance, so drift shared by x and y cancels;
// unpaired terms add w^2 (var x + k^2 var y). k is R for ratios and 1 for differences.
struct SumParts {
  double sum_x = 0, sum_y = 0;
  bool valid = true;
  std::vector<VarPart> parts;
};

// Per-round sums of series that came from the same rounds: one bucket per rounds id and
// series length.
using RoundSums = std::vector<std::pair<std::string, std::vector<double>>>;
void AddToRoundSums(RoundSums& sums, const std::string& rounds_id, double weight,
                    std::span<const double> series) {
  const std::string id = rounds_id + "#" + std::to_string(series.size());
  auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& b) { return b.first == id; });
  if (it == sums.end()) {
    sums.push_back({id, std::vector<double>(series.size(), 0.0)});
    it = sums.end() - 1;
  }
  for (size_t r = 0; r < series.size(); ++r) it->second[r] += weight * series[r];
}

SumParts Collect(std::span<const Term> terms, double k) {
  SumParts out;
  out.valid = !terms.empty();
  // Residuals of paired terms from the same rounds, summed round by round.
  RoundSums shared;
  for (const Term& t : terms) {
    const Side x = SideOf(t.x, t.x_est), y = SideOf(t.y, t.y_est);
    out.sum_x += t.weight * x.center;
    out.sum_y += t.weight * y.center;
    if (!std::isfinite(t.weight)) out.valid = false;
    if (t.paired) {
      if (t.x.size() != t.y.size() || t.x.size() < 2 || !x.has_var || !y.has_var) {
        out.valid = false;
        continue;
      }
      std::vector<double> residual(t.x.size());
      for (size_t r = 0; r < residual.size(); ++r) residual[r] = t.weight * (t.x[r] - k * t.y[r]);
      if (t.rounds_id.empty()) {
        out.parts.push_back(SeriesMeanVariance(residual));
      } else {
        AddToRoundSums(shared, t.rounds_id, 1.0, residual);
      }
    } else if (x.has_var && y.has_var) {
      const double w2 = t.weight * t.weight;
      out.parts.push_back({w2 * x.var.var, x.var.df});
      out.parts.push_back({w2 * k * k * y.var.var, y.var.df});
    } else {
      out.valid = false;
    }
  }
  for (const auto& [id, residual] : shared) out.parts.push_back(SeriesMeanVariance(residual));
  return out;
}

// Lag-1 autocorrelation, corrected for its small-sample bias (E[r] ~ rho - (1 + 4 rho)/n):
// without the correction a 20-round series with rho = 0.5 covers its mean in only ~88%.
double Lag1Autocorrelation(std::span<const double> v) {
  const double m = Mean(v);
  double num = 0, den = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    den += (v[i] - m) * (v[i] - m);
    if (i + 1 < v.size()) num += (v[i] - m) * (v[i + 1] - m);
  }
  if (!(den > 0)) return 0;
  const double r = num / den;
  return r + (1 + 4 * r) / static_cast<double>(v.size());
}

}  // namespace

double Interval::RelHalfWidth() const {
  if (!valid || center == 0) return 0;
  return (high - low) / 2 / std::abs(center);
}

double StudentT975(double df) {
  if (!(df >= 1)) df = 1;  // also NaN
  if (df > 30) return CornishFisher(df);
  const double whole = std::round(df);
  if (std::abs(df - whole) < 1e-9) return kT975[static_cast<int>(whole) - 1];
  return InterpolateTable(df);
}

double EffectiveCount(std::span<const double> series) {
  const double n = static_cast<double>(series.size());
  if (series.size() < 3) return n;
  const double rho = std::clamp(Lag1Autocorrelation(series), 0.0, 0.9);
  return n * (1 - rho) / (1 + rho);
}

Estimate EstimateOf(std::span<const double> round_ms) {
  if (round_ms.empty() || !AllFinite(round_ms)) return Estimate{};
  Estimate e;
  e.rounds = static_cast<int32_t>(round_ms.size());
  e.center_ms = e.ci_low_ms = e.ci_high_ms = Mean(round_ms);
  e.n_eff = EffectiveCount(round_ms);
  if (round_ms.size() < 2) return e;
  const double half =
      StudentT975(DegreesOfFreedom(e.n_eff)) * std::sqrt(Variance(round_ms) / e.n_eff);
  e.ci_low_ms = e.center_ms - half;
  e.ci_high_ms = e.center_ms + half;
  return e;
}

Interval PairedRatio(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.empty()) return Interval{};
  std::vector<double> d(x.size());
  for (size_t r = 0; r < x.size(); ++r) {
    if (!(x[r] > 0) || !(y[r] > 0) || !std::isfinite(x[r]) || !std::isfinite(y[r])) {
      return Interval{};
    }
    d[r] = std::log(x[r]) - std::log(y[r]);
  }
  const double m = Mean(d);
  if (d.size() < 2) return Point(std::exp(m));
  const VarPart v = SeriesMeanVariance(d);
  const double half = v.var > 0 ? StudentT975(v.df) * std::sqrt(v.var) : 0;
  return {std::exp(m), std::exp(m - half), std::exp(m + half), true};
}

Interval UnpairedRatio(const Estimate& x, const Estimate& y) {
  if (!x.present() || !y.present() || !(x.center_ms > 0) || !(y.center_ms > 0)) {
    return Interval{};
  }
  const double ratio = x.center_ms / y.center_ms;
  if (x.rounds < 2 || y.rounds < 2 || !std::isfinite(ratio)) return Point(ratio);
  // The relative standard error of each center is the standard error of its log.
  VarPart parts[2];
  const Estimate* est[2] = {&x, &y};
  for (int i = 0; i < 2; ++i) {
    parts[i] = MeanVariance(*est[i]);
    parts[i].var /= est[i]->center_ms * est[i]->center_ms;
  }
  const Interval log_ratio = Symmetric(std::log(ratio), parts);
  if (!log_ratio.valid) return Point(ratio);
  return {ratio, std::exp(log_ratio.low), std::exp(log_ratio.high), true};
}

Interval RatioOfSums(std::span<const Term> terms) {
  // The residuals need R, and R needs only the centers: a first pass finds it.
  const SumParts centers = Collect(terms, 0);
  if (!(centers.sum_y > 0) || !std::isfinite(centers.sum_x)) return Interval{};
  const double ratio = centers.sum_x / centers.sum_y;
  const SumParts s = Collect(terms, ratio);
  if (!s.valid) return Point(ratio);
  const Interval numerator = Symmetric(0, s.parts);
  if (!numerator.valid) return Point(ratio);
  const double half = numerator.high / s.sum_y;
  return {ratio, ratio - half, ratio + half, true};
}

Interval DifferenceOfSums(std::span<const Term> terms) {
  const SumParts s = Collect(terms, 1);
  const double diff = s.sum_x - s.sum_y;
  if (!std::isfinite(diff)) return Interval{};
  if (!s.valid) return Point(diff);
  return Symmetric(diff, s.parts);
}

Interval SumOf(std::span<const double> weights, std::span<const Estimate> estimates) {
  if (weights.size() != estimates.size() || weights.empty()) return Interval{};
  double sum = 0;
  bool valid = true;
  std::vector<VarPart> parts;
  for (size_t i = 0; i < weights.size(); ++i) {
    sum += weights[i] * estimates[i].center_ms;
    if (estimates[i].rounds < 2) {
      valid = false;
      continue;
    }
    VarPart p = MeanVariance(estimates[i]);
    p.var *= weights[i] * weights[i];
    parts.push_back(p);
  }
  if (!std::isfinite(sum)) return Interval{};
  if (!valid) return Point(sum);
  return Symmetric(sum, parts);
}

Interval SumOfTerms(std::span<const SumTerm> terms) {
  std::vector<double> weights;
  std::vector<Estimate> estimates;
  // Terms from the same rounds: per-round weighted sums.
  RoundSums buckets;
  for (const SumTerm& t : terms) {
    if (t.rounds_id.empty() || t.series.size() < 2) {
      weights.push_back(t.weight);
      estimates.push_back(t.estimate);
    } else {
      AddToRoundSums(buckets, t.rounds_id, t.weight, t.series);
    }
  }
  for (const auto& [id, sums] : buckets) {
    weights.push_back(1);
    estimates.push_back(EstimateOf(sums));
  }
  return SumOf(weights, estimates);
}

std::string PlusMinusPercent(double rel_half_width) {
  const double pct = std::abs(rel_half_width) * 100;
  if (!std::isfinite(pct)) return "no interval";
  // "±" in UTF-8; one decimal below 10%, where the tenth still means something.
  if (pct < 9.95) return absl::StrFormat("\u00b1%.1f%%", pct);
  return absl::StrFormat("\u00b1%.0f%%", pct);
}

}  // namespace gemmprof::core::stats
