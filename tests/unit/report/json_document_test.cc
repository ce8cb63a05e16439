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
  const core::Measurement& m = testing::AddKernelFigures(report);
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
