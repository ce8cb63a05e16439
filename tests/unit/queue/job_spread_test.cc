// A job's groups spread over the idle devices of its model (JobShare), `devices` pins.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "core/derive.h"
#include "core/group.h"
#include "core/presets.h"
#include "server/queue/job_queue.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::queue {
namespace {

using core::ItemStatus;
using core::JobState;

core::JobSpec Spec(int shapes) {
  core::JobSpec spec;
  // One M (a shape list is batched by M), so the shapes may share a batch.
  for (int i = 0; i < shapes; ++i) spec.shapes.push_back({64, 64 + 16 * i, 64});
  spec.recipes = {core::Recipe::kBf16, core::Recipe::kFp8Current};
  spec.modes = {core::Mode::kAutocast, core::Mode::kPrequant};
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

class JobSpreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = storage::SqliteStore::Open(dir_.File("q.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    first_.SetIdentity("Fake GPU", "GPU-aaaa");
    second_.SetIdentity("Fake GPU", "GPU-bbbb");
  }
  void TearDown() override { queue_.reset(); }

  void Start() {
    queue_ = std::make_unique<JobQueue>(*store_, std::vector<device::Runner*>{&first_, &second_},
                                        OneGroupPerBatch());
    ASSERT_TRUE(queue_->Start().ok());
  }

  core::JobRecord WaitForEnd(int64_t job_id) {
    for (int i = 0; i < 1000; ++i) {
      auto job = store_->GetJob(job_id);
      if (job.ok() && core::IsTerminal(job->state)) return *job;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << job_id << " did not end";
    return {};
  }

  // The GPU uuid of every result of the job.
  std::multiset<std::string> ResultDevices(int64_t job_id) {
    storage::ResultFilter filter;
    filter.job_id = job_id;
    filter.page_size = 1000;
    auto page = store_->QueryResults(filter);
    EXPECT_TRUE(page.ok()) << page.status();
    std::multiset<std::string> out;
    if (page.ok()) {
      for (const auto& row : page->items) out.insert(row.device.uuid);
    }
    return out;
  }

  testing::TempDir dir_;
  testing::FakeRunner first_;
  testing::FakeRunner second_;
  std::unique_ptr<storage::SqliteStore> store_;
  std::unique_ptr<JobQueue> queue_;
};

TEST_F(JobSpreadTest, BothDevicesOfTheModelMeasureGroupsOfOneJob) {
  first_.Hold();
  second_.Hold();
  Start();
  auto job = queue_->Submit(Spec(4));  // 4 groups of 4 items
  ASSERT_TRUE(job.ok()) << job.status();
  // Each device holds one group in flight at once: the job is spread.
  ASSERT_TRUE(first_.WaitForRunsStarted(1));
  ASSERT_TRUE(second_.WaitForRunsStarted(1));
  first_.Release();
  second_.Release();
  const auto ended = WaitForEnd(job->id);
  EXPECT_EQ(ended.state, JobState::kSucceeded);
  EXPECT_EQ(ended.finished_items, 16);
  EXPECT_EQ(first_.groups_started() + second_.groups_started(), 4) << "each group once";
  const auto devices = ResultDevices(job->id);
  EXPECT_GT(devices.count("GPU-aaaa"), 0u);
  EXPECT_GT(devices.count("GPU-bbbb"), 0u);
  // Each device answered "can these items run here" once for the whole job: the first at
  // the submission (and ran on that answer), the second when it joined.
  EXPECT_EQ(first_.fit_checks(), 1);
  EXPECT_EQ(second_.fit_checks(), 1);
}

TEST_F(JobSpreadTest, WithDefaultBatchesEachDeviceTakesOneBatchOfTwoShapes) {
  queue_ = std::make_unique<JobQueue>(*store_, std::vector<device::Runner*>{&first_, &second_});
  first_.Hold();
  second_.Hold();
  ASSERT_TRUE(queue_->Start().ok());
  auto job = queue_->Submit(Spec(4));  // 4 groups of 4 items: 2 devices, 2 batches
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(first_.WaitForRunsStarted(8));
  ASSERT_TRUE(second_.WaitForRunsStarted(8));
  first_.Release();
  second_.Release();
  EXPECT_EQ(WaitForEnd(job->id).state, JobState::kSucceeded);
  EXPECT_EQ(first_.groups_started(), 1);
  EXPECT_EQ(second_.groups_started(), 1);
  // Each request holds two shapes; the largest work goes with the smallest.
  std::set<int64_t> first_k, second_k;
  // requests() returns a copy: it must outlive the loops over its items.
  const std::vector<core::GroupRequest> first_requests = first_.requests();
  const std::vector<core::GroupRequest> second_requests = second_.requests();
  for (const auto& item : first_requests.front().items) first_k.insert(item.op.shape.k);
  for (const auto& item : second_requests.front().items) second_k.insert(item.op.shape.k);
  EXPECT_EQ(first_k.size() + second_k.size(), 4u);
  const std::set<int64_t> a = {112, 64}, b = {96, 80};
  EXPECT_TRUE((first_k == a && second_k == b) || (first_k == b && second_k == a));
}

TEST_F(JobSpreadTest, DevicesPinsTheJob) {
  Start();
  core::JobSpec spec = Spec(3);
  spec.devices = {1};
  auto job = queue_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(WaitForEnd(job->id).state, JobState::kSucceeded);
  EXPECT_EQ(first_.groups_started(), 0);
  EXPECT_EQ(second_.groups_started(), 3);
  const auto devices = ResultDevices(job->id);
  EXPECT_EQ(devices.size(), 12u);
  EXPECT_EQ(devices.count("GPU-bbbb"), devices.size());
}

TEST_F(JobSpreadTest, BadDeviceListsAreRejectedNamingTheEntry) {
  Start();
  core::JobSpec spec = Spec(1);
  spec.devices = {0, 2};
  EXPECT_EQ(queue_->Submit(spec).status().message(),
            "devices[1]: 2 is not a device of this node (it has 2 devices: 0..1)");
  spec.devices = {-1};
  EXPECT_EQ(queue_->Submit(spec).status().message(),
            "devices[0]: -1 is not a device of this node (it has 2 devices: 0..1)");
  spec.devices = {1, 1};
  EXPECT_EQ(queue_->Submit(spec).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Submit(spec).status().message(), "devices[1]: device 1 is listed twice");
  auto jobs = store_->ListJobs({});
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->items.empty()) << "nothing stored";
}

TEST_F(JobSpreadTest, AnotherModelDoesNotHelp) {
  second_.SetIdentity("Other GPU", "GPU-cccc");
  first_.Hold();
  second_.Hold();
  Start();
  auto job = queue_->Submit(Spec(3));
  ASSERT_TRUE(job.ok()) << job.status();
  for (int i = 0; i < 1000 && first_.runs_started() + second_.runs_started() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The idle device of the other model had time to join, and must not have.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(first_.runs_started() == 0 || second_.runs_started() == 0)
      << first_.runs_started() << " and " << second_.runs_started();
  first_.Release();
  second_.Release();
  EXPECT_EQ(WaitForEnd(job->id).state, JobState::kSucceeded);
  EXPECT_TRUE(first_.groups_started() == 0 || second_.groups_started() == 0);
  EXPECT_EQ(first_.groups_started() + second_.groups_started(), 3);
}

TEST_F(JobSpreadTest, CancelStopsEveryDeviceAtItsGroupBoundary) {
  first_.Hold();
  second_.Hold();
  Start();
  auto job = queue_->Submit(Spec(5));
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(first_.WaitForRunsStarted(1));
  ASSERT_TRUE(second_.WaitForRunsStarted(1));
  ASSERT_TRUE(queue_->Cancel(job->id).ok());
  first_.Release();
  second_.Release();
  EXPECT_EQ(WaitForEnd(job->id).state, JobState::kCancelled);
  auto items = store_->GetItems(job->id);
  ASSERT_TRUE(items.ok());
  int done = 0, cancelled = 0;
  for (const auto& item : *items) {
    if (item.status == ItemStatus::kDone) ++done;
    if (item.status == ItemStatus::kCancelled) ++cancelled;
  }
  EXPECT_EQ(done, 8) << "the two groups in flight finish";
  EXPECT_EQ(cancelled, 12);
}

TEST_F(JobSpreadTest, AHelperThatGoesAwayLeavesItsGroupsToTheLead) {
  first_.Hold();
  second_.Hold();
  Start();
  // mxfp8 items are recorded not_supported before a group's device check: the group the
  // helper hands back is partly recorded, and the lead must not record them again.
  core::JobSpec spec = Spec(4);
  spec.recipes.push_back(core::Recipe::kMxfp8);
  auto job = queue_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(first_.WaitForRunsStarted(1));
  ASSERT_TRUE(second_.WaitForRunsStarted(1));
  second_.MakeUnavailable("its worker failed to start 3 times in a row");
  second_.Release();
  // While the lead is still busy, the helper takes the next group, records its mxfp8 items
  // and finds its device gone: it hands the group back.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  first_.Release();
  const auto ended = WaitForEnd(job->id);
  EXPECT_EQ(ended.state, JobState::kSucceeded) << ended.error;
  EXPECT_EQ(ended.finished_items, 24);
  EXPECT_EQ(second_.groups_started(), 1) << "the group in flight finishes where it started";
  EXPECT_EQ(first_.groups_started(), 3);
}

TEST_F(JobSpreadTest, AJobPinnedToAGpuTheNodeLostFailsAtRestartSayingWhy) {
  second_.Hold();
  Start();
  core::JobSpec spec = Spec(3);
  spec.devices = {1};
  auto job = queue_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(second_.WaitForRunsStarted(1));
  queue_->RequestStop();
  second_.Release();
  queue_.reset();  // the job stays unfinished, to resume after a restart
  ASSERT_FALSE(core::IsTerminal(store_->GetJob(job->id)->state));
  // The node comes back with one GPU.
  queue_ = std::make_unique<JobQueue>(*store_, std::vector<device::Runner*>{&first_},
                                      OneGroupPerBatch());
  ASSERT_TRUE(queue_->Start().ok());
  const core::JobRecord ended = *store_->GetJob(job->id);
  EXPECT_EQ(ended.state, JobState::kFailed);
  EXPECT_EQ(ended.error,
            "cannot resume: devices[0]: 1 is not a device of this node (it has 1 device: 0)");
  EXPECT_EQ(first_.groups_started(), 0);
}

core::ItemRecord Record(int64_t m, int64_t n) {
  core::ItemRecord r;
  r.item.op.shape = {m, 64, n};
  return r;
}

// Work of a batch (FLOPs of its items) and its item indexes.
double BatchWork(const std::vector<core::ItemRecord>& items, const std::vector<size_t>& batch) {
  double w = 0;
  for (size_t i : batch) w += items[i].item.op.Flops();
  return w;
}

TEST(PackBatches, BalancesWorkLargestFirstWithinTheGroupLimit) {
  // Twelve one-item groups of works 1..12 (M = 64 x work).
  std::vector<core::ItemRecord> items;
  std::vector<std::vector<size_t>> groups;
  for (int w = 1; w <= 12; ++w) {
    items.push_back(Record(64 * w, 64));
    groups.push_back({items.size() - 1});
  }
  const auto one_gpu = PackBatches(items, groups, 1, 6);
  ASSERT_EQ(one_gpu.size(), 2u) << "12 groups, at most 6 per batch";
  EXPECT_EQ(one_gpu[0].size(), 6u);
  EXPECT_EQ(one_gpu[1].size(), 6u);
  EXPECT_GE(BatchWork(items, one_gpu[0]), BatchWork(items, one_gpu[1])) << "largest first";
  EXPECT_EQ(BatchWork(items, one_gpu[0]), BatchWork(items, one_gpu[1])) << "1..12 splits 39/39";
  EXPECT_EQ(one_gpu[0].front(), 11u) << "a batch's groups largest first";

  const auto four_gpus = PackBatches(items, groups, 4, 6);
  ASSERT_EQ(four_gpus.size(), 4u) << "at least one batch per device";
  for (const auto& b : four_gpus)
    EXPECT_NEAR(BatchWork(items, b), 19.5 * 2 * 64 * 64 * 64, 4 * 2 * 64 * 64 * 64);

  const auto alone = PackBatches(items, groups, 1, 1);
  ASSERT_EQ(alone.size(), 12u);
  for (size_t b = 0; b < alone.size(); ++b) EXPECT_EQ(alone[b], std::vector<size_t>{11 - b});

  EXPECT_EQ(PackBatches(items, {groups[0], groups[1]}, 8, 6).size(), 2u)
      << "never more batches than groups";
  EXPECT_TRUE(PackBatches(items, {}, 2, 6).empty());
}

TEST(PackBatches, KeepsEachGroupWhole) {
  std::vector<core::ItemRecord> items = {Record(64, 64), Record(64, 64), Record(128, 64),
                                         Record(128, 64), Record(64, 64)};
  const auto batches = PackBatches(items, {{0, 1, 4}, {2, 3}}, 2, 6);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], (std::vector<size_t>{2, 3}));
  EXPECT_EQ(batches[1], (std::vector<size_t>{0, 1, 4}));
}

// The items of `spec` as a job holds them, grouped by GroupKey.
struct Planned {
  std::vector<core::ItemRecord> items;
  std::vector<std::vector<size_t>> groups;
};
Planned Plan(const core::JobSpec& spec) {
  Planned p;
  absl::StatusOr<core::Plan> plan = core::DerivePlan(spec);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<core::WorkItem> items = core::ExpandItems(*plan, spec.recipes, spec.modes);
  for (const core::WorkItem& item : items) p.items.push_back({item});
  p.groups = core::GroupItems(items);
  return p;
}

// Every batch holds one context, every item is in exactly one batch; returns the
// contexts of the batches.
std::vector<std::string> CheckBatches(const core::JobSpec& spec, const Planned& p,
                                      const std::vector<std::vector<size_t>>& batches) {
  std::vector<std::string> contexts;
  std::multiset<size_t> seen;
  for (const std::vector<size_t>& batch : batches) {
    EXPECT_FALSE(batch.empty());
    const std::string context = core::ContextOf(spec, p.items[batch.front()].item.op);
    for (size_t i : batch) {
      EXPECT_EQ(core::ContextOf(spec, p.items[i].item.op), context)
          << core::DescribeItem(p.items[i].item) << " shares a batch with another context";
      seen.insert(i);
    }
    contexts.push_back(context);
  }
  EXPECT_EQ(seen.size(), p.items.size());
  EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), p.items.size()) << "an item twice";
  return contexts;
}

TEST(PackJobBatches, AShapeListIsBatchedByM) {
  core::JobSpec spec;
  spec.shapes = {{16, 4096, 14336}, {4096, 4096, 4096}, {16, 14336, 4096}, {128, 8192, 8192}};
  spec.recipes = {core::Recipe::kBf16, core::Recipe::kFp8Current};
  const Planned p = Plan(spec);
  const auto batches = PackJobBatches(spec, p.items, p.groups, 1, 6);
  const std::vector<std::string> contexts = CheckBatches(spec, p, batches);
  ASSERT_EQ(batches.size(), 3u) << "M = 16, 128 and 4096";
  EXPECT_EQ(std::set<std::string>(contexts.begin(), contexts.end()),
            (std::set<std::string>{"workload: m=16", "workload: m=128", "workload: m=4096"}));
  // The two M = 16 GEMMs share their batch; their recipes stay in it.
  for (size_t b = 0; b < batches.size(); ++b)
    if (contexts[b] == "workload: m=16") EXPECT_EQ(batches[b].size(), 4u);
  EXPECT_EQ(contexts.front(), "workload: m=4096") << "largest work first";
}

TEST(PackJobBatches, AModelStepSharesItsBatchesAsBefore) {
  core::JobSpec spec;
  spec.model = *core::FindPreset("codonfm-5b");
  spec.recipes = {core::Recipe::kBf16, core::Recipe::kFp8Current};
  const Planned p = Plan(spec);
  const auto batches = PackJobBatches(spec, p.items, p.groups, 1, 6);
  for (const std::string& c : CheckBatches(spec, p, batches))
    EXPECT_EQ(c, "workload: training step");
  // One context: exactly the batches PackBatches makes of the whole step (fprop, dgrad
  // and wgrad GEMMs of different M together, as a training step runs them).
  EXPECT_EQ(batches, PackBatches(p.items, p.groups, 1, 6));
}

TEST(PackJobBatches, ASweepNeverMixesItsMValuesAndKeepsExpertsWithTheirStep) {
  core::JobSpec spec;
  spec.model = *core::FindPreset("mixtral-8x7b");
  spec.model->sweep_m = {16, 4096};
  spec.recipes = {core::Recipe::kBf16};
  spec.modes = {core::Mode::kDynamic};
  const Planned p = Plan(spec);
  const auto batches = PackJobBatches(spec, p.items, p.groups, 1, 6);
  const std::vector<std::string> contexts = CheckBatches(spec, p, batches);
  EXPECT_EQ(std::set<std::string>(contexts.begin(), contexts.end()),
            (std::set<std::string>{"workload: m=16", "workload: m=4096"}));
  // The expert GEMMs of the M = 4096 step run at M = 4096 x 2 / 8 = 1024 per expert, yet
  // belong to the step's context.
  bool expert = false;
  for (const core::ItemRecord& r : p.items) {
    if (r.item.op.groups <= 1 || core::SweepM(r.item.op.name) != 4096) continue;
    expert = true;
    EXPECT_NE(r.item.op.shape.m, 4096);
    EXPECT_EQ(core::ContextOf(spec, r.item.op), "workload: m=4096");
  }
  EXPECT_TRUE(expert);
}

TEST(PackJobBatches, IsolatedGivesEveryGemmItsOwnBatch) {
  core::JobSpec spec;
  spec.shapes = {{16, 4096, 14336}, {16, 14336, 4096}, {4096, 4096, 4096}};
  spec.recipes = {core::Recipe::kBf16, core::Recipe::kFp8Current};
  spec.modes = {core::Mode::kAutocast, core::Mode::kPrequant};
  spec.timing.context = core::MeasureContext::kIsolated;
  const Planned p = Plan(spec);
  const auto batches = PackJobBatches(spec, p.items, p.groups, 2, 6);
  ASSERT_EQ(batches.size(), 3u);
  for (const std::vector<size_t>& b : batches) {
    EXPECT_EQ(b.size(), 4u) << "one GEMM's recipes and modes, interleaved";
    for (size_t i : b) EXPECT_EQ(p.items[i].item.op.shape, p.items[b.front()].item.op.shape);
  }
  for (const std::string& c : CheckBatches(spec, p, batches)) EXPECT_EQ(c, "isolated");
}

TEST(PackJobBatches, OneContextStillSpreadsOverTheDevices) {
  core::JobSpec spec;
  for (int i = 0; i < 8; ++i) spec.shapes.push_back({16, 1024 + 64 * i, 1024});
  spec.recipes = {core::Recipe::kBf16};
  const Planned p = Plan(spec);
  EXPECT_EQ(PackJobBatches(spec, p.items, p.groups, 2, 6).size(), 2u)
      << "two GPUs get a batch each";
  EXPECT_EQ(PackJobBatches(spec, p.items, p.groups, 1, 6).size(), 2u) << "8 groups, 6 a batch";
}

TEST(BatchGemms, NamesEachGemmOnceWithItsPassAndGroups) {
  std::vector<core::WorkItem> items(4);
  items[0].op.shape = items[1].op.shape = {16, 4096, 14336};
  items[1].recipe = core::Recipe::kFp8Current;
  items[2].op.shape = {4096, 16, 14336};
  items[2].op.pass = core::Pass::kWgrad;
  items[3].op.shape = {4, 4096, 14336};
  items[3].op.groups = 8;
  EXPECT_EQ(core::BatchGemms(items), "16x4096x14336, wgrad 4096x16x14336, 4x4096x14336 g8");
}

}  // namespace
}  // namespace gemmprof::queue
