// QueryResults latency on SQLite and on PostgreSQL in one run, and what a result costs
// on disk. Fills both stores with the same jobs (100 items each) through the public
// ResultStore API, then times history queries at 10,000 and 100,000 results.
// Usage: gemmprof_backend_bench [POSTGRES_URI]
// Without a URI it starts a throwaway PostgreSQL 15 server (tests/support/pg_server.h).
#include <libpq-fe.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/store/bench_common.h"
#include "server/storage/open_store.h"
#include "server/storage/sqlite/sqlite_connection.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "tests/support/pg_server.h"

namespace gemmprof::storage {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kItemsPerJob = 100;
constexpr int kQueries = 200;

// The throwaway server, if any, stopped by Die too so no postgres outlives the bench.
std::unique_ptr<gemmprof::testing::PgServer> g_server;

[[noreturn]] void Die(const absl::Status& status, const char* what) {
  g_server.reset();
  std::fprintf(stderr, "backend_bench: %s: %s\n", what, std::string(status.message()).c_str());
  std::exit(1);
}

core::WorkItem Item(int job, int i) {
  const core::Recipe recipes[] = {core::Recipe::kBf16, core::Recipe::kFp8Current,
                                  core::Recipe::kFp8Delayed, core::Recipe::kFp8Block,
                                  core::Recipe::kMxfp8};
  core::WorkItem item;
  item.op.name = i % 2 == 0 ? "qkv" : "mlp_up";
  item.op.pass = static_cast<core::Pass>((i / 4) % 3);
  item.op.shape = {4096 + 1024 * (job % 4), 4096, 4096 * (1 + i % 4)};
  item.op.layers = 32;
  item.recipe = recipes[(i / 12) % 5];
  item.mode = (i / 60) % 2 == 0 ? core::Mode::kAutocast : core::Mode::kPrequant;
  return item;
}

core::Measurement Measurement(int i) {
  std::vector<double> samples(100);
  for (size_t s = 0; s < samples.size(); ++s) samples[s] = 1.0 + 0.001 * ((i * 7 + s) % 13);
  core::Measurement m;
  m.time = core::SampleStats::FromSamples(std::move(samples));
  m.quant_ms = 0.12;
  m.flops = 1e12;
  m.bytes = 3e8;
  m.algorithm = "algo=66 tile=256x128 stages=4 splitk=1";
  m.verification = core::Verification::kPassed;
  m.rel_error = 3e-3;
  m.error_threshold = 2e-2;
  m.telemetry = {1755, 1980, 2619, 610, 690, 67, 0, 0, 12};
  return m;
}

// Adds jobs [first, last): create, start each item, finish the job's items in one call.
void Fill(ResultStore& store, int first, int last) {
  for (int j = first; j < last; ++j) {
    core::JobRecord job;
    job.spec.label = "bench " + std::to_string(j);
    job.device = bench::BenchDevice(j % 2);
    std::vector<core::WorkItem> items;
    for (int i = 0; i < kItemsPerJob; ++i) items.push_back(Item(j, i));
    absl::StatusOr<core::JobRecord> stored = store.CreateJob(job, items);
    if (!stored.ok()) Die(stored.status(), "CreateJob");
    absl::StatusOr<std::vector<core::ItemRecord>> recs = store.GetItems(stored->id);
    if (!recs.ok()) Die(recs.status(), "GetItems");
    std::vector<ItemFinish> finishes;
    for (const core::ItemRecord& rec : *recs) {
      if (absl::Status s = store.MarkItemRunning(rec.item.id); !s.ok()) Die(s, "MarkItemRunning");
      finishes.push_back({rec.item.id, core::ItemStatus::kDone, "", Measurement(rec.item.seq),
                          "key-" + std::to_string(rec.item.id), std::nullopt});
    }
    core::TimingOptions timing;
    timing.seed = 7;
    if (absl::Status s = store.FinishItems(finishes, job.device, timing); !s.ok()) {
      Die(s, "FinishItems");
    }
  }
}

struct Row {
  std::string backend, query;
  int results;
  double p50, p99;
};

Row Time(const std::string& backend, int results, const std::string& query, ResultStore& store,
         const std::function<ResultFilter(int)>& filter) {
  std::vector<ResultFilter> filters;  // built before, so only the queries are timed
  for (int i = 0; i < kQueries; ++i) filters.push_back(filter(i));
  const bench::Percentiles p = bench::TimeCalls(kQueries, [&](int i) {
    absl::StatusOr<Page<ResultRow>> page = store.QueryResults(filters[i]);
    if (!page.ok() || page->items.empty()) Die(page.status(), query.c_str());
  });
  return {backend, query, results, p.p50_ms, p.p99_ms};
}

void Measure(const std::string& backend, int results, ResultStore& store, std::vector<Row>* rows) {
  rows->push_back(Time(backend, results, "newest, page 100", store, [](int) {
    ResultFilter f;
    f.page_size = 100;
    return f;
  }));
  rows->push_back(Time(backend, results, "recipe+pass, page 100", store, [](int i) {
    ResultFilter f;
    f.recipe = core::AllRecipes()[i % 5];
    f.pass = static_cast<core::Pass>(i % 3);
    f.page_size = 100;
    return f;
  }));
  rows->push_back(Time(backend, results, "m+k+n, page 100", store, [](int i) {
    const core::WorkItem item = Item(i, i % kItemsPerJob);
    ResultFilter f;
    f.m = item.op.shape.m;
    f.k = item.op.shape.k;
    f.n = item.op.shape.n;
    f.page_size = 100;
    return f;
  }));
}

int64_t SqliteInt(Connection& conn, const std::string& sql) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(conn, sql);
  if (!stmt.ok()) Die(stmt.status(), sql.c_str());
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) Die(row.status(), sql.c_str());
  return stmt->ColumnInt64(0);
}

// Bytes per result of the file, and of the same rows with device and timing JSON inlined
// in every result again (the layout of schema version 4), both compacted by VACUUM.
void ReportSqliteBytes(const std::filesystem::path& dir, const std::string& path) {
  absl::StatusOr<Connection> conn = Connection::Open(path);
  if (!conn.ok()) Die(conn.status(), "open");
  const int64_t results = SqliteInt(*conn, "SELECT count(*) FROM results");
  const std::string now = (dir / "now.db").string(), old = (dir / "v4.db").string();
  if (auto s = conn->Exec("VACUUM INTO '" + now + "'"); !s.ok()) Die(s, "vacuum");
  const double now_bytes = static_cast<double>(std::filesystem::file_size(now));
  // The copy is altered, not the bench's database.
  absl::StatusOr<Connection> copy = Connection::Open(now);
  if (!copy.ok()) Die(copy.status(), "open copy");
  const std::string inline_again =
      "ALTER TABLE results ADD COLUMN device_json TEXT; "
      "ALTER TABLE results ADD COLUMN timing_json TEXT; "
      "UPDATE results SET device_json = (SELECT json FROM contexts WHERE id = device_context_id), "
      "timing_json = (SELECT json FROM contexts WHERE id = timing_context_id); "
      "VACUUM INTO '" +
      old + "'";
  if (auto s = copy->Exec(inline_again); !s.ok()) Die(s, "inline");
  const double old_bytes = static_cast<double>(std::filesystem::file_size(old));
  std::printf(
      "SQLite bytes per result (%lld results, VACUUMed file / results): "
      "v4 layout (contexts inline) %.0f, v5 (contexts shared) %.0f\n",
      static_cast<long long>(results), old_bytes / static_cast<double>(results),
      now_bytes / static_cast<double>(results));
}

// Results' and contexts' tables with their indexes and TOAST, per result.
void ReportPgBytes(const std::string& uri) {
  PGconn* conn = PQconnectdb(uri.c_str());
  PGresult* r = PQexec(conn,
                       "SELECT pg_total_relation_size('results') + "
                       "pg_total_relation_size('contexts'), count(*) FROM results");
  if (PQresultStatus(r) == PGRES_TUPLES_OK) {
    const double bytes = std::stod(PQgetvalue(r, 0, 0)), n = std::stod(PQgetvalue(r, 0, 1));
    std::printf(
        "PostgreSQL bytes per result (%.0f results, results + contexts tables with "
        "indexes): %.0f\n",
        n, bytes / n);
  }
  PQclear(r);
  PQfinish(conn);
}

int Main(int argc, char** argv) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "gemmprof_bbench_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return 1;
  const std::filesystem::path dir = pattern;
  std::string uri = argc > 1 ? argv[1] : "";
  if (uri.empty()) {
    absl::StatusOr<std::unique_ptr<gemmprof::testing::PgServer>> started =
        gemmprof::testing::PgServer::Start();
    if (!started.ok()) Die(started.status(), "PostgreSQL server");
    g_server = std::move(*started);
    absl::StatusOr<std::string> db = g_server->NewDatabase();
    if (!db.ok()) Die(db.status(), "CREATE DATABASE");
    uri = *db;
  }
  StoreOptions options;
  options.node = "bench";
  options.fsync_each_commit = false;  // throwaway databases
  const std::string sqlite_path = (dir / "bench.db").string();
  std::vector<std::pair<std::string, std::unique_ptr<ResultStore>>> stores;
  for (const std::string& db : {sqlite_path, uri}) {
    absl::StatusOr<std::unique_ptr<ResultStore>> store = OpenResultStore(db, options);
    if (!store.ok()) Die(store.status(), "open");
    stores.emplace_back(IsPostgresUri(db) ? "PostgreSQL" : "SQLite", std::move(*store));
  }
  std::vector<Row> rows;
  int jobs = 0;
  for (int target : {100, 1000}) {
    for (auto& [name, store] : stores) {
      const auto start = Clock::now();
      Fill(*store, jobs, target);
      std::printf("%s: filled %d jobs x %d items in %.1f s\n", name.c_str(), target - jobs,
                  kItemsPerJob, std::chrono::duration<double>(Clock::now() - start).count());
      if (target == 100 && name == "SQLite") ReportSqliteBytes(dir, sqlite_path);
      if (target == 100 && name == "PostgreSQL") ReportPgBytes(uri);
    }
    jobs = target;
    for (auto& [name, store] : stores) Measure(name, jobs * kItemsPerJob, *store, &rows);
  }
  std::printf("\n%-10s  %-8s  %-24s  %8s  %8s   (%d queries each)\n", "backend", "results",
              "QueryResults", "p50 ms", "p99 ms", kQueries);
  for (const Row& r : rows) {
    std::printf("%-10s  %-8d  %-24s  %8.3f  %8.3f\n", r.backend.c_str(), r.results, r.query.c_str(),
                r.p50, r.p99);
  }
  stores.clear();
  g_server.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace
}  // namespace gemmprof::storage

int main(int argc, char** argv) { return gemmprof::storage::Main(argc, argv); }
