#include "bench/gpu/gpu_bench.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <tuple>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "kernels/runner/cuda_runner_factory.h"

namespace gemmprof::bench {
namespace {

using core::Accounting;
using core::Mode;
using core::Pass;
using core::Recipe;

// The seed's 5B model: hidden 4096, intermediate 16384, micro batch 31 x sequence 512.
constexpr int64_t kHidden = 4096, kIntermediate = 16384, kTokens = 31 * 512;

BenchConfig Config(std::string label, Recipe recipe, Mode mode, const BenchOptions& o,
                   int autotune_k = 1, Accounting accounting = Accounting::kTrainingStep) {
  BenchConfig c;
  c.label = std::move(label);
  c.recipe = recipe;
  c.mode = mode;
  c.timing.warmup_iters = o.warmup_iters;
  c.timing.timed_iters = o.timed_iters;
  c.timing.autotune_k = autotune_k;
  c.timing.accounting = accounting;
  c.timing.gpu_warmup_s = 0.5;
  return c;
}

std::string Csv(const std::string& s) {
  return "\"" + absl::StrReplaceAll(s, {{"\"", "\"\""}}) + "\"";
}

void WriteCsvHeader(std::ofstream& csv) {
  csv << "config,recipe,mode,accounting,autotune_k,pass,op,m,k,n,status,median_ms,mean_ms,p20_ms,"
         "p80_ms,min_ms,stdev_ms,count,quant_ms,tflops,rel_error,error_threshold,verification,"
         "fast_accum,sm_clock_mhz_min,sm_clock_mhz_max,power_w_avg,temp_c_max,"
         "throttled_samples,algorithm,notes\n";
}

void WriteCsvRow(std::ofstream& csv, const BenchConfig& c, const core::GemmOp& op,
                 const absl::StatusOr<core::Measurement>& m) {
  csv << Csv(c.label) << "," << core::ToString(c.recipe) << "," << core::ToString(c.mode) << ","
      << core::ToString(c.timing.accounting) << "," << c.timing.autotune_k << ","
      << core::ToString(op.pass) << "," << op.name << "," << op.shape.m << "," << op.shape.k << ","
      << op.shape.n << ",";
  if (!m.ok()) {
    csv << "failed,,,,,,,,,,,,,,,,,,,," << Csv(std::string(m.status().ToString())) << "\n";
    return;
  }
  const core::SampleStats& t = m->time;
  csv << "done,"
      << absl::StrFormat("%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%.6f,%.2f,%.4e,%.1e,", t.median_ms,
                         t.mean_ms, t.p20_ms, t.p80_ms, t.min_ms, t.stdev_ms, t.count, m->quant_ms,
                         m->flops / (t.median_ms * 1e9), m->rel_error, m->error_threshold)
      << core::ToString(m->verification) << "," << (m->fast_accum ? 1 : 0) << ","
      << absl::StrFormat("%.0f,%.0f,%.1f,%.0f,%d,", m->telemetry.sm_clock_mhz_min,
                         m->telemetry.sm_clock_mhz_max, m->telemetry.power_w_avg,
                         m->telemetry.temp_c_max, m->telemetry.throttled_samples)
      << Csv(m->algorithm) << "," << Csv(m->notes) << "\n";
}

struct ConfigTotals {
  double layer_ms = 0, quant_ms = 0;
  std::map<Pass, double> pass_ms;
  int failed = 0, unverified = 0;
};

ConfigTotals RunConfig(device::Runner& runner, const BenchConfig& c,
                       const std::vector<core::GemmOp>& ops, int64_t* next_id, std::ofstream* csv) {
  ConfigTotals totals;
  std::printf("\n== %s ==\n", c.label.c_str());
  if (absl::Status st = runner.BeginJob(c.timing); !st.ok()) {
    std::printf("warm-up failed: %s\n", st.ToString().c_str());
  }
  for (const core::GemmOp& op : ops) {
    core::WorkItem item;
    item.id = (*next_id)++;
    item.op = op;
    item.recipe = c.recipe;
    item.mode = c.mode;
    const absl::StatusOr<core::Measurement> m = device::MeasureOne(runner, item, c.timing);
    if (csv != nullptr) WriteCsvRow(*csv, c, op, m);
    if (!m.ok()) {
      ++totals.failed;
      std::printf("  %-5s %-8s %-17s FAILED: %s\n", std::string(core::ToString(op.pass)).c_str(),
                  op.name.c_str(), op.shape.ToString().c_str(), m.status().ToString().c_str());
      continue;
    }
    if (m->verification != core::Verification::kPassed) ++totals.unverified;
    totals.layer_ms += m->time.median_ms;
    totals.quant_ms += m->quant_ms;
    totals.pass_ms[op.pass] += m->time.median_ms;
    std::printf("  %-5s %-8s %-17s %8.4f ms  %6.1f TFLOP/s  quant %7.4f ms  err %.2e %s\n",
                std::string(core::ToString(op.pass)).c_str(), op.name.c_str(),
                op.shape.ToString().c_str(), m->time.median_ms,
                m->flops / (m->time.median_ms * 1e9), m->quant_ms, m->rel_error,
                std::string(core::ToString(m->verification)).c_str());
  }
  std::printf("  per-layer: %.4f ms (fprop %.4f, dgrad %.4f, wgrad %.4f; quantization %.4f)%s\n",
              totals.layer_ms, totals.pass_ms[Pass::kFprop], totals.pass_ms[Pass::kDgrad],
              totals.pass_ms[Pass::kWgrad], totals.quant_ms,
              totals.failed + totals.unverified > 0 ? "  [INCOMPLETE OR UNVERIFIED ITEMS]" : "");
  return totals;
}

}  // namespace

std::vector<core::GemmOp> SeedLayerOps(int64_t hidden, int64_t intermediate, int64_t tokens) {
  const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> linears = {
      {"qkv", {hidden, 3 * hidden}},
      {"attn_out", {hidden, hidden}},
      {"mlp_up", {hidden, intermediate}},
      {"mlp_down", {intermediate, hidden}}};
  std::vector<core::GemmOp> ops;
  for (Pass pass : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) {
    for (const auto& [name, in_out] : linears) {
      const auto [in, out] = in_out;
      core::GemmOp op;
      op.name = name;
      op.pass = pass;
      // fprop (M, in, out); dgrad swaps K and N; wgrad is (in, M, out) as in the seed.
      if (pass == Pass::kFprop) op.shape = {tokens, in, out};
      if (pass == Pass::kDgrad) op.shape = {tokens, out, in};
      if (pass == Pass::kWgrad) op.shape = {in, tokens, out};
      ops.push_back(op);
    }
  }
  return ops;
}

std::vector<core::GemmOp> Llama8bFpropOps(int64_t m) {
  const std::vector<std::tuple<std::string, int64_t, int64_t>> linears = {{"qkv", 4096, 6144},
                                                                          {"attn_out", 4096, 4096},
                                                                          {"gate_up", 4096, 28672},
                                                                          {"down", 14336, 4096}};
  std::vector<core::GemmOp> ops;
  for (const auto& [name, in, out] : linears) {
    core::GemmOp op;
    op.name = name;
    op.pass = Pass::kFprop;
    op.shape = {m, in, out};
    ops.push_back(op);
  }
  return ops;
}

std::vector<BenchConfig> ComparisonConfigs(const BenchOptions& o) {
  if (o.quick)
    return {Config("fp8-current autocast per-gemm", Recipe::kFp8Current, Mode::kAutocast, o, 1,
                   Accounting::kPerGemm)};
  // "The same job run twice": each repeat runs right after its first run, as a user
  // would submit it again. (Separated by minutes of other work, as an earlier layout had
  // them, the difference also measured how far the power-capped GPU's clocks drifted.)
  return {
      Config("bf16 autotune 1", Recipe::kBf16, Mode::kAutocast, o, 1),
      Config("bf16 autotune 1 (repeat)", Recipe::kBf16, Mode::kAutocast, o, 1),
      Config("bf16 autotune 8", Recipe::kBf16, Mode::kAutocast, o, 8),
      Config("fp8-current prequant", Recipe::kFp8Current, Mode::kPrequant, o),
      Config("fp8-current prequant (repeat)", Recipe::kFp8Current, Mode::kPrequant, o),
      Config("fp8-current autocast per-gemm", Recipe::kFp8Current, Mode::kAutocast, o, 1,
             Accounting::kPerGemm),
      Config("fp8-current autocast training-step", Recipe::kFp8Current, Mode::kAutocast, o),
      Config("fp8-delayed prequant", Recipe::kFp8Delayed, Mode::kPrequant, o),
      Config("fp8-delayed autocast training-step", Recipe::kFp8Delayed, Mode::kAutocast, o),
      Config("fp8-block prequant", Recipe::kFp8Block, Mode::kPrequant, o),
  };
}

absl::Status RunBenchmark(const BenchOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<device::Runner> runner, kernels::MakeCudaRunner(0));
  const core::DeviceInfo& info = runner->Info();
  std::printf("device: %s (sm_%d, %d SMs), driver %s, CUDA %s, cuBLASLt %s\n", info.name.c_str(),
              info.sm, info.sm_count, info.driver_version.c_str(), info.cuda_version.c_str(),
              info.cublaslt_version.c_str());
  const int64_t div = options.quick ? 4 : 1;
  const std::vector<core::GemmOp> ops =
      SeedLayerOps(kHidden / div, kIntermediate / div, kTokens / div);
  std::unique_ptr<std::ofstream> csv;
  if (!options.csv_path.empty()) {
    csv = std::make_unique<std::ofstream>(options.csv_path);
    if (!*csv) return absl::InvalidArgumentError("cannot write --csv " + options.csv_path);
    WriteCsvHeader(*csv);
  }
  int64_t next_id = 1;
  std::vector<std::pair<std::string, ConfigTotals>> summary;
  if (options.rowwise) {
    // Each op set: row-wise, then tensor-wise, one right after the other.
    std::vector<std::pair<std::string, std::vector<core::GemmOp>>> sets = {{"seed", ops}};
    for (int64_t m : {16, 128, 1024, 8192}) {
      sets.push_back({absl::StrFormat("llama8b M=%d", m), Llama8bFpropOps(m)});
    }
    bool first = true;
    for (const auto& [name, set_ops] : sets) {
      for (Recipe r : {Recipe::kFp8Rowwise, Recipe::kFp8Current}) {
        BenchConfig c = Config(absl::StrFormat("%s %s prequant", name, core::ToString(r)), r,
                               Mode::kPrequant, options, options.autotune_k);
        if (first) c.timing.gpu_warmup_s = options.gpu_warmup_s;
        first = false;
        summary.emplace_back(c.label, RunConfig(*runner, c, set_ops, &next_id, csv.get()));
      }
    }
  } else {
    std::vector<BenchConfig> configs = ComparisonConfigs(options);
    configs.front().timing.gpu_warmup_s = options.gpu_warmup_s;
    for (const BenchConfig& c : configs) {
      summary.emplace_back(c.label, RunConfig(*runner, c, ops, &next_id, csv.get()));
    }
  }
  std::printf("\n%-36s %12s %12s %8s\n", "configuration", "layer ms", "quant ms", "failed");
  for (const auto& [label, t] : summary) {
    std::printf("%-36s %12.4f %12.4f %8d\n", label.c_str(), t.layer_ms, t.quant_ms,
                t.failed + t.unverified);
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::bench
