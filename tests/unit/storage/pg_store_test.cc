// PgStore only: connection URIs, a server that goes away and comes back, schemas from
// a newer gemmprof; and the instantiation of the shared store suites on PostgreSQL.
#include <libpq-fe.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/json_codec.h"
#include "server/storage/open_store.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/postgres/pg_migrations.h"
#include "server/storage/sqlite/migrations.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

INSTANTIATE_TEST_SUITE_P(Postgres, StoreTest, ::testing::Values(Backend::kPostgres), BackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, QueryTest, ::testing::Values(Backend::kPostgres), BackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, ClusterTest, ::testing::Values(Backend::kPostgres), BackendName);

class PgOnlyTest : public StoreTest {
 protected:
  gemmprof::testing::PgServer& server() { return **gemmprof::testing::PgServer::Shared(); }
};
INSTANTIATE_TEST_SUITE_P(Postgres, PgOnlyTest, ::testing::Values(Backend::kPostgres), BackendName);

TEST(PgSqlTest, PlaceholdersAreNumberedOutsideQuotedText) {
  EXPECT_EQ(NumberPlaceholders("SELECT a FROM t WHERE b = ? AND c = '?' AND \"d?\" < ?"),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND \"d?\" < $2");
  EXPECT_EQ(NumberPlaceholders("SELECT 1"), "SELECT 1");
}

absl::Status OpenStatus(const std::string& db) { return OpenResultStore(db, {}).status(); }

TEST(PgUriTest, PasswordsInTheUriAreRefusedWithoutBeingRepeated) {
  for (const std::string uri :
       {"postgresql://alice:s3cr3t@127.0.0.1:5432/gemmprof",
        "postgres://alice@127.0.0.1/gemmprof?password=s3cr3t",
        "postgresql://alice@127.0.0.1/db?sslmode=disable&password=s3cr3t"}) {
    absl::Status status = OpenStatus(uri);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << uri;
    EXPECT_THAT(status.message(), HasSubstr("PGPASSFILE")) << uri;
    EXPECT_THAT(status.message(), Not(HasSubstr("s3cr3t"))) << uri;
  }
}

TEST(PgUriTest, MalformedUriIsOneInvalidArgumentLine) {
  for (const std::string uri : {"postgresql://alice@[::1/db", "postgresql://alice@host/db?nokey",
                                "postgresql://alice@host/db?bogus_option=1"}) {
    absl::Status status = OpenStatus(uri);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << uri << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr("postgresql://USER@HOST:PORT/DB")) << uri;
    EXPECT_THAT(status.message(), Not(HasSubstr("\n"))) << uri;
  }
}

TEST(PgUriTest, UnreachableServerIsUnavailableNamingHostAndPort) {
  absl::Status status = OpenStatus("postgresql://alice@127.0.0.1:1/gemmprof");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("PostgreSQL at 127.0.0.1:1 is unreachable"));
  // libpq's own reason, intact (it lives in the connection that is closed on failure).
  EXPECT_THAT(status.message(),
              HasSubstr("is unreachable: connection to server at \"127.0.0.1\", port 1 failed"));
  EXPECT_THAT(status.message(), Not(HasSubstr("\n")));
}

TEST_P(PgOnlyTest, SchemaFromANewerGemmprofIsRefused) {
  store_.reset();
  PGconn* conn = PQconnectdb(db_.c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK);
  PQclear(PQexec(conn, "UPDATE schema_version SET version = 99"));
  PQfinish(conn);
  absl::Status status = OpenStatus(db_);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("schema version 99"));
  EXPECT_THAT(status.message(), HasSubstr("newer gemmprof"));
}

TEST_P(PgOnlyTest, TwoStoresOpeningANewDatabaseMigrateItOnce) {
  std::unique_ptr<ResultStore> other = OpenAs("node-b");
  ASSERT_NE(other, nullptr);
  PGconn* conn = PQconnectdb(db_.c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK);
  PGresult* rows = PQexec(conn, "SELECT count(*), max(version) FROM schema_version");
  EXPECT_STREQ(PQgetvalue(rows, 0, 0), "1");
  EXPECT_STREQ(PQgetvalue(rows, 0, 1), std::to_string(LatestSchemaVersion()).c_str());
  PQclear(rows);
  PQfinish(conn);
}

TEST_P(PgOnlyTest, CallsFailUnavailableWhileTheServerIsDownAndRecoverAfter) {
  core::JobRecord before = MustCreate(2);
  ASSERT_TRUE(server().Stop().ok());
  absl::StatusOr<core::JobRecord> during = store_->CreateJob(SeedJob("lost"), SeedItems(3));
  ASSERT_FALSE(during.ok());
  EXPECT_EQ(during.status().code(), absl::StatusCode::kUnavailable) << during.status();
  const std::string endpoint = "127.0.0.1:" + std::to_string(server().port());
  EXPECT_THAT(during.status().message(),
              HasSubstr("PostgreSQL at " + endpoint + " is unreachable"));
  EXPECT_THAT(during.status().message(), HasSubstr("the call can be retried"));
  EXPECT_EQ(store_->GetJob(before.id).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store_->MarkItemRunning(1).code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(server().Restart().ok());

  // The same store carries on; nothing of the failed calls was written.
  absl::StatusOr<Page<core::JobRecord>> jobs = store_->ListJobs({});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->items.size(), 1u);
  EXPECT_EQ(jobs->items[0].id, before.id);
  EXPECT_TRUE(MustCreate(1).id > before.id);
}

TEST_P(PgOnlyTest, ANodeNameServesOneDaemonAtATime) {
  std::unique_ptr<ResultStore> first = OpenAs("gpu-7");
  ASSERT_NE(first, nullptr);
  StoreOptions same;
  same.node = "gpu-7";
  absl::StatusOr<std::unique_ptr<ResultStore>> second = OpenResultStore(db_, same);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "--node gpu-7: another gemmprofd already uses this node name on this database; "
            "give each daemon its own --node");
  EXPECT_NE(OpenAs("gpu-8"), nullptr) << "another name is fine";
  // The name is free again when its daemon is gone, and kept across a server restart.
  first.reset();
  std::unique_ptr<ResultStore> again = OpenAs("gpu-7");
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(server().Stop().ok());
  ASSERT_TRUE(server().Restart().ok());
  EXPECT_TRUE(again->ListJobs({}).ok()) << "the reconnect takes the name again";
  EXPECT_FALSE(OpenResultStore(db_, same).ok());
}

// Runs `sql` on the database at `uri`; false (with the server's message) on failure.
::testing::AssertionResult PgExec(const std::string& uri, const std::string& sql) {
  PGconn* conn = PQconnectdb(uri.c_str());
  PGresult* result = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  ::testing::AssertionResult out = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
                                       ? ::testing::AssertionSuccess()
                                       : ::testing::AssertionFailure() << PQerrorMessage(conn);
  PQclear(result);
  PQfinish(conn);
  return out;
}

TEST_P(PgOnlyTest, ADatabaseAtVersionFiveOpensWithItsItemsDenseAndContiguous) {
  absl::StatusOr<std::string> uri = server().NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  ASSERT_EQ(PgMigrations()[0].version, 5);
  const core::JobRecord job = SeedJob("from v5");
  ASSERT_TRUE(PgExec(*uri, std::string(PgMigrations()[0].sql)));
  ASSERT_TRUE(PgExec(*uri,
                     "CREATE TABLE schema_version (version INTEGER NOT NULL); "
                     "INSERT INTO schema_version (version) VALUES (5); "
                     "INSERT INTO jobs (state, created_ms, spec_json, plan_json, device_json) "
                     "VALUES ('queued', 1000, '" +
                         EncodeJobSpec(job.spec) + "', '" + EncodePlan(job.plan) + "', '" +
                         EncodeDeviceInfo(H100()) +
                         "'); "
                         "INSERT INTO items (job_id, seq, op_name, pass, m, k, n, groups, layers, "
                         "per_layer, recipe, mode, status) VALUES (1, 0, 'experts_up', 'fprop', "
                         "512, 7168, 4096, 8, 58, 1, 'bf16', 'autocast', 'queued')"));
  absl::StatusOr<std::unique_ptr<ResultStore>> store = OpenResultStore(*uri, {});
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(1);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ((*items)[0].item.op.groups, 8);
  EXPECT_TRUE((*items)[0].item.op.group_tokens.empty());
  EXPECT_EQ((*items)[0].item.op.layout, core::MoeLayout::kContiguous);
  // Upgraded: new items keep their tokens and layout.
  absl::StatusOr<core::JobRecord> next = (*store)->CreateJob(SeedJob(), {RoutedItem()});
  ASSERT_TRUE(next.ok()) << next.status();
  items = (*store)->GetItems(next->id);
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_EQ((*items)[0].item.op, RoutedItem().op);
}

TEST_P(PgOnlyTest, StoredRoutingThatDoesNotParseIsDataLossNamingColumnAndValue) {
  absl::StatusOr<core::JobRecord> job = store_->CreateJob(SeedJob(), {RoutedItem()});
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(PgExec(db_, "UPDATE items SET group_tokens = '3,x,5'"));
  EXPECT_EQ(store_->GetItems(job->id).status(),
            absl::DataLossError("items.group_tokens: bad value '3,x,5' in row 1 (comma-separated "
                                "token counts >= 0)"));
  ASSERT_TRUE(PgExec(db_, "UPDATE items SET group_tokens = '', moe_layout = 'packed'"));
  EXPECT_EQ(store_->GetItems(job->id).status(),
            absl::DataLossError("items.moe_layout: unknown value 'packed' in row 1"));
}

TEST_P(PgOnlyTest, AServerRestartBetweenCallsIsInvisible) {
  core::JobRecord job = MustCreate(1);
  ASSERT_TRUE(server().Stop().ok());
  ASSERT_TRUE(server().Restart().ok());
  // The old connection is dead; its first statement notices and the call runs again.
  absl::StatusOr<core::JobRecord> again = store_->GetJob(job.id);
  EXPECT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(server().Stop().ok());
  ASSERT_TRUE(server().Restart().ok());
  EXPECT_TRUE(Measure(MustItems(job.id)[0], 1.5).ok());
}

}  // namespace
}  // namespace gemmprof::storage::testing
