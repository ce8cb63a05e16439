// Statistics of interleaved rounds, shared by the measurement engine (measure/: when to
// stop) and the reports (intervals, paired comparisons, findings). Pure functions,
// deterministic: reports and golden files reproduce. See DESIGN.md "Measurement".
//
// A round times every member of a group once; a member's per-round values are its
// series. Drift (clock, power) makes neighbouring rounds alike, so intervals use an
// effective count n_eff = n (1 - rho) / (1 + rho), rho the lag-1 autocorrelation clamped
// to [0, 0.9], and Student's t at n_eff - 1 degrees of freedom. rho is the sample lag-1
// autocorrelation r plus its first-order small-sample bias, (1 + 4 r) / n: uncorrected, a
// 20-round series with rho = 0.5 covers its mean in ~88% instead of 95%.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace gemmprof::core::stats {

// A value and its 95% confidence interval.
struct Interval {
  double center = 0, low = 0, high = 0;
  bool valid = false;           // false: too few values for an interval (then low = high = center)
  double RelHalfWidth() const;  // (high - low) / 2 / |center|; 0 when invalid or center 0
  bool Contains(double x) const { return low <= x && x <= high; }
};

// The 0.975 quantile of Student's t with `df` degrees of freedom (df may be fractional,
// >= 1; below 1 it is taken as 1). Error below 1e-3 relative.
double StudentT975(double df);

// n (1 - rho) / (1 + rho), rho = lag-1 autocorrelation (bias-corrected, see above)
// clamped to [0, 0.9]; n for n < 3.
double EffectiveCount(std::span<const double> series);

// Mean of the per-round values and its 95% t-interval (n_eff as above). Fewer than 2
// values: center only, interval collapsed, rounds = size. Empty (or a value not finite):
// absent (rounds 0).
Estimate EstimateOf(std::span<const double> round_ms);

// Paired ratio x / y of two series from the same rounds (equal length, all > 0):
// exp(mean of ln x_r - ln y_r) with the t-interval of that mean. Drift common to a round
// cancels. Identical series give [1, 1]. Invalid when lengths differ or < 2 rounds.
Interval PairedRatio(std::span<const double> x, std::span<const double> y);

// Ratio of two independent estimates (different rounds or jobs): the variances of the
// logs add, Welch-Satterthwaite degrees of freedom. Invalid if either is absent.
Interval UnpairedRatio(const Estimate& x, const Estimate& y);

// One term of a weighted sum compared across two figures (e.g. one GEMM of a layer,
// recipe X against recipe Y). `x`/`y` are per-round series; when `paired` they come from
// the same rounds (same group) and the per-round differences are used; otherwise the
// estimates' variances add (from the series when an estimate is absent). An unpaired
// term without series uses its estimates alone; one with neither series nor interval
// (old results) gives its centers with no variance and makes the sum's interval invalid,
// as does a paired term whose series differ in length or hold < 2 values.
struct Term {
  double weight = 1;
  std::span<const double> x, y;
  Estimate x_est, y_est;
  bool paired = false;
  // Paired terms of one rounds_id (a batch's group_uid) with series of one length come
  // from the same rounds: their per-round residuals are summed before the variance, so
  // their covariance counts. Empty: the term stands alone.
  std::string rounds_id;
};

// Sum_g w x_g / Sum_g w y_g with a delta-method interval (per-term variances add; terms
// of one rounds_id add per round first).
Interval RatioOfSums(std::span<const Term> terms);
// Sum_g w (x_g - y_g) in ms, with its interval.
Interval DifferenceOfSums(std::span<const Term> terms);
// Sum_g w x_g of estimates (independent terms) with its interval; invalid if any term
// has no interval.
Interval SumOf(std::span<const double> weights, std::span<const Estimate> estimates);

// One term of a sum whose terms may come from shared rounds (a batch of measurement
// groups): `series` its per-round values, `rounds_id` the rounds they came from (the
// measurement's group_uid; empty: none), `estimate` its figure.
struct SumTerm {
  double weight = 1;
  std::span<const double> series;
  Estimate estimate;
  std::string rounds_id;
};
// Sum_g w x_g. Terms of one rounds_id whose series have the same length (>= 2) are summed
// round by round first, so the drift they share counts once in the interval (their
// covariance is kept); those sums and the other terms are then added as independent
// (SumOf).
Interval SumOfTerms(std::span<const SumTerm> terms);

// "±0.8%" (UTF-8 "±", one decimal) text of a relative half-width; "±12%" at 10% and
// above; "no interval" when it is not finite.
std::string PlusMinusPercent(double rel_half_width);

}  // namespace gemmprof::core::stats
