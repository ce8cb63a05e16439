#include "server/storage/sqlite/migrations.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/json_codec.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage::testing {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Connection> OpenRaw(const std::string& path) { return Connection::Open(path); }

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Writes a version-1 database by hand: the first migration only, one finished job
// with one measured item and one item answered from the cache.
void WriteVersion1(const std::string& path) {
  absl::StatusOr<Connection> conn = OpenRaw(path);
  ASSERT_TRUE(conn.ok()) << conn.status();
  ASSERT_TRUE(conn->Exec(Migrations()[0].sql).ok());
  ASSERT_TRUE(conn->Exec("PRAGMA user_version = 1").ok());
  const core::JobRecord job = SeedJob("from v1");
  const std::string device = EncodeDeviceInfo(H100());
  ASSERT_TRUE(
      conn->Exec(absl::StrCat("INSERT INTO jobs (id, state, created_ms, started_ms, finished_ms, "
                              "spec_json, plan_json, device_json) VALUES (1, 'succeeded', 1000, "
                              "1100, 1900, ",
                              Quote(EncodeJobSpec(job.spec)), ", ", Quote(EncodePlan(job.plan)),
                              ", ", Quote(device), ")"))
          .ok());
  ASSERT_TRUE(conn->Exec("INSERT INTO items (id, job_id, seq, op_name, pass, m, k, n, groups, "
                         "layers, per_layer, recipe, mode, status) VALUES "
                         "(1, 1, 0, 'qkv', 'fprop', 15872, 4096, 12288, 1, 24, 1, 'bf16', "
                         "'autocast', 'done'), "
                         "(2, 1, 1, 'qkv', 'fprop', 15872, 4096, 12288, 1, 24, 1, 'bf16', "
                         "'autocast', 'done')")
                  .ok());
  ASSERT_TRUE(
      conn->Exec(absl::StrCat("INSERT INTO results (id, job_id, item_id, measured_ms, device_name, "
                              "device_sm, driver_version, cublaslt_version, device_json, m, k, n, "
                              "pass, recipe, mode, groups, timing_json, measurement_json, "
                              "cache_key) VALUES (1, 1, 1, 1500, 'NVIDIA H100 80GB HBM3', 90, "
                              "'580.65.06', '13.1.0', ",
                              Quote(device),
                              ", 15872, 4096, 12288, 'fprop', 'bf16', 'autocast', 1, ",
                              Quote(EncodeTimingOptions({})), ", ",
                              Quote(EncodeMeasurement(SampleMeasurement(4.5))), ", 'key-1')"))
          .ok());
  ASSERT_TRUE(conn->Exec("UPDATE items SET result_id = 1, measured_ms = 1500 WHERE id = 1; "
                         "UPDATE items SET cached = 1, cached_result_id = 1, measured_ms = 1500 "
                         "WHERE id = 2")
                  .ok());
}

TEST(MigrationsTest, VersionsAreOrderedFromOne) {
  ASSERT_FALSE(Migrations().empty());
  for (size_t i = 0; i < Migrations().size(); ++i) {
    EXPECT_EQ(Migrations()[i].version, static_cast<int>(i) + 1);
    EXPECT_FALSE(Migrations()[i].sql.empty());
  }
  EXPECT_EQ(LatestSchemaVersion(), Migrations().back().version);
}

TEST(MigrationsTest, VersionOneDatabaseUpgradesWithDataIntact) {
  TempDir dir;
  const std::string path = dir.File("v1.db");
  WriteVersion1(path);
  {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::StatusOr<core::JobRecord> job = (*store)->GetJob(1);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->state, core::JobState::kSucceeded);
    EXPECT_EQ(job->spec.label, "from v1");
    EXPECT_EQ(job->started_ms, 1100);
    EXPECT_EQ(job->finished_ms, 1900);
    EXPECT_EQ(job->total_items, 2);
    EXPECT_EQ(job->finished_items, 2);
    absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(1);
    ASSERT_TRUE(items.ok()) << items.status();
    ASSERT_EQ(items->size(), 2u);
    ASSERT_TRUE((*items)[1].result.has_value());
    EXPECT_TRUE((*items)[1].cached);
    EXPECT_EQ((*items)[1].result->time.median_ms, 4.5);
    absl::StatusOr<std::optional<CachedResult>> hit = (*store)->LookupCache("key-1");
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->measured_ms, 1500);
    // The new history indexes answer queries over the old rows.
    ResultFilter filter;
    filter.recipe = core::Recipe::kBf16;
    filter.m = 15872;
    absl::StatusOr<Page<ResultRow>> rows = (*store)->QueryResults(filter);
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->items.size(), 1u);
    ASSERT_TRUE(rows->items[0].measurement.has_value());
    EXPECT_EQ(rows->items[0].measurement->time.median_ms, 4.5);
    // New jobs continue after the old ids.
    absl::StatusOr<core::JobRecord> next = (*store)->CreateJob(SeedJob(), SeedItems(1));
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->id, 2);
  }
  absl::StatusOr<Connection> conn = OpenRaw(path);
  ASSERT_TRUE(conn.ok());
  absl::StatusOr<int> version = SchemaVersion(*conn);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, LatestSchemaVersion());
  // Version 2 copied the median out of the stored JSON.
  absl::StatusOr<Statement> stmt = Statement::Prepare(*conn, "SELECT median_ms FROM results");
  ASSERT_TRUE(stmt.ok()) << stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_DOUBLE_EQ(stmt->ColumnDouble(0), 4.5);
}

TEST(MigrationsTest, JobsFromBeforeVersionFourHaveNoSubmitter) {
  TempDir dir;
  const std::string path = dir.File("v3.db");
  {
    absl::StatusOr<Connection> conn = OpenRaw(path);
    ASSERT_TRUE(conn.ok()) << conn.status();
    ASSERT_TRUE(Migrate(*conn, 3).ok());
    const core::JobRecord job = SeedJob("from v3");
    ASSERT_TRUE(
        conn->Exec(absl::StrCat("INSERT INTO jobs (id, state, created_ms, spec_json, "
                                "plan_json, device_json) VALUES (1, 'queued', 1000, ",
                                Quote(EncodeJobSpec(job.spec)), ", ", Quote(EncodePlan(job.plan)),
                                ", ", Quote(EncodeDeviceInfo(H100())), ")"))
            .ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<core::JobRecord> old = (*store)->GetJob(1);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->spec.label, "from v3");
  EXPECT_EQ(old->submitted_by, "");
  core::JobRecord input = SeedJob();
  input.submitted_by = "bob";
  absl::StatusOr<core::JobRecord> next = (*store)->CreateJob(input, {});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->submitted_by, "bob");
  EXPECT_GE(LatestSchemaVersion(), 4);
}

TEST(MigrationsTest, VersionFourDatabaseMovesContextsOutOfResultsAndReadsBackTheSame) {
  TempDir dir;
  const std::string path = dir.File("v4.db");
  WriteVersion1(path);
  {
    absl::StatusOr<Connection> conn = OpenRaw(path);
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE(Migrate(*conn, 4).ok());
    // A second result on the same device: the migration stores that device once.
    ASSERT_TRUE(conn->Exec("INSERT INTO items (id, job_id, seq, op_name, pass, m, k, n, groups, "
                           "layers, per_layer, recipe, mode, status) VALUES (3, 1, 2, 'qkv', "
                           "'dgrad', 15872, 4096, 12288, 1, 24, 1, 'bf16', 'autocast', 'done')")
                    .ok());
    ASSERT_TRUE(conn->Exec("INSERT INTO results (id, job_id, item_id, measured_ms, device_name, "
                           "device_sm, driver_version, cublaslt_version, device_json, m, k, n, "
                           "pass, recipe, mode, groups, timing_json, measurement_json, cache_key) "
                           "SELECT 2, 1, 3, 1600, device_name, device_sm, driver_version, "
                           "cublaslt_version, device_json, m, k, n, 'dgrad', recipe, mode, groups, "
                           "timing_json, measurement_json, 'key-2' FROM results WHERE id = 1; "
                           "UPDATE items SET result_id = 2, measured_ms = 1600 WHERE id = 3")
                    .ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<Page<ResultRow>> rows = (*store)->QueryResults({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->items.size(), 2u);
  for (const ResultRow& row : rows->items) {
    EXPECT_EQ(EncodeDeviceInfo(row.device), EncodeDeviceInfo(H100()));
    EXPECT_EQ(EncodeTimingOptions(row.timing), EncodeTimingOptions({}));
    ASSERT_TRUE(row.measurement.has_value());
    EXPECT_EQ(EncodeMeasurement(*row.measurement), EncodeMeasurement(SampleMeasurement(4.5)));
    EXPECT_EQ(row.node, "");
  }
  absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(1);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[1].device_uuid, "GPU-1234");  // the cached item: the original's GPU
  EXPECT_TRUE((*items)[1].cached);
  absl::StatusOr<std::optional<CachedResult>> hit = (*store)->LookupCache("key-1");
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->device_uuid, "GPU-1234");
  EXPECT_EQ((*hit)->measured_ms, 1500);
  absl::StatusOr<Connection> raw = OpenRaw(path);
  ASSERT_TRUE(raw.ok());
  absl::StatusOr<Statement> count =
      Statement::Prepare(*raw, "SELECT count(*) FROM contexts WHERE kind = 'device'");
  ASSERT_TRUE(count.ok() && *count->Step());
  EXPECT_EQ(count->ColumnInt64(0), 1);
}

TEST(MigrationsTest, ItemsFromBeforeVersionSixAreDenseAndContiguous) {
  TempDir dir;
  const std::string path = dir.File("v5.db");
  WriteVersion1(path);
  {
    absl::StatusOr<Connection> conn = OpenRaw(path);
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE(Migrate(*conn, 5).ok());
    // A grouped item from before routings: every group at the whole shape, contiguous.
    ASSERT_TRUE(conn->Exec("INSERT INTO items (id, job_id, seq, op_name, pass, m, k, n, groups, "
                           "layers, per_layer, recipe, mode, status) VALUES (3, 1, 2, "
                           "'experts_up', 'fprop', 512, 7168, 4096, 8, 58, 1, 'bf16', "
                           "'autocast', 'queued')")
                    .ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(1);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 3u);
  for (const core::ItemRecord& item : *items) {
    EXPECT_TRUE(item.item.op.group_tokens.empty());
    EXPECT_EQ(item.item.op.layout, core::MoeLayout::kContiguous);
    EXPECT_EQ(item.item.fast_accum, core::FastAccum::kDefault);  // version 9: the job's
  }
  EXPECT_EQ((*items)[2].item.op.groups, 8);
  absl::StatusOr<Page<ResultRow>> rows = (*store)->QueryResults({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->items.size(), 1u);
  EXPECT_TRUE(rows->items[0].item.op.group_tokens.empty());
  // New items of the upgraded file keep theirs.
  absl::StatusOr<core::JobRecord> next = (*store)->CreateJob(SeedJob(), {RoutedItem()});
  ASSERT_TRUE(next.ok()) << next.status();
  items = (*store)->GetItems(next->id);
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_EQ((*items)[0].item.op, RoutedItem().op);
}

TEST(MigrationsTest, DatabaseFromNewerGemmprofIsRefused) {
  TempDir dir;
  const std::string path = dir.File("future.db");
  {
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
  }
  {
    absl::StatusOr<Connection> conn = OpenRaw(path);
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE(conn->Exec("PRAGMA user_version = 99").ok());
  }
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 99"));
  EXPECT_THAT(store.status().message(), HasSubstr("newer gemmprof"));
}

TEST(MigrationsTest, MigrateIsIdempotentAndChecksItsTarget) {
  absl::StatusOr<Connection> conn = OpenRaw(":memory:");
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(Migrate(*conn, 1).ok());
  absl::StatusOr<int> version = SchemaVersion(*conn);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, 1);
  ASSERT_TRUE(Migrate(*conn).ok());
  ASSERT_TRUE(Migrate(*conn).ok());
  version = SchemaVersion(*conn);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, LatestSchemaVersion());
  EXPECT_EQ(Migrate(*conn, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Migrate(*conn, LatestSchemaVersion() + 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Migrate(*conn, 1).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(MigrationsTest, FailedStepLeavesDatabaseUntouched) {
  absl::StatusOr<Connection> conn = OpenRaw(":memory:");
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(Migrate(*conn, 1).ok());
  // Occupy a name that version 2 creates, so its step fails half-way.
  ASSERT_TRUE(conn->Exec("CREATE INDEX results_by_device ON results(cache_key)").ok());
  absl::Status status = Migrate(*conn);
  EXPECT_THAT(status.message(), HasSubstr("migration to schema version 2 failed"));
  absl::StatusOr<int> version = SchemaVersion(*conn);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, 1);
  // The indexes the step created before failing were rolled back too.
  EXPECT_FALSE(Statement::Prepare(*conn, "SELECT median_ms FROM results").ok());
  absl::StatusOr<Statement> idx = Statement::Prepare(
      *conn, "SELECT count(*) FROM sqlite_master WHERE name = 'results_by_shape'");
  ASSERT_TRUE(idx.ok());
  absl::StatusOr<bool> row = idx->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(idx->ColumnInt64(0), 0);
}

}  // namespace
}  // namespace gemmprof::storage::testing
