// Intervals of core/stats: the t quantile, estimates with autocorrelated rounds, paired
// and unpaired ratios, sums. Round order and stopping are in stats_rounds_test.cc.
#include "core/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace gemmprof::core::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Standard normal draws from a fixed-seed generator, by Box-Muller on our own uniforms:
// std::normal_distribution is not specified bit for bit across standard libraries.
class Normal {
 public:
  explicit Normal(uint64_t seed) : engine_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }

 private:
  std::mt19937_64 engine_;
};

// An AR(1) series around `mean`: x_r = mean + e_r, e_r = rho e_{r-1} + N(0, 1), stationary.
std::vector<double> Ar1(Normal& normal, double mean, double rho, int n) {
  std::vector<double> out;
  double e = normal() / std::sqrt(1 - rho * rho);
  for (int r = 0; r < n; ++r) {
    out.push_back(mean + e);
    e = rho * e + normal();
  }
  return out;
}

bool Finite(const Interval& i) {
  return std::isfinite(i.center) && std::isfinite(i.low) && std::isfinite(i.high);
}

TEST(StudentT975Test, MatchesTheTable) {
  EXPECT_NEAR(StudentT975(1), 12.706, 1e-3);
  EXPECT_NEAR(StudentT975(2), 4.303, 1e-3);
  EXPECT_NEAR(StudentT975(10), 2.228, 1e-3);
  EXPECT_NEAR(StudentT975(30), 2.042, 1e-3);
  EXPECT_NEAR(StudentT975(100), 1.984, 1e-3);
  EXPECT_NEAR(StudentT975(1e6), 1.960, 1e-3);
}

TEST(StudentT975Test, FractionalDegreesOfFreedom) {
  // Exact quantiles (incomplete beta function, 30 digits).
  const std::pair<double, double> exact[] = {
      {1.5, 6.0166631}, {2.5, 3.5746548}, {7.3, 2.3450667}, {29.5, 2.0437250}, {30.5, 2.0408694}};
  for (const auto& [df, t] : exact) EXPECT_NEAR(StudentT975(df) / t, 1, 1e-3) << df;
}

TEST(StudentT975Test, DecreasesWithDegreesOfFreedomAndClampsBelowOne) {
  double previous = StudentT975(1);
  for (double df = 1.05; df < 200; df += 0.05) {
    const double t = StudentT975(df);
    EXPECT_LT(t, previous) << df;
    previous = t;
  }
  EXPECT_DOUBLE_EQ(StudentT975(0.5), StudentT975(1));
  EXPECT_DOUBLE_EQ(StudentT975(-3), StudentT975(1));
  EXPECT_DOUBLE_EQ(StudentT975(kNaN), StudentT975(1));
  EXPECT_NEAR(StudentT975(kInf), 1.95996, 1e-5);
}

TEST(EffectiveCountTest, ShortAndConstantSeriesCountEveryValue) {
  EXPECT_EQ(EffectiveCount({}), 0);
  EXPECT_EQ(EffectiveCount(std::vector<double>{4, 9}), 2);
  EXPECT_EQ(EffectiveCount(std::vector<double>{3, 3, 3, 3}), 4);
  // Alternating values are negatively correlated: clamped to rho 0.
  EXPECT_EQ(EffectiveCount(std::vector<double>{1, 3, 1, 3}), 4);
}

TEST(EffectiveCountTest, DriftShrinksTheCountDownToTheClamp) {
  std::vector<double> trend;
  for (int i = 1; i <= 10; ++i) trend.push_back(i);
  EXPECT_NEAR(EffectiveCount(trend), 10 * 0.1 / 1.9, 1e-12);  // rho clamped to 0.9
}

TEST(EstimateOfTest, KnownData) {
  // Mean 2, sd sqrt(4/3), rho clamped to 0: half-width t(3) sd / 2.
  const Estimate a = EstimateOf(std::vector<double>{1, 3, 1, 3});
  EXPECT_EQ(a.rounds, 4);
  EXPECT_DOUBLE_EQ(a.n_eff, 4);
  EXPECT_DOUBLE_EQ(a.center_ms, 2);
  EXPECT_NEAR(a.ci_high_ms - 2, 3.1824463 * std::sqrt(4.0 / 3) / 2, 1e-6);
  EXPECT_NEAR(2 - a.ci_low_ms, a.ci_high_ms - 2, 1e-12);

  // Autocorrelated: r = 0.1217, corrected 0.2704, n_eff 5.7426, t(4.7426) = 2.61311.
  const Estimate b =
      EstimateOf(std::vector<double>{1.0, 1.2, 1.1, 1.3, 1.0, 0.9, 1.1, 1.0, 0.8, 1.0});
  EXPECT_EQ(b.rounds, 10);
  EXPECT_NEAR(b.center_ms, 1.04, 1e-12);
  EXPECT_NEAR(b.n_eff, 5.7426420, 1e-6);
  EXPECT_NEAR(b.ci_high_ms - b.center_ms, 0.1559156, 2e-4);
  EXPECT_NEAR(b.RelHalfWidth(), 0.1559156 / 1.04, 2e-4);
}

TEST(EstimateOfTest, TooFewOrBadValues) {
  const Estimate one = EstimateOf(std::vector<double>{2.5});
  EXPECT_EQ(one.rounds, 1);
  EXPECT_EQ(one.center_ms, 2.5);
  EXPECT_EQ(one.ci_low_ms, 2.5);
  EXPECT_EQ(one.ci_high_ms, 2.5);
  EXPECT_FALSE(EstimateOf({}).present());
  EXPECT_FALSE(EstimateOf(std::vector<double>{1, kNaN, 2}).present());
  EXPECT_FALSE(EstimateOf(std::vector<double>{1, kInf, 2}).present());
  const Estimate same = EstimateOf(std::vector<double>{7, 7, 7});
  EXPECT_EQ(same.ci_low_ms, 7);
  EXPECT_EQ(same.ci_high_ms, 7);
}

// The 95% interval covers the true mean of AR(1) rounds in 90-98% of 2000 series. With
// rho = 0.5 the bias-corrected n_eff covers ~92% at n = 20 (uncorrected: ~88%).
TEST(EstimateOfTest, CoverageOfAutocorrelatedRounds) {
  for (double rho : {0.0, 0.5}) {
    for (int n : {20, 60}) {
      Normal normal(20261123 + n + static_cast<int>(rho * 10));
      int covered = 0;
      for (int s = 0; s < 2000; ++s) {
        const Estimate e = EstimateOf(Ar1(normal, 10, rho, n));
        covered += e.ci_low_ms <= 10 && 10 <= e.ci_high_ms;
      }
      const double coverage = covered / 2000.0;
      EXPECT_GE(coverage, 0.90) << "rho " << rho << " n " << n;
      EXPECT_LE(coverage, 0.98) << "rho " << rho << " n " << n;
    }
  }
}

TEST(PairedRatioTest, IdenticalSeriesGiveExactlyOne) {
  const std::vector<double> x = {1.2, 1.5, 0.9, 1.1, 1.3};
  const Interval r = PairedRatio(x, x);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.center, 1);
  EXPECT_EQ(r.low, 1);
  EXPECT_EQ(r.high, 1);
  EXPECT_EQ(r.RelHalfWidth(), 0);
}

TEST(PairedRatioTest, CancelsDriftCommonToARound) {
  Normal normal(7);
  std::vector<double> x, y;
  for (int r = 0; r < 30; ++r) {
    const double drift = 1 + 0.3 * std::sin(r / 4.0);  // slow, +-30%
    x.push_back(drift * 1.05 * std::exp(0.005 * normal()));
    y.push_back(drift * std::exp(0.005 * normal()));
  }
  EXPECT_GT(EstimateOf(x).RelHalfWidth(), 0.05);
  EXPECT_GT(EstimateOf(y).RelHalfWidth(), 0.05);
  const Interval r = PairedRatio(x, y);
  ASSERT_TRUE(r.valid);
  EXPECT_TRUE(r.Contains(1.05)) << r.low << " " << r.high;
  EXPECT_LT(r.RelHalfWidth(), 0.005);
  EXPECT_NEAR(r.center, 1.05, 0.005);
  // Unpaired, the same data cannot tell 1.05 from 1.
  EXPECT_TRUE(UnpairedRatio(EstimateOf(x), EstimateOf(y)).Contains(1.0));
}

TEST(PairedRatioTest, BadInputsAreInvalidNeverNaN) {
  const std::vector<double> two = {1, 2}, three = {1, 2, 3};
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> cases = {
      {{}, {}},
      {two, three},
      {{1, 0, 2}, three},
      {{1, -2, 2}, three},
      {three, {1, 2, kNaN}},
      {three, {1, kInf, 3}},
      {three, {0, 0, 0}},
  };
  for (const auto& [x, y] : cases) {
    const Interval r = PairedRatio(x, y);
    EXPECT_FALSE(r.valid);
    EXPECT_TRUE(Finite(r));
    EXPECT_EQ(r.RelHalfWidth(), 0);
  }
  const Interval one = PairedRatio(std::vector<double>{2}, std::vector<double>{4});
  EXPECT_FALSE(one.valid);
  EXPECT_DOUBLE_EQ(one.center, 0.5);
  EXPECT_EQ(one.low, one.high);
}

TEST(UnpairedRatioTest, LogVariancesAddWithWelchDegreesOfFreedom) {
  const Estimate x{2.0, 1.9, 2.1, 20, 20}, y{1.0, 0.98, 1.02, 20, 20};
  const Interval r = UnpairedRatio(x, y);
  ASSERT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.center, 2);
  // Relative standard errors 0.05/t(19) and 0.02/t(19); equal df give df between 19 and 38.
  const double t19 = StudentT975(19);
  const double se = std::hypot(0.05 / t19, 0.02 / t19);
  EXPECT_GT(std::log(r.high / 2), StudentT975(38) * se);
  EXPECT_LT(std::log(r.high / 2), t19 * se);
  EXPECT_NEAR(std::log(r.high / 2), -std::log(r.low / 2), 1e-12);
}

TEST(UnpairedRatioTest, AbsentOrNonPositiveEstimatesAreInvalid) {
  const Estimate good{2.0, 1.9, 2.1, 20, 20};
  EXPECT_FALSE(UnpairedRatio(Estimate{}, good).valid);
  EXPECT_FALSE(UnpairedRatio(good, Estimate{}).valid);
  EXPECT_FALSE(UnpairedRatio(good, Estimate{0, 0, 0, 5, 5}).valid);
  EXPECT_FALSE(UnpairedRatio(Estimate{-1, -2, 0, 5, 5}, good).valid);
  const Interval one_round = UnpairedRatio(Estimate{3, 3, 3, 1, 1}, good);
  EXPECT_FALSE(one_round.valid);
  EXPECT_DOUBLE_EQ(one_round.center, 1.5);
}

// Two GEMMs of a layer (weights 1 and 2), X 10% slower than Y, under a drift of +-20%
// common to a round.
struct Layer {
  std::vector<double> x[2], y[2];
};

Layer DriftingLayer() {
  Normal normal(11);
  Layer l;
  for (int r = 0; r < 40; ++r) {
    const double drift = 1 + 0.2 * std::sin(r / 5.0);
    for (int g = 0; g < 2; ++g) {
      const double base = g == 0 ? 1.0 : 3.0;
      l.x[g].push_back(drift * base * 1.1 * std::exp(0.004 * normal()));
      l.y[g].push_back(drift * base * std::exp(0.004 * normal()));
    }
  }
  return l;
}

std::vector<Term> Terms(const Layer& l, bool paired) {
  std::vector<Term> terms;
  for (int g = 0; g < 2; ++g) {
    terms.push_back(
        {g == 0 ? 1.0 : 2.0, l.x[g], l.y[g], EstimateOf(l.x[g]), EstimateOf(l.y[g]), paired});
  }
  return terms;
}

TEST(RatioOfSumsTest, PairedTermsCancelDriftUnpairedDoNot) {
  const Layer l = DriftingLayer();
  const Interval paired = RatioOfSums(Terms(l, true));
  const Interval unpaired = RatioOfSums(Terms(l, false));
  ASSERT_TRUE(paired.valid);
  ASSERT_TRUE(unpaired.valid);
  EXPECT_DOUBLE_EQ(paired.center, unpaired.center);
  EXPECT_NEAR(paired.center, 1.1, 0.003);
  EXPECT_TRUE(paired.Contains(1.1)) << paired.low << " " << paired.high;
  EXPECT_LT(paired.RelHalfWidth(), 0.003);
  EXPECT_GT(unpaired.RelHalfWidth(), 5 * paired.RelHalfWidth());
  EXPECT_TRUE(unpaired.Contains(1.1));
}

TEST(RatioOfSumsTest, TermsOfSharedRoundsKeepTheirCovariance) {
  // Two GEMMs whose paired residuals move together round by round (one batch): summed
  // per round first, the interval is wider than for independent terms.
  const std::vector<double> x = {3.1, 2.9, 3.2, 2.8, 3.0, 3.05, 2.95, 3.1};
  const std::vector<double> y(x.size(), 1.0);
  const Estimate ex = EstimateOf(x), ey = EstimateOf(y);
  Term a{1, x, y, ex, ey, true, "batch"};
  Term b = a;
  const std::vector<Term> shared = {a, b};
  a.rounds_id = "";
  b.rounds_id = "";
  const std::vector<Term> apart = {a, b};
  const Interval together = RatioOfSums(shared), independent = RatioOfSums(apart);
  ASSERT_TRUE(together.valid);
  ASSERT_TRUE(independent.valid);
  EXPECT_DOUBLE_EQ(together.center, independent.center);
  EXPECT_GT(together.high - together.low, independent.high - independent.low);
  const Interval diff_together = DifferenceOfSums(shared);
  const Interval diff_apart = DifferenceOfSums(apart);
  EXPECT_GT(diff_together.high - diff_together.low, diff_apart.high - diff_apart.low);
}

TEST(RatioOfSumsTest, EstimatesWithoutSeriesAndOldResults) {
  // Unpaired terms from estimates alone still have an interval.
  const Term from_estimates{
      2, {}, {}, Estimate{2.2, 2.1, 2.3, 20, 20}, Estimate{2.0, 1.9, 2.1, 20, 20}, false};
  const Interval r = RatioOfSums(std::vector<Term>{from_estimates});
  ASSERT_TRUE(r.valid);
  EXPECT_DOUBLE_EQ(r.center, 1.1);
  EXPECT_LT(r.low, 1.1);
  // An old result (no rounds): the centers count, the interval does not exist.
  const Term old{1, {}, {}, Estimate{3.0}, Estimate{1.0}, false};
  const Interval mixed = RatioOfSums(std::vector<Term>{from_estimates, old});
  EXPECT_FALSE(mixed.valid);
  EXPECT_DOUBLE_EQ(mixed.center, (4.4 + 3) / (4.0 + 1));
  EXPECT_EQ(mixed.low, mixed.high);
}

TEST(RatioOfSumsTest, BadInputsAreInvalidNeverNaN) {
  const std::vector<double> one = {2}, two = {1, 2}, three = {1, 2, 3}, nan = {1, kNaN, 3},
                            zeros = {0, 0, 0};
  const std::vector<std::vector<Term>> cases = {
      {},
      {Term{1, three, two, {}, {}, true}},       // lengths differ
      {Term{1, one, one, {}, {}, true}},         // one round
      {Term{1, three, nan, {}, {}, true}},       // not finite
      {Term{kNaN, three, three, {}, {}, true}},  // weight not finite
      {Term{1, three, zeros, {}, {}, true}},     // denominator 0
      {Term{-1, three, three, {}, {}, false}},   // negative denominator
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Interval r = RatioOfSums(cases[i]);
    EXPECT_FALSE(r.valid) << i;
    EXPECT_TRUE(Finite(r)) << i;
    // A difference needs no positive denominator: the last two cases are fine there.
    const Interval d = DifferenceOfSums(cases[i]);
    EXPECT_EQ(d.valid, i >= 5) << i;
    EXPECT_TRUE(Finite(d)) << i;
  }
}

TEST(DifferenceOfSumsTest, PairedDifferenceOfAConstantOffsetIsExact) {
  const std::vector<double> y = {1.0, 1.4, 0.8, 1.2}, x = {1.5, 1.9, 1.3, 1.7};
  const Interval d = DifferenceOfSums(std::vector<Term>{{3, x, y, {}, {}, true}});
  ASSERT_TRUE(d.valid);
  EXPECT_NEAR(d.center, 1.5, 1e-12);
  EXPECT_NEAR(d.low, 1.5, 1e-12);
  EXPECT_NEAR(d.high, 1.5, 1e-12);
}

TEST(DifferenceOfSumsTest, PairedIsNarrowerThanUnpairedUnderDrift) {
  const Layer l = DriftingLayer();
  const Interval paired = DifferenceOfSums(Terms(l, true));
  const Interval unpaired = DifferenceOfSums(Terms(l, false));
  ASSERT_TRUE(paired.valid);
  ASSERT_TRUE(unpaired.valid);
  EXPECT_DOUBLE_EQ(paired.center, unpaired.center);
  EXPECT_GT(paired.low, 0);  // X is slower, and paired rounds can tell
  EXPECT_GT(unpaired.high - unpaired.low, 5 * (paired.high - paired.low));
}

TEST(SumOfTest, WeightedSumWithSatterthwaiteDegreesOfFreedom) {
  const std::vector<double> w = {1, 3};
  const std::vector<Estimate> e = {{2, 1.9, 2.1, 10, 10}, {1, 0.9, 1.1, 10, 10}};
  const Interval s = SumOf(w, e);
  ASSERT_TRUE(s.valid);
  EXPECT_DOUBLE_EQ(s.center, 5);
  // se 0.1 / t(9) each; variance 1 + 9 = 10 se^2; df = 100 * 9 / 82.
  const double se = 0.1 / StudentT975(9);
  EXPECT_NEAR(s.high - 5, StudentT975(900.0 / 82) * std::sqrt(10.0) * se, 1e-9);
  EXPECT_NEAR(5 - s.low, s.high - 5, 1e-12);
}

TEST(SumOfTermsTest, TermsOfSharedRoundsKeepTheirCovariance) {
  // Two GEMMs drifting together round by round (one batch): the sum's interval is the
  // per-round sums' own, wider than adding the two as independent.
  const std::vector<double> x = {1.00, 1.04, 0.97, 1.05, 0.96, 1.02, 0.99, 1.03};
  std::vector<double> y;
  for (double v : x) y.push_back(2 * v);
  const Estimate ex = EstimateOf(x), ey = EstimateOf(y);
  const std::vector<SumTerm> shared = {{1, x, ex, "batch"}, {1, y, ey, "batch"}};
  const Interval together = SumOfTerms(shared);
  std::vector<double> sums;
  for (size_t r = 0; r < x.size(); ++r) sums.push_back(x[r] + y[r]);
  const Estimate direct = EstimateOf(sums);
  ASSERT_TRUE(together.valid);
  EXPECT_NEAR(together.center, direct.center_ms, 1e-12);
  EXPECT_NEAR(together.high, direct.ci_high_ms, 1e-9);
  EXPECT_NEAR(together.low, direct.ci_low_ms, 1e-9);
  const std::vector<SumTerm> apart = {{1, x, ex, "a"}, {1, y, ey, "b"}};
  const Interval independent = SumOfTerms(apart);
  EXPECT_NEAR(independent.center, together.center, 1e-12);
  EXPECT_LT(independent.high - independent.low, together.high - together.low);
  // Without series or rounds id a term is its estimate, as SumOf.
  const std::vector<SumTerm> old = {{1, {}, ex, ""}, {3, {}, ey, "batch"}};
  const Interval plain = SumOfTerms(old);
  const Interval reference = SumOf(std::vector<double>{1, 3}, std::vector<Estimate>{ex, ey});
  EXPECT_DOUBLE_EQ(plain.center, reference.center);
  EXPECT_DOUBLE_EQ(plain.high, reference.high);
  EXPECT_FALSE(SumOfTerms({}).valid);
}

TEST(SumOfTest, BadInputs) {
  const std::vector<Estimate> e = {{2, 1.9, 2.1, 10, 10}, {1, 1, 1, 0, 0}};
  const Interval absent = SumOf(std::vector<double>{1, 1}, e);
  EXPECT_FALSE(absent.valid);
  EXPECT_DOUBLE_EQ(absent.center, 3);
  EXPECT_FALSE(SumOf(std::vector<double>{1}, e).valid);
  EXPECT_FALSE(SumOf({}, {}).valid);
  const Interval nan = SumOf(std::vector<double>{kNaN}, std::vector<Estimate>{e[0]});
  EXPECT_FALSE(nan.valid);
  EXPECT_TRUE(Finite(nan));
}

TEST(PlusMinusPercentTest, OneDecimalBelowTenPercent) {
  EXPECT_EQ(PlusMinusPercent(0.008), "\u00b10.8%");
  EXPECT_EQ(PlusMinusPercent(0.0004), "\u00b10.0%");
  EXPECT_EQ(PlusMinusPercent(0.0994), "\u00b19.9%");
  EXPECT_EQ(PlusMinusPercent(0.0996), "\u00b110%");
  EXPECT_EQ(PlusMinusPercent(0.123), "\u00b112%");
  EXPECT_EQ(PlusMinusPercent(-0.014), "\u00b11.4%");
  EXPECT_EQ(PlusMinusPercent(kInf), "no interval");
  EXPECT_EQ(PlusMinusPercent(std::nan("")), "no interval");
}

}  // namespace
}  // namespace gemmprof::core::stats
