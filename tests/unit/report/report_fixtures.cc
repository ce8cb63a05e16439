#include "tests/unit/report/report_fixtures.h"

#include <algorithm>
#include <map>

namespace gemmprof::report::testing {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;

// The six recipes of the seed tool: these fixtures stand for jobs made before fp8-rowwise.
const std::vector<Recipe>& SeedRecipes() {
  static const std::vector<Recipe> kSeed = {Recipe::kBf16,       Recipe::kFp8Current,
                                            Recipe::kFp8Delayed, Recipe::kFp8Block,
                                            Recipe::kMxfp8,      Recipe::kNvfp4};
  return kSeed;
}

constexpr int64_t kCreatedMs = 1795000000000;  // 2026-11-18 UTC

core::DeviceInfo H100() {
  core::DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-0000";
  d.sm = 90;
  d.sm_count = 132;
  d.memory_bytes = int64_t{80} * 1024 * 1024 * 1024;
  d.driver_version = "580.65.06";
  d.cuda_version = "13.0";
  d.cublaslt_version = "13.1.0";
  d.gemmprof_version = "0.1.0";
  for (Recipe r : SeedRecipes()) {
    const bool ok = r != Recipe::kMxfp8 && r != Recipe::kNvfp4;
    d.recipes.push_back(
        {r, ok, ok ? "" : std::string(core::ToString(r)) + " needs sm_100+, this is sm_90"});
  }
  return d;
}

// Throughput each recipe reaches in the fixtures (TFLOP/s).
double Rate(Recipe r) {
  switch (r) {
    case Recipe::kBf16:
      return 600;
    case Recipe::kFp8Current:
      return 900;
    case Recipe::kFp8Delayed:
      return 960;
    case Recipe::kFp8Block:
      return 800;
    default:
      return 1200;
  }
}

core::Measurement Measure(const core::GemmOp& op, double ms, double stdev_frac) {
  core::Measurement m;
  m.time.count = 100;
  m.time.median_ms = ms;
  m.time.mean_ms = ms * 1.002;
  m.time.p20_ms = ms * (1 - stdev_frac / 2);
  m.time.p80_ms = ms * (1 + stdev_frac / 2);
  m.time.min_ms = ms * 0.99;
  m.time.max_ms = ms * (1 + 3 * stdev_frac);
  m.time.stdev_ms = ms * stdev_frac;
  m.flops = op.Flops();
  m.bytes = 2.0 * (op.shape.m * op.shape.k + op.shape.k * op.shape.n + op.shape.m * op.shape.n);
  m.algorithm = "cublasLt algo 66 tile 256x128";
  m.verification = core::Verification::kPassed;
  m.rel_error = 1e-3;
  m.error_threshold = 2e-2;
  m.telemetry = {1755, 1980, 2619, 512, 690, 71, 0, 0, 20};
  return m;
}

struct Builder {
  core::Report report;
  int32_t seq = 0;

  core::ItemRecord& Add(const core::GemmOp& op, Recipe r, Mode mode, core::ItemStatus status) {
    core::ItemRecord item;
    item.item = {seq + 1, report.job.id, seq, op, r, mode};
    ++seq;
    item.status = status;
    item.measured_ms = kCreatedMs + 60000 + seq * 1000;
    report.items.push_back(item);
    return report.items.back();
  }

  // A done item timed at the recipe's rate; dgrad 8% slower, attn_out in low precision
  // slow enough that quantization eats the gain.
  core::ItemRecord& Done(const core::GemmOp& op, Recipe r, Mode mode) {
    double ms = MsAt(op.Flops(), Rate(r));
    if (op.pass == Pass::kDgrad) ms *= 1.08;
    const bool low = r != Recipe::kBf16;
    if (low && mode == Mode::kAutocast) ms += 0.04;  // quantization kernels
    if (low && op.name == "attn_out" && mode == Mode::kAutocast) ms += 0.2;
    core::ItemRecord& item = Add(op, r, mode, core::ItemStatus::kDone);
    item.result = Measure(op, ms, 0.01);
    item.result->quant_ms = low && mode == Mode::kAutocast ? 0.04 : 0;
    item.result->fast_accum = low && op.pass == Pass::kFprop;
    return item;
  }

  void Finish(core::JobState state) {
    report.job.state = state;
    report.job.total_items = static_cast<int32_t>(report.items.size());
    report.job.finished_items = report.job.failed_items = 0;
    for (const auto& i : report.items) {
      if (core::IsFinal(i.status)) ++report.job.finished_items;
      if (i.status == core::ItemStatus::kFailed) ++report.job.failed_items;
    }
    report.job.created_ms = kCreatedMs;
    report.job.started_ms = kCreatedMs + 2000;
    if (core::IsTerminal(state)) report.job.finished_ms = kCreatedMs + 2000 + 754000;
  }
};

Builder NewJob(int64_t id, core::Plan plan, std::vector<Recipe> recipes, std::vector<Mode> modes) {
  Builder b;
  b.report.job.id = id;
  b.report.job.plan = std::move(plan);
  b.report.job.spec.recipes = std::move(recipes);
  b.report.job.spec.modes = std::move(modes);
  b.report.job.spec.label = "fixture";
  // Results stored before interleaved rounds: their jobs ran a fixed 100 iterations.
  b.report.job.spec.timing.timed_iters = 100;
  b.report.job.device = H100();
  return b;
}

}  // namespace

core::Plan SmallModelPlan(bool with_lm_head) {
  core::Plan plan;
  plan.model_name = "tiny-llm";
  plan.num_layers = 2;
  const int64_t m = 8192, h = 4096, i = 16384;
  struct Op {
    const char* name;
    int64_t k, n;
    bool per_layer;
  };
  std::vector<Op> ops = {{"qkv", h, 3 * h, true},
                         {"attn_out", h, h, true},
                         {"mlp_up", h, i, true},
                         {"mlp_down", i, h, true}};
  if (with_lm_head) ops.push_back({"lm_head", h, 32000, false});
  for (Pass pass : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad})
    for (const Op& op : ops) {
      core::GemmShape s{m, op.k, op.n};
      if (pass == Pass::kDgrad) s = {m, op.n, op.k};
      if (pass == Pass::kWgrad) s = {op.k, m, op.n};
      plan.ops.push_back({op.name, pass, s, 1, op.per_layer ? plan.num_layers : 1, op.per_layer});
    }
  return plan;
}

double MsAt(double flops, double tflops) { return flops / (tflops * 1e12) * 1e3; }

core::Report HopperReport() {
  const std::vector<Recipe> all = SeedRecipes();
  Builder b = NewJob(7, SmallModelPlan(true), all, {Mode::kAutocast});
  for (const core::GemmOp& op : b.report.job.plan.ops)
    for (Recipe r : all) {
      if (r == Recipe::kMxfp8 || r == Recipe::kNvfp4) {
        b.Add(op, r, Mode::kAutocast, core::ItemStatus::kNotSupported).error =
            std::string(core::ToString(r)) + " needs sm_100+, this is sm_90";
        continue;
      }
      core::ItemRecord& item = b.Done(op, r, Mode::kAutocast);
      if (op.name == "qkv" && op.pass == Pass::kWgrad && r == Recipe::kBf16) {
        item.result->telemetry.throttled_samples = 3;
        item.result->telemetry.throttle_reasons = 0x20;
      }
      if (op.name == "mlp_down" && op.pass == Pass::kFprop && r == Recipe::kFp8Delayed) {
        item.result->time.stdev_ms = item.result->time.median_ms * 0.07;
      }
      if (op.name == "lm_head" && r == Recipe::kBf16) {
        item.cached = true;
        item.measured_ms = kCreatedMs - int64_t{3} * 86400000 - 3600000;
      }
    }
  b.Finish(core::JobState::kSucceeded);
  return b.report;
}

core::Report FailedItemReport() {
  core::Plan plan;
  plan.model_name = "shapes";
  plan.num_layers = 1;
  for (core::GemmShape s : {core::GemmShape{4096, 4096, 4096}, core::GemmShape{8192, 4096, 14336}})
    plan.ops.push_back({s.ToString(), Pass::kFprop, s, 1, 1, true});
  const std::vector<Recipe> recipes = {Recipe::kBf16, Recipe::kFp8Block, Recipe::kFp8Current};
  Builder b = NewJob(12, plan, recipes, {Mode::kAutocast});
  const core::GemmOp& first = b.report.job.plan.ops[0];
  const core::GemmOp& second = b.report.job.plan.ops[1];
  b.Done(first, Recipe::kBf16, Mode::kAutocast);
  b.Add(first, Recipe::kFp8Block, Mode::kAutocast, core::ItemStatus::kFailed).error =
      "cuBLASLt: CUBLAS_STATUS_NOT_SUPPORTED (no algorithm for VEC128 scales)";
  core::ItemRecord& wrong = b.Done(first, Recipe::kFp8Current, Mode::kAutocast);
  wrong.result->verification = core::Verification::kIncorrect;
  wrong.result->rel_error = 0.31;
  wrong.result->notes = "output differs from the host reference";
  b.Done(second, Recipe::kBf16, Mode::kAutocast);
  b.Add(second, Recipe::kFp8Block, Mode::kAutocast, core::ItemStatus::kRunning);
  b.Add(second, Recipe::kFp8Current, Mode::kAutocast, core::ItemStatus::kQueued);
  b.Finish(core::JobState::kRunning);
  return b.report;
}

core::Report BothModesReport() {
  const std::vector<Recipe> recipes = {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Block};
  Builder b = NewJob(21, SmallModelPlan(false), recipes, {Mode::kAutocast, Mode::kPrequant});
  b.report.job.spec.timing.l2 = core::L2Policy::kCold;
  for (const core::GemmOp& op : b.report.job.plan.ops)
    for (Recipe r : recipes)
      for (Mode mode : {Mode::kAutocast, Mode::kPrequant}) b.Done(op, r, mode);
  b.Finish(core::JobState::kSucceeded);
  return b.report;
}

core::Report SweepReport() {
  core::Plan plan;
  plan.model_name = "tiny-llm";
  plan.num_layers = 2;
  for (int64_t m : {1, 16}) {
    const std::string at = "@m=" + std::to_string(m);
    plan.ops.push_back({"qkv" + at, Pass::kFprop, {m, 4096, 12288}, 1, 2, true});
    plan.ops.push_back({"attn_out+mlp_down" + at, Pass::kFprop, {m, 4096, 4096}, 1, 4, true});
  }
  const std::vector<Recipe> recipes = {Recipe::kBf16, Recipe::kFp8Current};
  Builder b = NewJob(30, plan, recipes, {Mode::kAutocast});
  for (const core::GemmOp& op : b.report.job.plan.ops)
    for (Recipe r : recipes) b.Done(op, r, Mode::kAutocast);
  b.Finish(core::JobState::kSucceeded);
  return b.report;
}

core::Report HostReferenceReport() {
  core::Report r = FailedItemReport();
  r.job.device.backend = "host-reference";
  r.job.device.name = "host CPU";
  r.job.device.sm = 0;
  return r;
}

core::Report FastAccumVariantReport() {
  core::Report report = HopperReport();
  report.job.spec.recipes = {core::Recipe::kFp8Current};
  report.job.spec.variants = {*core::ParseRecipeVariant("fp8-current+fast-accum:all")};
  const size_t n = report.items.size();
  int32_t seq = 0;
  for (const core::ItemRecord& r : report.items) seq = std::max(seq, r.item.seq + 1);
  for (size_t i = 0; i < n; ++i) {
    const core::ItemRecord& r = report.items[i];
    if (r.item.recipe != core::Recipe::kFp8Current || r.item.op.pass == core::Pass::kFprop)
      continue;
    core::ItemRecord own = r;
    own.item.fast_accum = core::FastAccum::kOn;
    own.item.seq = seq++;
    own.item.id += 100000;
    if (own.result) own.result->time.median_ms *= 0.5;
    report.items.push_back(own);
  }
  return report;
}

core::Measurement& AddKernelFigures(core::Report& report) {
  core::ItemRecord* measured = nullptr;
  for (auto& item : report.items) {
    if (item.result && !measured) measured = &item;
  }
  core::Measurement& m = *measured->result;
  m.kernel = core::SampleStats::FromSamples(
      {0.98 * m.time.median_ms, 0.99 * m.time.median_ms, 0.97 * m.time.median_ms});
  m.kernel_samples = 3;
  m.kernel_quant_ms = 0.05;
  m.kernel_names = "nvjet_sm90_gemm x1; RowwiseQuantize<128> x2";
  return m;
}

}  // namespace gemmprof::report::testing
