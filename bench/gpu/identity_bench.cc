// gemmprof_gpu_bench --identity: is sharing identical work justified? Each of the seed
// layer's 12 GEMMs is measured as one group of bf16, fp8-current, fp8-delayed and
// fp8-block in both modes with sharing turned off, in noise-aware interleaved rounds, and
// every pair of items with equal work keys is compared by its paired ratio (per-round
// values from the same rounds). Identical work must agree within 2%.
#include <cstdio>
#include <memory>

#include "bench/gpu/gpu_bench.h"
#include "core/stats.h"
#include "kernels/runner/cuda_runner_factory.h"
#include "kernels/runner/recipe_rules.h"

namespace gemmprof::bench {

absl::StatusOr<bool> RunIdentityCheck(const BenchOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<device::Runner> runner, kernels::MakeCudaRunner(0));
  const core::DeviceInfo& info = runner->Info();
  std::printf("device: %s (sm_%d), driver %s, CUDA %s, cuBLASLt %s\n", info.name.c_str(), info.sm,
              info.driver_version.c_str(), info.cuda_version.c_str(),
              info.cublaslt_version.c_str());
  const int64_t div = options.quick ? 4 : 1;
  const std::vector<core::GemmOp> ops = SeedLayerOps(4096 / div, 16384 / div, 31 * 512 / div);
  core::TimingOptions timing;
  timing.timed_iters = 0;  // noise-aware, the default a user gets
  timing.gpu_warmup_s = options.gpu_warmup_s;
  RETURN_IF_ERROR(runner->BeginJob(timing));
  bool all_ok = true;
  int64_t next_id = 1;
  std::printf("%-5s %-8s %-42s %8s %18s %7s\n", "pass", "op", "identical pair (unshared)", "ratio",
              "95% interval", "rounds");
  for (const core::GemmOp& op : ops) {
    core::GroupRequest req;
    req.group_uid = "identity/" + op.name;
    req.timing = timing;
    req.share_identical_work = false;
    for (core::Recipe r : {core::Recipe::kBf16, core::Recipe::kFp8Current,
                           core::Recipe::kFp8Delayed, core::Recipe::kFp8Block}) {
      for (core::Mode m : {core::Mode::kAutocast, core::Mode::kPrequant}) {
        core::WorkItem w;
        w.id = next_id;
        w.seq = static_cast<int32_t>(next_id++);
        w.op = op;
        w.recipe = r;
        w.mode = m;
        req.items.push_back(w);
      }
    }
    ASSIGN_OR_RETURN(core::GroupResult res, runner->MeasureGroup(req));
    for (size_t i = 0; i < req.items.size(); ++i) {
      for (size_t j = i + 1; j < req.items.size(); ++j) {
        if (kernels::WorkKey(req.items[i], timing) != kernels::WorkKey(req.items[j], timing)) {
          continue;
        }
        const auto& a = res.outcomes[i].measurement;
        const auto& b = res.outcomes[j].measurement;
        if (!a.has_value() || !b.has_value()) {
          std::printf("%s: an item of an identical pair was not measured\n", op.name.c_str());
          all_ok = false;
          continue;
        }
        const core::stats::Interval ratio = core::stats::PairedRatio(b->round_ms, a->round_ms);
        const bool ok = ratio.center >= 0.98 && ratio.center <= 1.02;
        all_ok &= ok;
        const std::string pair = std::string(core::ToString(req.items[j].recipe)) + " " +
                                 std::string(core::ToString(req.items[j].mode)) + " / " +
                                 std::string(core::ToString(req.items[i].recipe)) + " " +
                                 std::string(core::ToString(req.items[i].mode));
        std::printf("%-5s %-8s %-42s %8.4f   [%.4f-%.4f] %7d%s\n",
                    std::string(core::ToString(op.pass)).c_str(), op.name.c_str(), pair.c_str(),
                    ratio.center, ratio.low, ratio.high, a->isolated.rounds, ok ? "" : "  FAIL");
      }
    }
  }
  std::printf("identical work within 2%% when measured separately: %s\n", all_ok ? "PASS" : "FAIL");
  return all_ok;
}

}  // namespace gemmprof::bench
