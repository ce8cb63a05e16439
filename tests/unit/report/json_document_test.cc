// The one JSON document of a job (REPORT_JSON.md); the golden files pin every byte.
#include "report/json_document.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::report {
namespace {

using core::Mode;
using core::Recipe;

TEST(JsonDocumentTest, SchemaVersionItemsAndTotals) {
  const core::Report report = testing::BothModesReport();
  const auto j = nlohmann::json::parse(JsonDocument(report));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["items"].size(), report.items.size());
  EXPECT_EQ(j["job"]["id"], 21);
  EXPECT_EQ(j["totals"].size(), 6u);  // 3 recipes x 2 modes
  EXPECT_EQ(j["quantization_overhead"].size(), 3u);
  const auto& fp8 = j["quantization_overhead"][1];
  EXPECT_EQ(fp8["recipe"], "fp8-current");
  EXPECT_NEAR(fp8["overhead_per_layer_ms"].get<double>(), 1.08, 1e-9);
  // Every ordered pair of complete recipes, per mode.
  EXPECT_EQ(j["speedups"].size(), 2u * 3 * 2);
}

// `--timing kernels`: the document carries the kernel figures raw, null without them.
TEST(JsonDocumentTest, KernelFiguresWhereMeasured) {
  core::Report report = testing::HopperReport();
  core::ItemRecord* measured = nullptr;
  for (auto& item : report.items) {
    if (item.result && !measured) measured = &item;
  }
  ASSERT_NE(measured, nullptr);
  core::Measurement& m = *measured->result;
  m.kernel = core::SampleStats::FromSamples(
      {0.98 * m.time.median_ms, 0.99 * m.time.median_ms, 0.97 * m.time.median_ms});
  m.kernel_samples = 3;
  m.kernel_quant_ms = 0.05;
  m.kernel_names = "nvjet_sm90_gemm x1; RowwiseQuantize<128> x2";
  const auto j = nlohmann::json::parse(JsonDocument(report));
  int found = 0;
  for (const auto& item : j["items"]) {
    if (item["result"].is_null()) continue;
    const auto& k = item["result"]["kernel"];
    if (k.is_null()) continue;
    ++found;
    EXPECT_EQ(k["samples"], 3);
    EXPECT_DOUBLE_EQ(k["quant_ms"].get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(k["median_ms"].get<double>(), m.kernel.median_ms);
    EXPECT_EQ(k["names"], m.kernel_names);
  }
  EXPECT_EQ(found, 1);
}

}  // namespace
}  // namespace gemmprof::report
