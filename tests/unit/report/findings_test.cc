// Findings of results stored before interleaved rounds (rounds: findings_rounds_test.cc).
#include "report/findings.h"

#include <gtest/gtest.h>

#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::report {
namespace {

using core::Mode;
using core::Recipe;

bool AnyContains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TEST(ReportFindingsTest, OverheadAsymmetryAndWinners) {
  const std::vector<std::string> f = BuildFindings(Analysis(testing::HopperReport()));
  EXPECT_TRUE(AnyContains(f,
                          "autocast: fp8-current is not faster than bf16 on fprop attn_out "
                          "8192x4096x4096"));
  EXPECT_TRUE(AnyContains(f, "quantization overhead exceeds the GEMM gain"));
  EXPECT_FALSE(AnyContains(f, "on fprop qkv"));  // qkv is large enough to gain
  EXPECT_TRUE(
      AnyContains(f, "autocast: Dgrad differs from Fprop by more than 5.0% per layer: bf16 +8.0%"));
  // Results stored before interleaved rounds have no intervals: never ranked.
  EXPECT_FALSE(AnyContains(f, "fastest"));

  const std::vector<std::string> both = BuildFindings(Analysis(testing::BothModesReport()));
  // 12 GEMMs x 0.04 ms + 3 attn_out x 0.2 ms of quantization per layer.
  EXPECT_TRUE(AnyContains(both, "fp8-current: quantization costs 1.080 ms per layer"));
  EXPECT_FALSE(AnyContains(both, "fastest"));
  EXPECT_FALSE(AnyContains(both, "prequant: fp8-current is not faster"));
}

// A variant's findings: per-GEMM lines name the items' own recipes only; the per-pass
// asymmetry line names a variant only when its fprop and dgrad are not one shown recipe's.
TEST(ReportFindingsTest, VariantsAddOnlyWhatTheirCompositionChanges) {
  core::Report report = testing::HopperReport();
  report.job.spec.variants = {*core::ParseRecipeVariant("bf16+wgrad:fp8-current"),
                              *core::ParseRecipeVariant("fp8-current+dgrad:bf16")};
  const std::vector<std::string> f = BuildFindings(Analysis(report));
  EXPECT_TRUE(
      AnyContains(f, "autocast: Dgrad differs from Fprop by more than 5.0% per layer: bf16 +8.0%"));
  EXPECT_FALSE(AnyContains(f, "bf16+wgrad:fp8-current +8.0%"));
  EXPECT_TRUE(AnyContains(f, "fp8-current+dgrad:bf16 "));
  EXPECT_FALSE(AnyContains(f, "fp8-current+dgrad:bf16 is not faster than bf16 on"));
  EXPECT_TRUE(AnyContains(f, "fp8-current is not faster than bf16 on fprop attn_out"));
}

}  // namespace
}  // namespace gemmprof::report
