// The store suites' fixtures, run on every backend: a fresh store (a temporary SQLite
// file, or a new database on the test binary's PostgreSQL server) with a clock the test
// controls. Each backend's binary instantiates the suites (sqlite_only_test.cc,
// pg_store_test.cc).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/storage/open_store.h"
#include "tests/support/pg_server.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage::testing {

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

// A new empty database of `backend`: a file path in `dir` or a PostgreSQL URI. The
// PostgreSQL server missing is a failure, never a skip.
inline std::string NewDatabase(Backend backend, const TempDir& dir, const std::string& name) {
  if (backend == Backend::kSqlite) return dir.File(name + ".db");
  absl::StatusOr<gemmprof::testing::PgServer*> server = gemmprof::testing::PgServer::Shared();
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return "postgresql://unavailable@127.0.0.1:1/none";
  absl::StatusOr<std::string> uri = (*server)->NewDatabase();
  EXPECT_TRUE(uri.ok()) << uri.status();
  return uri.ok() ? *uri : "postgresql://unavailable@127.0.0.1:1/none";
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_ = NewDatabase(GetParam(), dir_, "results");
    ASSERT_FALSE(HasFailure());
    path_ = db_;
    Reopen();
  }

  // Opens a store on this test's database as `node`.
  std::unique_ptr<ResultStore> OpenAs(const std::string& node) {
    StoreOptions options;
    options.node = node;
    options.now_ms = [this] { return now_ms_.load(); };
    absl::StatusOr<std::unique_ptr<ResultStore>> store = OpenResultStore(db_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Closes the store (if open) and opens the same database again.
  void Reopen() {
    store_.reset();
    store_ = OpenAs(node_);
    ASSERT_NE(store_, nullptr);
  }

  core::JobRecord MustCreate(int items, const std::string& label = "seed") {
    absl::StatusOr<core::JobRecord> job = store_->CreateJob(SeedJob(label), SeedItems(items));
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : core::JobRecord{};
  }

  std::vector<core::ItemRecord> MustItems(int64_t job_id) {
    absl::StatusOr<std::vector<core::ItemRecord>> items = store_->GetItems(job_id);
    EXPECT_TRUE(items.ok()) << items.status();
    return items.ok() ? *items : std::vector<core::ItemRecord>{};
  }

  // Runs an item to done with a fresh measurement; returns OK or the first error.
  absl::Status Measure(const core::ItemRecord& rec, double median_ms) {
    return MeasureOn(*store_, rec, median_ms, H100());
  }
  static absl::Status MeasureOn(ResultStore& store, const core::ItemRecord& rec, double median_ms,
                                const core::DeviceInfo& device) {
    RETURN_IF_ERROR(store.MarkItemRunning(rec.item.id));
    return store.FinishItem(rec.item.id, core::ItemStatus::kDone, "", SampleMeasurement(median_ms),
                            device, core::TimingOptions{}, KeyOf(rec), std::nullopt);
  }

  static std::string KeyOf(const core::ItemRecord& rec) {
    return "key:" + rec.item.op.shape.ToString() + ":" +
           std::string(core::ToString(rec.item.recipe));
  }

  TempDir dir_;
  std::string db_;    // file path or PostgreSQL URI
  std::string path_;  // = db_ (the SQLite tests' name for it)
  std::string node_ = "node-a";
  std::atomic<int64_t> now_ms_{1'700'000'000'000};
  std::unique_ptr<ResultStore> store_;
};

// Two jobs on two devices with known shapes, recipes and times, for the query tests.
class QueryTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    core::DeviceInfo b200 = H100();
    b200.name = "NVIDIA B200";
    b200.sm = 100;
    for (int j = 0; j < 2; ++j) {
      core::JobRecord job = MustCreate(12);
      for (const auto& rec : MustItems(job.id)) {
        now_ms_ += 100;
        ASSERT_TRUE(store_->MarkItemRunning(rec.item.id).ok());
        ASSERT_TRUE(store_
                        ->FinishItem(rec.item.id, core::ItemStatus::kDone, "",
                                     SampleMeasurement(1.0 + rec.item.seq), j == 0 ? H100() : b200,
                                     {}, KeyOf(rec), std::nullopt)
                        .ok());
      }
    }
  }

  std::vector<ResultRow> QueryAll(ResultFilter filter) {
    std::vector<ResultRow> rows;
    for (int pages = 0; pages < 100; ++pages) {
      absl::StatusOr<Page<ResultRow>> page = store_->QueryResults(filter);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      rows.insert(rows.end(), page->items.begin(), page->items.end());
      if (page->next_page_token.empty()) break;
      filter.page_token = page->next_page_token;
    }
    return rows;
  }
};

// Two stores (two nodes) on one database.
class ClusterTest : public StoreTest {};

}  // namespace gemmprof::storage::testing
