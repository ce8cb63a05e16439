// Committed data survives the writer being killed: a child process writes results and
// kills itself with SIGKILL part-way; the parent reopens the file and checks every row
// the child reported committed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "server/storage/sqlite/sqlite_transaction.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage::testing {
namespace {

constexpr int kItems = 200;
constexpr int kFinishBeforeKill = 137;

// Child body: never returns. Reports each committed item id on `fd`; exits 2 on error.
[[noreturn]] void WriteThenDie(const std::string& path, int fd) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  if (!store.ok()) _exit(2);
  absl::StatusOr<core::JobRecord> job = (*store)->CreateJob(SeedJob("crash"), SeedItems(kItems));
  if (!job.ok() || !(*store)->SetJobState(job->id, core::JobState::kRunning, "").ok()) _exit(2);
  absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(job->id);
  if (!items.ok()) _exit(2);
  for (int i = 0; i < kFinishBeforeKill; ++i) {
    const core::WorkItem& item = (*items)[i].item;
    if (!(*store)->MarkItemRunning(item.id).ok()) _exit(2);
    if (!(*store)
             ->FinishItem(item.id, core::ItemStatus::kDone, "", SampleMeasurement(1.0 + i), H100(),
                          core::TimingOptions{}, "k" + std::to_string(i), std::nullopt)
             .ok()) {
      _exit(2);
    }
    if (write(fd, &item.id, sizeof(item.id)) != sizeof(item.id)) _exit(2);
  }
  // One item is left running, and a write transaction is left open mid-way, when the
  // process dies.
  if (!(*store)->MarkItemRunning((*items)[kFinishBeforeKill].item.id).ok()) _exit(2);
  absl::StatusOr<Connection> raw = Connection::Open(path);
  if (!raw.ok()) _exit(2);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*raw);
  if (!txn.ok() || !raw->Exec("UPDATE items SET status = 'done' WHERE status = 'queued'").ok()) {
    _exit(2);
  }
  raise(SIGKILL);
  _exit(3);  // not reached
}

TEST(CrashTest, KilledWriterLosesNoCommittedResult) {
  TempDir dir;
  const std::string path = dir.File("crash.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    WriteThenDie(path, fds[1]);
  }
  close(fds[1]);
  std::vector<int64_t> committed;
  int64_t id = 0;
  while (read(fds[0], &id, sizeof(id)) == sizeof(id)) committed.push_back(id);
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);
  ASSERT_EQ(WTERMSIG(wstatus), SIGKILL);
  ASSERT_EQ(committed.size(), static_cast<size_t>(kFinishBeforeKill));

  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(1);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), static_cast<size_t>(kItems));
  const std::set<int64_t> done(committed.begin(), committed.end());
  for (const core::ItemRecord& rec : *items) {
    if (done.count(rec.item.id) != 0) {
      EXPECT_EQ(rec.status, core::ItemStatus::kDone) << rec.item.id;
      ASSERT_TRUE(rec.result.has_value()) << rec.item.id;
      EXPECT_EQ(rec.result->time.median_ms, 1.0 + rec.item.seq);
    } else if (rec.item.seq == kFinishBeforeKill) {
      EXPECT_EQ(rec.status, core::ItemStatus::kRunning);
    } else {
      // The uncommitted transaction's update is gone.
      EXPECT_EQ(rec.status, core::ItemStatus::kQueued) << rec.item.id;
    }
  }
  ResultFilter filter;
  filter.page_size = kItems;
  absl::StatusOr<Page<ResultRow>> rows = (*store)->QueryResults(filter);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->items.size(), static_cast<size_t>(kFinishBeforeKill));

  absl::StatusOr<std::vector<int64_t>> unfinished = (*store)->RecoverUnfinished();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_EQ(*unfinished, std::vector<int64_t>{1});
  items = (*store)->GetItems(1);
  ASSERT_TRUE(items.ok());
  EXPECT_EQ((*items)[kFinishBeforeKill].status, core::ItemStatus::kQueued);
  absl::StatusOr<core::JobRecord> job = (*store)->GetJob(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->finished_items, kFinishBeforeKill);
}

}  // namespace
}  // namespace gemmprof::storage::testing
