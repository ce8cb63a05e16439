// Notices on a power-capped GPU: throttling, spread and measurement notes summarized, not
// repeated per item; NVML clocks-event reasons decoded.
#include "report/notices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/clocks_event_reasons.h"
#include "report/format.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::report {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Starting(const std::vector<std::string>& lines, const std::string& head) {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.rfind(head, 0) == 0) out.push_back(l);
  return out;
}

// Every item of the both-modes fixture (72) throttled by the power cap in every one of its
// 20 telemetry samples, the runner's throttle note on each, as on the H200 run.
core::Report PowerCappedReport() {
  core::Report r = testing::BothModesReport();
  for (auto& item : r.items) {
    core::Telemetry& t = item.result->telemetry;
    t.throttle_reasons = kClocksEventGpuIdle | 0x4;  // idle in the first sample
    t.throttled_samples = t.telemetry_samples = 20;
    item.result->notes = "20 of 20 telemetry samples throttled (clocks-event reasons 0x5)";
  }
  return r;
}

TEST(ClocksEventReasonsTest, NamesFollowNvml) {
  EXPECT_EQ(ClocksEventReasonNames(0x4), "sw power cap");
  EXPECT_EQ(ClocksEventReasonNames(0x1), "");  // idle is not a throttle
  EXPECT_EQ(ClocksEventReasonNames(0x1 | 0x2 | 0x4 | 0x8 | 0x10),
            "applications clocks setting, sw power cap, hw slowdown, sync boost");
  EXPECT_EQ(ClocksEventReasonNames(0x20 | 0x40 | 0x80 | 0x100),
            "sw thermal slowdown, hw thermal slowdown, hw power brake slowdown, "
            "display clocks setting");
  EXPECT_EQ(ClocksEventReasonNames(0x200 | 0x400 | 0x800), "board limit, reliability, 0x800");
  EXPECT_THAT(ClocksEventImpact(0x4), HasSubstr("power-capped"));
  EXPECT_THAT(ClocksEventImpact(0x4 | 0x80), HasSubstr("not representative"));
  EXPECT_EQ(ClocksEventImpact(0x10), "");
}

TEST(ThrottleNoticeTest, OneLinePerCauseOnAPowerCappedGpu) {
  const core::Report report = PowerCappedReport();
  const std::vector<std::string> n = BuildNotices(Analysis(report));
  const std::vector<std::string> throttled = Starting(n, "throttled:");
  ASSERT_EQ(throttled.size(), 1u);
  EXPECT_EQ(throttled[0],
            "throttled: 72 of 72 measured items ran with clocks held back (sw power cap; "
            "1,440 of 1,440 telemetry samples); medians on a power-capped GPU drift by a few %");
  // The runner's per-item note says nothing the summary does not.
  EXPECT_TRUE(Starting(n, "note:").empty());
}

TEST(ThrottleNoticeTest, DistinctCausesAndMinoritiesNamed) {
  core::Report report = PowerCappedReport();
  // Seven items also hit the hw thermal slowdown: a second cause, a minority, named.
  for (int i = 0; i < 7; ++i) report.items[i].result->telemetry.throttle_reasons = 0x4 | 0x40;
  const std::vector<std::string> throttled = Starting(BuildNotices(Analysis(report)), "throttled:");
  ASSERT_EQ(throttled.size(), 2u);
  EXPECT_THAT(throttled[0], HasSubstr("throttled: 65 of 72 measured items ran with clocks held "
                                      "back (sw power cap; 1,300 of 1,300 telemetry samples); "));
  EXPECT_THAT(throttled[1],
              HasSubstr("throttled: 7 of 72 measured items ran with clocks held back (sw power "
                        "cap, hw thermal slowdown; 140 of 140 telemetry samples): fprop qkv "
                        "8192x4096x12288 bf16/autocast, "));
  EXPECT_THAT(throttled[1], HasSubstr(" ... and 2 more; hardware slowdown"));
}

TEST(ThrottleNoticeTest, OtherNotesStayWithoutTheThrottlePart) {
  core::Report report = PowerCappedReport();
  report.items[0].result->notes =
      "verification on a 512-row sample; 20 of 20 telemetry samples throttled (clocks-event "
      "reasons 0x4); NVML power readings unavailable";
  // An item whose telemetry saw no throttle keeps its note as written.
  report.items[1].result->telemetry.throttled_samples = 0;
  const std::vector<std::string> notes = Starting(BuildNotices(Analysis(report)), "note:");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "note: verification on a 512-row sample; NVML power readings unavailable (fprop qkv "
            "8192x4096x12288 bf16/autocast)");
  EXPECT_THAT(notes[1], HasSubstr("note: 20 of 20 telemetry samples throttled"));
}

TEST(SpreadNoticeTest, CountAndWorstFiveByP20P80) {
  core::Report report = testing::BothModesReport();
  // Ten noisy items: stdev 8% (outliers) and p20-p80 from 1% to 10% of the median.
  for (int i = 0; i < 10; ++i) {
    core::SampleStats& t = report.items[i].result->time;
    t.stdev_ms = 0.08 * t.median_ms;
    t.p20_ms = t.median_ms * (1 - 0.005 * (i + 1));
    t.p80_ms = t.median_ms * (1 + 0.005 * (i + 1));
  }
  const std::vector<std::string> spread = Starting(BuildNotices(Analysis(report)), "high spread:");
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_THAT(spread[0], HasSubstr("high spread: 10 of 72 measured items have stdev or p20-p80 "
                                   "above 5.0% of their median; worst: "));
  // Widest p20-p80 first (item 9: 10%), five named.
  EXPECT_THAT(spread[0], HasSubstr("(p20-p80 10.0%, stdev 8.0% of median), "));
  EXPECT_THAT(spread[0], HasSubstr("(p20-p80 6.0%, stdev 8.0% of median) ... and 5 more"));
  EXPECT_THAT(spread[0], ::testing::Not(HasSubstr("outlier")));
  EXPECT_THAT(spread[0], ::testing::Not(HasSubstr("p20-p80 5.0%")));
}

TEST(SpreadNoticeTest, SaysWhenOnlyOutliersInflateTheStdev) {
  core::Report report = testing::BothModesReport();
  for (auto& item : report.items) item.result->time.stdev_ms = 0.07 * item.result->time.median_ms;
  const std::vector<std::string> spread = Starting(BuildNotices(Analysis(report)), "high spread:");
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_THAT(spread[0], HasSubstr("72 of 72 measured items"));
  EXPECT_THAT(spread[0], HasSubstr("p20-p80 stays within 5.0% on all of them, so a few outlier "
                                   "samples inflate the stdev while the medians hold"));
}

// One recipe refused for two reasons (a shape it cannot take, a grouped GEMM cuBLASLt has
// no algorithm for) gets one line per reason, each with its own count.
TEST(ReportNotesTest, NotSupportedLinesPerRecipeAndReason) {
  core::Report report = testing::HopperReport();
  int changed = 0;
  for (auto& item : report.items) {
    if (item.item.recipe != core::Recipe::kFp8Block) continue;
    item.status = core::ItemStatus::kNotSupported;
    item.result.reset();
    item.error = changed++ % 3 == 0
                     ? "fp8-block needs N to be a multiple of 16; shape 8x8x8 has N=8"
                     : "fp8-block: cuBLASLt has no algorithm for 8x128x128 x 8 groups (A e4m3 "
                       "with VEC128_32F block scales, B^T e4m3 with BLK128x128_32F block "
                       "scales, C bf16)";
  }
  ASSERT_GE(changed, 3);
  const auto lines = Starting(BuildNotices(Analysis(report)), "not supported: fp8-block");
  ASSERT_EQ(lines.size(), 2u);
  const int shape_count = (changed + 2) / 3;
  const bool grouped_first = lines[0].find("x 8 groups") != std::string::npos;
  const std::string& grouped = grouped_first ? lines[0] : lines[1];
  const std::string& shape = grouped_first ? lines[1] : lines[0];
  EXPECT_THAT(grouped, HasSubstr("(" + std::to_string(changed - shape_count) + " items)"));
  EXPECT_THAT(shape, HasSubstr("(" + std::to_string(shape_count) + " item"));
  EXPECT_THAT(shape, HasSubstr("N=8"));
}

// The daemon's stored error names the item itself (it is read in logs and JSON too); the
// report's note names it once.
TEST(ReportNotesTest, AFailedItemIsNamedOnce) {
  core::Report report = testing::HopperReport();
  core::ItemRecord* failed = nullptr;
  for (auto& item : report.items) {
    if (item.item.recipe == core::Recipe::kBf16 && item.item.op.pass == core::Pass::kFprop) {
      failed = &item;
      break;
    }
  }
  ASSERT_NE(failed, nullptr);
  failed->status = core::ItemStatus::kFailed;
  failed->result.reset();
  failed->error = core::DescribeItem(failed->item) +
                  ": worker exited: signal 9 (Killed); the worker restarts; the item failed and "
                  "the job goes on with its next item";
  const auto lines = Starting(BuildNotices(Analysis(report)), "failed: ");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "failed: " + ItemLabel(*failed) +
                          ": worker exited: signal 9 (Killed); the worker restarts; the item "
                          "failed and the job goes on with its next item");
  // An error in any other form (older daemons) is shown whole.
  failed->error = "CUDA error: an illegal memory access";
  EXPECT_EQ(Starting(BuildNotices(Analysis(report)), "failed: ")[0],
            "failed: " + ItemLabel(*failed) + ": CUDA error: an illegal memory access");
}

// `op` (fprop qkv of the Hopper fixture, renamed `name`) made not_supported for
// fp8-current/autocast; returns the bf16 and the original fp8-current medians.
std::pair<double, double> RefuseFp8Op(core::Report& report, const std::string& name) {
  double bf16_ms = 0, fp8_ms = 0;
  for (auto& item : report.items) {
    if (item.item.op.pass != core::Pass::kFprop || item.item.op.name != "qkv") continue;
    item.item.op.name = name;
    if (item.item.mode != core::Mode::kAutocast) continue;
    if (item.item.recipe == core::Recipe::kBf16) bf16_ms = item.result->time.median_ms;
    if (item.item.recipe == core::Recipe::kFp8Current) {
      fp8_ms = item.result->time.median_ms;
      item.status = core::ItemStatus::kNotSupported;
      item.error = "fp8-current needs N to be a multiple of 16";
      item.result.reset();
    }
  }
  return {bf16_ms, fp8_ms};
}

// A MoE router a recipe cannot take (FP8 with N = 8 experts) counts at its bf16 time in
// that recipe's totals, and the report says so; any other refused GEMM leaves the recipe
// without totals, and a recipe the device lacks entirely borrows nothing.
TEST(ReportNotesTest, RouterARecipeCannotTakeCountsAtItsBf16Time) {
  core::Report report = testing::HopperReport();
  const auto [bf16_ms, fp8_ms] = RefuseFp8Op(report, "router");
  ASSERT_GT(bf16_ms, 0);
  ASSERT_GT(fp8_ms, 0);
  core::Report original = testing::HopperReport();
  for (auto& item : original.items)
    if (item.item.op.pass == core::Pass::kFprop && item.item.op.name == "qkv")
      item.item.op.name = "router";
  const Analysis before(original), after(report);
  const RecipeMode key{core::Recipe::kFp8Current, core::Mode::kAutocast};
  const Totals* t = after.FindTotals(key);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->complete());
  EXPECT_NEAR(t->layer_ms[0] - before.FindTotals(key)->layer_ms[0],
              bf16_ms - fp8_ms,  // time x layers (2) / num_layers (2)
              1e-9);
  ASSERT_EQ(t->bf16_fallbacks.size(), 1u);
  EXPECT_EQ(t->bf16_fallbacks[0], "fprop router");
  const auto lines =
      Starting(BuildNotices(after), "fp8-current autocast totals count 1 MoE router GEMMs");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("fprop router"));
  const Totals* mx = after.FindTotals({core::Recipe::kMxfp8, core::Mode::kAutocast});
  ASSERT_NE(mx, nullptr);
  EXPECT_FALSE(mx->complete()) << "a recipe the device lacks borrows nothing";
  EXPECT_TRUE(mx->bf16_fallbacks.empty());

  core::Report other = testing::HopperReport();
  RefuseFp8Op(other, "qkv");
  const Analysis refused(other);
  EXPECT_FALSE(refused.FindTotals(key)->complete()) << "only the router borrows bf16";
  EXPECT_TRUE(refused.FindTotals(key)->bf16_fallbacks.empty());
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TEST(ReportNotesTest, HopperNoticesNameEveryTrustIssue) {
  const core::Report report = testing::HopperReport();
  const std::vector<std::string> n = BuildNotices(Analysis(report));
  EXPECT_TRUE(
      AnyContains(n, "not supported: mxfp8 (15 items): mxfp8 needs sm_100+, this is sm_90"));
  EXPECT_TRUE(AnyContains(n, "not supported: nvfp4"));
  EXPECT_TRUE(AnyContains(n,
                          "throttled: 1 of 60 measured items ran with clocks held back (sw thermal "
                          "slowdown; 3 of 20 telemetry samples): wgrad qkv 4096x8192x12288 "
                          "bf16/autocast; the GPU ran hot"));
  EXPECT_TRUE(AnyContains(n,
                          "high spread: 1 of 60 measured items have stdev or p20-p80 above 5.0% "
                          "of their median"));
  EXPECT_TRUE(AnyContains(n,
                          "worst: fprop mlp_down 8192x16384x4096 fp8-delayed/autocast (p20-p80 "
                          "1.0%, stdev 7.0% of median)"));
  EXPECT_TRUE(AnyContains(n, "3 of 60 results come from the result cache"));
  EXPECT_TRUE(AnyContains(n, "(3d 1h before this job)"));
  EXPECT_FALSE(AnyContains(n, kHostReferenceBanner));
}

TEST(ReportNotesTest, CachedResultsNameTheirNodeAndSpreadJobsTheirGpus) {
  core::Report report = testing::HopperReport();
  int cached = 0, measured = 0;
  for (core::ItemRecord& item : report.items) {
    if (!item.result) continue;
    if (item.cached) {
      item.measured_node = cached++ == 0 ? "node-b" : "node-a";
    } else {
      item.device_uuid = measured++ % 2 == 0 ? "GPU-aaaa" : "GPU-bbbb";
    }
  }
  ASSERT_EQ(cached, 3);
  const std::vector<std::string> n = BuildNotices(Analysis(report));
  EXPECT_TRUE(AnyContains(
      n, "3 of 60 results come from the result cache, measured on node-a (2), node-b (1)"));
  EXPECT_TRUE(AnyContains(n, "devices: measured on 2 GPUs of NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(AnyContains(n, "GPU-aaaa (29), GPU-bbbb (28)"));
  // One GPU: nothing to say.
  for (core::ItemRecord& item : report.items) item.device_uuid.clear();
  EXPECT_FALSE(AnyContains(BuildNotices(Analysis(report)), "devices: measured on"));
}

TEST(ReportNotesTest, FailedPendingWrongAndHostReference) {
  const std::vector<std::string> n = BuildNotices(Analysis(testing::FailedItemReport()));
  EXPECT_TRUE(AnyContains(n, "job is running: 2 of 6 items still pending"));
  EXPECT_TRUE(AnyContains(n, "failed: fprop 4096x4096x4096 fp8-block/autocast: cuBLASLt"));
  EXPECT_TRUE(AnyContains(n, "wrong results: fprop 4096x4096x4096 fp8-current/autocast"));
  const core::Report host = testing::HostReferenceReport();
  const std::vector<std::string> h = BuildNotices(Analysis(host));
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.front(), kHostReferenceBanner);
}

// A variant that splits a recipe sharing quantized operands across passes says how its
// autocast total counts them; one that splits none (fp8-rowwise) has no such line.
TEST(VariantNoticeTest, SplitSharedQuantizationIsSaid) {
  core::Report report = testing::HopperReport();
  report.job.spec.variants = {*core::ParseRecipeVariant("fp8-current+wgrad:bf16"),
                              *core::ParseRecipeVariant("fp8-rowwise+wgrad:bf16")};
  const Analysis a(report);
  const std::vector<std::string> notices = BuildNotices(a);
  EXPECT_EQ(Starting(notices,
                     "fp8-current+wgrad:bf16 autocast: fp8-current shares quantized "
                     "operands across a training step's passes")
                .size(),
            1u);
  EXPECT_TRUE(Starting(notices, "fp8-rowwise+wgrad:bf16").empty());
  report.job.spec.timing.accounting = core::Accounting::kPerGemm;
  EXPECT_TRUE(Starting(BuildNotices(Analysis(report)), "fp8-current+wgrad:bf16").empty());
}

// A variant naming fast accumulation says so when the job's option already gives every
// pass it runs that setting (no item of its own); with own items it says nothing.
TEST(VariantNoticeTest, FastAccumVariantThatRunsNothingOfItsOwnIsSaid) {
  core::Report report = testing::FastAccumVariantReport();
  const std::string name = "fp8-current+fast-accum:all";
  EXPECT_TRUE(Starting(BuildNotices(Analysis(report)), name).empty());
  report.job.spec.timing.fast_accum = core::FastAccum::kOn;
  const std::vector<std::string> on = Starting(BuildNotices(Analysis(report)), name);
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0], name +
                       ": --fast-accum on already gives each of its passes that accumulation, "
                       "so it runs the items of the recipes its passes run and its figures are "
                       "theirs");
}

}  // namespace
}  // namespace gemmprof::report
