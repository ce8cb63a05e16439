// The batches a report's items were measured in (their context and power state, the
// clock-spread notice) and the energy figures: per-layer sums, ratios against bf16 with
// intervals, and the finding where energy and time disagree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/analysis.h"
#include "report/batches.h"
#include "report/energy.h"
#include "report/findings.h"
#include "report/notices.h"
#include "tests/unit/report/report_fixtures.h"
#include "tests/unit/report/rounds_fixtures.h"

namespace gemmprof::report {
namespace {

using ::testing::HasSubstr;

// A shape-list report of two batches: two M = 16 GEMMs at 1950 MHz and 610 W, one
// M = 4096 GEMM at 1650 MHz and 690 W.
core::Report TwoBatchReport() {
  core::Report r = testing::FailedItemReport();
  r.items.clear();
  const struct {
    core::GemmShape shape;
    const char* uid;
    const char* context;
    double mhz, watts;
  } gemms[] = {{{16, 4096, 14336}, "u1", "workload: m=16", 1950, 610},
               {{16, 14336, 4096}, "u1", "workload: m=16", 1950, 610},
               {{4096, 4096, 4096}, "u2", "workload: m=4096", 1650, 690}};
  int32_t seq = 0;
  for (const auto& g : gemms) {
    core::ItemRecord item;
    item.item.seq = seq++;
    item.item.op.shape = g.shape;
    item.item.op.name = g.shape.ToString();
    item.status = core::ItemStatus::kDone;
    core::Measurement m;
    m.time.median_ms = 0.1;
    m.group_uid = g.uid;
    m.context = g.context;
    m.batch_gemms = std::string(g.context) == "workload: m=16" ? "16x4096x14336, 16x14336x4096"
                                                               : "4096x4096x4096";
    m.telemetry.sm_clock_mhz_min = g.mhz - 30;
    m.telemetry.sm_clock_mhz_max = g.mhz + 30;
    m.telemetry.sm_clock_mhz_mean = g.mhz;
    m.telemetry.power_w_avg = g.watts;
    m.telemetry.temp_c_max = 50;
    m.telemetry.telemetry_samples = 20;
    item.result = m;
    r.items.push_back(item);
  }
  return r;
}

TEST(Batches, OneEntryPerSetOfRoundsWithItsState) {
  const std::vector<BatchState> b = Batches(TwoBatchReport());
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].number, 1);
  EXPECT_EQ(b[0].uid, "u1");
  EXPECT_EQ(b[0].items, 2);
  EXPECT_EQ(b[0].context, "workload: m=16");
  EXPECT_DOUBLE_EQ(b[0].power_w, 610);
  EXPECT_DOUBLE_EQ(b[0].sm_mhz_min, 1920);
  EXPECT_DOUBLE_EQ(b[0].sm_mhz_max, 1980);
  EXPECT_EQ(b[1].items, 1);
  EXPECT_EQ(DescribeBatch(b[0]),
            "workload: m=16 (16x4096x14336, 16x14336x4096): 2 items, 610 W, SM 1920-1980 MHz "
            "(mean 1950), 50 C");
}

TEST(Batches, StatesMoreThanFivePercentApartMakeANotice) {
  core::Report r = TwoBatchReport();
  const std::string notice = BatchClockNotice(Batches(r));
  EXPECT_THAT(notice, HasSubstr("18% apart in SM clock"));
  EXPECT_THAT(notice, HasSubstr("batch 1 (workload: m=16) at 1950 MHz, 610 W"));
  EXPECT_THAT(notice, HasSubstr("batch 2 (workload: m=4096) at 1650 MHz, 690 W"));
  EXPECT_THAT(BuildNotices(Analysis(r)), ::testing::Contains(notice));
  // 4% apart: no notice.
  r.items[2].result->telemetry.sm_clock_mhz_mean = 1875;
  EXPECT_EQ(BatchClockNotice(Batches(r)), "");
}

TEST(Batches, ResultsStoredBeforeRoundsHaveNone) {
  EXPECT_TRUE(Batches(testing::HopperReport()).empty());
}

// Energy on a report measured in rounds: bf16 at 0.6 J per ms of its time, fp8-current at
// a given fraction of bf16's joules for the same GEMM, the others as bf16; each +-1%.
void AddEnergy(core::Report& r, double fp8_fraction) {
  std::map<std::string, double> bf16_ms;  // per GEMM and mode
  auto key = [](const core::ItemRecord& item) {
    return item.item.op.name + "/" + std::string(core::ToString(item.item.op.pass)) + "/" +
           std::string(core::ToString(item.item.mode));
  };
  for (const core::ItemRecord& item : r.items)
    if (item.result && item.item.recipe == core::Recipe::kBf16)
      bf16_ms[key(item)] = item.result->isolated.center_ms;
  for (core::ItemRecord& item : r.items) {
    if (!item.result) continue;
    const double base = bf16_ms.at(key(item)) * 0.6;  // 600 W x bf16's ms
    testing::SetEnergy(*item.result,
                       item.item.recipe == core::Recipe::kFp8Current ? base * fp8_fraction : base);
  }
}

TEST(Energy, SumsPerLayerLikeTheTimesAndComparesWithIntervals) {
  core::Report r = testing::RoundsReport();
  AddEnergy(r, 0.5);
  const Analysis a(r);
  ASSERT_TRUE(HasEnergy(r));
  const RecipeMode bf16{core::Recipe::kBf16, core::Mode::kPrequant};
  const RecipeMode fp8{core::Recipe::kFp8Current, core::Mode::kPrequant};
  const auto layer = EnergySum(a, bf16, Scope{});
  ASSERT_TRUE(layer.has_value());
  // The bf16 per-layer time x 0.6 J/ms.
  EXPECT_NEAR(layer->center, a.FindTotals(bf16)->LayerMs() * 0.6, 1e-9 * layer->center);
  EXPECT_TRUE(layer->valid);
  const core::stats::Interval ratio = EnergyRatio(a, bf16, fp8, Scope{});
  EXPECT_NEAR(ratio.center, 2.0, 1e-9);
  EXPECT_TRUE(ratio.valid);
  EXPECT_LT(ratio.low, 2.0);
  EXPECT_GT(ratio.high, 2.0);
  // fp8-current saves energy at twice its (smaller) time saving: a finding says so.
  const std::vector<std::string> findings = BuildFindings(a);
  EXPECT_THAT(findings, ::testing::Contains(HasSubstr("fp8-current prequant per layer: 2.00x")));
  EXPECT_THAT(findings, ::testing::Contains(HasSubstr("saves more energy than time")));
}

TEST(Energy, QuantizationJoulesAreAutocastLessPrequantOfTheSameGemms) {
  // Every item at 600 W: joules = 0.6 x its ms, so the quantization's joules per layer are
  // 0.6 x the autocast - prequant time per layer.
  core::Report r = testing::RoundsReport();
  for (core::ItemRecord& item : r.items)
    if (item.result) testing::SetEnergy(*item.result, item.result->isolated.center_ms * 0.6);
  const Analysis a(r);
  const core::stats::Interval q = QuantizationEnergy(a, core::Recipe::kFp8Current, Scope{});
  const core::stats::Interval t =
      a.TotalDifference({core::Recipe::kFp8Current, core::Mode::kAutocast},
                        {core::Recipe::kFp8Current, core::Mode::kPrequant}, Scope{});
  EXPECT_GT(t.center, 0);
  EXPECT_NEAR(q.center, 0.6 * t.center, 1e-9 * q.center);
  EXPECT_TRUE(q.valid);
  EXPECT_LT(q.low, q.center);
  EXPECT_GT(q.high, q.center);
  // One prequant item without a figure: no difference.
  for (core::ItemRecord& item : r.items)
    if (item.item.recipe == core::Recipe::kFp8Current && item.item.mode == core::Mode::kPrequant) {
      item.result->energy = {};
      break;
    }
  EXPECT_EQ(QuantizationEnergy(Analysis(r), core::Recipe::kFp8Current, Scope{}).center, 0);
}

TEST(Energy, AMissingFigureLeavesNoSumAndTheReasonIsANotice) {
  core::Report r = testing::RoundsReport();
  AddEnergy(r, 0.5);
  core::Energy& first = r.items.front().result->energy;
  first = {};
  first.not_measured = "this board has no energy counter (NVML: not supported)";
  const Analysis a(r);
  EXPECT_FALSE(EnergySum(a, {r.items.front().item.recipe, r.items.front().item.mode}, Scope{}));
  EXPECT_THAT(BuildNotices(a),
              ::testing::Contains("energy not measured for 1 item: this board has no energy "
                                  "counter (NVML: not supported)"));
}

TEST(Energy, AReportWithoutEnergyHasNone) {
  const core::Report r = testing::BothModesReport();
  EXPECT_FALSE(HasEnergy(r));
  EXPECT_THAT(BuildFindings(Analysis(r)), ::testing::Each(::testing::Not(HasSubstr("energy"))));
  EXPECT_FALSE(EnergySum(Analysis(r), {core::Recipe::kBf16, core::Mode::kPrequant}, Scope{}));
}

}  // namespace
}  // namespace gemmprof::report
