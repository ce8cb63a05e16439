#include "server/queue/job_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server/storage/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::queue {
namespace {

using core::ItemStatus;
using core::JobState;

core::JobSpec ShapesSpec(std::vector<core::GemmShape> shapes, std::vector<core::Recipe> recipes) {
  core::JobSpec spec;
  spec.shapes = std::move(shapes);
  spec.recipes = std::move(recipes);
  spec.timing.warmup_iters = 1;
  spec.timing.timed_iters = 3;
  return spec;
}

class JobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open(QueueLimits limits = {}) {
    queue_.reset();
    store_.reset();
    auto store = storage::SqliteStore::Open(dir_.File("q.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    queue_ = std::make_unique<JobQueue>(*store_, std::vector<device::Runner*>{&runner_}, limits);
    ASSERT_TRUE(queue_->Start().ok());
  }

  core::JobRecord WaitForEnd(int64_t job_id) {
    for (int i = 0; i < 1000; ++i) {
      auto job = store_->GetJob(job_id);
      EXPECT_TRUE(job.ok()) << job.status();
      if (!job.ok() || core::IsTerminal(job->state)) return job.ok() ? *job : core::JobRecord{};
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << job_id << " did not end";
    return {};
  }

  testing::TempDir dir_;
  testing::FakeRunner runner_;
  std::unique_ptr<storage::SqliteStore> store_;
  std::unique_ptr<JobQueue> queue_;
};

TEST_F(JobQueueTest, RunsEveryItemAndMarksUnsupportedRecipes) {
  auto job = queue_->Submit(
      ShapesSpec({{256, 512, 128}, {64, 64, 64}}, {core::Recipe::kBf16, core::Recipe::kMxfp8}));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->total_items, 4);
  auto done = WaitForEnd(job->id);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  auto items = store_->GetItems(job->id);
  ASSERT_TRUE(items.ok());
  int supported = 0, unsupported = 0;
  for (const auto& item : *items) {
    if (item.item.recipe == core::Recipe::kMxfp8) {
      EXPECT_EQ(item.status, ItemStatus::kNotSupported);
      EXPECT_EQ(item.error, "mxfp8 needs sm_100+, this is sm_90");
      ++unsupported;
    } else {
      EXPECT_EQ(item.status, ItemStatus::kDone);
      ASSERT_TRUE(item.result.has_value());
      EXPECT_DOUBLE_EQ(item.result->flops, item.item.op.Flops());
      ++supported;
    }
  }
  EXPECT_EQ(supported, 2);
  EXPECT_EQ(unsupported, 2);
  EXPECT_EQ(runner_.runs_finished(), 2);
}

TEST_F(JobQueueTest, SecondIdenticalJobIsAnsweredFromTheCacheUnlessForced) {
  auto spec = ShapesSpec({{128, 128, 128}}, {core::Recipe::kBf16, core::Recipe::kFp8Current});
  auto first = queue_->Submit(spec);
  ASSERT_TRUE(first.ok());
  WaitForEnd(first->id);
  ASSERT_EQ(runner_.runs_finished(), 2);

  auto second = queue_->Submit(spec);
  ASSERT_TRUE(second.ok());
  WaitForEnd(second->id);
  EXPECT_EQ(runner_.runs_finished(), 2) << "cached items must not run again";
  auto items = store_->GetItems(second->id);
  ASSERT_TRUE(items.ok());
  for (const auto& item : *items) {
    EXPECT_EQ(item.status, ItemStatus::kDone);
    EXPECT_TRUE(item.cached);
    ASSERT_TRUE(item.result.has_value());
  }

  spec.force = true;
  auto third = queue_->Submit(spec);
  ASSERT_TRUE(third.ok());
  WaitForEnd(third->id);
  EXPECT_EQ(runner_.runs_finished(), 4);
  auto forced = store_->GetItems(third->id);
  ASSERT_TRUE(forced.ok());
  for (const auto& item : *forced) EXPECT_FALSE(item.cached);
}

TEST_F(JobQueueTest, DifferentTimingOptionsMissTheCache) {
  auto spec = ShapesSpec({{128, 128, 128}}, {core::Recipe::kBf16});
  WaitForEnd(queue_->Submit(spec)->id);
  spec.timing.timed_iters = 7;
  WaitForEnd(queue_->Submit(spec)->id);
  EXPECT_EQ(runner_.runs_finished(), 2);
}

TEST_F(JobQueueTest, BadSubmissionsAreRejectedAndNothingIsStored) {
  auto bad_shape = queue_->Submit(ShapesSpec({{0, 5, 5}}, {}));
  EXPECT_EQ(bad_shape.status().code(), absl::StatusCode::kInvalidArgument);
  auto bad_iters = ShapesSpec({{8, 8, 8}}, {});
  bad_iters.timing.timed_iters = 0;
  EXPECT_EQ(queue_->Submit(bad_iters).status().code(), absl::StatusCode::kInvalidArgument);
  auto too_big = queue_->Submit(ShapesSpec({{1 << 20, 1 << 20, 1 << 20}}, {core::Recipe::kBf16}));
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(too_big.status().message().find("1048576x1048576x1048576"), std::string::npos);
  auto jobs = store_->ListJobs({});
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->items.empty());
}

TEST_F(JobQueueTest, ShapesARecipeCannotTakeBecomeNotSupportedItems) {
  // A MoE router with 8 experts: N = 8 is fine for bf16, not for FP8 (N % 16).
  auto job = queue_->Submit(
      ShapesSpec({{64, 64, 8}, {64, 64, 64}}, {core::Recipe::kBf16, core::Recipe::kFp8Current}));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(WaitForEnd(job->id).state, JobState::kSucceeded);
  auto items = store_->GetItems(job->id);
  ASSERT_TRUE(items.ok());
  for (const auto& item : *items) {
    const bool refused = item.item.recipe == core::Recipe::kFp8Current && item.item.op.shape.n == 8;
    EXPECT_EQ(item.status, refused ? ItemStatus::kNotSupported : ItemStatus::kDone)
        << item.item.op.shape.ToString() << " " << core::ToString(item.item.recipe);
    if (refused)
      EXPECT_EQ(item.error, "fp8-current needs N to be a multiple of 16; shape 64x64x8 has N=8");
  }
  EXPECT_EQ(runner_.runs_finished(), 3);
}

TEST_F(JobQueueTest, RunFailuresAreFailedItemsAndLibraryRefusalsNotSupported) {
  runner_.FailRunsWith(absl::InternalError("CUDA error: an illegal memory access"));
  auto broken = queue_->Submit(ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16}));
  EXPECT_EQ(WaitForEnd(broken->id).state, JobState::kSucceeded) << "an item failure ends the item";
  auto items = store_->GetItems(broken->id);
  EXPECT_EQ((*items)[0].status, ItemStatus::kFailed);
  EXPECT_EQ((*items)[0].error, "CUDA error: an illegal memory access");
  EXPECT_EQ(store_->GetJob(broken->id)->failed_items, 1);

  runner_.FailRunsWith(absl::FailedPreconditionError("cuBLASLt: no algorithm for this layout"));
  auto refused = queue_->Submit(ShapesSpec({{32, 64, 64}}, {core::Recipe::kFp8Block}));
  WaitForEnd(refused->id);
  items = store_->GetItems(refused->id);
  EXPECT_EQ((*items)[0].status, ItemStatus::kNotSupported);
  EXPECT_EQ((*items)[0].error, "cuBLASLt: no algorithm for this layout");
}

TEST_F(JobQueueTest, CancelQueuedJobEndsItAtOnce) {
  runner_.Hold();
  auto busy = queue_->Submit(ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16}));
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  auto waiting = queue_->Submit(ShapesSpec({{32, 32, 32}}, {core::Recipe::kBf16}));
  auto cancelled = queue_->Cancel(waiting->id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->state, JobState::kCancelled);
  runner_.Release();
  EXPECT_EQ(WaitForEnd(busy->id).state, JobState::kSucceeded);
  auto items = store_->GetItems(waiting->id);
  EXPECT_EQ((*items)[0].status, ItemStatus::kCancelled);
  EXPECT_EQ(runner_.runs_finished(), 1);
}

TEST_F(JobQueueTest, CancelRunningJobStopsAtTheNextItemBoundary) {
  runner_.Hold();
  auto job =
      queue_->Submit(ShapesSpec({{64, 64, 64}, {32, 32, 32}, {16, 16, 16}}, {core::Recipe::kBf16}));
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  ASSERT_TRUE(queue_->Cancel(job->id).ok());
  runner_.Release();
  auto done = WaitForEnd(job->id);
  EXPECT_EQ(done.state, JobState::kCancelled);
  auto items = store_->GetItems(job->id);
  EXPECT_EQ((*items)[0].status, ItemStatus::kDone) << "the running item finishes";
  EXPECT_EQ((*items)[1].status, ItemStatus::kCancelled);
  EXPECT_EQ((*items)[2].status, ItemStatus::kCancelled);
  EXPECT_EQ(queue_->Cancel(job->id).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Cancel(987654).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(JobQueueTest, StopLeavesTheJobUnfinishedAndARestartResumesIt) {
  runner_.Hold();
  auto job = queue_->Submit(ShapesSpec({{64, 64, 64}, {32, 32, 32}}, {core::Recipe::kBf16}));
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  std::thread stopper([&] { queue_->Stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  runner_.Release();
  stopper.join();
  auto mid = store_->GetJob(job->id);
  EXPECT_EQ(mid->state, JobState::kRunning);
  EXPECT_EQ(mid->finished_items, 1);
  EXPECT_EQ(queue_->Submit(ShapesSpec({{8, 8, 8}}, {})).status().code(),
            absl::StatusCode::kUnavailable);

  Open();  // a restart on the same database
  auto done = WaitForEnd(job->id);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  EXPECT_EQ(done.finished_items, 2);
  EXPECT_EQ(runner_.runs_finished(), 2) << "the finished item is not run again";
}

TEST_F(JobQueueTest, QueuedAndRunningJobsCountAgainstTheLimit) {
  runner_.Hold();
  Open({.max_queued_jobs = 2});
  auto running = queue_->Submit(ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16}), "alice");
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->submitted_by, "alice");
  EXPECT_EQ(store_->GetJob(running->id)->submitted_by, "alice");
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  auto queued = queue_->Submit(ShapesSpec({{32, 32, 32}}, {core::Recipe::kBf16}));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->submitted_by, "");
  auto refused = queue_->Submit(ShapesSpec({{16, 16, 16}}, {core::Recipe::kBf16}));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(refused.status().message()),
            "gemmprofd already has 2 queued or running jobs, the limit (gemmprofd "
            "--max-queued-jobs 2); wait for some to finish or cancel some");
  EXPECT_EQ(store_->ListJobs({})->items.size(), 2u) << "nothing stored for the refused job";
  ASSERT_TRUE(queue_->Cancel(queued->id).ok());
  EXPECT_TRUE(queue_->Submit(ShapesSpec({{16, 16, 16}}, {core::Recipe::kBf16})).ok());
  runner_.Release();
}

TEST_F(JobQueueTest, ItemsPerJobFollowTheConfiguredLimit) {
  Open({.max_items_per_job = 2});
  auto three = ShapesSpec({{8, 8, 8}, {16, 16, 16}, {32, 32, 32}}, {core::Recipe::kBf16});
  auto refused = queue_->Plan(three);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(refused.status().message()),
            "job: 3 items exceed the limit of 2 per job (gemmprofd --max-items-per-job); submit "
            "fewer shapes, recipes or modes");
  EXPECT_EQ(queue_->Submit(three).status().code(), absl::StatusCode::kResourceExhausted);
  three.shapes.pop_back();
  EXPECT_TRUE(queue_->Submit(three).ok());
}

TEST_F(JobQueueTest, PlanChecksLikeSubmitButStoresNothing) {
  auto spec = ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16});
  auto planned = queue_->Plan(spec);
  ASSERT_TRUE(planned.ok());
  EXPECT_EQ(planned->items.size(), 1u);
  EXPECT_EQ(planned->plan.model_name, "shapes");
  EXPECT_TRUE(store_->ListJobs({})->items.empty());
  EXPECT_EQ(queue_->Plan(ShapesSpec({{-1, 5, 5}}, {})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(JobQueueTest, EventsReachSubscribersInOrder) {
  std::mutex mu;
  std::vector<JobEvent::Kind> kinds;
  runner_.Hold();
  auto job = queue_->Submit(ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16}));
  int64_t token = queue_->events().Subscribe(job->id, [&](const JobEvent& e) {
    std::lock_guard lock(mu);
    kinds.push_back(e.kind);
  });
  runner_.Release();
  WaitForEnd(job->id);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  queue_->events().Unsubscribe(token);
  std::lock_guard lock(mu);
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), JobEvent::Kind::kJobFinished);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), JobEvent::Kind::kItemFinished), kinds.end());
}

}  // namespace
}  // namespace gemmprof::queue
