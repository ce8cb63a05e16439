// Kernel-only timing (`--timing kernels`, CUPTI) and Nsight mode (`--profile`) through
// CudaRunner::MeasureGroup: kernel figures beside the events figure, the quantization's
// kernels apart, kernel names, nothing without the backend, and the profiled launch.
// Fails without a GPU.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/timing/cupti_tracer.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;

class KernelTimingTest : public testing::RunnerSuite {
 protected:
  void SetUp() override {
    RunnerSuite::SetUp();
    ASSERT_TRUE(runner_->BeginJob(Timing(1, core::TimingBackend::kEvents)).ok());
  }
  static core::TimingOptions Timing(int rounds, core::TimingBackend backend) {
    core::TimingOptions t;
    t.warmup_iters = 3;
    t.timed_iters = rounds;
    t.gpu_warmup_s = 0;
    t.timing_backend = backend;
    return t;
  }
  static core::WorkItem Item(int seq, Recipe recipe, Mode mode, int64_t m, int64_t k, int64_t n) {
    core::WorkItem w;
    w.id = 200 + seq;
    w.seq = seq;
    w.op.name = "test";
    w.op.pass = Pass::kFprop;
    w.op.shape = {m, k, n};
    w.recipe = recipe;
    w.mode = mode;
    return w;
  }
  static core::GroupResult Measure(std::vector<core::WorkItem> items, core::TimingOptions t,
                                   bool profile = false) {
    core::GroupRequest r;
    r.group_uid = "test/kernels";
    r.items = std::move(items);
    r.timing = t;
    r.profile = profile;
    auto result = runner_->MeasureGroup(r);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : core::GroupResult{};
  }
};

TEST_F(KernelTimingTest, KernelFiguresSitBesideEventsWithTheQuantizationApart) {
  const core::GroupResult g =
      Measure({Item(1, Recipe::kBf16, Mode::kPrequant, 4096, 4096, 4096),
               Item(2, Recipe::kFp8Current, Mode::kAutocast, 4096, 4096, 4096)},
              Timing(20, core::TimingBackend::kKernels));
  ASSERT_EQ(g.outcomes.size(), 2u);
  for (const auto& o : g.outcomes) {
    ASSERT_TRUE(o.status.ok()) << o.status;
    ASSERT_TRUE(o.measurement.has_value());
    const core::Measurement& m = *o.measurement;
    EXPECT_GE(m.kernel_samples, 10) << m.notes;
    EXPECT_GT(m.kernel.median_ms, 0);
    // One large GEMM per launch: its kernels fill the launch, so the two agree closely.
    EXPECT_LT(m.kernel.median_ms, 1.05 * m.time.median_ms) << m.kernel_names;
    EXPECT_GT(m.kernel.median_ms, 0.8 * m.time.median_ms) << m.kernel_names;
    EXPECT_FALSE(m.kernel_names.empty());
  }
  const core::Measurement& bf16 = *g.outcomes[0].measurement;
  const core::Measurement& fp8 = *g.outcomes[1].measurement;
  EXPECT_EQ(bf16.kernel_quant_ms, 0) << "prequant times no quantization";
  EXPECT_GT(fp8.kernel_quant_ms, 0) << fp8.kernel_names;
  EXPECT_LT(fp8.kernel_quant_ms, fp8.kernel.median_ms);
  // GEMM first, then the quantization kernels, each with its count.
  EXPECT_THAT(fp8.kernel_names, HasSubstr(" x1"));
  EXPECT_THAT(fp8.kernel_names, HasSubstr("; "));
}

TEST_F(KernelTimingTest, SmallGemmsLeaveTheLaunchGapOut) {
  const core::GroupResult g = Measure({Item(1, Recipe::kBf16, Mode::kPrequant, 16, 4096, 4096)},
                                      Timing(50, core::TimingBackend::kKernels));
  ASSERT_EQ(g.outcomes.size(), 1u);
  ASSERT_TRUE(g.outcomes[0].measurement.has_value()) << g.outcomes[0].status;
  const core::Measurement& m = *g.outcomes[0].measurement;
  ASSERT_GT(m.kernel_samples, 0) << m.notes;
  EXPECT_LE(m.kernel.median_ms, m.time.median_ms) << m.kernel_names;
}

TEST_F(KernelTimingTest, EventsAloneTakeNoKernelFigures) {
  const core::GroupResult g = Measure({Item(1, Recipe::kBf16, Mode::kPrequant, 512, 512, 512)},
                                      Timing(5, core::TimingBackend::kEvents));
  ASSERT_TRUE(g.outcomes[0].measurement.has_value()) << g.outcomes[0].status;
  EXPECT_EQ(g.outcomes[0].measurement->kernel_samples, 0);
  EXPECT_TRUE(g.outcomes[0].measurement->kernel_names.empty());
  EXPECT_FALSE(g.outcomes[0].measurement->profiled);
}

TEST_F(KernelTimingTest, ProfileModeRunsOneMoreLaunchAndSaysSo) {
  const core::GroupResult g =
      Measure({Item(1, Recipe::kFp8Current, Mode::kAutocast, 1024, 1024, 1024)},
              Timing(5, core::TimingBackend::kEvents), /*profile=*/true);
  ASSERT_TRUE(g.outcomes[0].measurement.has_value()) << g.outcomes[0].status;
  const core::Measurement& m = *g.outcomes[0].measurement;
  EXPECT_TRUE(m.profiled);
  EXPECT_THAT(m.notes, HasSubstr("NVTX range \"fprop test 1024x1024x1024 fp8-current autocast\""));
}

// What a node without a usable CUPTI is told (the reason `kernels` items are
// not_supported with), and that this node's CUPTI serves.
TEST(CuptiTracerTest, AMissingOrWrongLibraryIsRefusedWithTheReason) {
  EXPECT_TRUE(CuptiTracer::CheckLoadable("libcupti.so.13").ok());
  const absl::Status missing = CuptiTracer::CheckLoadable("/nonexistent/libcupti.so.13");
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("kernel-only timing needs CUPTI (libcupti.so.13"));
  EXPECT_THAT(std::string(missing.message()), HasSubstr("/nonexistent/libcupti.so.13"));
  // A library that is not CUPTI (the CUDA runtime is on every node's library path).
  const absl::Status wrong = CuptiTracer::CheckLoadable("libcudart.so.13");
  EXPECT_EQ(wrong.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(wrong.message()), HasSubstr("lacks the activity API entry points"));
}

TEST(ShortKernelNameTest, DemangledWithoutNamespacesOrParameters) {
  EXPECT_EQ(ShortKernelName("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopB_TNT"),
            "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopB_TNT");
  // void gemmprof::kernels::(anonymous namespace)::Amax<256>(float const*, int)
  EXPECT_EQ(ShortKernelName("_ZN8gemmprof7kernels12_GLOBAL__N_14AmaxILi256EEEvPKfi"), "Amax<256>");
  EXPECT_EQ(ShortKernelName(nullptr), "?");
  EXPECT_LE(ShortKernelName(std::string(200, 'k').c_str()).size(), 80u);
}

}  // namespace
}  // namespace gemmprof::kernels
