#include "report/findings.h"

#include <algorithm>
#include <cmath>

#include "report/claim.h"
#include "report/energy.h"
#include "report/format.h"

namespace gemmprof::report {
namespace {

using core::stats::Interval;

constexpr size_t kMaxSlowGemmLines = 12;

std::string Name(const core::RecipeVariant& r) { return r.Name(); }
std::string Name(core::Mode m) { return std::string(core::ToString(m)); }

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

// ", 1.86x [1.84-1.88] vs bf16 on the full model" when `r` is not bf16 and both are complete.
std::string VsBf16(const Analysis& a, const core::RecipeVariant& r, core::Mode mode) {
  if (r == core::Recipe::kBf16) return "";
  const Totals* b = a.FindTotals({core::Recipe::kBf16, mode});
  if (!b || !b->complete() || !a.ModelSpeedup(r, core::Recipe::kBf16, mode)) return "";
  return ", " + FormatRatioCi(a.ModelSpeedupCi(r, core::Recipe::kBf16, mode)) +
         " vs bf16 on the full model";
}

void WinnerFindings(const Analysis& a, std::vector<RankClaim>& claims,
                    std::vector<std::string>& out) {
  for (core::Mode mode : a.modes()) {
    const std::vector<core::RecipeVariant> done = a.CompleteRecipes(mode);
    // A winner needs a race: with one complete recipe there is nothing to compare.
    if (done.size() < 2) continue;
    // Results stored before interleaved rounds have no intervals: never ranked.
    if (std::any_of(done.begin(), done.end(), [&](const core::RecipeVariant& r) {
          return !a.FindTotals({r, mode})->has_rounds();
        }))
      continue;
    core::RecipeVariant best = done.front();
    for (const core::RecipeVariant& r : done)
      if (a.FindTotals({r, mode})->LayerMs() < a.FindTotals({best, mode})->LayerMs()) best = r;
    const Totals& bt = *a.FindTotals({best, mode});
    std::vector<std::string> identical = {Name(best)}, noise = {Name(best)};
    double noise_width = 0;
    for (const core::RecipeVariant& r : done) {
      if (r == best) continue;
      // other / best: the best is named only when every other is surely slower.
      const Interval ratio = a.TotalRatio({r, mode}, {best, mode});
      Claim c = ClaimOf(ratio);
      if (a.SameWork({r, mode}, {best, mode})) c = Claim::kIdentical;
      if (c == Claim::kIdentical) {
        identical.push_back(Name(r));
      } else if (c != Claim::kSlower) {
        noise.push_back(Name(r));
        noise_width = std::max(noise_width, ratio.RelHalfWidth());
      }
      claims.push_back({mode, best, r, ratio, c});
    }
    const std::string ms =
        FormatMs(bt.LayerMs()) + " ms" +
        (bt.layer_ci.valid ? " " + FormatPlusMinus(bt.layer_ci.RelHalfWidth()) : "");
    if (identical.size() == 1 && noise.size() == 1) {
      out.push_back(Name(mode) + ": " + Name(best) + " is the fastest per layer (" + ms +
                    VsBf16(a, best, mode) + ").");
      continue;
    }
    if (identical.size() > 1)
      out.push_back(Name(mode) + ": " + JoinAnd(identical) +
                    " are identical GPU work (one measurement), " + ms + " per layer" +
                    VsBf16(a, best, mode) +
                    (noise.size() == 1 ? "; together the fastest per layer." : "."));
    if (noise.size() > 1)
      out.push_back(Name(mode) + ": " + JoinAnd(noise) +
                    " are within measurement noise per layer (" + FormatPlusMinus(noise_width) +
                    "); no single recipe leads.");
  }
}

void OverheadFindings(const Analysis& a, std::vector<std::string>& out) {
  for (const core::RecipeVariant& r : a.recipes()) {
    if (r == core::Recipe::kBf16) continue;
    const Totals* ac = a.FindTotals({r, core::Mode::kAutocast});
    const Totals* pq = a.FindTotals({r, core::Mode::kPrequant});
    if (!ac || !pq || !ac->complete() || !pq->complete() || ac->LayerMs() <= 0) continue;
    if (!ac->has_rounds() || !pq->has_rounds()) {
      const double overhead = ac->LayerMs() - pq->LayerMs();
      out.push_back(Name(r) + ": quantization costs " + FormatMs(overhead) + " ms per layer, " +
                    FormatPercent(100.0 * overhead / ac->LayerMs()) +
                    " of its autocast time (autocast " + FormatMs(ac->LayerMs()) +
                    " ms vs prequant " + FormatMs(pq->LayerMs()) + " ms).");
      continue;
    }
    const Interval d = a.TotalDifference({r, core::Mode::kAutocast}, {r, core::Mode::kPrequant});
    std::string line = Name(r) + ": quantization costs " + FormatMsCi(d) + " per layer, " +
                       FormatPercent(100.0 * d.center / ac->LayerMs()) + " of autocast";
    if (d.valid && d.Contains(0)) line += " (not distinguishable from 0)";
    const auto [bytes, copy] = QuantBytesPerLayer(a, r);
    if (bytes > 0 && copy > 0) {
      const double floor = OverheadFloorMs(bytes, copy);
      line += "; bandwidth floor " + FormatMs(floor) + " ms (" + FormatFixed(bytes / 1e9, 1) +
              " GB per layer at " + FormatFixed(copy / 1e12, 2) + " TB/s measured copy)";
      if (d.center > kQuantFloorRatio * floor)
        line += "; its quantization runs at " + FormatFixed(d.center / floor, 2) +
                "x the floor, above " + FormatFixed(kQuantFloorRatio, 2) +
                "x: part of this overhead is the quantization kernels', not the recipe's bytes";
    }
    out.push_back(line + ".");
  }
}

void AsymmetryFindings(const Analysis& a, std::vector<std::string>& out) {
  Scope fprop, dgrad;
  fprop.passes = {true, false, false};
  dgrad.passes = {false, true, false};
  for (core::Mode mode : a.modes()) {
    std::string list;
    for (const core::RecipeVariant& r : a.recipes()) {
      // A variant whose fprop and dgrad are a shown recipe's items says nothing new here.
      const core::RecipeVariant fd = r.For(core::Pass::kFprop);
      if (r.composite() && !r.sets_fast_accum() && r.For(core::Pass::kDgrad) == fd.base &&
          std::find(a.recipes().begin(), a.recipes().end(), fd) != a.recipes().end())
        continue;
      const Totals* t = a.FindTotals({r, mode});
      if (!t || !t->complete()) continue;
      const double f = t->layer_ms[PassIndex(core::Pass::kFprop)];
      const double d = t->layer_ms[PassIndex(core::Pass::kDgrad)];
      if (f <= 0 || d <= 0 || std::fabs(d - f) / f <= kPassAsymmetryRatio) continue;
      if (t->has_rounds()) {
        // Dgrad and fprop are different items: their sums are independent estimates. The
        // sums' intervals stand in for estimates with many effective rounds (t ~ 1.96).
        const Interval fi = TotalSum(a, {r, mode}, fprop), di = TotalSum(a, {r, mode}, dgrad);
        if (!fi.valid || !di.valid) continue;
        const core::Estimate fe{fi.center, fi.low, fi.high, 2, 1e9};
        const core::Estimate de{di.center, di.low, di.high, 2, 1e9};
        const Interval q = core::stats::UnpairedRatio(de, fe);
        if (!q.valid || (q.low <= 1 + kPassAsymmetryRatio && q.high >= 1 - kPassAsymmetryRatio))
          continue;
      }
      list += (list.empty() ? "" : ", ") + Name(r) + " " +
              FormatPercent(100.0 * (d - f) / f, /*with_sign=*/true) + " (" + FormatMs(d) + " vs " +
              FormatMs(f) + " ms)";
    }
    if (!list.empty())
      out.push_back(Name(mode) + ": Dgrad differs from Fprop by more than " +
                    FormatPercent(100 * kPassAsymmetryRatio) + " per layer: " + list + ".");
  }
}

void SlowGemmFindings(const Analysis& a, std::vector<RankClaim>& claims,
                      std::vector<std::string>& out) {
  std::vector<std::string> lines;
  for (core::Mode mode : a.modes()) {
    std::vector<std::string> noise;
    double noise_width = 0;
    for (const GemmRow& row : a.rows()) {
      const core::Measurement* bm = row.Result({core::Recipe::kBf16, mode});
      if (!bm) continue;
      const double base = *row.TimeMs({core::Recipe::kBf16, mode});
      // Per GEMM, the items' own recipes: a variant's GEMM is one of them.
      for (core::Recipe r : a.item_recipes()) {
        if (r == core::Recipe::kBf16) continue;
        const core::Measurement* m = row.Result({r, mode});
        if (!m) continue;
        const double ms = *row.TimeMs({r, mode});
        const std::string why = mode == core::Mode::kAutocast
                                    ? "quantization overhead exceeds the GEMM gain"
                                    : "the low-precision GEMM itself is not faster";
        if (!m->isolated.present() || !bm->isolated.present()) {
          // Results stored before rounds: the old wording, no order claimed by an interval.
          if (ms < base) continue;
          lines.push_back(Name(mode) + ": " + Name(r) + " is not faster than bf16 on " +
                          OpLabel(row.op) + " (" + FormatMs(ms) + " ms vs " + FormatMs(base) +
                          " ms): " + why + ".");
          continue;
        }
        const Interval ratio = ItemRatio(*m, *bm);
        const Claim c = ClaimOf(ratio);
        claims.push_back({mode, core::Recipe::kBf16, r, ratio, c, OpLabel(row.op)});
        if (c == Claim::kSlower) {
          lines.push_back(Name(mode) + ": " + Name(r) + " is slower than bf16 on " +
                          OpLabel(row.op) + " (" + FormatMs(ms) + " ms vs " + FormatMs(base) +
                          " ms, " + FormatRatioCi(ratio) + "): " + why + ".");
        } else if (c == Claim::kNoise) {
          noise.push_back(Name(r) + " on " + OpLabel(row.op));
          noise_width = std::max(noise_width, ratio.RelHalfWidth());
        }
      }
    }
    if (!noise.empty()) {
      std::string line = Name(mode) + ": within noise of bf16 (" + FormatPlusMinus(noise_width) +
                         "), neither faster nor slower: ";
      for (size_t i = 0; i < noise.size() && i < kMaxSlowGemmLines; ++i)
        line += (i ? ", " : "") + noise[i];
      if (noise.size() > kMaxSlowGemmLines)
        line += " and " + std::to_string(noise.size() - kMaxSlowGemmLines) + " more";
      lines.push_back(line + ".");
    }
  }
  for (size_t i = 0; i < lines.size() && i < kMaxSlowGemmLines; ++i) out.push_back(lines[i]);
  if (lines.size() > kMaxSlowGemmLines)
    out.push_back("... and " + std::to_string(lines.size() - kMaxSlowGemmLines) +
                  " more GEMMs where a low-precision recipe is not faster than bf16.");
}

}  // namespace

std::pair<double, double> QuantBytesPerLayer(const Analysis& a, const core::RecipeVariant& r,
                                             core::Mode mode) {
  double bytes = 0, copy = 0;
  const Totals* ac = a.FindTotals({r, mode});
  for (const TotalTerm& t : ac->terms) {
    bytes += t.layer_weight * t.m->quant_bytes;
    copy = std::max(copy, t.m->copy_bytes_per_s);
  }
  return {bytes, copy};
}

double OverheadFloorMs(double quant_bytes, double copy_bytes_per_s) {
  return copy_bytes_per_s > 0 ? 1e3 * quant_bytes / copy_bytes_per_s : 0;
}

std::vector<std::string> BuildFindings(const Analysis& analysis, std::vector<RankClaim>* claims) {
  std::vector<std::string> out;
  std::vector<RankClaim> local;
  std::vector<RankClaim>& c = claims ? *claims : local;
  // Totals of a sweep add different M together; only per-GEMM findings hold there.
  if (!analysis.is_sweep()) {
    WinnerFindings(analysis, c, out);
    OverheadFindings(analysis, out);
    AsymmetryFindings(analysis, out);
    for (std::string& line : EnergyFindings(analysis)) out.push_back(std::move(line));
  }
  SlowGemmFindings(analysis, c, out);
  return out;
}

}  // namespace gemmprof::report
