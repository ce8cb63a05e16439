#include "report/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "report/analysis.h"
#include "report/claim.h"
#include "report/energy.h"
#include "report/figures.h"
#include "report/format.h"

namespace gemmprof::report {
namespace {

// The op name is part of the key: with --split-gate-up, gate and up share every other
// field, and each must meet its own counterpart.
// An item with its own fast accumulation (a variant's) meets only its like.
using Key = std::tuple<int64_t, int64_t, int64_t, core::Pass, core::Recipe, core::Mode, int64_t,
                       std::string, core::FastAccum>;

Key KeyOf(const core::ItemRecord& r) {
  const core::GemmOp& op = r.item.op;
  return {op.shape.m,  op.shape.k, op.shape.n, op.pass,          r.item.recipe,
          r.item.mode, op.groups,  op.name,    r.item.fast_accum};
}

UnmatchedItem Unmatched(const core::ItemRecord& r) {
  return {ItemLabel(r), r.item.recipe, r.item.mode};
}

bool HasTime(const core::ItemRecord& r) {
  return r.status == core::ItemStatus::kDone && r.result && HeadlineMs(*r.result) > 0;
}

// Times, ratio and verdict of one matched pair; intervals when both sides have rounds.
ItemComparison CompareItem(const core::Measurement& a, const core::Measurement& b) {
  ItemComparison ic;
  ic.a_ms = HeadlineMs(a);
  ic.b_ms = HeadlineMs(b);
  ic.ratio = ic.b_ms / ic.a_ms;
  if (a.isolated.present() && b.isolated.present()) {
    ic.ratio_ci = core::stats::UnpairedRatio(b.isolated, a.isolated);
    ic.ratio_ci.center = ic.ratio;
    ic.verdict = JudgeInterval(ic.ratio_ci);
  } else {
    ic.threshold = NoiseThreshold(a.time, b.time);
    ic.verdict = Judge(ic.a_ms, ic.b_ms, ic.threshold);
  }
  if (a.b2b.present() && b.b2b.present() && a.b2b.center_ms > 0) {
    ic.b2b_a_ms = a.b2b.center_ms;
    ic.b2b_b_ms = b.b2b.center_ms;
    ic.b2b_ratio_ci = core::stats::UnpairedRatio(b.b2b, a.b2b);
    ic.b2b_ratio_ci.center = ic.b2b_b_ms / ic.b2b_a_ms;
    ic.b2b_verdict = JudgeInterval(ic.b2b_ratio_ci);
  }
  const core::Estimate ea = EnergyEstimate(a.energy), eb = EnergyEstimate(b.energy);
  if (ea.present() && eb.present()) {
    ic.a_joules = ea.center_ms;
    ic.b_joules = eb.center_ms;
    ic.energy_ratio_ci = core::stats::UnpairedRatio(eb, ea);
    ic.energy_ratio_ci.center = ic.b_joules / ic.a_joules;
    ic.energy_verdict = JudgeInterval(ic.energy_ratio_ci);
  }
  return ic;
}

void Diff(const std::string& what, const std::string& a, const std::string& b,
          std::vector<std::string>& out) {
  if (a != b) out.push_back(what + ": " + (a.empty() ? "?" : a) + " -> " + (b.empty() ? "?" : b));
}

void ContextDiffs(const core::JobRecord& a, const core::JobRecord& b,
                  std::vector<std::string>& out) {
  Diff("device", a.device.name, b.device.name, out);
  Diff("backend", a.device.backend, b.device.backend, out);
  Diff("driver", a.device.driver_version, b.device.driver_version, out);
  Diff("CUDA", a.device.cuda_version, b.device.cuda_version, out);
  Diff("cuBLASLt", a.device.cublaslt_version, b.device.cublaslt_version, out);
  Diff("gemmprof", a.device.gemmprof_version, b.device.gemmprof_version, out);
  Diff("timing options", a.spec.timing.CacheText(), b.spec.timing.CacheText(), out);
}

void CompareLayers(const core::Report& a, const core::Report& b, Comparison& c) {
  const Analysis la(a), lb(b);
  for (core::Mode mode : la.modes())
    for (const core::RecipeVariant& r : la.CompleteRecipes(mode)) {
      const Totals* tb = lb.FindTotals({r, mode});
      if (!tb || !tb->complete()) continue;
      const double a_ms = la.FindTotals({r, mode})->LayerMs();
      LayerComparison l{r, mode, a_ms, tb->LayerMs(), a_ms > 0 ? tb->LayerMs() / a_ms : 0};
      const Scope per_layer;
      const auto ja = EnergySum(la, {r, mode}, per_layer), jb = EnergySum(lb, {r, mode}, per_layer);
      if (ja && jb && ja->center > 0 && jb->center > 0) {
        l.a_joules = ja->center;
        l.b_joules = jb->center;
      }
      c.layers.push_back(l);
    }
}

}  // namespace

std::string_view ToString(Verdict v) {
  switch (v) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSame:
      return "same";
    case Verdict::kSlower:
      return "slower";
  }
  return "?";
}

std::string_view EnergyWord(Verdict v) {
  switch (v) {
    case Verdict::kFaster:
      return "less";
    case Verdict::kSame:
      return "same";
    case Verdict::kSlower:
      return "more";
  }
  return "?";
}

double RelativeHalfSpread(const core::SampleStats& s) {
  return s.median_ms > 0 ? (s.p80_ms - s.p20_ms) / (2 * s.median_ms) : 0;
}

double NoiseThreshold(const core::SampleStats& a, const core::SampleStats& b) {
  const double ha = RelativeHalfSpread(a), hb = RelativeHalfSpread(b);
  return std::max(kMinRelativeChange, kNoiseSigmas * std::sqrt(ha * ha + hb * hb));
}

Verdict Judge(double a_ms, double b_ms, double threshold) {
  const double change = b_ms / a_ms - 1;
  if (change > threshold) return Verdict::kSlower;
  if (change < -threshold) return Verdict::kFaster;
  return Verdict::kSame;
}

Verdict JudgeInterval(const core::stats::Interval& ratio) {
  if (std::fabs(ratio.center - 1) <= kMinRelativeChange) return Verdict::kSame;
  switch (ClaimOf(ratio)) {
    case Claim::kFaster:
      return Verdict::kFaster;
    case Claim::kSlower:
      return Verdict::kSlower;
    default:
      return Verdict::kSame;
  }
}

RunningConditions ConditionsOf(const std::vector<const core::Measurement*>& items) {
  RunningConditions c;
  std::vector<double> clock, clock_min, temp;
  double power = 0;
  int64_t throttled = 0, samples = 0;
  for (const core::Measurement* m : items) {
    const core::Telemetry& t = m->telemetry;
    if (t.telemetry_samples <= 0) continue;
    ++c.items;
    clock.push_back(t.sm_clock_mhz_mean > 0 ? t.sm_clock_mhz_mean
                                            : (t.sm_clock_mhz_min + t.sm_clock_mhz_max) / 2);
    clock_min.push_back(t.sm_clock_mhz_min);
    temp.push_back(t.temp_c_max);
    power += t.power_w_avg;
    throttled += t.throttled_samples;
    samples += t.telemetry_samples;
  }
  if (c.items == 0) return c;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  c.sm_clock_mhz = median(clock);
  c.sm_clock_min_mhz = median(clock_min);
  c.temp_c = median(temp);
  c.power_w = power / c.items;
  c.throttled_share = static_cast<double>(throttled) / static_cast<double>(samples);
  return c;
}

Comparison CompareReports(const core::Report& a, const core::Report& b) {
  Comparison c;
  ContextDiffs(a.job, b.job, c.context_diffs);
  std::vector<const core::Measurement*> telemetry_a, telemetry_b;
  std::map<Key, const core::ItemRecord*> in_b;
  for (const auto& r : b.items)
    if (HasTime(r)) in_b.emplace(KeyOf(r), &r);
  std::map<Key, bool> matched;
  for (const auto& r : a.items) {
    if (!HasTime(r)) continue;
    auto it = in_b.find(KeyOf(r));
    if (it == in_b.end()) {
      c.only_in_a.push_back(Unmatched(r));
      continue;
    }
    matched[it->first] = true;
    if (r.result->telemetry.telemetry_samples > 0 &&
        it->second->result->telemetry.telemetry_samples > 0) {
      telemetry_a.push_back(&*r.result);
      telemetry_b.push_back(&*it->second->result);
    }
    ItemComparison ic = CompareItem(*r.result, *it->second->result);
    ic.op = r.item.op;
    ic.recipe = r.item.recipe;
    ic.mode = r.item.mode;
    (ic.verdict == Verdict::kFaster   ? c.faster
     : ic.verdict == Verdict::kSlower ? c.slower
                                      : c.same)++;
    c.items.push_back(std::move(ic));
  }
  for (const auto& [key, r] : in_b)
    if (!matched.count(key)) c.only_in_b.push_back(Unmatched(*r));
  CompareLayers(a, b, c);
  c.conditions_a = ConditionsOf(telemetry_a);
  c.conditions_b = ConditionsOf(telemetry_b);
  return c;
}

}  // namespace gemmprof::report
