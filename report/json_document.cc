#include "report/json_document.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "report/analysis.h"
#include "report/figures.h"
#include "report/findings.h"
#include "report/notices.h"

namespace gemmprof::report {
namespace {

using Json = nlohmann::ordered_json;

std::string S(std::string_view v) { return std::string(v); }

// A number, or null when there is none (documented in REPORT_JSON.md: absent ratios are
// null, like non-finite numbers).
Json OptionalNumber(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json TimingJson(const core::TimingOptions& t) {
  return {{"warmup_iters", t.warmup_iters},
          {"timed_iters", t.timed_iters},
          {"gpu_warmup_s", t.gpu_warmup_s},
          {"l2_policy", S(core::ToString(t.l2))},
          {"accounting", S(core::ToString(t.accounting))},
          {"seed", t.seed},
          {"fast_accum", S(core::ToString(t.fast_accum))},
          {"autotune_k", t.autotune_k},
          {"amax_history_len", t.amax_history_len},
          {"amax_algo", S(core::ToString(t.amax_algo))},
          {"precision_target", t.precision_target},
          {"item_budget_s", t.item_budget_s},
          {"b2b_count", t.b2b_count}};
}

Json JobJson(const core::Report& report) {
  const core::JobRecord& j = report.job;
  Json recipes = Json::array(), modes = Json::array();
  for (core::Recipe r : j.spec.recipes) recipes.push_back(S(core::ToString(r)));
  for (core::Mode m : j.spec.modes) modes.push_back(S(core::ToString(m)));
  return {{"id", j.id},
          {"state", S(core::ToString(j.state))},
          {"error", j.error},
          {"label", j.spec.label},
          {"model_name", j.plan.model_name},
          {"num_layers", j.plan.num_layers},
          {"requested_recipes", recipes},
          {"requested_modes", modes},
          {"force", j.spec.force},
          {"created_unix_ms", j.created_ms},
          {"started_unix_ms", j.started_ms},
          {"finished_unix_ms", j.finished_ms},
          {"total_items", j.total_items},
          {"finished_items", j.finished_items},
          {"failed_items", j.failed_items},
          {"node", j.node},
          {"devices", j.spec.devices}};
}

// An estimate, or null when absent (results stored before interleaved rounds).
Json EstimateJson(const core::Estimate& e) {
  if (!e.present()) return nullptr;
  return {{"center_ms", e.center_ms},   {"ci_low_ms", e.ci_low_ms},
          {"ci_high_ms", e.ci_high_ms}, {"rounds", e.rounds},
          {"n_eff", e.n_eff},           {"rel_half_width", e.RelHalfWidth()}};
}

// An interval, or null when it cannot be given.
Json IntervalJson(const core::stats::Interval& i) {
  if (!i.valid) return nullptr;
  return {{"low", i.low}, {"high", i.high}};
}

Json Optional(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json MeasurementJson(const core::ItemRecord& item, const core::DeviceInfo& device) {
  if (!item.result) return nullptr;
  const Efficiency e = EfficiencyOf(item, device);
  const core::Measurement& m = *item.result;
  const core::SampleStats& s = m.time;
  const core::Telemetry& t = m.telemetry;
  return {{"median_ms", s.median_ms},
          {"mean_ms", s.mean_ms},
          {"p20_ms", s.p20_ms},
          {"p80_ms", s.p80_ms},
          {"min_ms", s.min_ms},
          {"max_ms", s.max_ms},
          {"stdev_ms", s.stdev_ms},
          {"samples", s.count},
          {"quant_ms", m.quant_ms},
          {"flops", m.flops},
          {"bytes", m.bytes},
          {"tflops", TflopsOf(item)},
          {"algorithm", m.algorithm},
          {"verification", S(core::ToString(m.verification))},
          {"rel_error", m.rel_error},
          {"error_threshold", m.error_threshold},
          {"accounting", S(core::ToString(m.accounting))},
          {"fast_accum", m.fast_accum},
          {"telemetry",
           {{"sm_clock_mhz_min", t.sm_clock_mhz_min},
            {"sm_clock_mhz_max", t.sm_clock_mhz_max},
            {"mem_clock_mhz", t.mem_clock_mhz},
            {"power_w_avg", t.power_w_avg},
            {"power_w_max", t.power_w_max},
            {"temp_c_max", t.temp_c_max},
            {"throttle_reasons", t.throttle_reasons},
            {"throttled_samples", t.throttled_samples},
            {"telemetry_samples", t.telemetry_samples}}},
          {"notes", m.notes},
          {"isolated", EstimateJson(m.isolated)},
          {"b2b", EstimateJson(m.b2b)},
          {"b2b_count", m.b2b_count},
          {"quant", EstimateJson(m.quant)},
          {"round_ms", m.round_ms},
          {"b2b_round_ms", m.b2b_round_ms},
          {"quant_round_ms", m.quant_round_ms},
          {"group_uid", m.group_uid},
          {"group_members", m.group_members},
          {"work_key", m.work_key},
          {"shared_with_item", m.shared_with_item},
          {"quant_bytes", m.quant_bytes},
          {"copy_bytes_per_s", m.copy_bytes_per_s},
          {"stop_reason", m.stop_reason},
          {"efficiency",
           {{"sm_clock_mhz", Optional(e.sm_clock_mhz)},
            {"peak_tflops", Optional(e.peak_tflops)},
            {"fraction_of_peak", Optional(e.of_peak)},
            {"fraction_of_copy_bandwidth", Optional(e.of_copy_bandwidth)},
            {"quant_fraction_of_copy_bandwidth", Optional(e.quant_of_copy_bandwidth)}}},
          {"kernel", m.kernel_samples > 0 ? Json{{"median_ms", m.kernel.median_ms},
                                                 {"p20_ms", m.kernel.p20_ms},
                                                 {"p80_ms", m.kernel.p80_ms},
                                                 {"min_ms", m.kernel.min_ms},
                                                 {"max_ms", m.kernel.max_ms},
                                                 {"quant_ms", m.kernel_quant_ms},
                                                 {"samples", m.kernel_samples},
                                                 {"names", m.kernel_names}}
                                          : Json(nullptr)},
          {"profiled", m.profiled}};
}

Json ItemsJson(const core::Report& report) {
  std::vector<const core::ItemRecord*> sorted;
  for (const auto& item : report.items) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  Json items = Json::array();
  {
    for (const core::ItemRecord* item : sorted) {
      const core::GemmOp& op = item->item.op;
      items.push_back({{"seq", item->item.seq},
                       {"id", item->item.id},
                       {"op", op.name},
                       {"pass", S(core::ToString(op.pass))},
                       {"m", op.shape.m},
                       {"k", op.shape.k},
                       {"n", op.shape.n},
                       {"groups", op.groups},
                       {"layers", op.layers},
                       {"per_layer", op.per_layer},
                       {"recipe", S(core::ToString(item->item.recipe))},
                       {"mode", S(core::ToString(item->item.mode))},
                       {"status", S(core::ToString(item->status))},
                       {"error", item->error},
                       {"cached", item->cached},
                       {"measured_unix_ms", item->measured_ms},
                       {"measured_node", item->measured_node},
                       {"device_uuid", item->device_uuid},
                       {"result", MeasurementJson(*item, report.job.device)}});
    }
  }
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
    for (core::Recipe r : a.recipes()) {
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
    const std::vector<core::Recipe> done = a.CompleteRecipes(mode);
    for (core::Recipe base : done)
      for (core::Recipe r : done) {
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
  for (core::Recipe r : a.recipes()) {
    const Totals* ac = a.FindTotals({r, core::Mode::kAutocast});
    const Totals* pq = a.FindTotals({r, core::Mode::kPrequant});
    if (!ac || !pq || !ac->complete() || !pq->complete()) continue;
    const core::stats::Interval d =
        a.TotalDifference({r, core::Mode::kAutocast}, {r, core::Mode::kPrequant});
    const double over = d.center;
    const auto [bytes, copy] = QuantBytesPerLayer(a, r);
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
                   {"bandwidth_floor_ms",
                    bytes > 0 && copy > 0 ? Json(OverheadFloorMs(bytes, copy)) : Json(nullptr)}});
  }
  return out;
}

Json SweepJson(const Analysis& a) {
  Json out = Json::array();
  for (core::Mode mode : a.modes())
    for (int64_t m : a.sweep_ms())
      for (core::Recipe r : a.recipes()) {
        const auto ms = a.SweepModelMs(m, {r, mode});
        out.push_back({{"m", m},
                       {"mode", S(core::ToString(mode))},
                       {"recipe", S(core::ToString(r))},
                       {"full_model_ms", ms ? Json(*ms) : Json(nullptr)}});
      }
  return out;
}

}  // namespace

nlohmann::ordered_json DeviceJson(const core::DeviceInfo& d) {
  using Json = nlohmann::ordered_json;
  Json recipes = Json::array();
  for (const auto& r : d.recipes)
    recipes.push_back({{"recipe", S(core::ToString(r.recipe))},
                       {"supported", r.supported},
                       {"reason", r.reason}});
  return {{"backend", d.backend},
          {"name", d.name},
          {"uuid", d.uuid},
          {"sm", d.sm},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.memory_bytes},
          {"driver_version", d.driver_version},
          {"cuda_version", d.cuda_version},
          {"cublaslt_version", d.cublaslt_version},
          {"gemmprof_version", d.gemmprof_version},
          {"recipes", recipes}};
}

std::string JsonDocument(const core::Report& report) {
  const Analysis a(report);
  Json doc = {{"schema_version", kJsonSchemaVersion},
              {"job", JobJson(report)},
              {"device", DeviceJson(report.job.device)},
              {"timing", TimingJson(report.job.spec.timing)},
              {"items", ItemsJson(report)},
              {"totals", TotalsJson(a)},
              {"speedups", SpeedupsJson(a)},
              {"quantization_overhead", OverheadJson(a)},
              {"sweep", SweepJson(a)},
              {"notices", BuildNotices(a)},
              {"findings", BuildFindings(a)}};
  return doc.dump(2) + "\n";
}

}  // namespace gemmprof::report
