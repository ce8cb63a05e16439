#include "report/energy.h"

#include <algorithm>
#include <map>
#include <vector>

#include "core/derive.h"
#include "report/format.h"

namespace gemmprof::report {
namespace {

// The weighted terms of a total over `scope`, or nullopt when one has no energy figure.
std::optional<std::vector<std::pair<double, core::Estimate>>> EnergyTerms(const Analysis& a,
                                                                          RecipeMode key,
                                                                          const Scope& scope) {
  const Totals* t = a.FindTotals(key);
  if (!t || !t->complete()) return std::nullopt;
  std::vector<std::pair<double, core::Estimate>> terms;
  for (const TotalTerm& term : t->terms) {
    const double weight = scope.full_model ? term.model_weight : term.layer_weight;
    if (weight <= 0 || !scope.passes[PassIndex(a.rows()[term.row].op.pass)]) continue;
    const core::Estimate e = EnergyEstimate(term.m->energy);
    if (!e.present()) return std::nullopt;
    terms.emplace_back(weight, e);
  }
  if (terms.empty()) return std::nullopt;
  return terms;
}

// The terms of x and y over `scope` matched by GEMM (x_est from x, y_est from y), each
// weighted as its time is; empty when either total is incomplete or a term has no energy.
std::vector<core::stats::Term> MatchedEnergyTerms(const Analysis& a, RecipeMode x, RecipeMode y,
                                                  const Scope& scope) {
  const Totals* tx = a.FindTotals(x);
  const Totals* ty = a.FindTotals(y);
  if (!tx || !ty || !tx->complete() || !ty->complete()) return {};
  std::map<size_t, const TotalTerm*> in_y;
  for (const TotalTerm& term : ty->terms) in_y[term.row] = &term;
  std::vector<core::stats::Term> terms;
  for (const TotalTerm& term : tx->terms) {
    const double weight = scope.full_model ? term.model_weight : term.layer_weight;
    if (weight <= 0 || !scope.passes[PassIndex(a.rows()[term.row].op.pass)]) continue;
    const auto other = in_y.find(term.row);
    if (other == in_y.end()) return {};
    core::stats::Term t;
    t.weight = weight;
    t.x_est = EnergyEstimate(term.m->energy);
    t.y_est = EnergyEstimate(other->second->m->energy);
    if (!t.x_est.present() || !t.y_est.present()) return {};
    terms.push_back(t);
  }
  return terms;
}

}  // namespace

bool HasEnergy(const core::Report& report) {
  for (const core::ItemRecord& item : report.items)
    if (item.result && (item.result->energy.present() || !item.result->energy.not_measured.empty()))
      return true;
  return false;
}

core::Estimate EnergyEstimate(const core::Energy& e) {
  if (!e.present()) return {};
  return {e.joules, e.joules_low, e.joules_high,
          static_cast<int32_t>(std::max<size_t>(1, e.period_joules.size())), e.n_eff};
}

std::optional<core::stats::Interval> EnergySum(const Analysis& a, RecipeMode key,
                                               const Scope& scope) {
  const auto terms = EnergyTerms(a, key, scope);
  if (!terms) return std::nullopt;
  std::vector<double> weights;
  std::vector<core::Estimate> estimates;
  for (const auto& [w, e] : *terms) {
    weights.push_back(w);
    estimates.push_back(e);
  }
  return core::stats::SumOf(weights, estimates);
}

core::stats::Interval EnergyRatio(const Analysis& a, RecipeMode x, RecipeMode y,
                                  const Scope& scope) {
  const std::vector<core::stats::Term> terms = MatchedEnergyTerms(a, x, y, scope);
  if (terms.empty()) return {};
  // Each item's window is its own: the terms are unpaired, their variances add.
  return core::stats::RatioOfSums(terms);
}

core::stats::Interval QuantizationEnergy(const Analysis& a, const core::RecipeVariant& recipe,
                                         const Scope& scope) {
  const std::vector<core::stats::Term> terms = MatchedEnergyTerms(
      a, {recipe, core::Mode::kAutocast}, {recipe, core::Mode::kPrequant}, scope);
  if (terms.empty()) return {};
  return core::stats::DifferenceOfSums(terms);
}

std::vector<std::string> EnergyFindings(const Analysis& a) {
  std::vector<std::string> out;
  if (!HasEnergy(a.report())) return out;
  const Scope layer;
  for (core::Mode mode : a.modes())
    for (const core::RecipeVariant& r : a.CompleteRecipes(mode)) {
      if (r == core::Recipe::kBf16) continue;
      const RecipeMode bf16{core::Recipe::kBf16, mode}, key{r, mode};
      const core::stats::Interval e = EnergyRatio(a, bf16, key, layer);
      const core::stats::Interval t = a.TotalRatio(bf16, key, layer);
      if (!e.valid || !t.valid || (e.low <= t.high && t.low <= e.high)) continue;
      const std::string name =
          std::string(core::ToString(r)) + " " + std::string(core::ToString(mode));
      out.push_back(name + " per layer: " + FormatRatioCi(e) + " less energy than bf16 for " +
                    FormatRatioCi(t) + " less time; " +
                    (e.center > t.center
                         ? "it saves more energy than time (its GEMMs draw less power)"
                         : "it saves less energy than time (its GEMMs draw more power)"));
    }
  return out;
}

std::optional<double> SweepModelJoules(const Analysis& a, int64_t m, RecipeMode key) {
  double joules = 0;
  bool any = false;
  for (const GemmRow& row : a.rows()) {
    if (core::SweepM(row.op.name) != m) continue;
    const core::Measurement* r = row.Result(key);
    if (!r || !r->energy.present()) return std::nullopt;
    joules += r->energy.joules * static_cast<double>(std::max<int64_t>(1, row.op.layers));
    any = true;
  }
  if (!any) return std::nullopt;
  return joules;
}

}  // namespace gemmprof::report
