// A store that goes away for a while (a shared PostgreSQL restarting): the executor waits
// for it, and the measurements in hand are recorded once it is back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "server/queue/job_queue.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::queue {
namespace {

// Delegates to a real store; FinishItems fails with Unavailable `outages` times first.
class FlakyStore : public storage::ResultStore {
 public:
  explicit FlakyStore(storage::ResultStore& real) : real_(real) {}
  std::atomic<int> outages{0};
  std::atomic<int> refused{0};

  absl::StatusOr<core::JobRecord> CreateJob(core::JobRecord job,
                                            std::vector<core::WorkItem> items) override {
    return real_.CreateJob(std::move(job), std::move(items));
  }
  absl::StatusOr<core::JobRecord> GetJob(int64_t id) override { return real_.GetJob(id); }
  absl::StatusOr<storage::Page<core::JobRecord>> ListJobs(const storage::JobFilter& f) override {
    return real_.ListJobs(f);
  }
  absl::StatusOr<std::vector<core::ItemRecord>> GetItems(int64_t id) override {
    return real_.GetItems(id);
  }
  absl::Status SetJobState(int64_t id, core::JobState s, const std::string& e) override {
    return real_.SetJobState(id, s, e);
  }
  absl::Status SetJobDevice(int64_t id, const core::DeviceInfo& d) override {
    return real_.SetJobDevice(id, d);
  }
  absl::Status MarkItemRunning(int64_t id) override { return real_.MarkItemRunning(id); }
  absl::Status FinishItem(int64_t id, core::ItemStatus s, const std::string& e,
                          const std::optional<core::Measurement>& m, const core::DeviceInfo& d,
                          const core::TimingOptions& t, const std::string& k,
                          std::optional<int64_t> c) override {
    return real_.FinishItem(id, s, e, m, d, t, k, c);
  }
  absl::Status FinishItems(const std::vector<storage::ItemFinish>& items, const core::DeviceInfo& d,
                           const core::TimingOptions& t) override {
    if (outages.load() > 0) {
      --outages;
      ++refused;
      return absl::UnavailableError("PostgreSQL at 127.0.0.1:5432 is unreachable (test)");
    }
    return real_.FinishItems(items, d, t);
  }
  absl::Status CancelPendingItems(int64_t id) override { return real_.CancelPendingItems(id); }
  absl::StatusOr<std::optional<storage::CachedResult>> LookupCache(const std::string& k) override {
    return real_.LookupCache(k);
  }
  absl::StatusOr<std::vector<int64_t>> RecoverUnfinished() override {
    return real_.RecoverUnfinished();
  }
  absl::StatusOr<storage::Page<storage::ResultRow>> QueryResults(
      const storage::ResultFilter& f) override {
    return real_.QueryResults(f);
  }
  absl::Status PutDaemon(const core::DaemonRecord& d) override { return real_.PutDaemon(d); }
  absl::StatusOr<std::vector<core::DaemonRecord>> ListDaemons() override {
    return real_.ListDaemons();
  }

 private:
  storage::ResultStore& real_;
};

TEST(StoreOutageTest, AJobWaitsForTheStoreAndKeepsItsMeasurements) {
  testing::TempDir dir;
  auto real = storage::SqliteStore::Open(dir.File("q.db"));
  ASSERT_TRUE(real.ok()) << real.status();
  FlakyStore store(**real);
  store.outages = 3;  // about 0.2 + 0.4 + 0.8 s of waiting
  testing::FakeRunner runner;
  JobQueue queue(store, {&runner});
  ASSERT_TRUE(queue.Start().ok());
  core::JobSpec spec;
  spec.shapes = {{64, 64, 64}, {64, 128, 64}};  // one M: one batch
  spec.recipes = {core::Recipe::kBf16};
  spec.timing.timed_iters = 3;
  auto job = queue.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  core::JobRecord ended;
  for (int i = 0; i < 1000; ++i) {
    ended = *store.GetJob(job->id);
    if (core::IsTerminal(ended.state)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ended.state, core::JobState::kSucceeded) << ended.error;
  EXPECT_EQ(ended.finished_items, 2);
  EXPECT_EQ(store.refused.load(), 3);
  EXPECT_EQ(runner.groups_started(), 1) << "both shapes in one batch, measured once";
}

}  // namespace
}  // namespace gemmprof::queue
