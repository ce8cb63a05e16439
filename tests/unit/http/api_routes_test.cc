#include "server/http/api_routes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/json_document.h"
#include "report/report_csv.h"
#include "server/storage/open_store.h"
#include "tests/unit/storage/test_util.h"
#include "wire/round_trip.h"

namespace gemmprof::http {
namespace {

using nlohmann::json;
using storage::testing::SampleMeasurement;
using storage::testing::SeedItems;
using storage::testing::SeedJob;

constexpr int64_t kNowMs = 1'800'000'000'000;

// The error message of a reply, checking it is a JSON error with `status`.
std::string ErrorOf(const HttpReply& r, int status) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  auto doc = json::parse(r.body, nullptr, false);
  if (doc.is_discarded() || !doc.contains("error")) {
    ADD_FAILURE() << "not a JSON error: " << r.body;
    return "";
  }
  return doc["error"]["message"].get<std::string>();
}

TEST(ParseJobsQueryTest, AcceptsEveryParameter) {
  auto f = ParseJobsQuery({{"state", "running"},
                           {"node", "gpu-node-1"},
                           {"campaign", "h100 vs h200"},
                           {"page_size", "1000"},
                           {"page_token", "t"}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->state, core::JobState::kRunning);
  EXPECT_EQ(f->node, "gpu-node-1");
  EXPECT_EQ(f->campaign, "h100 vs h200");
  EXPECT_EQ(f->page_size, 1000);
  EXPECT_EQ(f->page_token, "t");
  auto defaults = ParseJobsQuery({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->page_size, 50);
  EXPECT_FALSE(defaults->state.has_value());
  EXPECT_FALSE(defaults->campaign.has_value());
}

TEST(ParseJobsQueryTest, BadValuesNameTheParameterTheValueAndTheLimit) {
  const std::vector<std::pair<QueryParams, std::string>> bad = {
      {{{"page_size", "0"}}, "page_size='0': expected an integer from 1 to 1000"},
      {{{"page_size", "1001"}}, "page_size='1001': expected an integer from 1 to 1000"},
      {{{"page_size", "12abc"}}, "page_size='12abc'"},
      {{{"page_size", ""}}, "page_size=''"},
      {{{"state", "done"}}, "state='done': unknown value (valid: queued, running"},
      {{{"node", "a b"}}, "node='a b': expected 1 to 64"},
      {{{"node", std::string(65, 'n')}}, "expected 1 to 64"},
      {{{"node", ""}}, "node=''"},
      {{{"campaign", ""}}, "campaign='': expected 1 to 64 characters"},
      {{{"campaign", std::string(65, 'c')}}, "expected 1 to 64 characters"},
      {{{"nodes", "x"}}, "unknown query parameter 'nodes' (valid: campaign, node, page_size"},
      {{{"state", "queued"}, {"state", "running"}}, "'state' is given 2 times"},
      {{{"page_token", std::string(2000, 'x')}}, "the limit is 1024"},
  };
  for (const auto& [params, want] : bad) {
    auto f = ParseJobsQuery(params);
    ASSERT_FALSE(f.ok()) << want;
    EXPECT_TRUE(absl::IsInvalidArgument(f.status()));
    EXPECT_NE(f.status().message().find(want), std::string::npos) << f.status();
  }
}

// A query's bytes that are not UTF-8 are the caller's error, named, and the error reply is
// JSON whatever its message quotes (it was a 500 with the JSON library's exception before).
TEST(ParseHistoryQueryTest, BytesThatAreNotUtf8AreA400NamingTheParameter) {
  auto f = ParseHistoryQuery({{"recipe", "f\x90\xc7lock"}}, kNowMs);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "recipe: byte 0x90 at offset 1 is not UTF-8; give text");
  auto j = ParseJobsQuery({{"node\xff", "a"}});
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(),
            "a query parameter's name: byte 0xFF at offset 4 is not UTF-8; give text");
  EXPECT_EQ(ErrorOf(ErrorReply(f.status()), 400),
            "recipe: byte 0x90 at offset 1 is not UTF-8; give text");
  // A message that quotes such bytes still makes a JSON reply (U+FFFD in their place).
  EXPECT_EQ(ErrorOf(ErrorReply(absl::InvalidArgumentError("job id='\x90'")), 400),
            "job id='\xef\xbf\xbd'");
}

TEST(ParseHistoryQueryTest, AcceptsShapeRecipeAndAges) {
  auto f = ParseHistoryQuery({{"recipe", "fp8-block"},
                              {"shape", "16384x4096x12288"},
                              {"device", "NVIDIA H200"},
                              {"since", "7d"},
                              {"until", "1700000000000"},
                              {"node", "n1"},
                              {"pass", "wgrad"},
                              {"mode", "prequant"},
                              {"job", "12"},
                              {"page_size", "10000"}},
                             kNowMs);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->recipe, core::Recipe::kFp8Block);
  EXPECT_EQ(f->m, 16384);
  EXPECT_EQ(f->k, 4096);
  EXPECT_EQ(f->n, 12288);
  EXPECT_EQ(f->device_name, "NVIDIA H200");
  EXPECT_EQ(f->since_ms, kNowMs - 7 * 86'400'000);
  EXPECT_EQ(f->until_ms, 1'700'000'000'000);
  EXPECT_EQ(f->node, "n1");
  EXPECT_EQ(f->pass, core::Pass::kWgrad);
  EXPECT_EQ(f->mode, core::Mode::kPrequant);
  EXPECT_EQ(f->job_id, 12);
  EXPECT_EQ(f->page_size, 10000);
  for (const auto& [age, ms] : std::vector<std::pair<std::string, int64_t>>{
           {"90s", 90'000}, {"30m", 1'800'000}, {"12h", 43'200'000}}) {
    auto g = ParseHistoryQuery({{"since", age}}, kNowMs);
    ASSERT_TRUE(g.ok()) << age;
    EXPECT_EQ(g->since_ms, kNowMs - ms) << age;
  }
  // The longest age reaches before 1970: from the start, not an error on since_ms.
  auto oldest = ParseHistoryQuery({{"since", "36500d"}}, kNowMs);
  ASSERT_TRUE(oldest.ok()) << oldest.status();
  EXPECT_EQ(oldest->since_ms, 0);
}

TEST(ParseHistoryQueryTest, BadValuesNameTheParameterTheValueAndTheLimit) {
  const std::vector<std::pair<QueryParams, std::string>> bad = {
      {{{"shape", "4096x4096"}}, "shape='4096x4096': expected MxKxN"},
      {{{"shape", "0x1x1"}}, "shape='0x1x1'"},
      {{{"shape", "1x1x1x1"}}, "shape='1x1x1x1'"},
      {{{"shape", "axbxc"}}, "from 1 to 2147483648"},
      {{{"shape", "1x1x4294967296"}}, "shape='1x1x4294967296'"},
      {{{"recipe", "fp16"}}, "recipe='fp16': unknown value (valid: bf16"},
      {{{"pass", "forward"}}, "pass='forward': unknown value (valid: fprop, dgrad, wgrad)"},
      {{{"mode", "both"}}, "mode='both'"},
      {{{"since", "yesterday"}}, "since='yesterday': expected unix milliseconds or an age"},
      {{{"since", "-5"}}, "since='-5'"},
      {{{"since", "d"}}, "since='d'"},
      {{{"until", "99999999d"}}, "at most 36500d"},
      {{{"job", "0"}}, "job='0': expected an integer from 1"},
      {{{"page_size", "10001"}}, "page_size='10001': expected an integer from 1 to 10000"},
      {{{"shapes", "1x1x1"}}, "unknown query parameter 'shapes'"},
  };
  for (const auto& [params, want] : bad) {
    auto f = ParseHistoryQuery(params, kNowMs);
    ASSERT_FALSE(f.ok()) << want;
    EXPECT_TRUE(absl::IsInvalidArgument(f.status()));
    EXPECT_NE(f.status().message().find(want), std::string::npos) << f.status();
  }
}

TEST(HttpStatusOfTest, MapsCodes) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
  EXPECT_EQ(ErrorOf(ErrorReply(absl::UnavailableError("db down")), 503), "db down");
}

class RoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::StoreOptions options;
    options.node = "node-a";
    auto store = storage::OpenResultStore(dir_.File("results.db"), options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto job = store_->CreateJob(SeedJob("first"), SeedItems(6));
    ASSERT_TRUE(job.ok()) << job.status();
    job_ = *job;
    auto items = store_->GetItems(job_.id);
    ASSERT_TRUE(items.ok());
    for (size_t i = 0; i < items->size(); ++i) {
      ASSERT_TRUE(store_
                      ->FinishItem((*items)[i].item.id, core::ItemStatus::kDone, "",
                                   SampleMeasurement(1.0 + i), job_.device, job_.spec.timing,
                                   "key" + std::to_string(i), std::nullopt)
                      .ok());
    }
    ASSERT_TRUE(store_->SetJobState(job_.id, core::JobState::kSucceeded, "").ok());
  }

  storage::testing::TempDir dir_;
  std::unique_ptr<storage::ResultStore> store_;
  core::JobRecord job_;
};

TEST_F(RoutesTest, JobsListsTheStoredJobs) {
  ASSERT_TRUE(store_->CreateJob(SeedJob("second"), SeedItems(1)).ok());
  HttpReply r = JobsRoute(*store_, {});
  ASSERT_EQ(r.status, 200) << r.body;
  auto doc = json::parse(r.body);
  ASSERT_EQ(doc["jobs"].size(), 2u);
  EXPECT_EQ(doc["jobs"][0]["label"], "second");  // newest first
  EXPECT_EQ(doc["jobs"][1]["id"], job_.id);
  EXPECT_EQ(doc["jobs"][1]["state"], "succeeded");
  EXPECT_EQ(doc["jobs"][1]["total_items"], 6);
  EXPECT_EQ(doc["jobs"][1]["device"]["name"], "NVIDIA H100 80GB HBM3");

  auto page = json::parse(JobsRoute(*store_, {{"page_size", "1"}}).body);
  ASSERT_EQ(page["jobs"].size(), 1u);
  ASSERT_FALSE(page["next_page_token"].get<std::string>().empty());
  auto next = json::parse(
      JobsRoute(*store_, {{"page_size", "1"}, {"page_token", page["next_page_token"]}}).body);
  ASSERT_EQ(next["jobs"].size(), 1u);
  EXPECT_EQ(next["jobs"][0]["id"], job_.id);

  auto queued = json::parse(JobsRoute(*store_, {{"state", "queued"}}).body);
  ASSERT_EQ(queued["jobs"].size(), 1u);
  EXPECT_EQ(queued["jobs"][0]["label"], "second");
}

TEST_F(RoutesTest, JobsOfACampaignAreItsJobsOnly) {
  for (const char* label : {"h100", "h200"}) {
    core::JobRecord job = SeedJob(label);
    job.spec.campaign = "camp-1";
    job.spec.where.kind = core::PlacementKind::kModel;
    job.spec.where.name = label;
    ASSERT_TRUE(store_->CreateJob(job, SeedItems(1)).ok());
  }
  core::JobRecord other = SeedJob("other");
  other.spec.campaign = "camp-2";
  ASSERT_TRUE(store_->CreateJob(other, SeedItems(1)).ok());
  auto doc = json::parse(JobsRoute(*store_, {{"campaign", "camp-1"}}).body);
  ASSERT_EQ(doc["jobs"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["jobs"][0]["label"], "h200");
  EXPECT_EQ(doc["jobs"][0]["campaign"], "camp-1");
  EXPECT_EQ(doc["jobs"][0]["where"], "model:h200");
  EXPECT_EQ(doc["jobs"][1]["label"], "h100");
  EXPECT_TRUE(json::parse(JobsRoute(*store_, {{"campaign", "camp-3"}}).body)["jobs"].empty());
  // A job of no campaign has an empty one.
  auto all = json::parse(JobsRoute(*store_, {}).body);
  EXPECT_EQ(all["jobs"].back()["campaign"], "");
}

TEST_F(RoutesTest, JobsBadParametersAre400) {
  EXPECT_NE(ErrorOf(JobsRoute(*store_, {{"page_size", "5000"}}), 400).find("page_size='5000'"),
            std::string::npos);
  EXPECT_FALSE(ErrorOf(JobsRoute(*store_, {{"page_token", "garbage!"}}), 400).empty());
}

TEST_F(RoutesTest, ReportIsTheReportJsonDocument) {
  HttpReply r = ReportRoute(*store_, std::to_string(job_.id));
  ASSERT_EQ(r.status, 200) << r.body;
  core::Report report{*store_->GetJob(job_.id), *store_->GetItems(job_.id)};
  EXPECT_EQ(r.body, report::JsonDocument(*wire::RoundTrip(report)));
  auto doc = json::parse(r.body);
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["items"].size(), 6u);
}

TEST_F(RoutesTest, ReportOfUnknownOrMalformedIds) {
  EXPECT_NE(ErrorOf(ReportRoute(*store_, "999"), 404).find("999"), std::string::npos);
  for (const char* bad : {"0", "-1", "abc", "1e3", "99999999999999999999"}) {
    EXPECT_NE(ErrorOf(ReportRoute(*store_, bad), 400).find("job id='"), std::string::npos) << bad;
  }
}

TEST_F(RoutesTest, HistoryFiltersStoredResults) {
  const core::WorkItem first = SeedItems(1).front();
  const std::string shape = std::to_string(first.op.shape.m) + "x" +
                            std::to_string(first.op.shape.k) + "x" +
                            std::to_string(first.op.shape.n);
  HttpReply r = HistoryRoute(*store_, {{"shape", shape}, {"recipe", "bf16"}}, kNowMs);
  ASSERT_EQ(r.status, 200) << r.body;
  auto doc = json::parse(r.body);
  ASSERT_GE(doc["results"].size(), 1u);
  for (const auto& row : doc["results"]) {
    EXPECT_EQ(row["recipe"], "bf16");
    EXPECT_EQ(row["m"], first.op.shape.m);
    EXPECT_EQ(row["n"], first.op.shape.n);
    EXPECT_EQ(row["device"]["driver_version"], "580.65.06");
    EXPECT_GT(row["time_ms"].get<double>(), 0);
    EXPECT_GT(row["tflops"].get<double>(), 0);
  }
  auto all = json::parse(HistoryRoute(*store_, {}, kNowMs).body);
  EXPECT_EQ(all["results"].size(), 6u);
  auto none = json::parse(HistoryRoute(*store_, {{"recipe", "nvfp4"}}, kNowMs).body);
  EXPECT_EQ(none["results"].size(), 0u);
  EXPECT_NE(ErrorOf(HistoryRoute(*store_, {{"shape", "1x2"}}, kNowMs), 400).find("shape='1x2'"),
            std::string::npos);
}

// A CSV body's lines (no line holds a quoted newline in these fixtures).
std::vector<std::string> Lines(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

TEST_F(RoutesTest, ReportCsvIsTheCliCsv) {
  HttpReply r = ReportCsvRoute(*store_, std::to_string(job_.id));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/csv; charset=utf-8");
  core::Report report{*store_->GetJob(job_.id), *store_->GetItems(job_.id)};
  EXPECT_EQ(r.body, report::RenderReportCsv(*wire::RoundTrip(report)));
  EXPECT_EQ(Lines(r.body).size(), 7u);  // header + 6 items
  EXPECT_NE(ErrorOf(ReportCsvRoute(*store_, "999"), 404).find("999"), std::string::npos);
  EXPECT_NE(ErrorOf(ReportCsvRoute(*store_, "abc"), 400).find("job id='abc'"), std::string::npos);
}

TEST_F(RoutesTest, HistoryCsvHasTheJsonFieldsAsColumns) {
  const std::vector<std::string> columns = HistoryCsvColumns();
  ASSERT_FALSE(columns.empty());
  EXPECT_EQ(columns.front(), "result_id");
  EXPECT_NE(std::find(columns.begin(), columns.end(), "device_name"), columns.end());
  EXPECT_NE(std::find(columns.begin(), columns.end(), "time_ms"), columns.end());

  HttpReply r = HistoryCsvRoute(*store_, {}, kNowMs);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/csv; charset=utf-8");
  const std::vector<std::string> lines = Lines(r.body);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(Cells(lines[0]), columns);
  // Each row holds the JSON route's values, column by column.
  auto doc = json::parse(HistoryRoute(*store_, {}, kNowMs).body);
  for (size_t i = 0; i < 6; ++i) {
    const std::vector<std::string> cells = Cells(lines[i + 1]);
    ASSERT_EQ(cells.size(), columns.size()) << lines[i + 1];
    const json& row = doc["results"][i];
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& name = columns[c];
      const json& v = name.rfind("device_", 0) == 0 ? row["device"][name.substr(7)] : row[name];
      if (v.is_string()) {
        EXPECT_EQ(cells[c], v.get<std::string>()) << name;
      } else if (v.is_boolean()) {
        EXPECT_EQ(cells[c], v.get<bool>() ? "true" : "false") << name;
      } else {
        EXPECT_DOUBLE_EQ(std::stod(cells[c]), v.get<double>()) << name;
      }
    }
  }
  EXPECT_TRUE(r.headers.empty());  // one page: no next token

  HttpReply page = HistoryCsvRoute(*store_, {{"page_size", "2"}}, kNowMs);
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(Lines(page.body).size(), 3u);
  ASSERT_EQ(page.headers.size(), 1u);
  EXPECT_EQ(page.headers[0].first, "X-Next-Page-Token");
  HttpReply next = HistoryCsvRoute(
      *store_, {{"page_size", "2"}, {"page_token", page.headers[0].second}}, kNowMs);
  ASSERT_EQ(next.status, 200);
  EXPECT_EQ(Lines(next.body).size(), 3u);
  EXPECT_NE(Lines(next.body)[1], Lines(page.body)[1]);

  // No result: the header alone.
  EXPECT_EQ(Lines(HistoryCsvRoute(*store_, {{"recipe", "nvfp4"}}, kNowMs).body).size(), 1u);
  // Bad parameters: the JSON error of the JSON route.
  EXPECT_NE(ErrorOf(HistoryCsvRoute(*store_, {{"shape", "1x2"}}, kNowMs), 400).find("shape='1x2'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(HistoryCsvRoute(*store_, {{"format", "csv"}}, kNowMs), 400)
                .find("unknown query parameter 'format'"),
            std::string::npos);
}

}  // namespace
}  // namespace gemmprof::http
