// Several threads write items and read reports at once through one SqliteStore.
#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage::testing {
namespace {

constexpr int kWriters = 4;
constexpr int kJobsPerWriter = 3;
constexpr int kItemsPerJob = 25;
constexpr int kReaders = 3;

TEST(ConcurrencyTest, WritersAndReadersShareOneStore) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(dir.File("c.db"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStore& store = **opened;

  std::atomic<int> errors{0};
  std::atomic<bool> writing{true};
  std::atomic<int64_t> reads{0};
  auto check = [&](const absl::Status& s) {
    if (!s.ok()) {
      ++errors;
      ADD_FAILURE() << s;
    }
  };

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int j = 0; j < kJobsPerWriter; ++j) {
        absl::StatusOr<core::JobRecord> job =
            store.CreateJob(SeedJob("w" + std::to_string(w)), SeedItems(kItemsPerJob));
        if (!job.ok()) return check(job.status());
        check(store.SetJobState(job->id, core::JobState::kRunning, ""));
        absl::StatusOr<std::vector<core::ItemRecord>> items = store.GetItems(job->id);
        if (!items.ok()) return check(items.status());
        for (const core::ItemRecord& rec : *items) {
          check(store.MarkItemRunning(rec.item.id));
          check(store.FinishItem(
              rec.item.id, core::ItemStatus::kDone, "", SampleMeasurement(1.0 + w), H100(), {},
              "w" + std::to_string(w) + "s" + std::to_string(rec.item.seq), std::nullopt));
        }
        check(store.SetJobState(job->id, core::JobState::kSucceeded, ""));
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&] {
      while (writing.load()) {
        JobFilter filter;
        absl::StatusOr<Page<core::JobRecord>> jobs = store.ListJobs(filter);
        if (!jobs.ok()) return check(jobs.status());
        for (const core::JobRecord& job : jobs->items) {
          absl::StatusOr<core::JobRecord> got = store.GetJob(job.id);
          absl::StatusOr<std::vector<core::ItemRecord>> items = store.GetItems(job.id);
          if (!got.ok() || !items.ok()) return check(!got.ok() ? got.status() : items.status());
          // A report is always self-consistent: counts never run ahead of the items.
          int finished = 0;
          for (const auto& rec : *items) finished += core::IsFinal(rec.status) ? 1 : 0;
          EXPECT_EQ(static_cast<int>(items->size()), kItemsPerJob);
          EXPECT_LE(got->finished_items, finished);
          ++reads;
        }
        ResultFilter results;
        results.page_size = 50;
        check(store.QueryResults(results).status());
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  writing = false;
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();

  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(reads.load(), 0);
  JobFilter filter;
  absl::StatusOr<Page<core::JobRecord>> jobs = store.ListJobs(filter);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->items.size(), static_cast<size_t>(kWriters * kJobsPerWriter));
  for (const core::JobRecord& job : jobs->items) {
    EXPECT_EQ(job.state, core::JobState::kSucceeded);
    EXPECT_EQ(job.total_items, kItemsPerJob);
    EXPECT_EQ(job.finished_items, kItemsPerJob);
    EXPECT_EQ(job.failed_items, 0);
  }
  ResultFilter all;
  all.page_size = 10000;
  absl::StatusOr<Page<ResultRow>> rows = store.QueryResults(all);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->items.size(), static_cast<size_t>(kWriters * kJobsPerWriter * kItemsPerJob));
}

}  // namespace
}  // namespace gemmprof::storage::testing
