#include "server/queue/job_queue.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "core/error_detail.h"
#include "server/storage/sqlite/sqlite_store.h"
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

// These tests follow jobs group by group: one measurement group per batch.
QueueLimits OneGroupPerBatch() {
  QueueLimits limits;
  limits.batch_groups = 1;
  return limits;
}

class JobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open(QueueLimits limits = OneGroupPerBatch()) {
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
  // One fit question for the whole job, asked at submission; the device that answered
  // runs the job on that answer: never one per item, never asked twice.
  EXPECT_EQ(runner_.fit_checks(), 1);
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
  bad_iters.timing.timed_iters = -1;
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
  const auto ended = WaitForEnd(broken->id);
  EXPECT_EQ(ended.state, JobState::kPartial) << "an item failure ends the item, not the job";
  EXPECT_EQ(ended.error, "1 of 1 items failed");
  auto items = store_->GetItems(broken->id);
  EXPECT_EQ((*items)[0].status, ItemStatus::kFailed);
  EXPECT_EQ((*items)[0].error,
            "fprop 64x64x64 bf16 autocast: CUDA error: an illegal memory access; the item failed "
            "(it was the job's last item)");
  EXPECT_EQ(store_->GetJob(broken->id)->failed_items, 1);

  runner_.FailRunsWith(absl::FailedPreconditionError("cuBLASLt: no algorithm for this layout"));
  auto refused = queue_->Submit(ShapesSpec({{32, 64, 64}}, {core::Recipe::kFp8Block}));
  EXPECT_EQ(WaitForEnd(refused->id).state, JobState::kSucceeded) << "not_supported is no failure";
  items = store_->GetItems(refused->id);
  EXPECT_EQ((*items)[0].status, ItemStatus::kNotSupported);
  EXPECT_EQ((*items)[0].error, "cuBLASLt: no algorithm for this layout");
}

TEST_F(JobQueueTest, AJobWithFailedItemsEndsPartialAndTheOtherItemsRun) {
  // Items go shape by shape, recipe by recipe: seq 2 and 4 are bf16 items.
  runner_.FailItem(2, absl::AbortedError("worker exited: signal 9 (Killed); the worker restarts"));
  runner_.FailItem(4, absl::DeadlineExceededError("timed out after 60 s"));
  auto job = queue_->Submit(ShapesSpec({{16, 16, 16}, {32, 32, 32}, {48, 48, 48}, {64, 64, 64}},
                                       {core::Recipe::kBf16, core::Recipe::kMxfp8}));
  ASSERT_TRUE(job.ok()) << job.status();
  const auto ended = WaitForEnd(job->id);
  EXPECT_EQ(ended.state, JobState::kPartial);
  EXPECT_EQ(ended.error, "2 of 8 items failed") << "not_supported items do not count";
  auto items = store_->GetItems(job->id);
  ASSERT_TRUE(items.ok());
  int done = 0;
  for (const auto& item : *items) {
    if (item.item.seq == 2) {
      EXPECT_EQ(item.status, ItemStatus::kFailed);
      EXPECT_EQ(item.error,
                "fprop 32x32x32 bf16 autocast: worker exited: signal 9 (Killed); the worker "
                "restarts; the item failed and the job goes on with its next item");
    }
    if (item.status == ItemStatus::kDone) ++done;
  }
  EXPECT_EQ(done, 2) << "4 bf16 items, two failed";
}

TEST_F(JobQueueTest, ItemErrorsKeepSourceLocationsOutAndInTheLog) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  runner_.FailRunsWith(core::WithSource(
      absl::ResourceExhaustedError(
          "CUDA out of memory (cudaErrorMemoryAllocation) while preparing the operands"),
      "kernels/runner/cuda_runner_measure.cc:114: pool.GetAs<__nv_bfloat16>(\"a.src\", a_n)"));
  auto job = queue_->Submit(ShapesSpec({{64, 64, 64}, {32, 32, 32}}, {core::Recipe::kBf16}));
  WaitForEnd(job->id);
  spdlog::set_default_logger(previous);
  auto items = store_->GetItems(job->id);
  ASSERT_TRUE(items.ok());
  const std::string& error = (*items)[0].error;
  EXPECT_EQ(error,
            "fprop 64x64x64 bf16 autocast: CUDA out of memory (cudaErrorMemoryAllocation) while "
            "preparing the operands; the item failed and the job goes on with its next item");
  EXPECT_EQ(error.find(".cc"), std::string::npos);
  EXPECT_NE(log.str().find("kernels/runner/cuda_runner_measure.cc:114: pool.GetAs"),
            std::string::npos)
      << log.str();
}

TEST_F(JobQueueTest, AJobWhoseDeviceGoesAwayFinishesOnAnother) {
  testing::FakeRunner second;
  queue_.reset();
  queue_ = std::make_unique<JobQueue>(*store_, std::vector<device::Runner*>{&runner_, &second},
                                      OneGroupPerBatch());
  ASSERT_TRUE(queue_->Start().ok());
  runner_.Hold();
  second.Hold();
  auto job =
      queue_->Submit(ShapesSpec({{64, 64, 64}, {32, 32, 32}, {16, 16, 16}}, {core::Recipe::kBf16}));
  ASSERT_TRUE(job.ok()) << job.status();
  // Either device may take the job; the one that does goes away after its first item.
  testing::FakeRunner* taker = nullptr;
  for (int i = 0; i < 1000 && taker == nullptr; ++i) {
    if (runner_.runs_started() > 0) taker = &runner_;
    if (second.runs_started() > 0) taker = &second;
    if (taker == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(taker, nullptr) << "no device took the job";
  testing::FakeRunner* other = taker == &runner_ ? &second : &runner_;
  taker->MakeUnavailable("its worker failed to start 3 times in a row");
  other->Release();
  taker->Release();
  const auto ended = WaitForEnd(job->id);
  EXPECT_EQ(ended.state, JobState::kSucceeded);
  EXPECT_EQ(ended.finished_items, 3);
  EXPECT_EQ(taker->runs_finished(), 1) << "the item in flight finishes where it started";
  EXPECT_EQ(other->runs_finished(), 2);
  const auto devices = queue_->Devices();
  ASSERT_EQ(devices.size(), 2u);
  const auto& lost = devices[taker == &runner_ ? 0 : 1];
  EXPECT_TRUE(lost.unavailable);
  EXPECT_EQ(lost.unavailable_reason,
            "Fake GPU is unavailable: its worker failed to start 3 times in a row");
  EXPECT_FALSE(devices[taker == &runner_ ? 1 : 0].unavailable);
  queue_.reset();  // its worker threads use `second`
}

TEST_F(JobQueueTest, SubmissionsNoDeviceCanRunAreUnavailableAndReadsGoOn) {
  auto done = queue_->Submit(ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16}));
  ASSERT_TRUE(done.ok());
  WaitForEnd(done->id);
  runner_.MakeUnavailable("its worker failed to start 3 times in a row");
  auto refused = queue_->Submit(ShapesSpec({{64, 64, 64}}, {core::Recipe::kBf16}));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(),
            "no device is available to run jobs: Fake GPU is unavailable: its worker failed to "
            "start 3 times in a row");
  EXPECT_EQ(queue_->Plan(ShapesSpec({{8, 8, 8}}, {})).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(store_->ListJobs({})->items.size(), 1u) << "nothing stored for the refused one";
  EXPECT_EQ(store_->GetJob(done->id)->state, JobState::kSucceeded);
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
