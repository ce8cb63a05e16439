// Golden-file tests of every report format on the fixed result sets. Run with
// GEMMPROF_UPDATE_GOLDEN=1 to rewrite the files (then read the diff before committing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "client/render/comparison.h"
#include "client/render/listings.h"
#include "client/render/report_document.h"
#include "core/derive.h"
#include "fake_client.h"
#include "report/json_document.h"
#include "report/report_csv.h"
#include "tests/unit/report/report_fixtures.h"
#include "tests/unit/report/rounds_fixtures.h"

namespace gemmprof::client {
namespace {

std::string GoldenPath(const std::string& name) {
  return std::string(GEMMPROF_CLIENT_GOLDEN_DIR) + "/" + name;
}

void CheckGolden(const std::string& name, const std::string& actual) {
  const std::string path = GoldenPath(name);
  const char* update = std::getenv("GEMMPROF_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden " << path << " (run with GEMMPROF_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  if (actual == expected.str()) return;
  // Name the first differing line instead of printing two whole reports.
  std::istringstream a(actual), e(expected.str());
  std::string la, le;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_e = static_cast<bool>(std::getline(e, le));
    if (!more_a && !more_e) break;
    if (la != le || more_a != more_e) {
      ADD_FAILURE() << "golden " << path << " differs at line " << line << "\n  expected: " << le
                    << "\n  actual:   " << la << "\n(GEMMPROF_UPDATE_GOLDEN=1 rewrites it)";
      return;
    }
  }
}

// The CSV, JSON and Markdown forms of a listing against <name>.{csv,json,md}.
void CheckListingGolden(const std::string& name, const render::Listing& listing) {
  CheckGolden(name + ".csv", render::RenderListing(listing, render::ListingFormat::kCsv));
  CheckGolden(name + ".json", render::RenderListing(listing, render::ListingFormat::kJson));
  CheckGolden(name + ".md", render::RenderListing(listing, render::ListingFormat::kMarkdown));
}

struct Case {
  const char* name;
  std::function<core::Report()> make;
};

class GoldenTest : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenTest, Table) {
  CheckGolden(std::string(GetParam().name) + ".txt", render::RenderReportTable(GetParam().make()));
}
TEST_P(GoldenTest, TableWithChart) {
  CheckGolden(std::string(GetParam().name) + "_chart.txt",
              render::RenderReportTable(GetParam().make(), /*with_chart=*/true));
}
TEST_P(GoldenTest, Csv) {
  CheckGolden(std::string(GetParam().name) + ".csv", report::RenderReportCsv(GetParam().make()));
}
TEST_P(GoldenTest, Json) {
  CheckGolden(std::string(GetParam().name) + ".json", report::JsonDocument(GetParam().make()));
}
TEST_P(GoldenTest, Markdown) {
  CheckGolden(std::string(GetParam().name) + ".md",
              render::RenderReportMarkdown(GetParam().make()));
}

// `gemmprof jobs`: one job per row, with the token name that submitted it ("-" for jobs
// of a daemon without tokens).
TEST(JobsGoldenTest, ListingShowsWhoSubmitted) {
  core::JobRecord running;
  running.id = 12;
  running.state = core::JobState::kRunning;
  running.total_items = 72;
  running.finished_items = 30;
  running.plan.model_name = "llama-3-8b";
  running.spec.label = "fp8 sweep";
  running.device.name = "NVIDIA H100 80GB HBM3";
  running.submitted_by = "alice";
  running.created_ms = 1767225600000;  // 2026-01-01 00:00:00 UTC
  core::JobRecord old = running;
  old.id = 3;
  old.state = core::JobState::kSucceeded;
  old.finished_items = 72;
  old.failed_items = 2;
  old.spec.label = "";
  old.submitted_by = "";
  old.device.name = "";
  old.created_ms = 1767139200000;
  // A campaign's job adds the campaign column; a job of none shows "-" there.
  running.spec.campaign = "h100-vs-h200";
  running.spec.where = {core::PlacementKind::kModel, "NVIDIA H100 80GB HBM3"};
  running.measuring_nodes = {"gpu-node-2", "gpu-node-5"};
  CheckGolden("jobs.txt", render::RenderListing(render::JobsListing({running, old}),
                                                render::ListingFormat::kTable));
  old.error = "2 items failed: one, \"quoted\"";  // CSV must quote it
  CheckListingGolden("jobs", render::JobsListing({running, old}));
}

// Every listing in every machine form and Markdown (the table forms are above or in
// app_test): one golden file per listing and format.
TEST(ListingsGoldenTest, History) {
  const core::Report r = report::testing::HopperReport();
  std::vector<core::ResultRow> rows;
  for (const core::ItemRecord& item : r.items) {
    if (rows.size() == 4) break;
    rows.push_back(testing::StoredRow(int64_t(rows.size()) + 100, r, item));
  }
  rows.back().cached = true;
  rows.back().measurement.reset();  // a row without a measurement leaves its figures empty
  CheckListingGolden("history", render::HistoryListing(rows));
}

TEST(ListingsGoldenTest, Devices) {
  core::DeviceInfo up = report::testing::HopperReport().job.device;
  core::DeviceInfo never;
  never.backend = "cuda";
  never.name = "CUDA device 1";
  never.unavailable = true;
  never.unavailable_reason = "its worker failed to start 3 times in a row";
  CheckListingGolden("devices", render::DevicesListing({up, never}));
}

TEST(ListingsGoldenTest, Plan) {
  core::JobSpec spec;
  spec.shapes = {{1024, 4096, 4096}, {2048, 4096, 4096}};
  spec.recipes = {core::Recipe::kBf16, core::Recipe::kFp8Rowwise};
  const absl::StatusOr<core::Plan> plan = core::DerivePlan(spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  CheckListingGolden("plan", render::PlanListing(*plan, spec));
}

TEST(ListingsGoldenTest, Compare) {
  const core::Report a = report::testing::HopperReport();
  core::Report b = a;
  b.job.id = a.job.id + 1;
  b.job.device.cublaslt_version = "13.1.0";
  for (size_t i = 0; i < b.items.size(); ++i)
    if (b.items[i].result)
      b.items[i].result->time.median_ms *= i % 3 == 0 ? 1.2 : (i % 3 == 1 ? 0.8 : 1.0);
  CheckListingGolden("compare",
                     render::ComparisonListing(report::CompareReports(a, b), a.job.id, b.job.id));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest,
                         ::testing::Values(Case{"hopper", report::testing::HopperReport},
                                           Case{"failed_item", report::testing::FailedItemReport},
                                           Case{"both_modes", report::testing::BothModesReport},
                                           Case{"rounds",
                                                [] { return report::testing::RoundsReport(); }}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gemmprof::client
