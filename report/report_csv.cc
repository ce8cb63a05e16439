#include "report/report_csv.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "report/batches.h"
#include "report/figures.h"

namespace gemmprof::report {
namespace {

std::string Num(double v) { return CsvNumber(v); }

// A number only when `present`, else an empty cell (a figure not measured).
std::string Opt(bool present, double v) { return present ? Num(v) : ""; }
std::string Int(int64_t v) { return std::to_string(v); }
std::string Bool(bool v) { return v ? "true" : "false"; }
std::string Str(std::string_view v) { return std::string(v); }

std::vector<std::string> ContextCells(const core::JobRecord& job) {
  const core::DeviceInfo& d = job.device;
  const core::TimingOptions& t = job.spec.timing;
  return {Int(job.id),
          Str(core::ToString(job.state)),
          job.spec.label,
          job.plan.model_name,
          Int(job.plan.num_layers),
          d.name,
          d.backend,
          Int(d.sm),
          Int(d.sm_count),
          d.driver_version,
          d.cuda_version,
          d.cublaslt_version,
          d.gemmprof_version,
          Int(t.warmup_iters),
          Int(t.timed_iters),
          Num(t.gpu_warmup_s),
          Str(core::ToString(t.l2)),
          Str(core::ToString(t.accounting)),
          std::to_string(t.seed),
          Str(core::ToString(t.fast_accum)),
          Int(t.autotune_k),
          Int(t.amax_history_len),
          Str(core::ToString(t.amax_algo))};
}

std::string Opt(const std::optional<double>& v) { return v ? Num(*v) : ""; }

// The batch an item was measured in and its state, then its energy (appended columns).
constexpr size_t kContextEnergyColumns = 13;
std::vector<std::string> ContextEnergyCells(const core::ItemRecord& r,
                                            const std::vector<report::BatchState>& batches) {
  const core::Measurement& m = *r.result;
  const report::BatchState* b = report::BatchOf(batches, r);
  const bool state = b && b->has_telemetry();
  const core::Energy& e = m.energy;
  const bool j = e.present();
  return {m.batch_id,
          m.context,
          m.batch_gemms,
          Opt(state, state ? b->power_w : 0),
          Opt(state, state ? b->sm_mhz_mean : 0),
          Opt(j, e.joules),
          Opt(j, e.joules_low),
          Opt(j, e.joules_high),
          Opt(j, e.power_w),
          Opt(j, e.window_s),
          j ? Int(e.counter_updates) : "",
          Opt(j && m.flops > 0, j ? m.flops / e.joules / 1e12 : 0),
          e.not_measured};
}

// A routed op's per-group tokens (';'-joined, so the cell needs no quoting) and its
// layout (grouped ops only), then the item's own fast accumulation (a variant's); empty
// where they do not apply.
std::vector<std::string> LastCells(const core::WorkItem& item) {
  const core::GemmOp& op = item.op;
  std::string tokens;
  for (size_t i = 0; i < op.group_tokens.size(); ++i)
    tokens += (i ? ";" : "") + Int(op.group_tokens[i]);
  return {tokens, op.groups > 1 ? Str(core::ToString(op.layout)) : "",
          item.fast_accum != core::FastAccum::kDefault ? Str(core::ToString(item.fast_accum)) : ""};
}

std::vector<std::string> ItemCells(const core::ItemRecord& r, const core::DeviceInfo& device,
                                   const std::vector<report::BatchState>& batches) {
  const core::GemmOp& op = r.item.op;
  std::vector<std::string> cells = {Int(r.item.seq),
                                    op.name,
                                    Str(core::ToString(op.pass)),
                                    Int(op.shape.m),
                                    Int(op.shape.k),
                                    Int(op.shape.n),
                                    Int(op.groups),
                                    Int(op.layers),
                                    Bool(op.per_layer),
                                    Str(core::ToString(r.item.recipe)),
                                    Str(core::ToString(r.item.mode)),
                                    Str(core::ToString(r.status)),
                                    r.error,
                                    Bool(r.cached),
                                    Int(r.measured_ms)};
  if (!r.result) {
    cells.resize(cells.size() + 27 + 16);
    cells.push_back(Int(r.item.id));
    cells.resize(cells.size() + 5 + 5 + kContextEnergyColumns);
    const std::vector<std::string> grouping = LastCells(r.item);
    cells.insert(cells.end(), grouping.begin(), grouping.end());
    return cells;
  }
  const core::Measurement& m = *r.result;
  const core::Telemetry& tel = m.telemetry;
  const std::vector<std::string> more = {
      Num(m.time.median_ms), Num(m.time.mean_ms), Num(m.time.p20_ms), Num(m.time.p80_ms),
      Num(m.time.min_ms), Num(m.time.max_ms), Num(m.time.stdev_ms), Int(m.time.count),
      Num(m.quant_ms), Num(m.flops), Num(m.bytes), Num(report::TflopsOf(r)), m.algorithm,
      Str(core::ToString(m.verification)), Num(m.rel_error), Num(m.error_threshold),
      Bool(m.fast_accum), Num(tel.sm_clock_mhz_min), Num(tel.sm_clock_mhz_max),
      Num(tel.mem_clock_mhz), Num(tel.power_w_avg), Num(tel.power_w_max), Num(tel.temp_c_max),
      std::to_string(tel.throttle_reasons), Int(tel.throttled_samples), Int(tel.telemetry_samples),
      m.notes,
      // interleaved rounds (empty for old results)
      Opt(m.isolated.present(), m.isolated.center_ms),
      Opt(m.isolated.present(), m.isolated.ci_low_ms),
      Opt(m.isolated.present(), m.isolated.ci_high_ms),
      Opt(m.isolated.present(), m.isolated.RelHalfWidth()), Int(m.isolated.rounds),
      Opt(m.isolated.present(), m.isolated.n_eff), Opt(m.b2b.present(), m.b2b.center_ms),
      Opt(m.b2b.present(), m.b2b.ci_low_ms), Opt(m.b2b.present(), m.b2b.ci_high_ms),
      Int(m.b2b_count), m.stop_reason, m.group_uid, m.work_key, Int(m.shared_with_item),
      Num(m.quant_bytes), Num(m.copy_bytes_per_s)};
  cells.insert(cells.end(), more.begin(), more.end());
  // Last, so older readers' columns stay where they were; shared_with_item names an item_id.
  cells.push_back(Int(r.item.id));
  const report::Efficiency e = report::EfficiencyOf(r, device);
  for (const auto& v :
       {e.sm_clock_mhz, e.peak_tflops, e.of_peak, e.of_copy_bandwidth, e.quant_of_copy_bandwidth}) {
    cells.push_back(Opt(v));
  }
  const bool k = m.kernel_samples > 0;
  cells.insert(cells.end(), {Opt(k, m.kernel.median_ms), Opt(k, m.kernel_quant_ms),
                             Int(m.kernel_samples), m.kernel_names, Bool(m.profiled)});
  const std::vector<std::string> context = ContextEnergyCells(r, batches);
  cells.insert(cells.end(), context.begin(), context.end());
  const std::vector<std::string> grouping = LastCells(r.item);
  cells.insert(cells.end(), grouping.begin(), grouping.end());
  return cells;
}

}  // namespace

const std::vector<std::string>& ReportCsvColumns() {
  static const std::vector<std::string> kColumns = {
      "job_id", "job_state", "label", "model", "num_layers", "device_name", "backend", "sm",
      "sm_count", "driver_version", "cuda_version", "cublaslt_version", "gemmprof_version",
      "warmup_iters", "timed_iters", "gpu_warmup_s", "l2_policy", "accounting", "seed",
      "fast_accum_option", "autotune_k", "amax_history_len", "amax_algo",
      // item
      "seq", "op", "pass", "m", "k", "n", "groups", "layers", "per_layer", "recipe", "mode",
      "status", "error", "cached", "measured_unix_ms",
      // measurement
      "median_ms", "mean_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "stdev_ms", "samples",
      "quant_ms", "flops", "bytes", "tflops", "algorithm", "verification", "rel_error",
      "error_threshold", "fast_accum", "sm_clock_mhz_min", "sm_clock_mhz_max", "mem_clock_mhz",
      "power_w_avg", "power_w_max", "temp_c_max", "throttle_reasons", "throttled_samples",
      "telemetry_samples", "notes",
      // interleaved rounds (appended: the columns above keep their order)
      "iso_ms", "iso_ci_low_ms", "iso_ci_high_ms", "iso_rel_half_width", "rounds", "n_eff",
      "b2b_ms", "b2b_ci_low_ms", "b2b_ci_high_ms", "b2b_count", "stop_reason", "group_uid",
      "work_key", "shared_with_item", "quant_bytes", "copy_bytes_per_s", "item_id",
      // efficiency (appended; empty where unknown)
      "sm_clock_mhz", "peak_tflops", "fraction_of_peak", "fraction_of_copy_bandwidth",
      "quant_fraction_of_copy_bandwidth",
      // kernel-only timing (--timing kernels; empty when not measured) and Nsight mode
      "kernel_median_ms", "kernel_quant_ms", "kernel_samples", "kernel_names", "profiled",
      // the batch it was measured in and its state; energy (--energy; empty when not measured)
      "batch_id", "context", "batch_gemms", "batch_power_w", "batch_sm_clock_mhz_mean",
      "energy_joules", "energy_ci_low_joules", "energy_ci_high_joules", "energy_power_w",
      "energy_window_s", "energy_counter_updates", "tflop_per_joule", "energy_not_measured",
      // routed experts: per-group tokens ("3;0;5", empty when none) and the layout of a
      // grouped op (empty for groups == 1); the item's own fast accumulation, on or off (a
      // variant's "+fast-accum" pass; empty: the job's fast_accum_option)
      "group_tokens", "moe_layout", "fast_accum_own"};
  return kColumns;
}

std::string CsvNumber(double v) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string RenderReportCsv(const core::Report& report) {
  auto join = [](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + CsvField(cells[i]);
    return line + "\n";
  };
  std::string out = join(ReportCsvColumns());
  const std::vector<std::string> context = ContextCells(report.job);
  const std::vector<report::BatchState> batches = report::Batches(report);
  std::vector<const core::ItemRecord*> items;
  for (const auto& item : report.items) items.push_back(&item);
  std::stable_sort(items.begin(), items.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  for (const core::ItemRecord* item : items) {
    std::vector<std::string> row = context;
    const std::vector<std::string> cells = ItemCells(*item, report.job.device, batches);
    row.insert(row.end(), cells.begin(), cells.end());
    out += join(row);
  }
  return out;
}

}  // namespace gemmprof::report
