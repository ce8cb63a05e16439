// fp8-rowwise and dynamic mode on the device: every pass x mode of the row-wise recipe
// verifies against the fp32 reference; dynamic mode quantizes only the activation (or
// gradient) inside the timing, for every Hopper FP8 recipe; grouped row-wise items run one
// cuBLASLt call per group, each with its own row scales. Fails without a GPU.
#include <cstdio>
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/runner/cuda_runner_factory.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;

class RowwiseTest : public testing::RunnerSuite {
 protected:
  static core::WorkItem Item(core::GemmShape shape, Pass pass, Recipe recipe, Mode mode,
                             int64_t groups = 1) {
    core::WorkItem w;
    w.id = 9;
    w.op.name = "test";
    w.op.pass = pass;
    w.op.shape = shape;
    w.op.groups = groups;
    w.recipe = recipe;
    w.mode = mode;
    return w;
  }
};

using Case = std::tuple<Pass, Mode, int>;
class RowwiseMatrixTest : public RowwiseTest, public ::testing::WithParamInterface<Case> {};

TEST_P(RowwiseMatrixTest, VerifiesAndTimesWhatTheModeQuantizes) {
  const auto [pass, mode, shape_index] = GetParam();
  const core::GemmShape shape =
      shape_index == 0 ? core::GemmShape{256, 256, 256} : core::GemmShape{264, 384, 144};
  ASSERT_TRUE(runner_->Supports(Recipe::kFp8Rowwise).supported);
  auto m = device::MeasureOne(*runner_, Item(shape, pass, Recipe::kFp8Rowwise, mode), FastTiming());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->verification, core::Verification::kPassed)
      << "rel_error " << m->rel_error << " threshold " << m->error_threshold << " " << m->notes;
  if (mode == Mode::kPrequant) {
    EXPECT_EQ(m->quant_ms, 0);
    EXPECT_EQ(m->quant_bytes, 0);
  } else {
    EXPECT_GT(m->quant_ms, 0);
  }
  // Row-wise: A and B^T are re-quantized for every GEMM (never a transposed copy), so
  // autocast quantizes both in every pass, and dynamic the non-weight ones.
  // (The GPU's minimum bytes: a BF16 read and an FP8 write per element, and an fp32 scale
  // per row.)
  const double a_bytes = 3.0 * shape.m * shape.k + 4.0 * shape.m;
  const double b_bytes = 3.0 * shape.n * shape.k + 4.0 * shape.n;
  if (mode == Mode::kAutocast) EXPECT_DOUBLE_EQ(m->quant_bytes, a_bytes + b_bytes);
  if (mode == Mode::kDynamic) {
    EXPECT_DOUBLE_EQ(m->quant_bytes, pass == Pass::kWgrad ? a_bytes + b_bytes : a_bytes);
    EXPECT_THAT(m->notes, HasSubstr("dynamic:"));
  }
  if (pass != Pass::kFprop) EXPECT_THAT(m->notes, HasSubstr("quantized again from BF16"));
  std::printf("fp8-rowwise %-5s %-8s %-11s rel_error %.3e median %.4f ms quant %.4f ms  %s\n",
              std::string(core::ToString(pass)).c_str(), std::string(core::ToString(mode)).c_str(),
              shape.ToString().c_str(), m->rel_error, m->time.median_ms, m->quant_ms,
              m->algorithm.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Hopper, RowwiseMatrixTest,
    ::testing::Combine(::testing::Values(Pass::kFprop, Pass::kDgrad, Pass::kWgrad),
                       ::testing::Values(Mode::kPrequant, Mode::kAutocast, Mode::kDynamic),
                       ::testing::Values(0, 1)));

// Every Hopper FP8 recipe has a dynamic mode, which quantizes less than autocast's training
// step in fprop (the weight is ready) and verifies.
TEST_F(RowwiseTest, DynamicModeForEveryHopperFp8Recipe) {
  const core::GemmShape shape{512, 1024, 768};
  for (Recipe r :
       {Recipe::kFp8Current, Recipe::kFp8Delayed, Recipe::kFp8Block, Recipe::kFp8Rowwise}) {
    SCOPED_TRACE(std::string(core::ToString(r)));
    auto dyn =
        device::MeasureOne(*runner_, Item(shape, Pass::kFprop, r, Mode::kDynamic), FastTiming());
    auto ac =
        device::MeasureOne(*runner_, Item(shape, Pass::kFprop, r, Mode::kAutocast), FastTiming());
    ASSERT_TRUE(dyn.ok()) << dyn.status();
    ASSERT_TRUE(ac.ok()) << ac.status();
    EXPECT_EQ(dyn->verification, core::Verification::kPassed) << dyn->rel_error;
    EXPECT_GT(dyn->quant_bytes, 0);
    EXPECT_LT(dyn->quant_bytes, ac->quant_bytes);
    EXPECT_THAT(dyn->notes, HasSubstr("the activation X quantized inside the timing"));
    std::printf("%-11s fprop dynamic quant %.4f ms (%.0f B) vs autocast %.4f ms (%.0f B)\n",
                std::string(core::ToString(r)).c_str(), dyn->quant_ms, dyn->quant_bytes,
                ac->quant_ms, ac->quant_bytes);
  }
}

// Groups: cuBLASLt's strided batch would read group 0's row scales for every group, so
// its candidate is one call per group with its own scales; the CUTLASS row-wise GEMM runs
// every group in one launch; the faster is kept and verified. M not a multiple of 128
// on purpose.
TEST_F(RowwiseTest, GroupedItemsUseEachGroupsOwnScales) {
  for (Mode mode : {Mode::kPrequant, Mode::kAutocast}) {
    auto m = device::MeasureOne(
        *runner_, Item({200, 384, 144}, Pass::kFprop, Recipe::kFp8Rowwise, mode, 3), FastTiming());
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->verification, core::Verification::kPassed) << m->rel_error << " " << m->notes;
    EXPECT_THAT(m->notes, HasSubstr("GEMM library chosen by measurement"));
    EXPECT_THAT(m->notes, HasSubstr("cuBLASLt "));  // its candidate timed too
    if (m->algorithm.find("CUTLASS") != std::string::npos) {
      EXPECT_THAT(m->algorithm, HasSubstr("3 groups in one launch"));
      EXPECT_THAT(m->notes, HasSubstr("grouped: 3 groups in one CUTLASS launch"));
    } else {
      EXPECT_THAT(m->notes, HasSubstr("3 cuBLASLt calls, one per group"));
      EXPECT_THAT(m->algorithm, HasSubstr("(each of 3 calls)"));
    }
  }
}

}  // namespace
}  // namespace gemmprof::kernels
