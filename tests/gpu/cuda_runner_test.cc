// The CUDA runner end to end on the device: Info/Supports, every Hopper recipe x pass x
// mode on a small and an odd-but-aligned shape (verification must pass), the errors a
// user can cause, autotuning, determinism and the warm-up; and the iteration timer on
// many-node graphs. Fails without a GPU.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/runner/cuda_runner_factory.h"
#include "kernels/timing/iteration_timer.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;

class CudaRunnerTest : public testing::RunnerSuite {
 protected:
  static core::WorkItem Item(int64_t m, int64_t k, int64_t n, Pass pass, Recipe recipe, Mode mode) {
    core::WorkItem w;
    w.id = 7;
    w.op.name = "test";
    w.op.pass = pass;
    w.op.shape = {m, k, n};
    w.recipe = recipe;
    w.mode = mode;
    return w;
  }
};

TEST_F(CudaRunnerTest, InfoDescribesTheDevice) {
  const core::DeviceInfo& info = runner_->Info();
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_FALSE(info.name.empty());
  EXPECT_THAT(info.uuid, ::testing::StartsWith("GPU-"));
  EXPECT_GE(info.sm, 90);
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.memory_bytes, int64_t{1} << 30);
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_FALSE(info.cuda_version.empty());
  EXPECT_THAT(info.cublaslt_version, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  EXPECT_FALSE(info.gemmprof_version.empty());
  ASSERT_EQ(info.recipes.size(), core::AllRecipes().size());
  for (const core::RecipeSupport& s : info.recipes) {
    EXPECT_EQ(s.supported, runner_->Supports(s.recipe).supported);
    if (!s.supported) EXPECT_FALSE(s.reason.empty());
  }
  std::printf("device: %s sm_%d, %d SMs, driver %s, CUDA %s, cuBLASLt %s\n", info.name.c_str(),
              info.sm, info.sm_count, info.driver_version.c_str(), info.cuda_version.c_str(),
              info.cublaslt_version.c_str());
}

TEST_F(CudaRunnerTest, HopperRecipesSupportedAndMicroscaledNeedBlackwell) {
  for (Recipe r : {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed, Recipe::kFp8Block}) {
    EXPECT_TRUE(runner_->Supports(r).supported) << core::ToString(r);
  }
  // The serving recipes run CUTLASS kernels built for sm_90a only (cuda_serving_test.cc).
  for (Recipe r : {Recipe::kInt8Rowwise, Recipe::kW8a16, Recipe::kW4a16}) {
    const core::RecipeSupport s = runner_->Supports(r);
    EXPECT_EQ(s.supported, runner_->Info().sm == 90) << core::ToString(r) << ": " << s.reason;
    if (!s.supported) EXPECT_THAT(s.reason, ::testing::HasSubstr("sm_90a only"));
  }
  if (runner_->Info().sm >= 100) {
    EXPECT_TRUE(runner_->Supports(Recipe::kMxfp8).supported);
    EXPECT_TRUE(runner_->Supports(Recipe::kNvfp4).supported);
    return;
  }
  ASSERT_EQ(runner_->Info().sm, 90);
  EXPECT_FALSE(runner_->Supports(Recipe::kMxfp8).supported);
  EXPECT_EQ(runner_->Supports(Recipe::kMxfp8).reason, "mxfp8 needs sm_100+, this is sm_90");
  EXPECT_FALSE(runner_->Supports(Recipe::kNvfp4).supported);
  EXPECT_EQ(runner_->Supports(Recipe::kNvfp4).reason, "nvfp4 needs sm_100+, this is sm_90");
  auto m = device::MeasureOne(
      *runner_, Item(256, 256, 256, Pass::kFprop, Recipe::kMxfp8, Mode::kAutocast), FastTiming());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("needs sm_100+"));
}

TEST_F(CudaRunnerTest, OutOfMemoryShapeIsResourceExhausted) {
  const core::WorkItem big =
      Item(200000, 200000, 200000, Pass::kFprop, Recipe::kBf16, Mode::kAutocast);
  absl::Status st = device::CanImplementOne(*runner_, big, FastTiming());
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("shape 200000x200000x200000 (fprop, bf16) needs"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("GiB free"));
  auto m = device::MeasureOne(*runner_, big, FastTiming());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kResourceExhausted);
  // The runner is still usable afterwards.
  auto ok = device::MeasureOne(
      *runner_, Item(128, 128, 128, Pass::kFprop, Recipe::kBf16, Mode::kAutocast), FastTiming());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->verification, core::Verification::kPassed);
}

TEST_F(CudaRunnerTest, Fp8MisalignedDimsAreFailedPrecondition) {
  absl::Status k = device::CanImplementOne(
      *runner_, Item(128, 100, 128, Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast),
      FastTiming());
  EXPECT_EQ(k.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(k.message()), HasSubstr("K=100"));
  absl::Status n = device::CanImplementOne(
      *runner_, Item(128, 128, 120, Pass::kDgrad, Recipe::kFp8Block, Mode::kPrequant),
      FastTiming());
  EXPECT_EQ(n.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(n.message()), HasSubstr("N=120"));
  // BF16 has no such rule.
  EXPECT_TRUE(
      device::CanImplementOne(
          *runner_, Item(128, 100, 120, Pass::kFprop, Recipe::kBf16, Mode::kAutocast), FastTiming())
          .ok());
}

TEST_F(CudaRunnerTest, AutotuneRecordsTheAlgorithm) {
  core::TimingOptions t = FastTiming();
  t.autotune_k = 4;
  auto m = device::MeasureOne(
      *runner_, Item(1024, 1024, 1024, Pass::kFprop, Recipe::kBf16, Mode::kAutocast), t);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->algorithm, HasSubstr("algo="));
  EXPECT_THAT(m->algorithm, HasSubstr("tile="));
  EXPECT_THAT(m->algorithm, ::testing::AnyOf(HasSubstr("autotuned"), HasSubstr("of 1,")));
  std::printf("autotune_k=4: %s\n", m->algorithm.c_str());
}

// A variant's item with its own fast accumulation runs it whatever the job's option, and
// the measurement says what ran (the job's default: fprop fast, dgrad and wgrad split).
TEST_F(CudaRunnerTest, AnItemsOwnFastAccumulationOverridesTheJobs) {
  struct Case {
    Pass pass;
    Recipe recipe;
    core::FastAccum own;
    bool fast;
  };
  const Case cases[] = {
      {Pass::kDgrad, Recipe::kFp8Current, core::FastAccum::kDefault, false},
      {Pass::kDgrad, Recipe::kFp8Current, core::FastAccum::kOn, true},
      {Pass::kFprop, Recipe::kFp8Delayed, core::FastAccum::kOff, false},
      {Pass::kWgrad, Recipe::kFp8Rowwise, core::FastAccum::kOn, true},
      {Pass::kFprop, Recipe::kFp8Rowwise, core::FastAccum::kDefault, true},
  };
  for (const Case& c : cases) {
    core::WorkItem w = Item(512, 384, 256, c.pass, c.recipe, Mode::kPrequant);
    w.fast_accum = c.own;
    auto m = device::MeasureOne(*runner_, w, FastTiming());
    ASSERT_TRUE(m.ok()) << core::DescribeItem(w) << ": " << m.status();
    EXPECT_EQ(m->fast_accum, c.fast) << core::DescribeItem(w);
    EXPECT_EQ(m->verification, core::Verification::kPassed) << core::DescribeItem(w);
    EXPECT_THAT(m->work_key, HasSubstr(c.fast ? "accum=fast" : "accum=split"))
        << core::DescribeItem(w);
  }
}

TEST_F(CudaRunnerTest, SameSeedGivesTheSameOutputError) {
  const core::WorkItem w = Item(512, 384, 256, Pass::kDgrad, Recipe::kFp8Current, Mode::kAutocast);
  auto a = device::MeasureOne(*runner_, w, FastTiming());
  auto b = device::MeasureOne(*runner_, w, FastTiming());
  ASSERT_TRUE(a.ok() && b.ok());
  // The error sums are reduced with atomics, so only the last bits may differ; other
  // inputs move the error by far more than this.
  EXPECT_NEAR(a->rel_error, b->rel_error, 1e-9 * a->rel_error);
  core::TimingOptions other = FastTiming();
  other.seed = 99;
  auto c = device::MeasureOne(*runner_, w, other);
  ASSERT_TRUE(c.ok());
  EXPECT_GT(std::abs(a->rel_error - c->rel_error), 1e-6 * a->rel_error);
}

TEST_F(CudaRunnerTest, WarmUpTakesTheRequestedTime) {
  core::TimingOptions t = FastTiming();
  t.gpu_warmup_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(runner_->BeginJob(t).ok());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(s, 0.3);
  EXPECT_LT(s, 5.0);
}

TEST_F(CudaRunnerTest, ColdL2AndTelemetry) {
  core::TimingOptions t = FastTiming();
  t.l2 = core::L2Policy::kCold;
  auto m = device::MeasureOne(
      *runner_, Item(2048, 2048, 2048, Pass::kWgrad, Recipe::kFp8Block, Mode::kPrequant), t);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->verification, core::Verification::kPassed) << m->rel_error;
  EXPECT_GT(m->telemetry.telemetry_samples, 0) << m->notes;
  EXPECT_GT(m->telemetry.sm_clock_mhz_max, 0);
  std::printf(
      "cold L2 fp8-block wgrad 2048^3: median %.4f ms, SM %.0f-%.0f MHz, %.0f W, notes: %s\n",
      m->time.median_ms, m->telemetry.sm_clock_mhz_min, m->telemetry.sm_clock_mhz_max,
      m->telemetry.power_w_avg, m->notes.c_str());
}

// The clean policy flushes by reading: a decode-size GEMM whose weight (32 MiB) fits the L2
// reads it from memory, as under cold, and much slower than hot, which reads it from the L2.
// (The margins are wide: this checks that the flush evicts, not how fast anything is.)
TEST_F(CudaRunnerTest, CleanL2ReadsTheOperandsFromMemory) {
  const core::WorkItem item = Item(16, 4096, 4096, Pass::kFprop, Recipe::kBf16, Mode::kPrequant);
  double ms[3] = {};
  std::string clean_notes;
  const core::L2Policy policies[3] = {core::L2Policy::kHot, core::L2Policy::kCold,
                                      core::L2Policy::kClean};
  for (int i = 0; i < 3; ++i) {
    core::TimingOptions t = FastTiming();
    t.l2 = policies[i];
    auto m = device::MeasureOne(*runner_, item, t);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->verification, core::Verification::kPassed);
    ms[i] = m->time.median_ms;
    if (policies[i] == core::L2Policy::kClean) clean_notes = m->notes;
  }
  std::printf("bf16 16x4096x4096: hot %.4f ms, cold %.4f ms, clean %.4f ms\n", ms[0], ms[1], ms[2]);
  EXPECT_GT(ms[2], 1.2 * ms[0]) << "the read did not evict the weight";
  EXPECT_LT(ms[2], 1.1 * ms[1]) << "clean should not pay more than cold's write-back";
  EXPECT_THAT(clean_notes, HasSubstr("one L2 flush per launch"));
}

// Every Hopper recipe x pass x mode/accounting x {small, odd-but-aligned} shape.
using Case = std::tuple<Recipe, Pass, int /*0 prequant, 1 training-step, 2 per-gemm*/, int>;

class RecipeMatrixTest : public CudaRunnerTest, public ::testing::WithParamInterface<Case> {};

TEST_P(RecipeMatrixTest, RunsAndPassesVerification) {
  const auto [recipe, pass, mode_index, shape_index] = GetParam();
  const core::GemmShape shape =
      shape_index == 0 ? core::GemmShape{256, 256, 256} : core::GemmShape{264, 384, 144};
  core::TimingOptions t = FastTiming();
  t.accounting = mode_index == 2 ? core::Accounting::kPerGemm : core::Accounting::kTrainingStep;
  t.amax_history_len = 16;
  const Mode mode = mode_index == 0 ? Mode::kPrequant : Mode::kAutocast;
  auto m = device::MeasureOne(*runner_, Item(shape.m, shape.k, shape.n, pass, recipe, mode), t);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->verification, core::Verification::kPassed)
      << "rel_error " << m->rel_error << " threshold " << m->error_threshold << " " << m->notes;
  EXPECT_EQ(m->time.count, t.timed_iters);
  EXPECT_GT(m->time.median_ms, 0);
  EXPECT_GT(m->flops, 0);
  EXPECT_FALSE(m->algorithm.empty());
  const bool quantizes_in_timing = mode == Mode::kAutocast && recipe != Recipe::kBf16 &&
                                   !(pass == Pass::kWgrad && mode_index == 1);
  if (quantizes_in_timing) {
    EXPECT_GT(m->quant_ms, 0);
  } else {
    EXPECT_EQ(m->quant_ms, 0);
  }
  std::printf(
      "%-11s %-5s %-13s %-11s rel_error %.3e (threshold %.0e) median %.4f ms quant %.4f ms\n",
      std::string(core::ToString(recipe)).c_str(), std::string(core::ToString(pass)).c_str(),
      mode_index == 0 ? "prequant" : (mode_index == 1 ? "training-step" : "per-gemm"),
      shape.ToString().c_str(), m->rel_error, m->error_threshold, m->time.median_ms, m->quant_ms);
}

INSTANTIATE_TEST_SUITE_P(
    Hopper, RecipeMatrixTest,
    ::testing::Combine(::testing::Values(Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                         Recipe::kFp8Block),
                       ::testing::Values(Pass::kFprop, Pass::kDgrad, Pass::kWgrad),
                       ::testing::Values(0, 1, 2), ::testing::Values(0, 1)));

}  // namespace
}  // namespace gemmprof::kernels

namespace gemmprof::kernels {
namespace {

// The timer on a graph of many small nodes (like a grouped fp8-block item): every sample
// comes back, no blocking kernel times out (the batch is sized to the launch queue), and
// the before-samples hook runs once, after the warm-up.
TEST(IterationTimerTest, ManyNodeGraphsTimeEverySampleWithoutTimeouts) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  auto stream = CudaStream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto timer = IterationTimer::Create();
  ASSERT_TRUE(timer.ok()) << timer.status();
  auto buffer = DeviceBuffer::Create(4096);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  constexpr int kNodes = 300;
  auto iteration = [&](cudaStream_t s) -> absl::Status {
    for (int i = 0; i < kNodes; ++i) {
      CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buffer->get(), i & 0xFF, 4096, s));
    }
    return absl::OkStatus();
  };
  int hooks = 0;
  TimerOptions options;
  options.warmup_iters = 5;
  options.timed_iters = 100;
  options.before_samples = [&hooks] { ++hooks; };
  auto result = timer->Time(stream->get(), iteration, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->samples_ms.size(), 100u);
  EXPECT_EQ(result->notes, "");
  EXPECT_EQ(hooks, 1);
  for (double ms : result->samples_ms) EXPECT_GT(ms, 0);
}

}  // namespace
}  // namespace gemmprof::kernels
