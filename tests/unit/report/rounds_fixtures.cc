#include "tests/unit/report/rounds_fixtures.h"

#include <random>
#include <string>

#include "core/stats.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::report::testing {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;

constexpr int64_t kCreatedMs = 1795000000000;

// Nominal ms of a GEMM at a recipe's rate; autocast adds quantization.
double NominalMs(const core::GemmOp& op, Recipe r, Mode mode) {
  const double tflops = r == Recipe::kBf16         ? 600
                        : r == Recipe::kFp8Current ? 900
                        : r == Recipe::kFp8Delayed ? 910
                                                   : 800;
  double ms = op.Flops() / (tflops * 1e9);
  if (r != Recipe::kBf16 && mode == Mode::kAutocast) ms += 0.15;
  return ms;
}

}  // namespace

void SetEnergy(core::Measurement& m, double joules, double half) {
  core::Energy& e = m.energy;
  e.joules = joules;
  e.joules_low = joules * (1 - half);
  e.joules_high = joules * (1 + half);
  e.period_joules.assign(12, joules);
  e.n_eff = 12;
  e.power_w = 600;
  e.window_s = 1.2;
  e.counter_updates = 12;
}

core::Report RoundsReport(const RoundsOptions& o) {
  core::Report report;
  core::JobRecord& job = report.job;
  job.id = 21;
  job.plan = SmallModelPlan(/*with_lm_head=*/false);
  job.spec.label = "rounds";
  job.spec.timing.timed_iters = 0;
  job.spec.timing.precision_target = 0.01;
  job.spec.timing.item_budget_s = 2.0;
  job.device.backend = "cuda";
  job.device.name = "NVIDIA H100 80GB HBM3";
  job.device.sm = 90;
  job.device.sm_count = 132;
  job.device.memory_bytes = int64_t{80} * 1024 * 1024 * 1024;
  job.device.driver_version = "580.65.06";
  job.device.cuda_version = "13.0";
  job.device.cublaslt_version = "13.1.0";
  job.device.gemmprof_version = "0.2.0";
  const std::vector<Recipe> recipes = {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                       Recipe::kFp8Block};
  job.spec.recipes = recipes;
  job.spec.modes = {Mode::kAutocast, Mode::kPrequant};
  std::mt19937 rng(o.seed);
  std::normal_distribution<double> normal(0, 1);
  int32_t seq = 0;
  for (size_t g = 0; g < job.plan.ops.size(); ++g) {
    const core::GemmOp& op = job.plan.ops[g];
    std::vector<double> drift(static_cast<size_t>(o.rounds));
    for (double& d : drift) d = 1 + o.drift * normal(rng);
    int64_t current_prequant_id = 0;
    size_t current_prequant = 0;  // index in report.items (+1; 0 = none yet)
    for (Mode mode : {Mode::kAutocast, Mode::kPrequant})
      for (Recipe r : recipes) {
        core::ItemRecord item;
        item.item = {seq + 1, job.id, seq + 1, op, r, mode};
        ++seq;
        item.status = core::ItemStatus::kDone;
        item.measured_ms = kCreatedMs + 60000 + seq * 1000;
        core::Measurement m;
        const double effect = o.effect.count(r) ? o.effect.at(r) : 0;
        const double ms = NominalMs(op, r, mode) * (1 + effect);
        const bool shared = o.share_prequant && mode == Mode::kPrequant &&
                            r == Recipe::kFp8Delayed && current_prequant > 0;
        if (shared) {
          m = *report.items[current_prequant - 1].result;
          m.shared_with_item = current_prequant_id;
        } else {
          for (int32_t k = 0; k < o.rounds; ++k) {
            const double d = drift[static_cast<size_t>(k)];
            m.round_ms.push_back(ms * d * (1 + o.noise * normal(rng)));
            if (o.b2b) m.b2b_round_ms.push_back(0.93 * ms * d * (1 + o.noise * normal(rng)));
            if (r != Recipe::kBf16 && mode == Mode::kAutocast)
              m.quant_round_ms.push_back(0.15 * d * (1 + o.noise * normal(rng)));
          }
          m.isolated = core::stats::EstimateOf(m.round_ms);
          m.b2b = core::stats::EstimateOf(m.b2b_round_ms);
          m.quant = core::stats::EstimateOf(m.quant_round_ms);
          m.b2b_count = o.b2b ? 8 : 0;
          m.work_key = op.shape.ToString() + "/" + std::string(core::ToString(r)) + "/" +
                       std::string(core::ToString(mode));
          m.stop_reason =
              "precision " + core::stats::PlusMinusPercent(m.isolated.RelHalfWidth()) + " reached";
        }
        m.time.count = o.rounds;
        m.time.median_ms = m.isolated.center_ms;
        m.time.mean_ms = m.isolated.center_ms;
        m.time.p20_ms = m.time.min_ms = m.isolated.center_ms * 0.995;
        m.time.p80_ms = m.time.max_ms = m.isolated.center_ms * 1.005;
        m.flops = op.Flops();
        m.algorithm = "cublasLt algo 66";
        m.verification = core::Verification::kPassed;
        m.group_uid = o.paired ? "g" + std::to_string(g) : "i" + std::to_string(seq);
        m.group_members = 7;
        if (r != Recipe::kBf16 && mode == Mode::kAutocast)
          m.quant_bytes =
              3.0 * static_cast<double>(op.shape.m * op.shape.k + op.shape.k * op.shape.n);
        m.copy_bytes_per_s = 3.0e12;
        item.result = m;
        report.items.push_back(item);
        if (mode == Mode::kPrequant && r == Recipe::kFp8Current) {
          current_prequant = report.items.size();
          current_prequant_id = item.item.id;
        }
      }
  }
  job.state = core::JobState::kSucceeded;
  job.total_items = job.finished_items = static_cast<int32_t>(report.items.size());
  job.created_ms = kCreatedMs;
  job.started_ms = kCreatedMs + 2000;
  job.finished_ms = kCreatedMs + 2000 + 300000;
  return report;
}

}  // namespace gemmprof::report::testing
