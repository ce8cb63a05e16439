// JobExecutor, driven directly (no queue threads): measurement groups, whole-group cache
// hits, group failures, interrupts between groups, events and shared rows.
#include "server/queue/job_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/storage/sqlite/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::queue {
namespace {

using core::ItemStatus;
using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::ElementsAre;
using ::testing::StartsWith;

struct ItemSpec {
  core::GemmShape shape;
  Recipe recipe;
  Mode mode = Mode::kAutocast;
  Pass pass = Pass::kFprop;
};

class JobExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = storage::SqliteStore::Open(dir_.File("x.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  int64_t Create(const std::vector<ItemSpec>& specs, bool force = false, int32_t retries = 1) {
    core::JobRecord job;
    job.spec.shapes = {specs.front().shape};
    job.spec.timing.timed_iters = 4;
    job.spec.force = force;
    job.spec.retries = retries;
    std::vector<core::WorkItem> items;
    for (const ItemSpec& s : specs) {
      core::WorkItem& item = items.emplace_back();
      item.op.name = "op";
      item.op.shape = s.shape;
      item.op.pass = s.pass;
      item.recipe = s.recipe;
      item.mode = s.mode;
    }
    auto created = store_->CreateJob(job, items);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->id : 0;
  }

  // Most tests follow a job group by group (batch_groups 1); batches have their own.
  RunEnd RunJob(int64_t job_id, std::function<Interrupt(int64_t)> interrupt = nullptr,
                size_t batch_groups = 1) {
    if (!interrupt) interrupt = [](int64_t) { return Interrupt::kNone; };
    ShareHooks hooks;
    hooks.batch_groups = batch_groups;
    JobExecutor executor(*store_, bus_, runner_, std::move(interrupt), std::move(hooks));
    return executor.Run(job_id);
  }

  std::vector<core::ItemRecord> Items(int64_t job_id) {
    auto items = store_->GetItems(job_id);
    EXPECT_TRUE(items.ok()) << items.status();
    return items.ok() ? *items : std::vector<core::ItemRecord>{};
  }

  // The seqs of every group the runner was asked to measure, in order.
  std::vector<std::vector<int32_t>> RequestedSeqs() const {
    std::vector<std::vector<int32_t>> seqs;
    for (const core::GroupRequest& r : runner_.requests()) {
      auto& one = seqs.emplace_back();
      for (const core::WorkItem& item : r.items) one.push_back(item.seq);
    }
    return seqs;
  }

  testing::TempDir dir_;
  testing::FakeRunner runner_;
  JobEventBus bus_;
  std::unique_ptr<storage::SqliteStore> store_;
};

const core::GemmShape kA{64, 64, 64}, kB{32, 32, 32};

TEST_F(JobExecutorTest, MeasuresGroupByGroupLargestWorkFirst) {
  // Work per group: one item's FLOPs times its items: kA twice, kA once, kB twice.
  const int64_t job = Create({{kA, Recipe::kBf16},
                              {kB, Recipe::kBf16},
                              {kA, Recipe::kFp8Current},
                              {kA, Recipe::kBf16, Mode::kAutocast, Pass::kDgrad},
                              {kB, Recipe::kFp8Block}});
  EXPECT_EQ(RunJob(job), RunEnd::kEnded);
  EXPECT_THAT(RequestedSeqs(), ElementsAre(ElementsAre(0, 2), ElementsAre(3), ElementsAre(1, 4)));
  const auto requests = runner_.requests();
  EXPECT_THAT(requests[0].group_uid,
              StartsWith(runner_.Info().uuid + "/j" + std::to_string(job) + "/s0/"));
  EXPECT_THAT(requests[1].group_uid, ::testing::HasSubstr("/s3/"));
  EXPECT_TRUE(requests[0].share_identical_work);
  EXPECT_EQ(requests[0].timing.timed_iters, 4);
  for (const auto& item : Items(job)) {
    EXPECT_EQ(item.status, ItemStatus::kDone) << item.item.seq;
    ASSERT_TRUE(item.result.has_value());
    EXPECT_FALSE(item.cached);
  }
  EXPECT_EQ(store_->GetJob(job)->state, core::JobState::kSucceeded);
  EXPECT_EQ(runner_.fit_checks(), 1) << "one question for the whole job, not one per item";
}

TEST_F(JobExecutorTest, AFitCheckThatCouldNotBeAskedIsAskedAgainForTheNextGroup) {
  const int64_t job = Create({{kA, Recipe::kBf16}, {kB, Recipe::kBf16}});
  runner_.FailFitChecks(1);  // the first question meets a restarting worker
  EXPECT_EQ(RunJob(job), RunEnd::kEnded);
  EXPECT_EQ(runner_.fit_checks(), 2);
  for (const auto& item : Items(job)) EXPECT_EQ(item.status, ItemStatus::kDone) << item.item.seq;
}

TEST_F(JobExecutorTest, AWarmUpFailureFailsTheJobBeforeAnyGroup) {
  const int64_t job = Create({{kA, Recipe::kBf16}, {kB, Recipe::kBf16}});
  runner_.FailBeginJobWith(absl::InternalError("the warm-up kernel failed"));
  EXPECT_EQ(RunJob(job), RunEnd::kEnded);
  EXPECT_TRUE(runner_.requests().empty());
  const auto ended = store_->GetJob(job);
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->state, core::JobState::kFailed);
  EXPECT_THAT(ended->error,
              ::testing::HasSubstr("device warm-up failed: the warm-up kernel failed"));
}

TEST_F(JobExecutorTest, SharedMeasurementsAreRowsOfTheirOwnNotCacheHits) {
  std::vector<core::ItemRecord> finished;
  const int64_t job = Create({{kA, Recipe::kFp8Current},
                              {kA, Recipe::kBf16, Mode::kAutocast},
                              {kA, Recipe::kBf16, Mode::kPrequant}});
  bus_.Subscribe(job, [&](const JobEvent& e) {
    if (e.kind == JobEvent::Kind::kItemFinished) finished.push_back(*e.item);
  });
  RunJob(job);
  ASSERT_EQ(finished.size(), 3u);
  ASSERT_TRUE(finished[2].result.has_value());
  EXPECT_EQ(finished[2].result->shared_with_item, finished[1].item.id);
  EXPECT_EQ(finished[2].result->round_ms, finished[1].result->round_ms);
  const auto items = Items(job);
  EXPECT_EQ(items[2].status, ItemStatus::kDone);
  EXPECT_FALSE(items[2].cached);
  EXPECT_EQ(items[2].result->notes, "same GPU work as bf16 autocast (item 1), one measurement");
  storage::ResultFilter filter;
  filter.job_id = job;
  EXPECT_EQ(store_->QueryResults(filter)->items.size(), 3u);
}

TEST_F(JobExecutorTest, AFullCacheHitMeasuresNothingAndAPartialOneMeasuresTheWholeGroup) {
  RunJob(Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}}));
  ASSERT_EQ(runner_.groups_started(), 1);

  const int64_t again = Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}});
  RunJob(again);
  EXPECT_EQ(runner_.groups_started(), 1) << "every item hit one group: nothing measured";
  for (const auto& item : Items(again)) EXPECT_TRUE(item.cached);

  const int64_t more =
      Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}, {kA, Recipe::kFp8Block}});
  RunJob(more);
  EXPECT_THAT(RequestedSeqs().back(), ElementsAre(0, 1, 2)) << "the hits are measured again";
  for (const auto& item : Items(more)) {
    EXPECT_EQ(item.status, ItemStatus::kDone);
    EXPECT_FALSE(item.cached);
  }
}

TEST_F(JobExecutorTest, ABatchIsOneRequestAndItsCachedGroupsAreServed) {
  // Two shapes of one M share a batch (a shape list is batched by M); kC is its own.
  const core::GemmShape kB{64, 32, 32}, kC{16, 16, 16};
  const int64_t first = Create({{kA, Recipe::kBf16},
                                {kB, Recipe::kBf16},
                                {kA, Recipe::kFp8Current},
                                {kB, Recipe::kFp8Current}});
  RunJob(first, nullptr, kDefaultBatchGroups);
  ASSERT_EQ(runner_.groups_started(), 1) << "two shapes, one batch";
  EXPECT_THAT(RequestedSeqs().front(), ElementsAre(0, 2, 1, 3)) << "groups whole, largest first";
  const auto measured = Items(first);
  EXPECT_EQ(measured[0].result->group_uid, measured[1].result->group_uid) << "the same rounds";

  // kA and kB hit, group by group; only the new shape is measured.
  const int64_t more = Create({{kA, Recipe::kBf16},
                               {kB, Recipe::kBf16},
                               {kC, Recipe::kBf16},
                               {kA, Recipe::kFp8Current},
                               {kB, Recipe::kFp8Current}});
  RunJob(more, nullptr, kDefaultBatchGroups);
  ASSERT_EQ(runner_.groups_started(), 2);
  EXPECT_THAT(RequestedSeqs().back(), ElementsAre(2));
  for (const auto& item : Items(more)) {
    EXPECT_EQ(item.status, ItemStatus::kDone) << item.item.seq;
    EXPECT_EQ(item.cached, item.item.seq != 2) << item.item.seq;
  }
}

TEST_F(JobExecutorTest, HitsFromDifferentMeasurementGroupsAreMeasuredAgain) {
  const int64_t first = Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}});
  RunJob(first);
  if (Items(first)[0].result->group_uid.empty()) {
    GTEST_SKIP() << "the store's measurement JSON does not keep group_uid yet (json_codec)";
  }
  RunJob(Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Block}}));
  ASSERT_EQ(runner_.groups_started(), 2);
  const int64_t mixed = Create({{kA, Recipe::kFp8Current}, {kA, Recipe::kFp8Block}});
  RunJob(mixed);
  EXPECT_EQ(runner_.groups_started(), 3) << "their rounds were not the same";
  for (const auto& item : Items(mixed)) EXPECT_FALSE(item.cached);
}

TEST_F(JobExecutorTest, ForcedJobsMeasureEvenWhenEverythingHits) {
  RunJob(Create({{kA, Recipe::kBf16}}));
  RunJob(Create({{kA, Recipe::kBf16}}, /*force=*/true));
  EXPECT_EQ(runner_.groups_started(), 2);
}

TEST_F(JobExecutorTest, RefusedAndUnsupportedMembersAreSettledAndTheRestMeasuredOrCached) {
  const core::GemmShape n8{64, 64, 8};  // FP8 needs N % 16 on the fake device
  const auto specs =
      std::vector<ItemSpec>{{n8, Recipe::kBf16}, {n8, Recipe::kFp8Current}, {n8, Recipe::kMxfp8}};
  const int64_t job = Create(specs);
  RunJob(job);
  EXPECT_THAT(RequestedSeqs(), ElementsAre(ElementsAre(0)));
  auto items = Items(job);
  EXPECT_EQ(items[0].status, ItemStatus::kDone);
  EXPECT_EQ(items[1].status, ItemStatus::kNotSupported);
  EXPECT_EQ(items[1].error, "fp8-current needs N to be a multiple of 16; shape 64x64x8 has N=8");
  EXPECT_EQ(items[2].status, ItemStatus::kNotSupported);
  EXPECT_EQ(items[2].error, "mxfp8 needs sm_100+, this is sm_90");

  const int64_t again = Create(specs);
  RunJob(again);
  EXPECT_EQ(runner_.groups_started(), 1) << "the refused item does not spoil the group's hit";
  EXPECT_TRUE(Items(again)[0].cached);
}

TEST_F(JobExecutorTest, AGroupFailureFailsEveryMemberAndTheJobGoesOn) {
  runner_.FailRunsWith(absl::InternalError("CUDA error: an illegal memory access"));
  const int64_t job =
      Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}, {kB, Recipe::kFp8Block}});
  EXPECT_EQ(RunJob(job), RunEnd::kEnded);
  const auto items = Items(job);
  EXPECT_EQ(items[0].status, ItemStatus::kFailed);
  EXPECT_EQ(items[0].error,
            "fprop op 64x64x64 bf16 autocast: CUDA error: an illegal memory access; the item "
            "failed and the job goes on with its next item");
  EXPECT_EQ(items[1].status, ItemStatus::kFailed);
  EXPECT_EQ(items[2].status, ItemStatus::kFailed);
  EXPECT_EQ(items[2].error,
            "fprop op 32x32x32 fp8-block autocast: CUDA error: an illegal memory access; the "
            "item failed (it was the job's last item)");
  const auto ended = store_->GetJob(job);
  EXPECT_EQ(ended->state, core::JobState::kPartial);
  EXPECT_EQ(ended->error, "3 of 3 items failed");
  EXPECT_EQ(runner_.groups_started(), 2);
}

// Another GEMM of kA's M: a shape list batches by M.
const core::GemmShape kA2{64, 32, 64};

TEST_F(JobExecutorTest, AWorkerFaultThatComesBackIsRetriedThenBisectedByGroup) {
  runner_.FailRunsWith(absl::AbortedError("worker exited: signal 9 (Killed)"));
  const int64_t job =
      Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}, {kA2, Recipe::kFp8Block}});
  RunJob(job, nullptr, /*batch_groups=*/2);
  // The batch, its retry, then each half (one group each) once.
  EXPECT_THAT(RequestedSeqs(), ElementsAre(ElementsAre(0, 1, 2), ElementsAre(0, 1, 2),
                                           ElementsAre(0, 1), ElementsAre(2)));
  for (const core::ItemRecord& item : Items(job)) {
    EXPECT_EQ(item.status, ItemStatus::kFailed);
    EXPECT_NE(item.error.find("worker exited: signal 9 (Killed); reproduced on retry"),
              std::string::npos)
        << item.error;
  }
}

TEST_F(JobExecutorTest, WithoutRetriesAWorkerFaultFailsTheBatchAtOnce) {
  runner_.FailRunsWith(absl::AbortedError("worker exited: signal 9 (Killed)"));
  const int64_t job = Create({{kA, Recipe::kBf16}, {kA2, Recipe::kBf16}}, false, /*retries=*/0);
  RunJob(job, nullptr, /*batch_groups=*/2);
  EXPECT_EQ(RequestedSeqs().size(), 1u);
  for (const core::ItemRecord& item : Items(job)) {
    EXPECT_EQ(item.status, ItemStatus::kFailed);
    EXPECT_EQ(item.error.find("reproduced"), std::string::npos) << item.error;
  }
  // A failure of the GEMMs themselves is never retried, whatever --retries says.
  runner_.FailRunsWith(absl::InternalError("cuBLASLt: execution failed"));
  const int64_t other = Create({{kA, Recipe::kBf16}}, /*force=*/true, /*retries=*/3);
  RunJob(other);
  EXPECT_EQ(RequestedSeqs().size(), 2u);
  EXPECT_EQ(Items(other)[0].status, ItemStatus::kFailed);
}

TEST_F(JobExecutorTest, AJobCancelledBeforeItsRetryEndsItsItemsCancelled) {
  runner_.FailRunsWith(absl::AbortedError("worker exited: signal 9 (Killed)"));
  const int64_t job = Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}});
  int polls = 0;
  RunJob(job, [&](int64_t) { return polls++ == 0 ? Interrupt::kNone : Interrupt::kCancel; });
  EXPECT_EQ(RequestedSeqs().size(), 1u) << "no retry after the cancel";
  for (const core::ItemRecord& item : Items(job)) {
    EXPECT_EQ(item.status, ItemStatus::kCancelled);
    EXPECT_EQ(item.error, "cancelled by request before its retry");
  }
  EXPECT_EQ(store_->GetJob(job)->state, core::JobState::kCancelled);
}

TEST_F(JobExecutorTest, OneItemsFailureOrRefusalInAGroupIsThatItemsAlone) {
  runner_.FailItem(1, absl::AbortedError("worker exited: signal 9 (Killed)"));
  runner_.FailItem(2, absl::UnimplementedError("cuBLASLt: no algorithm for this layout"));
  const int64_t job =
      Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}, {kA, Recipe::kFp8Block}});
  RunJob(job);
  const auto items = Items(job);
  EXPECT_EQ(items[0].status, ItemStatus::kDone);
  EXPECT_EQ(items[1].status, ItemStatus::kFailed);
  EXPECT_EQ(items[1].error,
            "fprop op 64x64x64 fp8-current autocast: worker exited: signal 9 (Killed); the item "
            "failed and the job goes on with its next item");
  EXPECT_EQ(items[2].status, ItemStatus::kNotSupported);
  EXPECT_EQ(items[2].error, "cuBLASLt: no algorithm for this layout");
  EXPECT_EQ(store_->GetJob(job)->error, "1 of 3 items failed");
}

TEST_F(JobExecutorTest, CancelAndStopTakeEffectBetweenGroups) {
  const std::vector<ItemSpec> specs = {
      {kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}, {kB, Recipe::kBf16}};
  int polls = 0;
  const int64_t job = Create(specs);
  EXPECT_EQ(
      RunJob(job, [&](int64_t) { return polls++ == 0 ? Interrupt::kNone : Interrupt::kCancel; }),
      RunEnd::kEnded);
  auto items = Items(job);
  EXPECT_EQ(items[0].status, ItemStatus::kDone);
  EXPECT_EQ(items[1].status, ItemStatus::kDone) << "a group runs whole";
  EXPECT_EQ(items[2].status, ItemStatus::kCancelled);
  EXPECT_EQ(store_->GetJob(job)->state, core::JobState::kCancelled);

  polls = 0;
  const int64_t stopped = Create(specs, /*force=*/true);
  EXPECT_EQ(
      RunJob(stopped, [&](int64_t) { return polls++ == 0 ? Interrupt::kNone : Interrupt::kStop; }),
      RunEnd::kStopped);
  items = Items(stopped);
  EXPECT_EQ(items[1].status, ItemStatus::kDone);
  EXPECT_EQ(items[2].status, ItemStatus::kQueued) << "it resumes after a restart";
  EXPECT_EQ(RunJob(stopped), RunEnd::kEnded);
  EXPECT_THAT(RequestedSeqs().back(), ElementsAre(2)) << "only the unfinished group";
}

TEST_F(JobExecutorTest, ADeviceLostBetweenGroupsHandsTheJobBack) {
  const int64_t job = Create({{kA, Recipe::kBf16}, {kB, Recipe::kBf16}});
  int polls = 0;
  EXPECT_EQ(RunJob(job,
                   [&](int64_t) {
                     if (polls++ == 1) runner_.MakeUnavailable("its worker failed to start");
                     return Interrupt::kNone;
                   }),
            RunEnd::kDeviceLost);
  const auto items = Items(job);
  EXPECT_EQ(items[0].status, ItemStatus::kDone);
  EXPECT_EQ(items[1].status, ItemStatus::kQueued);
}

TEST_F(JobExecutorTest, EveryMemberStartsBeforeTheGroupAndFinishesWithItsOwnEvent) {
  std::vector<std::pair<JobEvent::Kind, int32_t>> events;
  const int64_t job = Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}});
  bus_.Subscribe(job, [&](const JobEvent& e) {
    events.emplace_back(e.kind, e.item.has_value() ? e.item->item.seq : -1);
  });
  RunJob(job);
  using K = JobEvent::Kind;
  EXPECT_THAT(events, ElementsAre(std::pair{K::kItemStarted, 0}, std::pair{K::kItemStarted, 1},
                                  std::pair{K::kItemFinished, 0}, std::pair{K::kItemFinished, 1},
                                  std::pair{K::kJobFinished, -1}));
}

// A runner that answers a group with one outcome too few.
class ShortRunner : public testing::FakeRunner {
 public:
  absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) override {
    auto result = FakeRunner::MeasureGroup(request);
    if (result.ok()) result->outcomes.pop_back();
    return result;
  }
};

TEST_F(JobExecutorTest, OutcomesThatDoNotMatchTheRequestFailTheGroup) {
  ShortRunner runner;
  const int64_t job = Create({{kA, Recipe::kBf16}, {kA, Recipe::kFp8Current}});
  JobExecutor executor(*store_, bus_, runner, [](int64_t) { return Interrupt::kNone; });
  executor.Run(job);
  for (const auto& item : Items(job)) {
    EXPECT_EQ(item.status, ItemStatus::kFailed);
    EXPECT_THAT(item.error,
                ::testing::HasSubstr("the device returned 1 outcomes for a group of 2 items"));
  }
}

}  // namespace
}  // namespace gemmprof::queue
