// The read API of gemmprofd --http (server/http/api_routes.h) over a real SQLite store of
// one finished job: the input is a route selector byte, then a decoded query string
// ("key=value" pairs joined by '&', as httplib hands them over) or, for the report routes,
// the job id as sent. Every answer is a reply whose status says what happened: 200 with a
// body, or an error that is a JSON document, 400 for anything the caller got wrong, never
// a 500 or a crash; and a 200 for a filter that names none of the stored results is never
// a failure of the store.
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

#include "server/http/api_routes.h"
#include "server/storage/open_store.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/unit/storage/test_util.h"

namespace {

using gemmprof::storage::ResultStore;

constexpr int64_t kNowMs = 1'800'000'000'000;

// One store for the whole run: a finished job of four results, in a folder removed at exit.
ResultStore& Store() {
  static gemmprof::storage::testing::TempDir dir;
  static std::unique_ptr<ResultStore> store = [] {
    using namespace gemmprof;
    using namespace gemmprof::storage::testing;
    storage::StoreOptions options;
    options.node = "fuzz-node";
    options.fsync_each_commit = false;
    auto opened = storage::OpenResultStore(dir.File("results.db"), options);
    FUZZ_CHECK(opened.ok());
    auto job = (*opened)->CreateJob(SeedJob("fuzz"), SeedItems(4));
    FUZZ_CHECK(job.ok());
    auto items = (*opened)->GetItems(job->id);
    FUZZ_CHECK(items.ok());
    for (size_t i = 0; i < items->size(); ++i) {
      FUZZ_CHECK((*opened)
                     ->FinishItem((*items)[i].item.id, core::ItemStatus::kDone, "",
                                  SampleMeasurement(1.0 + static_cast<double>(i)), job->device,
                                  job->spec.timing, "key" + std::to_string(i), std::nullopt)
                     .ok());
    }
    FUZZ_CHECK((*opened)->SetJobState(job->id, core::JobState::kSucceeded, "").ok());
    return *std::move(opened);
  }();
  return *store;
}

gemmprof::http::QueryParams Params(std::string_view text) {
  gemmprof::http::QueryParams params;
  gemmprof::fuzz::InputReader in(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  while (!in.done()) {
    const std::string_view pair = in.Until('&');
    const size_t eq = pair.find('=');
    params.emplace(std::string(pair.substr(0, eq)),
                   eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
  }
  return params;
}

void CheckReply(const gemmprof::http::HttpReply& reply) {
  FUZZ_CHECK(reply.status == 200 || reply.status == 400 || reply.status == 404);
  if (reply.status != 200 || reply.content_type == "application/json") {
    FUZZ_CHECK(reply.content_type == "application/json");
    FUZZ_CHECK(nlohmann::json::accept(reply.body));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof::http;
  gemmprof::fuzz::InputReader in(data, size);
  const uint8_t route = in.Byte() % 5;
  const std::string_view text = in.Rest();
  ResultStore& store = Store();
  switch (route) {
    case 0:
      CheckReply(JobsRoute(store, Params(text)));
      break;
    case 1:
      CheckReply(HistoryRoute(store, Params(text), kNowMs));
      break;
    case 2:
      CheckReply(HistoryCsvRoute(store, Params(text), kNowMs));
      break;
    case 3:
      CheckReply(ReportRoute(store, text));
      break;
    default:
      CheckReply(ReportCsvRoute(store, text));
  }
  return 0;
}
