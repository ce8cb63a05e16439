// Latency of the read paths at 10,000 and 100,000 results: a job report (GetJob +
// GetItems of a 100-item job) and two history queries, on the store directly and
// through the daemon's gRPC API (GetReport, QueryResults) served in process on
// loopback. Fills a throwaway database in a temporary directory through the public
// API, prints a table, exits 0 (1 if any call fails).
// Usage: gemmprof_store_bench [KEEP_DB_PATH]
#include <grpcpp/create_channel.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/store/bench_common.h"
#include "core/cache_key.h"
#include "device/host/host_runner.h"
#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "server/api/server.h"
#include "server/storage/sqlite/sqlite_store.h"

namespace gemmprof::storage {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kItemsPerJob = 100;
constexpr int kQueries = 200;

struct Row {
  int64_t results = 0;
  std::string operation;
  double p50_ms = 0, p99_ms = 0;
};

[[noreturn]] void Die(const absl::Status& status, const char* what) {
  std::fprintf(stderr, "store_bench: %s: %s\n", what, std::string(status.message()).c_str());
  std::exit(1);
}

// A job shaped like the seed tutorial's: 4 ops x 3 passes x recipes x modes.
std::vector<core::WorkItem> JobItems(int job_index) {
  const int64_t hidden[] = {2048, 4096, 5120, 8192};
  const int64_t tokens[] = {4096, 8192, 15872};
  const int64_t h = hidden[job_index % 4];
  const int64_t m = tokens[(job_index / 4) % 3];
  const struct {
    const char* name;
    int64_t k, n;
  } ops[] = {{"qkv", h, 3 * h}, {"attn_out", h, h}, {"mlp_up", h, 4 * h}, {"mlp_down", 4 * h, h}};
  const core::Recipe recipes[] = {core::Recipe::kBf16, core::Recipe::kFp8Current,
                                  core::Recipe::kFp8Delayed, core::Recipe::kFp8Block,
                                  core::Recipe::kMxfp8};
  std::vector<core::WorkItem> items;
  for (int i = 0; i < kItemsPerJob; ++i) {
    const auto& op = ops[i % 4];
    core::WorkItem item;
    item.op.name = op.name;
    item.op.pass = static_cast<core::Pass>((i / 4) % 3);
    // Dgrad swaps K and N; Wgrad is (K, M, N), as derived for a real model.
    if (item.op.pass == core::Pass::kFprop) item.op.shape = {m, op.k, op.n};
    if (item.op.pass == core::Pass::kDgrad) item.op.shape = {m, op.n, op.k};
    if (item.op.pass == core::Pass::kWgrad) item.op.shape = {op.k, m, op.n};
    item.op.layers = 32;
    item.recipe = recipes[(i / 12) % 5];
    item.mode = (i / 60) % 2 == 0 ? core::Mode::kAutocast : core::Mode::kPrequant;
    items.push_back(item);
  }
  return items;
}

core::Measurement Measure(std::mt19937_64& rng, const core::WorkItem& item) {
  std::normal_distribution<double> noise(1.0, 0.02);
  const double flops = item.op.Flops();
  std::vector<double> samples(100);
  for (double& s : samples) s = flops / 600e12 * 1e3 * noise(rng);
  core::Measurement m;
  m.time = core::SampleStats::FromSamples(std::move(samples));
  m.quant_ms = m.time.median_ms * 0.12;
  m.flops = flops;
  m.bytes = 2.0 * (item.op.shape.m * item.op.shape.k + item.op.shape.k * item.op.shape.n +
                   item.op.shape.m * item.op.shape.n);
  m.algorithm = "algo=66 tile=256x128 stages=4 splitk=1";
  m.verification = core::Verification::kPassed;
  m.rel_error = 3e-3;
  m.error_threshold = 2e-2;
  m.telemetry = {1755, 1980, 2619, 610, 690, 67, 0, 0, 12};
  return m;
}

// Adds `jobs` finished jobs, item by item as the daemon does: cache lookup, start,
// finish (as a cache hit when the key was measured before).
void Fill(SqliteStore& store, int first_job, int jobs, std::mt19937_64& rng) {
  const core::TimingOptions timing;
  for (int j = first_job; j < first_job + jobs; ++j) {
    core::JobRecord job;
    job.spec.label = "bench " + std::to_string(j);
    job.device = bench::BenchDevice(j % 2);
    // A seed per job keeps every cache key new, so each item adds one result row.
    core::TimingOptions job_timing = timing;
    job_timing.seed = static_cast<uint64_t>(j);
    job.spec.timing = job_timing;
    absl::StatusOr<core::JobRecord> stored = store.CreateJob(job, JobItems(j));
    if (!stored.ok()) Die(stored.status(), "CreateJob");
    absl::StatusOr<std::vector<core::ItemRecord>> items = store.GetItems(stored->id);
    if (!items.ok()) Die(items.status(), "GetItems");
    for (const core::ItemRecord& rec : *items) {
      const std::string key =
          core::CacheKey(job.device, rec.item, job_timing, "workload: training step");
      absl::StatusOr<std::optional<CachedResult>> hit = store.LookupCache(key);
      if (!hit.ok()) Die(hit.status(), "LookupCache");
      absl::Status s = store.MarkItemRunning(rec.item.id);
      if (!s.ok()) Die(s, "MarkItemRunning");
      if (hit->has_value()) {
        s = store.FinishItem(rec.item.id, core::ItemStatus::kDone, "", (*hit)->measurement,
                             job.device, job_timing, key, (*hit)->result_id);
      } else {
        s = store.FinishItem(rec.item.id, core::ItemStatus::kDone, "", Measure(rng, rec.item),
                             job.device, job_timing, key, std::nullopt);
      }
      if (!s.ok()) Die(s, "FinishItem");
    }
    absl::Status s = store.SetJobState(stored->id, core::JobState::kSucceeded, "");
    if (!s.ok()) Die(s, "SetJobState");
  }
}

Row Time(int64_t results, std::string operation, const std::function<void(int)>& op) {
  const bench::Percentiles p = bench::TimeCalls(kQueries, op);
  return {results, std::move(operation), p.p50_ms, p.p99_ms};
}

// The same reads as a client sees them: protobuf encoding, gRPC on loopback.
void MeasureApi(gemmprof::v1::GemmProf::Stub& stub, int64_t results, int jobs, std::mt19937_64& rng,
                std::vector<Row>* rows) {
  std::uniform_int_distribution<int64_t> job_id(1, jobs);
  rows->push_back(Time(results, "GetReport RPC (100 items)", [&](int) {
    grpc::ClientContext ctx;
    gemmprof::v1::GetReportRequest req;
    req.set_job_id(job_id(rng));
    gemmprof::v1::Report report;
    const grpc::Status s = stub.GetReport(&ctx, req, &report);
    if (!s.ok() || report.items_size() != kItemsPerJob) {
      Die(absl::InternalError(s.error_message()), "GetReport");
    }
  }));
  rows->push_back(Time(results, "QueryResults RPC recipe+pass, page 100", [&](int i) {
    grpc::ClientContext ctx;
    gemmprof::v1::QueryResultsRequest req;
    req.set_recipe(std::string(core::ToString(core::AllRecipes()[i % 5])));
    req.set_pass(std::string(core::ToString(static_cast<core::Pass>(i % 3))));
    req.set_page_size(100);
    gemmprof::v1::QueryResultsResponse resp;
    const grpc::Status s = stub.QueryResults(&ctx, req, &resp);
    if (!s.ok() || resp.results_size() == 0) {
      Die(absl::InternalError(s.error_message()), "QueryResults RPC");
    }
  }));
}

void Measure(SqliteStore& store, int jobs, std::mt19937_64& rng, std::vector<Row>* rows,
             gemmprof::v1::GemmProf::Stub& stub) {
  ResultFilter count;
  count.page_size = 10000;
  int64_t results = 0;
  for (;;) {
    absl::StatusOr<Page<ResultRow>> page = store.QueryResults(count);
    if (!page.ok()) Die(page.status(), "QueryResults");
    results += static_cast<int64_t>(page->items.size());
    if (page->next_page_token.empty()) break;
    count.page_token = page->next_page_token;
  }
  std::uniform_int_distribution<int64_t> job_id(1, jobs);
  rows->push_back(Time(results, "report: GetJob + GetItems (100 items)", [&](int) {
    const int64_t id = job_id(rng);
    absl::StatusOr<core::JobRecord> job = store.GetJob(id);
    if (!job.ok()) Die(job.status(), "GetJob");
    absl::StatusOr<std::vector<core::ItemRecord>> items = store.GetItems(id);
    if (!items.ok() || items->size() != kItemsPerJob) Die(items.status(), "GetItems");
  }));
  rows->push_back(Time(results, "QueryResults recipe+pass, page 100", [&](int i) {
    ResultFilter f;
    f.recipe = core::AllRecipes()[i % 5];
    f.pass = static_cast<core::Pass>(i % 3);
    f.page_size = 100;
    absl::StatusOr<Page<ResultRow>> page = store.QueryResults(f);
    if (!page.ok() || page->items.empty()) Die(page.status(), "QueryResults recipe+pass");
  }));
  rows->push_back(Time(results, "QueryResults m+k+n, page 100", [&](int i) {
    const core::WorkItem item = JobItems(i)[i % kItemsPerJob];
    ResultFilter f;
    f.m = item.op.shape.m;
    f.k = item.op.shape.k;
    f.n = item.op.shape.n;
    f.page_size = 100;
    absl::StatusOr<Page<ResultRow>> page = store.QueryResults(f);
    if (!page.ok() || page->items.empty()) Die(page.status(), "QueryResults m+k+n");
  }));
  MeasureApi(stub, results, jobs, rng, rows);
}

int Main(int argc, char** argv) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "gemmprof_store_bench_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("store_bench: mkdtemp");
    return 1;
  }
  const std::filesystem::path dir = pattern;
  // An optional argument keeps the filled database at that path for inspection.
  const bool keep = argc > 1;
  const std::string path = keep ? std::string(argv[1]) : (dir / "bench.db").string();
  SqliteStore::Options options;
  // A throwaway file: fsync per commit would only make the fill slow.
  options.fsync_each_commit = false;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path, options);
  if (!store.ok()) Die(store.status(), "Open");
  // The daemon's API over the same store; no job is submitted, so the runner idles.
  device::HostRunner runner;
  queue::JobQueue queue(**store, {&runner});
  if (absl::Status s = queue.Start(); !s.ok()) Die(s, "JobQueue::Start");
  absl::StatusOr<std::unique_ptr<api::Server>> server = api::Server::Start("127.0.0.1:0", queue);
  if (!server.ok()) Die(server.status(), "Server::Start");
  auto stub = gemmprof::v1::GemmProf::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string((*server)->port()), grpc::InsecureChannelCredentials()));

  std::mt19937_64 rng(1234);
  std::vector<Row> rows;
  int jobs = 0;
  for (int target_jobs : {100, 1000}) {
    const auto start = Clock::now();
    Fill(**store, jobs + 1, target_jobs - jobs, rng);
    std::printf("filled %d jobs x %d items in %.1f s\n", target_jobs - jobs, kItemsPerJob,
                std::chrono::duration<double>(Clock::now() - start).count());
    jobs = target_jobs;
    Measure(**store, jobs, rng, &rows, *stub);
  }
  std::error_code ec;
  const auto db_bytes = std::filesystem::file_size(path, ec);
  std::printf("database file: %.1f MiB, %d queries per operation\n\n",
              static_cast<double>(db_bytes) / (1 << 20), kQueries);
  std::printf("%-9s  %-40s  %9s  %9s\n", "results", "operation", "p50 ms", "p99 ms");
  for (const Row& r : rows) {
    std::printf("%-9lld  %-40s  %9.3f  %9.3f\n", static_cast<long long>(r.results),
                r.operation.c_str(), r.p50_ms, r.p99_ms);
  }
  (*server)->Shutdown(std::chrono::milliseconds(100));
  queue.Stop();
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace
}  // namespace gemmprof::storage

int main(int argc, char** argv) { return gemmprof::storage::Main(argc, argv); }
