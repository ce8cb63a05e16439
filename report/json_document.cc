#include "report/json_document.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "report/analysis.h"
#include "report/batches.h"
#include "report/energy.h"
#include "report/findings.h"
#include "report/notices.h"
#include "report/record_json.h"

namespace gemmprof::report {
namespace {

std::string S(std::string_view v) { return std::string(v); }

// A number, or null when there is none (documented in REPORT_JSON.md: absent ratios are
// null, like non-finite numbers).
Json OptionalNumber(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// An interval, or null when it cannot be given.
Json IntervalJson(const core::stats::Interval& i) {
  if (!i.valid) return nullptr;
  return {{"low", i.low}, {"high", i.high}};
}

// The items in seq order.
Json ItemsJson(const core::Report& report) {
  std::vector<const core::ItemRecord*> sorted;
  for (const auto& item : report.items) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  Json items = Json::array();
  for (const core::ItemRecord* item : sorted) items.push_back(ItemJson(*item, report.job.device));
  return items;
}

Json PassesJson(const std::array<double, 3>& ms) {
  return {{"fprop_ms", ms[0]},
          {"dgrad_ms", ms[1]},
          {"wgrad_ms", ms[2]},
          {"total_ms", ms[0] + ms[1] + ms[2]}};
}

Json TotalsJson(const Analysis& a) {
  Json out = Json::array();
  for (core::Mode mode : a.modes())
    for (const core::RecipeVariant& r : a.recipes()) {
      const Totals* t = a.FindTotals({r, mode});
      if (!t) continue;
      out.push_back(
          {{"recipe", S(core::ToString(r))},
           {"mode", S(core::ToString(mode))},
           {"complete", t->complete()},
           {"items_expected", t->expected_items},
           {"items_done", t->done_items},
           {"per_layer", t->complete() ? PassesJson(t->layer_ms) : Json(nullptr)},
           {"once_per_model_ms", t->complete() ? Json(t->once_ms) : Json(nullptr)},
           {"full_model", t->complete() ? PassesJson(t->model_ms) : Json(nullptr)},
           {"per_layer_ci_ms", t->complete() ? IntervalJson(t->layer_ci) : Json(nullptr)},
           {"per_layer_b2b_ms", t->b2b_complete() ? Json(t->B2bLayerMs()) : Json(nullptr)},
           {"per_layer_b2b_ci_ms",
            t->b2b_complete() ? IntervalJson(t->b2b_layer_ci) : Json(nullptr)}});
    }
  return out;
}

Json SpeedupsJson(const Analysis& a) {
  Json out = Json::array();
  for (core::Mode mode : a.modes()) {
    const std::vector<core::RecipeVariant> done = a.CompleteRecipes(mode);
    for (const core::RecipeVariant& base : done)
      for (const core::RecipeVariant& r : done) {
        if (r == base) continue;
        out.push_back({{"mode", S(core::ToString(mode))},
                       {"recipe", S(core::ToString(r))},
                       {"baseline", S(core::ToString(base))},
                       {"full_model_speedup", OptionalNumber(a.ModelSpeedup(r, base, mode))},
                       {"full_model_speedup_ci", IntervalJson(a.ModelSpeedupCi(r, base, mode))}});
      }
  }
  return out;
}

Json OverheadJson(const Analysis& a) {
  Json out = Json::array();
  for (const core::RecipeVariant& r : a.recipes()) {
    const Totals* ac = a.FindTotals({r, core::Mode::kAutocast});
    const Totals* pq = a.FindTotals({r, core::Mode::kPrequant});
    if (!ac || !pq || !ac->complete() || !pq->complete()) continue;
    const core::stats::Interval d =
        a.TotalDifference({r, core::Mode::kAutocast}, {r, core::Mode::kPrequant});
    const double over = d.center;
    const auto [bytes, copy] = QuantBytesPerLayer(a, r);
    const double floor = bytes > 0 && copy > 0 ? OverheadFloorMs(bytes, copy) : 0;
    out.push_back({{"recipe", S(core::ToString(r))},
                   {"autocast_per_layer_ms", ac->LayerMs()},
                   {"prequant_per_layer_ms", pq->LayerMs()},
                   {"overhead_per_layer_ms", over},
                   {"overhead_pct_of_autocast",
                    ac->LayerMs() > 0 ? Json(100.0 * over / ac->LayerMs()) : Json(nullptr)},
                   {"autocast_full_model_ms", ac->ModelMs()},
                   {"prequant_full_model_ms", pq->ModelMs()},
                   {"overhead_per_layer_ci_ms", IntervalJson(d)},
                   {"quant_bytes_per_layer", bytes},
                   {"copy_bytes_per_s", copy},
                   {"bandwidth_floor_ms", floor > 0 ? Json(floor) : Json(nullptr)},
                   {"overhead_over_floor", floor > 0 ? Json(over / floor) : Json(nullptr)}});
  }
  return out;
}

Json SweepJson(const Analysis& a) {
  Json out = Json::array();
  for (core::Mode mode : a.modes())
    for (int64_t m : a.sweep_ms())
      for (const core::RecipeVariant& r : a.recipes()) {
        const auto ms = a.SweepModelMs(m, {r, mode});
        out.push_back({{"m", m},
                       {"mode", S(core::ToString(mode))},
                       {"recipe", S(core::ToString(r))},
                       {"full_model_ms", ms ? Json(*ms) : Json(nullptr)}});
      }
  return out;
}

// The batches of rounds the items were measured in, with their power state.
Json BatchesJson(const core::Report& report) {
  Json out = Json::array();
  for (const BatchState& b : Batches(report))
    out.push_back({{"batch", b.number},
                   {"batch_id", b.uid},
                   {"context", b.context},
                   {"gemms", b.gemms},
                   {"items", b.items},
                   {"cached", b.cached},
                   {"power_w", b.has_telemetry() ? Json(b.power_w) : Json(nullptr)},
                   {"sm_clock_mhz_min", b.has_telemetry() ? Json(b.sm_mhz_min) : Json(nullptr)},
                   {"sm_clock_mhz_max", b.has_telemetry() ? Json(b.sm_mhz_max) : Json(nullptr)},
                   {"sm_clock_mhz_mean", b.has_telemetry() ? Json(b.sm_mhz_mean) : Json(nullptr)},
                   {"temp_c_max", b.has_telemetry() ? Json(b.temp_c_max) : Json(nullptr)}});
  return out;
}

// Per recipe and mode: joules per layer and full model, and the energy and time ratios
// against bf16 per layer (> 1: the recipe uses less). Empty without energy figures.
Json EnergyTotalsJson(const Analysis& a) {
  Json out = Json::array();
  if (!HasEnergy(a.report())) return out;
  Scope layer, model;
  model.full_model = true;
  for (core::Mode mode : a.modes())
    for (const core::RecipeVariant& r : a.recipes()) {
      const RecipeMode key{r, mode}, bf16{core::Recipe::kBf16, mode};
      const auto per_layer = EnergySum(a, key, layer);
      const auto full = EnergySum(a, key, model);
      const bool vs = r != core::Recipe::kBf16 && per_layer.has_value();
      const core::stats::Interval e =
          vs ? EnergyRatio(a, bf16, key, layer) : core::stats::Interval{};
      const core::stats::Interval t = vs ? a.TotalRatio(bf16, key, layer) : core::stats::Interval{};
      const core::stats::Interval q = vs && mode == core::Mode::kAutocast
                                          ? QuantizationEnergy(a, r, layer)
                                          : core::stats::Interval{};
      out.push_back(
          {{"recipe", S(core::ToString(r))},
           {"mode", S(core::ToString(mode))},
           {"per_layer_joules", per_layer ? Json(per_layer->center) : Json(nullptr)},
           {"per_layer_joules_ci", per_layer ? IntervalJson(*per_layer) : Json(nullptr)},
           {"full_model_joules", full ? Json(full->center) : Json(nullptr)},
           {"energy_ratio_vs_bf16", e.center > 0 ? Json(e.center) : Json(nullptr)},
           {"energy_ratio_vs_bf16_ci", IntervalJson(e)},
           {"time_ratio_vs_bf16", t.center > 0 ? Json(t.center) : Json(nullptr)},
           {"time_ratio_vs_bf16_ci", IntervalJson(t)},
           {"quantization_per_layer_joules", q.center != 0 ? Json(q.center) : Json(nullptr)},
           {"quantization_per_layer_joules_ci", IntervalJson(q)}});
    }
  return out;
}

}  // namespace

std::string JsonDocument(const core::Report& report) {
  const Analysis a(report);
  Json doc = {{"schema_version", kJsonSchemaVersion},
              {"job", JobJson(report.job)},
              {"device", DeviceJson(report.job.device)},
              {"timing", TimingJson(report.job.spec.timing, JsonForm::kDocument)},
              {"items", ItemsJson(report)},
              {"totals", TotalsJson(a)},
              {"speedups", SpeedupsJson(a)},
              {"quantization_overhead", OverheadJson(a)},
              {"sweep", SweepJson(a)},
              {"batches", BatchesJson(report)},
              {"energy", EnergyTotalsJson(a)},
              {"notices", BuildNotices(a)},
              {"findings", BuildFindings(a)}};
  return doc.dump(2) + "\n";
}

}  // namespace gemmprof::report
