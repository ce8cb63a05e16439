// Golden-file tests of every report format on the fixed result sets. Run with
// GEMMPROF_UPDATE_GOLDEN=1 to rewrite the files (then read the diff before committing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "client/render/listings.h"
#include "client/render/report_csv.h"
#include "client/render/report_document.h"
#include "client/render/report_json.h"
#include "report_fixtures.h"
#include "rounds_fixtures.h"

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
  CheckGolden(std::string(GetParam().name) + ".csv", render::RenderReportCsv(GetParam().make()));
}
TEST_P(GoldenTest, Json) {
  CheckGolden(std::string(GetParam().name) + ".json", render::RenderReportJson(GetParam().make()));
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
  CheckGolden("jobs.txt", render::RenderJobs({running, old}));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest,
                         ::testing::Values(Case{"hopper", testing::HopperReport},
                                           Case{"failed_item", testing::FailedItemReport},
                                           Case{"both_modes", testing::BothModesReport},
                                           Case{"rounds", [] { return testing::RoundsReport(); }}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gemmprof::client
