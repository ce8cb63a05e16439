// SqliteStore only: what PostgreSQL has no counterpart of (the file, its journal), and
// the instantiation of the shared store suites on SQLite.
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

using ::testing::HasSubstr;

class SqliteOnlyTest : public StoreTest {};

TEST_P(SqliteOnlyTest, OpenSetsWalJournalAndForeignKeys) {
  absl::StatusOr<Connection> raw = Connection::Open(path_);
  ASSERT_TRUE(raw.ok());
  absl::StatusOr<Statement> mode = Statement::Prepare(*raw, "PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  absl::StatusOr<bool> row = mode->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(mode->ColumnText(0), "wal");
  // The schema declares its foreign keys (SqliteStore turns enforcement on for its own
  // connection; this raw one has to ask): an item of a job that does not exist is refused.
  ASSERT_TRUE(raw->Exec("PRAGMA foreign_keys = ON").ok());
  EXPECT_EQ(raw->Exec("INSERT INTO items (job_id, seq, op_name, pass, m, k, n, groups, layers, "
                      "per_layer, recipe, mode, status) VALUES (999, 0, 'x', 'fprop', 1, 1, 1, "
                      "1, 1, 1, 'bf16', 'autocast', 'queued')")
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(SqliteOnlyTest, OpenRefusesAFileThatIsNotADatabase) {
  const std::string path = dir_.File("garbage.db");
  std::ofstream(path) << std::string(8192, 'x');
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr("not a database"));
  EXPECT_THAT(store.status().message(), HasSubstr(path));
}

TEST_P(SqliteOnlyTest, StoredRoutingThatDoesNotParseIsDataLossNamingColumnAndValue) {
  absl::StatusOr<core::JobRecord> job = store_->CreateJob(SeedJob(), {RoutedItem()});
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(Measure(MustItems(job->id)[0], 0.25).ok());
  absl::StatusOr<Connection> raw = Connection::Open(path_);
  ASSERT_TRUE(raw.ok());
  for (const std::string bad : {"3,x,5", "3,,5", "3,-1,5", ",", "99999999999999999999"}) {
    ASSERT_TRUE(raw->Exec("UPDATE items SET group_tokens = '" + bad + "'").ok());
    const std::string want = "items.group_tokens: bad value '" + bad + "' in row 1";
    EXPECT_EQ(store_->GetItems(job->id).status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(std::string(store_->GetItems(job->id).status().message()), HasSubstr(want));
    EXPECT_THAT(std::string(store_->QueryResults({}).status().message()), HasSubstr(want));
  }
  ASSERT_TRUE(raw->Exec("UPDATE items SET group_tokens = '3,0,5', moe_layout = 'packed'").ok());
  EXPECT_EQ(store_->GetItems(job->id).status(),
            absl::DataLossError("items.moe_layout: unknown value 'packed' in row 1"));
  EXPECT_EQ(store_->QueryResults({}).status(),
            absl::DataLossError("items.moe_layout: unknown value 'packed' in row 1"));
}

TEST_P(SqliteOnlyTest, StoredFastAccumulationThatDoesNotParseIsDataLoss) {
  absl::StatusOr<core::JobRecord> job = store_->CreateJob(SeedJob(), SeedItems(1));
  ASSERT_TRUE(job.ok()) << job.status();
  absl::StatusOr<Connection> raw = Connection::Open(path_);
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(raw->Exec("UPDATE items SET fast_accum = 'sometimes'").ok());
  EXPECT_EQ(store_->GetItems(job->id).status(),
            absl::DataLossError("items.fast_accum: unknown value 'sometimes' in row 1"));
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreTest, ::testing::Values(Backend::kSqlite));
INSTANTIATE_TEST_SUITE_P(Sqlite, QueryTest, ::testing::Values(Backend::kSqlite));
INSTANTIATE_TEST_SUITE_P(Sqlite, ClusterTest, ::testing::Values(Backend::kSqlite));
INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteOnlyTest, ::testing::Values(Backend::kSqlite));

}  // namespace
}  // namespace gemmprof::storage::testing
