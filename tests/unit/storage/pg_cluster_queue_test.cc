// PgStore's cluster queue on a real PostgreSQL: claims, leases that lapse, the one
// daemon that ends a job, fair share, cancel; and the refusal of stores without one.
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

using ::testing::HasSubstr;

class ClusterQueueTest : public StoreTest {
 protected:
  // A job of `items` items in `batches` batches of consecutive seqs, for `model`.
  core::JobRecord Queue(ResultStore& store, int items, int batches, const std::string& model,
                        const std::string& submitted_by = "", int32_t priority = 0) {
    std::vector<std::vector<int32_t>> plan(batches);
    for (int i = 0; i < items; ++i) plan[i * batches / items].push_back(i);
    core::JobRecord job = SeedJob("cluster");
    job.submitted_by = submitted_by;
    job.spec.priority = priority;
    job.spec.where = {core::PlacementKind::kModel, model};
    absl::StatusOr<core::JobRecord> stored =
        store.CreateClusterJob(job, SeedItems(items), plan, {model, ""});
    EXPECT_TRUE(stored.ok()) << stored.status();
    return stored.ok() ? *stored : core::JobRecord{};
  }
  ClusterBatch MustClaim(ResultStore& store, const std::string& model, int64_t lease_ms = 60000) {
    absl::StatusOr<std::optional<ClusterBatch>> claim = store.ClaimClusterBatch(model, lease_ms);
    EXPECT_TRUE(claim.ok()) << claim.status();
    EXPECT_TRUE(claim.ok() && claim->has_value()) << "nothing to claim";
    return claim.ok() && claim->has_value() ? **claim : ClusterBatch{};
  }
  bool NothingToClaim(ResultStore& store, const std::string& model) {
    absl::StatusOr<std::optional<ClusterBatch>> claim = store.ClaimClusterBatch(model, 60000);
    EXPECT_TRUE(claim.ok()) << claim.status();
    return claim.ok() && !claim->has_value();
  }
  // Records every item of `batch` done with a measurement, as a claimer does.
  void MeasureAll(ResultStore& store, const ClusterBatch& batch) {
    for (const core::ItemRecord& rec : MustItems(batch.job_id)) {
      if (std::find(batch.item_ids.begin(), batch.item_ids.end(), rec.item.id) ==
          batch.item_ids.end()) {
        continue;
      }
      ASSERT_TRUE(MeasureOn(store, rec, 1.0, H100()).ok());
    }
  }
};
INSTANTIATE_TEST_SUITE_P(Postgres, ClusterQueueTest, ::testing::Values(Backend::kPostgres),
                         BackendName);

TEST_P(ClusterQueueTest, BatchesGoToTheirModelOnceEachAndTheLastFinisherEndsTheJob) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(store_->HasClusterQueue());
  const core::JobRecord job = Queue(*store_, 6, 3, "model-x");
  EXPECT_EQ(job.node, "node-a");
  EXPECT_TRUE(NothingToClaim(*b, "model-y"));
  const ClusterBatch first = MustClaim(*b, "model-x");
  const ClusterBatch second = MustClaim(*store_, "model-x");
  const ClusterBatch third = MustClaim(*b, "model-x");
  EXPECT_TRUE(NothingToClaim(*store_, "model-x"));
  std::set<int64_t> ids;
  for (const ClusterBatch& batch : {first, second, third}) {
    EXPECT_EQ(batch.job_id, job.id);
    EXPECT_EQ(batch.item_ids.size(), 2u);
    EXPECT_EQ(batch.attempts, 1);
    EXPECT_EQ(batch.previous_owner, "");
    ids.insert(batch.item_ids.begin(), batch.item_ids.end());
  }
  EXPECT_EQ(ids.size(), 6u) << "every item in exactly one batch";
  absl::StatusOr<core::JobRecord> running = store_->GetJob(job.id);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->state, core::JobState::kRunning);
  // Who measures it now: the holders of its live leases, from any node, in ListJobs too.
  EXPECT_THAT(running->measuring_nodes, ::testing::ElementsAre("node-a", "node-b"));
  absl::StatusOr<Page<core::JobRecord>> listed = b->ListJobs({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_THAT(listed->items[0].measuring_nodes, ::testing::ElementsAre("node-a", "node-b"));
  // Only the holder renews or finishes a batch.
  EXPECT_TRUE(b->RenewClusterLease(first.id, 60000).ok());
  absl::Status foreign = store_->RenewClusterLease(first.id, 60000);
  EXPECT_EQ(foreign.code(), absl::StatusCode::kFailedPrecondition) << foreign;
  EXPECT_THAT(foreign.message(), HasSubstr("no longer leased to node node-a"));
  EXPECT_EQ(store_->FinishClusterBatch(first.id).status().code(),
            absl::StatusCode::kFailedPrecondition);
  MeasureAll(*b, first);
  MeasureAll(*store_, second);
  MeasureAll(*b, third);
  absl::StatusOr<bool> last = b->FinishClusterBatch(first.id);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_FALSE(*last);
  last = b->FinishClusterBatch(third.id);
  ASSERT_TRUE(last.ok());
  EXPECT_FALSE(*last);
  // node-b holds nothing now; node-a still measures the second batch.
  EXPECT_THAT(store_->GetJob(job.id)->measuring_nodes, ::testing::ElementsAre("node-a"));
  last = store_->FinishClusterBatch(second.id);
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(*last) << "the third finish leaves no open batch";
  absl::StatusOr<ClusterQueueCounts> counts = store_->CountClusterBatches();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->queued + counts->leased + counts->expired, 0);
}

TEST_P(ClusterQueueTest, ALapsedLeaseIsClaimedAgainAndItsRunningItemsQueued) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  const core::JobRecord job = Queue(*store_, 2, 1, "model-x");
  // node-a claims for 200 ms, starts an item, then "dies".
  const ClusterBatch held = MustClaim(*store_, "model-x", 200);
  ASSERT_TRUE(store_->MarkItemRunning(held.item_ids[0]).ok());
  EXPECT_TRUE(NothingToClaim(*b, "model-x")) << "the lease is live";
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  absl::StatusOr<ClusterQueueCounts> counts = b->CountClusterBatches();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->expired, 1);
  const ClusterBatch again = MustClaim(*b, "model-x");
  EXPECT_EQ(again.id, held.id);
  EXPECT_EQ(again.attempts, 2);
  EXPECT_EQ(again.previous_owner, "node-a");
  for (const core::ItemRecord& rec : MustItems(job.id)) {
    EXPECT_EQ(rec.status, core::ItemStatus::kQueued) << rec.item.id;
  }
  // The lapsed holder comes back: its lease is gone, and an item it records after the
  // new holder did is refused (one result per item).
  EXPECT_EQ(store_->RenewClusterLease(held.id, 60000).code(),
            absl::StatusCode::kFailedPrecondition);
  MeasureAll(*b, again);
  const core::ItemRecord done = MustItems(job.id)[0];
  EXPECT_EQ(MeasureOn(*store_, done, 2.0, H100()).code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<bool> last = b->FinishClusterBatch(again.id);
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(*last);
}

TEST_P(ClusterQueueTest, FairShareTakesTurnsBetweenSubmittersAndFavoursSmallJobs) {
  // Alice queues a large job, then Bob a small one; two devices hold Alice's batches.
  const core::JobRecord large = Queue(*store_, 20, 10, "model-x", "alice");
  const core::JobRecord small = Queue(*store_, 2, 1, "model-x", "bob");
  const core::JobRecord small_alice = Queue(*store_, 2, 1, "model-x", "alice");
  // Bob holds nothing, Alice nothing yet: the job with the fewest open batches first.
  EXPECT_EQ(MustClaim(*store_, "model-x").job_id, small.id);
  // Bob now holds a lease: Alice's turn, her smaller job first.
  EXPECT_EQ(MustClaim(*store_, "model-x").job_id, small_alice.id);
  EXPECT_EQ(MustClaim(*store_, "model-x").job_id, large.id);
  // An admin's priority goes before everyone.
  const core::JobRecord urgent = Queue(*store_, 4, 4, "model-x", "root", 5);
  EXPECT_EQ(MustClaim(*store_, "model-x").job_id, urgent.id);
}

TEST_P(ClusterQueueTest, ReleaseRequeuesAndCancelStopsEverything) {
  const core::JobRecord job = Queue(*store_, 4, 2, "model-x");
  const ClusterBatch held = MustClaim(*store_, "model-x");
  ASSERT_TRUE(store_->MarkItemRunning(held.item_ids[0]).ok());
  ASSERT_TRUE(store_->ReleaseClusterBatch(held.id).ok());
  for (const core::ItemRecord& rec : MustItems(job.id)) {
    EXPECT_EQ(rec.status, core::ItemStatus::kQueued);
  }
  const ClusterBatch again = MustClaim(*store_, "model-x");
  EXPECT_EQ(again.item_ids, held.item_ids) << "a released batch is first in line again";
  ASSERT_TRUE(store_->MarkItemRunning(again.item_ids[0]).ok());
  ASSERT_TRUE(store_->CancelClusterBatches(job.id).ok());
  EXPECT_TRUE(NothingToClaim(*store_, "model-x"));
  for (const core::ItemRecord& rec : MustItems(job.id)) {
    EXPECT_EQ(rec.status, core::ItemStatus::kCancelled);
  }
  EXPECT_EQ(store_->RenewClusterLease(again.id, 1000).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ClusterQueueSqliteTest, AnEmbeddedStoreHasNoClusterQueueAndSaysWhatToDo) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<ResultStore>> store = OpenResultStore(dir.File("results.db"), {});
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_FALSE((*store)->HasClusterQueue());
  absl::Status claim = (*store)->ClaimClusterBatch("model-x", 1000).status();
  EXPECT_EQ(claim.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(claim.message(), HasSubstr("--db postgresql://"));
}

}  // namespace
}  // namespace gemmprof::storage::testing
