// Charts, tables and CSV of results measured in interleaved rounds: intervals and
// back-to-back figures reach every format (the findings are tested in
// tests/unit/report/findings_rounds_test.cc).
#include <gtest/gtest.h>

#include "client/render/report_charts.h"
#include "client/render/report_document.h"
#include "report/report_csv.h"
#include "tests/unit/report/report_fixtures.h"
#include "tests/unit/report/rounds_fixtures.h"

namespace gemmprof::client::render {
namespace {

namespace testing = report::testing;
using report::Analysis;
using report::RenderReportCsv;
using report::ReportCsvColumns;

TEST(Charts, LayerChartShowsIntervalsAndTheBackToBackTick) {
  const BarChart c = BuildChart(Analysis(testing::RoundsReport()), ChartKind::kLayer);
  ASSERT_FALSE(c.groups.empty());
  for (const BarGroup& g : c.groups) {
    ASSERT_TRUE(g.bars.front().whisker) << g.label;
    EXPECT_LT(g.bars.front().whisker->first, g.bars.front().whisker->second);
    EXPECT_TRUE(g.bars.front().marker) << g.label;
  }
  const auto svg = RenderChartSvg(testing::RoundsReport(), ChartKind::kLayer);
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(svg->find("whisker: 95% interval"), std::string::npos);
  EXPECT_NE(svg->find("stroke-dasharray"), std::string::npos);
  // Old results: no whiskers, no ticks.
  const BarChart old = BuildChart(Analysis(testing::HopperReport()), ChartKind::kLayer);
  for (const BarGroup& g : old.groups) {
    EXPECT_FALSE(g.bars.front().whisker);
    EXPECT_FALSE(g.bars.front().marker);
  }
}

TEST(Document, BackToBackCountsSizedPerShapeShowAsARange) {
  core::Report report = testing::RoundsReport();
  const std::string uniform = RenderReportTable(report);
  EXPECT_NE(uniform.find("back to back: 8 GEMMs per graph"), std::string::npos) << uniform;
  for (size_t i = 0; i < report.items.size(); i += 2) {
    if (report.items[i].result) report.items[i].result->b2b_count = 3;
  }
  const std::string mixed = RenderReportTable(report);
  EXPECT_NE(mixed.find("back to back: 3-8 GEMMs per graph"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("b2b ms: back to back, 3-8 per graph"), std::string::npos) << mixed;
}

TEST(Csv, NewColumnsAreAppendedAndFilled) {
  const std::vector<std::string>& cols = ReportCsvColumns();
  // Each set of columns was appended after the ones before it: rounds, efficiency, kernel
  // timing, the batch and energy columns, the routed-expert columns, then an item's own
  // fast accumulation.
  ASSERT_GE(cols.size(), 40u);
  const size_t end = cols.size() - 16;  // before the batch and energy columns
  EXPECT_EQ(cols[end - 27], "iso_ms");
  EXPECT_EQ(cols[end - 12], "copy_bytes_per_s");
  EXPECT_EQ(cols[end - 11], "item_id");
  EXPECT_EQ(cols[end - 8], "fraction_of_peak");
  EXPECT_EQ(cols[end - 6], "quant_fraction_of_copy_bandwidth");
  EXPECT_EQ(cols[end - 5], "kernel_median_ms");
  EXPECT_EQ(cols[end - 1], "profiled");
  EXPECT_EQ(cols[end], "batch_id");
  EXPECT_EQ(cols[end + 4], "batch_sm_clock_mhz_mean");
  EXPECT_EQ(cols[end + 12], "energy_not_measured");
  EXPECT_EQ(cols[end + 13], "group_tokens");
  EXPECT_EQ(cols[end + 14], "moe_layout");
  EXPECT_EQ(cols.back(), "fast_accum_own");
  const std::string csv = RenderReportCsv(testing::RoundsReport());
  const std::string first_row =
      csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1);
  size_t commas = 0;
  for (char ch : first_row) commas += ch == ',';
  EXPECT_EQ(commas + 1, cols.size()) << first_row;
  EXPECT_NE(first_row.find(",g0,"), std::string::npos) << first_row;  // group_uid
}

// Every item at 600 W over a 1.2 s window: joules = 0.6 x its ms, +-1%.
void AddEnergyAt600W(core::Report& report) {
  for (core::ItemRecord& item : report.items) {
    if (!item.result) continue;
    testing::SetEnergy(*item.result, item.result->isolated.center_ms * 0.6);
    item.result->energy.idle_power_w = 120;
  }
}

TEST(Document, EnergySectionHasPerLayerJoulesAndTheQuantizationsShare) {
  core::Report report = testing::RoundsReport();
  EXPECT_EQ(RenderReportTable(report).find("Quantization energy"), std::string::npos);
  AddEnergyAt600W(report);
  const std::string text = RenderReportTable(report);
  EXPECT_NE(text.find("Energy per layer and full model, autocast"), std::string::npos) << text;
  EXPECT_NE(text.find("Quantization energy per layer"), std::string::npos) << text;
  EXPECT_NE(text.find("idle 120 W before the job, not subtracted"), std::string::npos) << text;
  // bf16 quantizes nothing: only the FP8 recipes have a quantization row.
  const size_t at = text.find("Quantization energy per layer");
  const std::string table = text.substr(at, text.find("\n\n", at) - at);
  EXPECT_EQ(table.find("bf16"), std::string::npos) << table;
  EXPECT_NE(table.find("fp8-current"), std::string::npos) << table;
}

TEST(Document, OldResultsAreNeverRanked) {
  const std::string text = RenderReportTable(testing::HopperReport());
  EXPECT_NE(text.find("60 items measured before paired rounds: no intervals, not ranked"),
            std::string::npos);
}

}  // namespace
}  // namespace gemmprof::client::render
