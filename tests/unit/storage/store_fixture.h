// A SqliteStore on a fresh temporary file with a clock the test controls.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/storage/sqlite_store.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage::testing {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  // Closes the store (if open) and opens the same file again.
  void Reopen() {
    store_.reset();
    SqliteStore::Options options;
    options.now_ms = [this] { return now_ms_.load(); };
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
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
    RETURN_IF_ERROR(store_->MarkItemRunning(rec.item.id));
    return store_->FinishItem(rec.item.id, core::ItemStatus::kDone, "",
                              SampleMeasurement(median_ms), H100(), core::TimingOptions{},
                              KeyOf(rec), std::nullopt);
  }

  static std::string KeyOf(const core::ItemRecord& rec) {
    return "key:" + rec.item.op.shape.ToString() + ":" +
           std::string(core::ToString(rec.item.recipe));
  }

  TempDir dir_;
  std::string path_ = dir_.File("results.db");
  std::atomic<int64_t> now_ms_{1'700'000'000'000};
  std::unique_ptr<SqliteStore> store_;
};

}  // namespace gemmprof::storage::testing
