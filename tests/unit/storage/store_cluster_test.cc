// ResultStore (every backend): several nodes on one store.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

TEST_P(ClusterTest, JobsAndResultsRecordTheirNode) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  core::JobRecord job_a = MustCreate(2);
  EXPECT_EQ(job_a.node, "node-a");
  absl::StatusOr<core::JobRecord> job_b = b->CreateJob(SeedJob("b"), SeedItems(2));
  ASSERT_TRUE(job_b.ok()) << job_b.status();
  EXPECT_EQ(job_b->node, "node-b");

  core::DeviceInfo gpu_b = H100();
  gpu_b.uuid = "GPU-B";
  std::vector<core::ItemRecord> items_b = MustItems(job_b->id);
  ASSERT_TRUE(MeasureOn(*b, items_b[0], 3.0, gpu_b).ok());
  std::vector<core::ItemRecord> again = MustItems(job_b->id);  // read through node A
  EXPECT_EQ(again[0].measured_node, "node-b");
  EXPECT_EQ(again[0].device_uuid, "GPU-B");
  EXPECT_EQ(again[1].measured_node, "");  // not measured yet

  // Node A answers its item from B's result: the item names B and B's GPU.
  absl::StatusOr<std::optional<CachedResult>> hit = store_->LookupCache(KeyOf(items_b[0]));
  ASSERT_TRUE(hit.ok() && hit->has_value()) << hit.status();
  EXPECT_EQ((*hit)->node, "node-b");
  EXPECT_EQ((*hit)->device_uuid, "GPU-B");
  std::vector<core::ItemRecord> items_a = MustItems(job_a.id);
  ASSERT_TRUE(store_->MarkItemRunning(items_a[0].item.id).ok());
  ASSERT_TRUE(store_
                  ->FinishItem(items_a[0].item.id, core::ItemStatus::kDone, "", std::nullopt,
                               H100(), {}, KeyOf(items_a[0]), (*hit)->result_id)
                  .ok());
  core::ItemRecord cached = MustItems(job_a.id)[0];
  EXPECT_TRUE(cached.cached);
  EXPECT_EQ(cached.measured_node, "node-b");
  EXPECT_EQ(cached.device_uuid, "GPU-B");
  EXPECT_EQ(cached.measured_ms, (*hit)->measured_ms);
}

TEST_P(ClusterTest, FiltersAndRecoveryHonourNodes) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  core::JobRecord job_a = MustCreate(1);
  absl::StatusOr<core::JobRecord> job_b = b->CreateJob(SeedJob("b"), SeedItems(1));
  ASSERT_TRUE(job_b.ok());
  ASSERT_TRUE(Measure(MustItems(job_a.id)[0], 1.0).ok());
  ASSERT_TRUE(MeasureOn(*b, MustItems(job_b->id)[0], 2.0, H100()).ok());

  JobFilter jobs;
  jobs.node = "node-b";
  absl::StatusOr<Page<core::JobRecord>> only_b = store_->ListJobs(jobs);
  ASSERT_TRUE(only_b.ok());
  ASSERT_EQ(only_b->items.size(), 1u);
  EXPECT_EQ(only_b->items[0].id, job_b->id);
  EXPECT_EQ(store_->ListJobs({})->items.size(), 2u);

  ResultFilter results;
  results.node = "node-a";
  absl::StatusOr<Page<ResultRow>> only_a = b->QueryResults(results);
  ASSERT_TRUE(only_a.ok()) << only_a.status();
  ASSERT_EQ(only_a->items.size(), 1u);
  EXPECT_EQ(only_a->items[0].node, "node-a");
  EXPECT_EQ(only_a->items[0].job_id, job_a.id);
  results.node = "";
  EXPECT_EQ(b->QueryResults(results).status().code(), absl::StatusCode::kInvalidArgument);

  // Each node resumes only its own unfinished jobs.
  absl::StatusOr<std::vector<int64_t>> mine = store_->RecoverUnfinished();
  ASSERT_TRUE(mine.ok());
  EXPECT_THAT(*mine, ::testing::ElementsAre(job_a.id));
  absl::StatusOr<std::vector<int64_t>> theirs = b->RecoverUnfinished();
  ASSERT_TRUE(theirs.ok());
  EXPECT_THAT(*theirs, ::testing::ElementsAre(job_b->id));
}

// A campaign's jobs, whichever node accepted them, and only them.
TEST_P(ClusterTest, JobsFilterByCampaign) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  core::JobRecord x = SeedJob("x");
  x.spec.campaign = "x-vs-y";
  absl::StatusOr<core::JobRecord> job_x = store_->CreateJob(x, SeedItems(1));
  ASSERT_TRUE(job_x.ok()) << job_x.status();
  MustCreate(1);  // of no campaign
  core::JobRecord y = SeedJob("y");
  y.spec.campaign = "x-vs-y";
  absl::StatusOr<core::JobRecord> job_y = b->CreateJob(y, SeedItems(1));
  ASSERT_TRUE(job_y.ok()) << job_y.status();
  core::JobRecord other = SeedJob("z");
  other.spec.campaign = "x-vs-y2";
  ASSERT_TRUE(b->CreateJob(other, SeedItems(1)).ok());

  JobFilter f;
  f.campaign = "x-vs-y";
  for (ResultStore* s : {store_.get(), b.get()}) {
    absl::StatusOr<Page<core::JobRecord>> page = s->ListJobs(f);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->items.size(), 2u);
    EXPECT_EQ(page->items[0].id, job_y->id);
    EXPECT_EQ(page->items[1].id, job_x->id);
    EXPECT_EQ(page->items[1].spec.campaign, "x-vs-y");
  }
  f.campaign = "x-vs";  // exact, not a prefix
  EXPECT_TRUE(store_->ListJobs(f)->items.empty());
  f.campaign = "x-vs-y";
  f.node = "node-a";
  ASSERT_EQ(store_->ListJobs(f)->items.size(), 1u);
  EXPECT_EQ(store_->ListJobs({})->items.size(), 4u);
}

// Every daemon on the store writes its record by node: a node's latest record replaces
// its earlier one, every node sees every other, and a record reads back field for field.
TEST_P(ClusterTest, DaemonsListEveryNodesLatestRecord) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  absl::StatusOr<std::vector<core::DaemonRecord>> none = store_->ListDaemons();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  core::DaemonRecord a;
  a.node = "node-a";
  a.version = "0.1.0";
  a.backend = "cuda";
  a.models = {{"NVIDIA H200", 2, 0}};
  a.devices = 2;
  a.busy = 1;
  a.started_unix_ms = 1'000;
  a.heartbeat_unix_ms = 5'000;
  ASSERT_TRUE(store_->PutDaemon(a).ok());
  core::DaemonRecord bee = a;
  bee.node = "node-b";
  bee.models = {{"NVIDIA H100 80GB HBM3", 1, 1}, {"NVIDIA H200", 1, 0}};
  bee.busy = 0;
  ASSERT_TRUE(b->PutDaemon(bee).ok());
  a.heartbeat_unix_ms = 15'000;  // the next heartbeat replaces the row
  a.busy = 2;
  ASSERT_TRUE(store_->PutDaemon(a).ok());

  for (ResultStore* s : {store_.get(), b.get()}) {
    absl::StatusOr<std::vector<core::DaemonRecord>> all = s->ListDaemons();
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_EQ(all->size(), 2u);
    const core::DaemonRecord& got_a = (*all)[0];
    EXPECT_EQ(got_a.node, "node-a");
    EXPECT_EQ(got_a.heartbeat_unix_ms, 15'000);
    EXPECT_EQ(got_a.busy, 2);
    EXPECT_EQ(got_a.started_unix_ms, 1'000);
    EXPECT_EQ(got_a.version, "0.1.0");
    EXPECT_EQ(got_a.backend, "cuda");
    ASSERT_EQ(got_a.models.size(), 1u);
    EXPECT_EQ(got_a.models[0].name, "NVIDIA H200");
    EXPECT_EQ(got_a.models[0].count, 2);
    const core::DaemonRecord& got_b = (*all)[1];
    EXPECT_EQ(got_b.node, "node-b");
    ASSERT_EQ(got_b.models.size(), 2u);
    EXPECT_EQ(got_b.models[0].unavailable, 1);
    EXPECT_FALSE(got_b.stopped);
  }
  bee.stopped = true;
  ASSERT_TRUE(b->PutDaemon(bee).ok());
  EXPECT_TRUE((*store_->ListDaemons())[1].stopped);
}

}  // namespace
}  // namespace gemmprof::storage::testing
