#include "client/render/report_context.h"

#include <algorithm>

#include "client/render/format.h"
#include "client/render/model_label.h"
#include "report/batches.h"
#include "report/notices.h"

namespace gemmprof::client::render {
namespace {

std::string Or(const std::string& s, const char* fallback) { return s.empty() ? fallback : s; }

std::string ModelLine(const report::Analysis& a) {
  const core::JobRecord& job = a.report().job;
  if (a.is_shape_list()) return "shape list, " + std::to_string(a.rows().size()) + " GEMMs";
  return render::ModelLine(job, a.num_layers());
}

std::string DeviceLine(const core::DeviceInfo& d) {
  std::string s = Or(d.name, "unknown device");
  std::vector<std::string> parts;
  if (d.sm > 0) parts.push_back("sm_" + std::to_string(d.sm));
  if (d.sm_count > 0) parts.push_back(std::to_string(d.sm_count) + " SMs");
  if (d.memory_bytes > 0) parts.push_back(FormatGib(d.memory_bytes));
  if (!parts.empty()) {
    s += " (";
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    s += ")";
  }
  return s;
}

// Clock and power ranges over every measured item that has telemetry.
std::pair<std::string, std::string> TelemetryLines(const core::Report& report) {
  bool any = false;
  double sm_min = 0, sm_max = 0, mem = 0, p_avg_min = 0, p_avg_max = 0, p_max = 0, t_max = 0;
  for (const auto& item : report.items) {
    if (!item.result || item.result->telemetry.telemetry_samples <= 0) continue;
    const core::Telemetry& t = item.result->telemetry;
    if (!any) {
      sm_min = t.sm_clock_mhz_min;
      p_avg_min = t.power_w_avg;
    }
    any = true;
    sm_min = std::min(sm_min, t.sm_clock_mhz_min);
    sm_max = std::max(sm_max, t.sm_clock_mhz_max);
    mem = std::max(mem, t.mem_clock_mhz);
    p_avg_min = std::min(p_avg_min, t.power_w_avg);
    p_avg_max = std::max(p_avg_max, t.power_w_avg);
    p_max = std::max(p_max, t.power_w_max);
    t_max = std::max(t_max, t.temp_c_max);
  }
  if (!any) return {"not recorded", "not recorded"};
  return {"SM " + FormatFixed(sm_min, 0) + "-" + FormatFixed(sm_max, 0) + " MHz, memory " +
              FormatFixed(mem, 0) + " MHz",
          "average " + FormatFixed(p_avg_min, 0) +
              (FormatFixed(p_avg_min, 0) == FormatFixed(p_avg_max, 0)
                   ? ""
                   : "-" + FormatFixed(p_avg_max, 0)) +
              " W per item, peak " + FormatFixed(p_max, 0) + " W, max temperature " +
              FormatFixed(t_max, 0) + " C"};
}

std::string StateLine(const report::Analysis& a) {
  const core::JobRecord& job = a.report().job;
  std::string s = std::string(core::ToString(job.state)) + ", " +
                  std::to_string(job.finished_items) + " of " + std::to_string(job.total_items) +
                  " items finished, " + std::to_string(job.failed_items) + " failed";
  const int pending = a.PendingItems();
  if (pending > 0) s += ", " + std::to_string(pending) + " pending";
  return s;
}

// How a sample is timed, per backend (kernels/timing/iteration_timer.h, device/host_runner).
std::string TimingMethod(const core::DeviceInfo& d) {
  if (d.backend == "cuda")
    return "CUDA events around one CUDA-graph launch per sample, queued behind a blocking "
           "kernel so launch overhead stays out";
  if (d.backend == "host-reference") return "host wall clock per iteration (CPU emulation)";
  return "unknown backend \"" + d.backend + "\"";
}

// The timing line: interleaved rounds (noise-aware or fixed) with the precision reached,
// or the median of iterations for results stored before rounds.
std::string TimingLine(const core::Report& report) {
  const core::TimingOptions& t = report.job.spec.timing;
  std::vector<double> widths;
  for (const auto& item : report.items) {
    if (item.result && item.result->isolated.present())
      widths.push_back(item.result->isolated.RelHalfWidth());
  }
  if (widths.empty())
    return "median of " + std::to_string(t.timed_iters) + " timed iterations per item after " +
           std::to_string(t.warmup_iters) + " warm-up iterations; " +
           FormatFixed(t.gpu_warmup_s, 1) + " s GPU warm-up before the job";
  std::sort(widths.begin(), widths.end());
  const double median = widths.size() % 2
                            ? widths[widths.size() / 2]
                            : (widths[widths.size() / 2 - 1] + widths[widths.size() / 2]) / 2;
  std::string s = t.timed_iters == 0
                      ? "interleaved rounds, stopped at " + FormatPlusMinus(t.precision_target) +
                            " or " + FormatFixed(t.item_budget_s, 1) + " s per item"
                      : "fixed " + std::to_string(t.timed_iters) + " interleaved rounds";
  s += " (achieved: median " + FormatPlusMinus(median) + ", worst " +
       FormatPlusMinus(widths.back()) + "); " + std::to_string(t.warmup_iters) +
       " warm-up iterations; " + FormatFixed(t.gpu_warmup_s, 1) + " s GPU warm-up before the job";
  if (const std::string n = B2bCountText(report); !n.empty())
    s += "; back to back: " + n + " GEMMs per graph";
  return s;
}

// The measurement context, and each batch with the power state it ran in.
void BatchFields(const core::Report& report, std::vector<std::pair<std::string, std::string>>& kv) {
  const std::vector<report::BatchState> batches = report::Batches(report);
  const bool recorded = std::any_of(batches.begin(), batches.end(),
                                    [](const report::BatchState& b) { return !b.context.empty(); });
  if (!recorded) {
    if (!batches.empty())
      kv.push_back({"context",
                    "not recorded (measured before measurement contexts: a batch of "
                    "rounds could hold GEMMs of different workloads)"});
    return;
  }
  kv.push_back({"context", report.job.spec.timing.context == core::MeasureContext::kIsolated
                               ? "isolated: each GEMM timed in its own batch of rounds"
                               : "workload: only GEMMs that run together in the workload (one "
                                 "training step; one M) share a batch of rounds"});
  constexpr size_t kShown = 12;
  for (size_t i = 0; i < batches.size() && i < kShown; ++i)
    kv.push_back({"batch " + std::to_string(batches[i].number), report::DescribeBatch(batches[i])});
  if (batches.size() > kShown)
    kv.push_back({"batches", "... and " + std::to_string(batches.size() - kShown) +
                                 " more (report --format json lists every batch)"});
}

}  // namespace

std::string B2bCountText(const core::Report& report) {
  int32_t lo = 0, hi = 0;
  for (const auto& item : report.items) {
    if (!item.result || !item.result->b2b.present() || item.result->b2b_count <= 0) continue;
    lo = lo == 0 ? item.result->b2b_count : std::min(lo, item.result->b2b_count);
    hi = std::max(hi, item.result->b2b_count);
  }
  if (hi == 0) return "";
  return lo < hi ? std::to_string(lo) + "-" + std::to_string(hi) : std::to_string(hi);
}

std::vector<std::pair<std::string, std::string>> ContextFields(const report::Analysis& a) {
  const core::JobRecord& job = a.report().job;
  const core::DeviceInfo& d = job.device;
  const core::TimingOptions& t = job.spec.timing;
  std::vector<std::pair<std::string, std::string>> kv;
  if (d.backend == "host-reference") kv.push_back({"WARNING", report::kHostReferenceBanner});
  kv.push_back({"model", ModelLine(a)});
  if (!job.spec.label.empty()) kv.push_back({"label", job.spec.label});
  kv.push_back({"device", DeviceLine(d)});
  kv.push_back({"backend", Or(d.backend, "unknown")});
  kv.push_back({"versions", "driver " + Or(d.driver_version, "?") + ", CUDA " +
                                Or(d.cuda_version, "?") + ", cuBLASLt " +
                                Or(d.cublaslt_version, "?") + ", gemmprof " +
                                Or(d.gemmprof_version, "?")});
  const auto [clocks, power] = TelemetryLines(a.report());
  kv.push_back({"clocks seen", clocks});
  kv.push_back({"power seen", power});
  BatchFields(a.report(), kv);
  kv.push_back({"timing", TimingLine(a.report())});
  kv.push_back({"timing method", TimingMethod(d)});
  if (t.timing_backend == core::TimingBackend::kKernels) {
    kv.push_back({"kernel timing",
                  "also the kernels' own durations per launch (CUPTI), summed, launch and graph "
                  "gaps left out: the \"Kernel-only timing\" table; every other figure is "
                  "from CUDA events"});
  }
  if (a.report().job.spec.profile) {
    kv.push_back({"Nsight mode",
                  "each item's timed graph ran once more under "
                  "cudaProfilerStart/Stop (never served from the cache)"});
  }
  kv.push_back({"L2 policy",
                t.l2 == core::L2Policy::kCold
                    ? "cold (L2 flushed outside the timed window before each sample, by writing: "
                      "its dirty lines are written back inside it)"
                : t.l2 == core::L2Policy::kClean
                    ? "clean (L2 flushed by reading outside the timed window before each sample: "
                      "operands from memory, nothing to write back)"
                    : "hot (same buffers every iteration, as the seed tool)"});
  kv.push_back({"accounting", std::string(core::ToString(t.accounting))});
  kv.push_back({"options", "seed " + std::to_string(t.seed) + ", fast accumulation " +
                               std::string(core::ToString(t.fast_accum)) + ", autotune top " +
                               std::to_string(t.autotune_k) + ", amax history " +
                               std::to_string(t.amax_history_len) + " (" +
                               std::string(core::ToString(t.amax_algo)) + ")" +
                               (job.spec.force ? ", cache bypassed (--force)" : "")});
  kv.push_back({"state", StateLine(a)});
  kv.push_back({"created", FormatUtc(job.created_ms)});
  if (job.finished_ms > 0) {
    std::string fin = FormatUtc(job.finished_ms);
    if (job.started_ms > 0)
      fin += " (ran " + FormatDuration(job.finished_ms - job.started_ms) + ")";
    kv.push_back({"finished", fin});
  }
  return kv;
}

}  // namespace gemmprof::client::render
