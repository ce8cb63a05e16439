// HostRunner: device info, CanImplement refusals, every recipe x pass x mode end to end.
#include "device/host/host_runner.h"

#include <cctype>
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gemmprof::device {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;
using ::testing::StartsWith;

core::WorkItem Item(core::GemmShape shape, Recipe recipe, Pass pass = Pass::kFprop,
                    Mode mode = Mode::kAutocast, int64_t groups = 1) {
  core::WorkItem item;
  item.op.shape = shape;
  item.op.pass = pass;
  item.op.groups = groups;
  item.recipe = recipe;
  item.mode = mode;
  return item;
}

core::TimingOptions FewIters() {
  core::TimingOptions t;
  t.warmup_iters = 1;
  t.timed_iters = 3;
  return t;
}

TEST(HostRunner, InfoDescribesTheCpuAndEveryRecipe) {
  const HostRunner runner;
  const core::DeviceInfo& info = runner.Info();
  EXPECT_EQ(info.backend, "host-reference");
  EXPECT_THAT(info.name, StartsWith("host-reference (CPU: "));
  EXPECT_EQ(info.name.back(), ')');
  EXPECT_EQ(info.sm, 0);
  EXPECT_GT(info.memory_bytes, 0);
  EXPECT_EQ(info.gemmprof_version, GEMMPROF_VERSION);
  ASSERT_EQ(info.recipes.size(), core::AllRecipes().size());
  for (const core::RecipeSupport& s : info.recipes) {
    EXPECT_TRUE(s.supported) << core::ToString(s.recipe);
    EXPECT_TRUE(runner.Supports(s.recipe).supported);
  }
  EXPECT_TRUE(HostRunner().BeginJob(FewIters()).ok());
}

TEST(CpuModelFromCpuinfo, FirstNonEmptyModelNameOrUnknown) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 9654  \nflags: x\n"
                                "model name\t: other\n"),
            "AMD EPYC 9654");
  EXPECT_EQ(CpuModelFromCpuinfo(""), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo("processor: 0\nCPU part: 0xd4f\n"), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo("model name without a colon\n"), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo("model name\t:   \n"), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo("model name\t:\nmodel name: Second"), "Second");
}

struct Refusal {
  core::GemmShape shape;
  int64_t groups;
  std::string message;
};

TEST(HostRunner, CanImplementRefusesWithExactMessages) {
  const HostRunner runner;
  const Refusal cases[] = {
      {{0, 64, 64}, 1, "shape 0x64x64: m = 0; must be >= 1"},
      {{64, -3, 64}, 1, "shape 64x-3x64: k = -3; must be >= 1"},
      {{64, 64, 0}, 1, "shape 64x64x0: n = 0; must be >= 1"},
      {{64, 64, 64}, 0, "shape 64x64x64: groups = 0; must be >= 1"},
      {{1024, 1024, 1024},
       1,
       "shape 1024x1024x1024 (groups 1): M*K*N*groups = 1073741824 exceeds the host "
       "reference limit kMaxHostMacs = 268435456"},
      {{512, 512, 512},
       3,
       "shape 512x512x512 (groups 3): M*K*N*groups = 402653184 exceeds the host reference "
       "limit kMaxHostMacs = 268435456"},
      {{1, 16777217, 1},
       1,
       "shape 1x16777217x1 (groups 1): operand A has 16777217 elements, above the host "
       "reference limit kMaxHostElements = 16777216"},
      {{8192, 1, 4096},
       1,
       "shape 8192x1x4096 (groups 1): operand C has 33554432 elements, above the host "
       "reference limit kMaxHostElements = 16777216"},
  };
  for (const Refusal& c : cases) {
    const absl::Status s = device::CanImplementOne(
        runner, Item(c.shape, Recipe::kBf16, Pass::kFprop, Mode::kAutocast, c.groups), FewIters());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
  // The limits themselves are accepted.
  EXPECT_TRUE(
      device::CanImplementOne(runner, Item({512, 512, 1024}, Recipe::kNvfp4), FewIters()).ok());
  EXPECT_TRUE(
      device::CanImplementOne(runner, Item({1, 16777216, 1}, Recipe::kBf16), FewIters()).ok());
}

TEST(HostRunner, CanImplementRefusesBadTimingOptions) {
  const HostRunner runner;
  const core::WorkItem item = Item({8, 8, 8}, Recipe::kFp8Delayed);
  core::TimingOptions t = FewIters();
  t.timed_iters = -1;
  EXPECT_EQ(device::CanImplementOne(runner, item, t).message(),
            "timed_iters: -1 must be >= 0 (0 = noise-aware)");
  t.timed_iters = 0;
  EXPECT_TRUE(device::CanImplementOne(runner, item, t).ok())
      << "noise-aware: the host runs fixed rounds";
  t = FewIters();
  t.warmup_iters = -1;
  EXPECT_EQ(device::CanImplementOne(runner, item, t).message(), "warmup_iters: -1 must be >= 0");
  t = FewIters();
  t.amax_history_len = 0;
  EXPECT_EQ(device::CanImplementOne(runner, item, t).message(),
            "amax_history_len: 0 must be >= 1 for fp8-delayed");
  EXPECT_TRUE(device::CanImplementOne(runner, Item({8, 8, 8}, Recipe::kFp8Current), t).ok());
}

TEST(HostRunner, RunReturnsTheRefusal) {
  HostRunner runner;
  const auto m = device::MeasureOne(runner, Item({2048, 2048, 2048}, Recipe::kBf16), FewIters());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("kMaxHostMacs"));
}

class EveryRecipe : public ::testing::TestWithParam<std::tuple<Recipe, Pass, Mode>> {};

TEST_P(EveryRecipe, PassesVerificationOnAnOddShape) {
  const auto [recipe, pass, mode] = GetParam();
  HostRunner runner;
  const core::WorkItem item = Item({37, 131, 45}, recipe, pass, mode);
  const auto m = device::MeasureOne(runner, item, FewIters());
  if (const std::string reason = core::PassUnsupportedReason(recipe, pass); !reason.empty()) {
    // A serving recipe's dgrad or wgrad: refused, never measured.
    EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(m.status().message(), reason);
    return;
  }
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->verification, core::Verification::kPassed) << m->rel_error;
  EXPECT_EQ(m->error_threshold, ErrorThreshold(recipe));
  EXPECT_GT(m->rel_error, recipe == Recipe::kBf16 ? 0.0 : 1e-3);  // quantization is visible
  EXPECT_EQ(m->flops, 2.0 * 37 * 131 * 45);
  EXPECT_EQ(m->time.count, 3);
  EXPECT_GT(m->time.median_ms, 0.0);
  EXPECT_LE(m->time.min_ms, m->time.median_ms);
  EXPECT_EQ(m->algorithm, "host-reference fp32");
  EXPECT_THAT(m->notes, StartsWith("host reference: 3 of 3 rounds"));
  EXPECT_GT(m->bytes, 2.0 * 37 * 45);
  if (mode == Mode::kPrequant) EXPECT_EQ(m->quant_ms, 0.0);
  if (mode == Mode::kAutocast && recipe != Recipe::kBf16 && !core::IsWeightOnly(recipe)) {
    EXPECT_GT(m->quant_ms, 0.0);
  }
  if (recipe == Recipe::kBf16) EXPECT_EQ(m->quant_ms, 0.0) << "bf16 quantizes nothing";
  // Weight-only: the weight is prepared before any timing and the activation stays BF16.
  if (core::IsWeightOnly(recipe)) EXPECT_EQ(m->quant_ms, 0.0);
}

INSTANTIATE_TEST_SUITE_P(HostRunner, EveryRecipe,
                         ::testing::Combine(::testing::ValuesIn(core::AllRecipes()),
                                            ::testing::Values(Pass::kFprop, Pass::kDgrad,
                                                              Pass::kWgrad),
                                            ::testing::Values(Mode::kAutocast, Mode::kPrequant)),
                         [](const auto& info) {
                           std::string name =
                               std::string(core::ToString(std::get<0>(info.param))) + "_" +
                               std::string(core::ToString(std::get<1>(info.param))) + "_" +
                               std::string(core::ToString(std::get<2>(info.param)));
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(HostRunner, SameSeedSameResultOtherSeedOtherResult) {
  HostRunner runner;
  core::TimingOptions t = FewIters();
  const core::WorkItem item = Item({29, 77, 31}, Recipe::kMxfp8, Pass::kWgrad);
  const auto a = device::MeasureOne(runner, item, t), b = device::MeasureOne(runner, item, t);
  t.seed += 1;
  const auto c = device::MeasureOne(runner, item, t);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->rel_error, b->rel_error);
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_NE(a->rel_error, c->rel_error);
}

TEST(HostRunner, ErrorsAreOrderedByPrecision) {
  HostRunner runner;
  const auto err = [&](Recipe r) {
    const auto m = device::MeasureOne(runner, Item({64, 256, 64}, r), FewIters());
    return m.ok() ? m->rel_error : -1.0;
  };
  const double bf16 = err(Recipe::kBf16), fp8 = err(Recipe::kFp8Current),
               block = err(Recipe::kFp8Block), mx = err(Recipe::kMxfp8), fp4 = err(Recipe::kNvfp4);
  EXPECT_GE(bf16, 0.0);
  EXPECT_LT(bf16, 1e-4);
  EXPECT_LT(bf16, fp8);
  EXPECT_LT(bf16, block);
  EXPECT_LT(bf16, mx);
  EXPECT_LT(fp8 * 2, fp4);
  EXPECT_LT(block * 2, fp4);
  EXPECT_LT(mx * 2, fp4);
}

TEST(HostRunner, IterationCapsAreReported) {
  HostRunner runner;
  core::TimingOptions t;
  t.timed_iters = 100;
  t.warmup_iters = 50;
  t.amax_history_len = 1024;
  const auto m = device::MeasureOne(runner, Item({8, 40, 8}, Recipe::kFp8Delayed), t);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->time.count, kMaxHostTimedIters);
  EXPECT_EQ(m->notes, "host reference: 5 of 100 rounds; amax history of 8 of 1024 tensors");
  EXPECT_EQ(m->accounting, t.accounting);
}

TEST(HostRunner, GroupedItemsRunAndCountEveryGroup) {
  HostRunner runner;
  const auto m = device::MeasureOne(
      runner, Item({16, 48, 24}, Recipe::kNvfp4, Pass::kDgrad, Mode::kAutocast, 4), FewIters());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->flops, 4 * 2.0 * 16 * 48 * 24);
  EXPECT_EQ(m->verification, core::Verification::kPassed);
  // NVFP4 bytes: 4 groups x (A + B data nibbles + E4M3 block scales + tensor scales) + BF16 C.
  EXPECT_EQ(m->bytes, 4 * ((16 * 24 + 16 * 3 + 4) + (24 * 24 + 24 * 3 + 4) + 2.0 * 16 * 24));
}

TEST(HostRunner, BytesOfBf16AndFp8) {
  HostRunner runner;
  const auto bf16 = device::MeasureOne(runner, Item({10, 20, 30}, Recipe::kBf16), FewIters());
  const auto fp8 = device::MeasureOne(runner, Item({10, 20, 30}, Recipe::kFp8Current), FewIters());
  ASSERT_TRUE(bf16.ok() && fp8.ok());
  EXPECT_EQ(bf16->bytes, 2.0 * (200 + 600) + 2.0 * 300);
  EXPECT_EQ(fp8->bytes, (200 + 600 + 8) + 2.0 * 300);
}

}  // namespace
}  // namespace gemmprof::device
