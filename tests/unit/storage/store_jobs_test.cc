// ResultStore (every backend): jobs, items and their lifecycle.
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_P(StoreTest, JobsKeepWhoSubmittedThem) {
  core::JobRecord input = SeedJob("owned");
  input.submitted_by = "alice";
  absl::StatusOr<core::JobRecord> owned = store_->CreateJob(input, SeedItems(1));
  ASSERT_TRUE(owned.ok()) << owned.status();
  EXPECT_EQ(owned->submitted_by, "alice");
  absl::StatusOr<core::JobRecord> anonymous = store_->CreateJob(SeedJob("anonymous"), {});
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  EXPECT_EQ(anonymous->submitted_by, "");
  // The name survives state changes and every way of reading a job.
  ASSERT_TRUE(store_->SetJobState(owned->id, core::JobState::kRunning, "").ok());
  EXPECT_EQ(store_->GetJob(owned->id)->submitted_by, "alice");
  absl::StatusOr<Page<core::JobRecord>> page = store_->ListJobs({});
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].submitted_by, "");
  EXPECT_EQ(page->items[1].submitted_by, "alice");
}

TEST_P(StoreTest, CreateJobAssignsIdsAndKeepsEverything) {
  core::JobRecord input = SeedJob("first");
  input.id = 999;                          // ignored: the store assigns ids
  input.state = core::JobState::kRunning;  // ignored: a new job is queued
  input.plan.ops = {{"qkv", core::Pass::kFprop, {15872, 4096, 12288}, 1, 24, true}};
  absl::StatusOr<core::JobRecord> job = store_->CreateJob(input, SeedItems(5));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->id, 1);
  EXPECT_EQ(job->state, core::JobState::kQueued);
  EXPECT_EQ(job->created_ms, now_ms_.load());
  EXPECT_EQ(job->started_ms, 0);
  EXPECT_EQ(job->finished_ms, 0);
  EXPECT_EQ(job->total_items, 5);
  EXPECT_EQ(job->finished_items, 0);
  EXPECT_EQ(job->spec.label, "first");
  ASSERT_TRUE(job->spec.model.has_value());
  EXPECT_EQ(job->spec.model->hidden_size, 4096);
  EXPECT_EQ(job->spec.recipes, input.spec.recipes);
  EXPECT_EQ(job->plan.ops, input.plan.ops);
  EXPECT_EQ(job->device.name, "NVIDIA H100 80GB HBM3");

  const std::vector<core::WorkItem> expected = SeedItems(5);
  std::vector<core::ItemRecord> items = MustItems(job->id);
  ASSERT_EQ(items.size(), 5u);
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_GT(items[i].item.id, 0);
    EXPECT_EQ(items[i].item.job_id, job->id);
    EXPECT_EQ(items[i].item.seq, static_cast<int32_t>(i));
    EXPECT_EQ(items[i].item.op, expected[i].op);
    EXPECT_EQ(items[i].item.recipe, expected[i].recipe);
    EXPECT_EQ(items[i].item.mode, expected[i].mode);
    EXPECT_EQ(items[i].status, core::ItemStatus::kQueued);
    EXPECT_FALSE(items[i].result.has_value());
  }

  core::JobRecord second_input = SeedJob("second");
  second_input.created_ms = 42;  // a caller-provided creation time is kept
  absl::StatusOr<core::JobRecord> second = store_->CreateJob(second_input, {});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->id, 2);
  EXPECT_EQ(second->created_ms, 42);
  EXPECT_EQ(second->total_items, 0);
  EXPECT_TRUE(MustItems(second->id).empty());
}

TEST_P(StoreTest, RoutedItemsKeepTheirTokensAndLayout) {
  core::WorkItem uniform = RoutedItem();
  uniform.op.group_tokens.clear();
  uniform.op.layout = core::MoeLayout::kContiguous;
  const std::vector<core::WorkItem> input = {RoutedItem(), uniform, SeedItems(1)[0]};
  core::JobRecord job_input = SeedJob("routed");
  job_input.plan.ops = {RoutedItem().op};
  absl::StatusOr<core::JobRecord> job = store_->CreateJob(job_input, input);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->plan.ops, job_input.plan.ops);
  std::vector<core::ItemRecord> items = MustItems(job->id);
  ASSERT_EQ(items.size(), 3u);
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].item.op, input[i].op) << i;
  EXPECT_EQ(items[0].item.op.group_tokens, (std::vector<int64_t>{3, 0, 5}));
  EXPECT_EQ(items[0].item.op.layout, core::MoeLayout::kMasked);

  // Measured, reopened and read back as a result row: the same op.
  ASSERT_TRUE(Measure(items[0], 0.25).ok());
  Reopen();
  items = MustItems(job->id);
  EXPECT_EQ(items[0].item.op, input[0].op);
  ResultFilter filter;
  filter.job_id = job->id;
  absl::StatusOr<Page<ResultRow>> rows = store_->QueryResults(filter);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->items.size(), 1u);
  EXPECT_EQ(rows->items[0].item.op, input[0].op);
}

// A variant's item with its own fast accumulation keeps it through the store, a reopen and
// the results' rows; the others read as the job's (default).
TEST_P(StoreTest, ItemsKeepTheirOwnFastAccumulation) {
  std::vector<core::WorkItem> input = SeedItems(3);
  input[1].fast_accum = core::FastAccum::kOn;
  input[2].fast_accum = core::FastAccum::kOff;
  absl::StatusOr<core::JobRecord> job = store_->CreateJob(SeedJob("fast"), input);
  ASSERT_TRUE(job.ok()) << job.status();
  std::vector<core::ItemRecord> items = MustItems(job->id);
  ASSERT_EQ(items.size(), 3u);
  for (size_t i = 0; i < items.size(); ++i)
    EXPECT_EQ(items[i].item.fast_accum, input[i].fast_accum) << i;
  ASSERT_TRUE(Measure(items[2], 0.25).ok());
  Reopen();
  items = MustItems(job->id);
  EXPECT_EQ(items[2].item.fast_accum, core::FastAccum::kOff);
  ResultFilter filter;
  filter.job_id = job->id;
  absl::StatusOr<Page<ResultRow>> rows = store_->QueryResults(filter);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->items.size(), 1u);
  EXPECT_EQ(rows->items[0].item.fast_accum, core::FastAccum::kOff);
}

TEST_P(StoreTest, UnknownIdsAreNotFound) {
  MustCreate(1);
  EXPECT_EQ(store_->GetJob(42).status(), absl::NotFoundError("job 42 not found"));
  EXPECT_EQ(store_->GetItems(42).status(), absl::NotFoundError("job 42 not found"));
  EXPECT_EQ(store_->SetJobState(42, core::JobState::kRunning, ""),
            absl::NotFoundError("job 42 not found"));
  EXPECT_EQ(store_->CancelPendingItems(42), absl::NotFoundError("job 42 not found"));
  EXPECT_EQ(store_->MarkItemRunning(77), absl::NotFoundError("item 77 not found"));
  EXPECT_EQ(store_->FinishItem(77, core::ItemStatus::kFailed, "boom", std::nullopt, H100(), {}, "",
                               std::nullopt),
            absl::NotFoundError("item 77 not found"));
}

TEST_P(StoreTest, JobsSurviveReopen) {
  core::JobRecord job = MustCreate(3, "durable");
  std::vector<core::ItemRecord> items = MustItems(job.id);
  ASSERT_TRUE(Measure(items[0], 2.5).ok());
  Reopen();
  absl::StatusOr<core::JobRecord> again = store_->GetJob(job.id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->spec.label, "durable");
  EXPECT_EQ(again->finished_items, 1);
  std::vector<core::ItemRecord> again_items = MustItems(job.id);
  ASSERT_EQ(again_items.size(), 3u);
  ASSERT_TRUE(again_items[0].result.has_value());
  EXPECT_EQ(again_items[0].result->time.median_ms, 2.5);
}

TEST_P(StoreTest, ListJobsNewestFirstPagesToTheEnd) {
  for (int i = 0; i < 7; ++i) MustCreate(1, "job" + std::to_string(i));
  JobFilter filter;
  filter.page_size = 3;
  std::vector<int64_t> ids;
  int pages = 0;
  for (;;) {
    absl::StatusOr<Page<core::JobRecord>> page = store_->ListJobs(filter);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    for (const auto& job : page->items) ids.push_back(job.id);
    if (page->next_page_token.empty()) break;
    filter.page_token = page->next_page_token;
    ASSERT_LT(pages, 10) << "paging does not end";
  }
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(ids, ElementsAre(7, 6, 5, 4, 3, 2, 1));

  // An exact multiple of the page size ends without an empty extra page.
  filter = JobFilter{};
  filter.page_size = 7;
  absl::StatusOr<Page<core::JobRecord>> all = store_->ListJobs(filter);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 7u);
  EXPECT_TRUE(all->next_page_token.empty());
}

TEST_P(StoreTest, ListJobsFiltersByState) {
  for (int i = 0; i < 4; ++i) MustCreate(1);
  ASSERT_TRUE(store_->SetJobState(2, core::JobState::kRunning, "").ok());
  ASSERT_TRUE(store_->SetJobState(4, core::JobState::kRunning, "").ok());
  JobFilter filter;
  filter.state = core::JobState::kRunning;
  filter.page_size = 1;
  absl::StatusOr<Page<core::JobRecord>> page = store_->ListJobs(filter);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, 4);
  filter.page_token = page->next_page_token;
  page = store_->ListJobs(filter);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, 2);
  EXPECT_TRUE(page->next_page_token.empty());
  filter = JobFilter{};
  filter.state = core::JobState::kFailed;
  page = store_->ListJobs(filter);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
}

TEST_P(StoreTest, ListJobsRejectsBadPageSizeAndToken) {
  for (int32_t bad : {0, -1, 1001}) {
    JobFilter filter;
    filter.page_size = bad;
    EXPECT_EQ(
        store_->ListJobs(filter).status(),
        absl::InvalidArgumentError("page_size: " + std::to_string(bad) + " is outside 1..1000"));
  }
  JobFilter max;
  max.page_size = 1000;
  EXPECT_TRUE(store_->ListJobs(max).ok());
  for (const char* bad : {"garbage", "-3", "0", "12abc"}) {
    JobFilter filter;
    filter.page_token = bad;
    absl::Status status = store_->ListJobs(filter).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr("page_token")) << bad;
  }
}

TEST_P(StoreTest, SetJobStateStampsTimes) {
  core::JobRecord job = MustCreate(1);
  now_ms_ += 1000;
  ASSERT_TRUE(store_->SetJobState(job.id, core::JobState::kRunning, "").ok());
  absl::StatusOr<core::JobRecord> got = store_->GetJob(job.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, core::JobState::kRunning);
  EXPECT_EQ(got->started_ms, job.created_ms + 1000);
  EXPECT_EQ(got->finished_ms, 0);

  // Entering running again (after a restart) keeps the first start time.
  now_ms_ += 1000;
  ASSERT_TRUE(store_->SetJobState(job.id, core::JobState::kRunning, "").ok());
  now_ms_ += 1000;
  ASSERT_TRUE(store_->SetJobState(job.id, core::JobState::kFailed, "GPU fell off the bus").ok());
  got = store_->GetJob(job.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, core::JobState::kFailed);
  EXPECT_EQ(got->error, "GPU fell off the bus");
  EXPECT_EQ(got->started_ms, job.created_ms + 1000);
  EXPECT_EQ(got->finished_ms, job.created_ms + 3000);

  // Terminal states are final; repeating the same one is harmless.
  EXPECT_TRUE(store_->SetJobState(job.id, core::JobState::kFailed, "again").ok());
  absl::Status status = store_->SetJobState(job.id, core::JobState::kRunning, "");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("job 1 is already failed"));
  got = store_->GetJob(job.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->error, "GPU fell off the bus");
}

TEST_P(StoreTest, CancelledWhileQueuedHasNoStartTime) {
  core::JobRecord job = MustCreate(1);
  now_ms_ += 5;
  ASSERT_TRUE(store_->SetJobState(job.id, core::JobState::kCancelled, "").ok());
  absl::StatusOr<core::JobRecord> got = store_->GetJob(job.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->started_ms, 0);
  EXPECT_EQ(got->finished_ms, job.created_ms + 5);
}

TEST_P(StoreTest, ItemLifecycleAndCounts) {
  core::JobRecord job = MustCreate(6);
  std::vector<core::ItemRecord> items = MustItems(job.id);
  ASSERT_TRUE(Measure(items[0], 1.0).ok());
  ASSERT_TRUE(store_->MarkItemRunning(items[1].item.id).ok());
  ASSERT_TRUE(store_
                  ->FinishItem(items[1].item.id, core::ItemStatus::kFailed, "cublas: no algo",
                               std::nullopt, H100(), {}, "", std::nullopt)
                  .ok());
  ASSERT_TRUE(store_
                  ->FinishItem(items[2].item.id, core::ItemStatus::kNotSupported,
                               "mxfp8 needs sm_100+, this is sm_90", std::nullopt, H100(), {}, "",
                               std::nullopt)
                  .ok());
  ASSERT_TRUE(store_->MarkItemRunning(items[3].item.id).ok());

  absl::StatusOr<core::JobRecord> got = store_->GetJob(job.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->total_items, 6);
  EXPECT_EQ(got->finished_items, 3);
  EXPECT_EQ(got->failed_items, 1);

  items = MustItems(job.id);
  EXPECT_EQ(items[0].status, core::ItemStatus::kDone);
  ASSERT_TRUE(items[0].result.has_value());
  EXPECT_EQ(items[0].result->time.median_ms, 1.0);
  EXPECT_EQ(items[0].measured_ms, now_ms_.load());
  EXPECT_FALSE(items[0].cached);
  EXPECT_EQ(items[1].status, core::ItemStatus::kFailed);
  EXPECT_EQ(items[1].error, "cublas: no algo");
  EXPECT_FALSE(items[1].result.has_value());
  EXPECT_EQ(items[2].status, core::ItemStatus::kNotSupported);
  EXPECT_EQ(items[2].error, "mxfp8 needs sm_100+, this is sm_90");
  EXPECT_EQ(items[3].status, core::ItemStatus::kRunning);
  EXPECT_EQ(items[4].status, core::ItemStatus::kQueued);
}

TEST_P(StoreTest, MarkItemRunningNeedsAQueuedItem) {
  core::JobRecord job = MustCreate(1);
  const int64_t id = MustItems(job.id)[0].item.id;
  ASSERT_TRUE(store_->MarkItemRunning(id).ok());
  absl::Status status = store_->MarkItemRunning(id);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("item 1 is running"));
}

TEST_P(StoreTest, FinishItemRejectsBadArguments) {
  core::JobRecord job = MustCreate(2);
  const int64_t id = MustItems(job.id)[0].item.id;
  const core::Measurement m = SampleMeasurement(1.0);
  auto finish = [&](core::ItemStatus s, std::optional<core::Measurement> meas,
                    std::optional<int64_t> cached) {
    return store_->FinishItem(id, s, "", meas, H100(), {}, "k", cached);
  };
  absl::Status status = finish(core::ItemStatus::kRunning, m, std::nullopt);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("status: running is not final"));
  EXPECT_EQ(finish(core::ItemStatus::kQueued, std::nullopt, std::nullopt).code(),
            absl::StatusCode::kInvalidArgument);
  status = finish(core::ItemStatus::kDone, std::nullopt, std::nullopt);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("needs a measurement"));
  status = finish(core::ItemStatus::kNotSupported, m, std::nullopt);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not_supported cannot carry a measurement"));
  status = finish(core::ItemStatus::kDone, std::nullopt, 12345);
  EXPECT_EQ(status, absl::NotFoundError("cached_result_id: result 12345 not found"));
  // None of the refusals changed the item.
  EXPECT_EQ(MustItems(job.id)[0].status, core::ItemStatus::kQueued);

  ASSERT_TRUE(finish(core::ItemStatus::kDone, m, std::nullopt).ok());
  status = finish(core::ItemStatus::kFailed, std::nullopt, std::nullopt);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("item 1 is already done"));
}

TEST_P(StoreTest, CancelPendingItemsOnlyTouchesQueuedItems) {
  core::JobRecord job = MustCreate(4);
  core::JobRecord other = MustCreate(2);
  std::vector<core::ItemRecord> items = MustItems(job.id);
  ASSERT_TRUE(Measure(items[0], 1.0).ok());
  ASSERT_TRUE(store_->MarkItemRunning(items[1].item.id).ok());
  ASSERT_TRUE(store_->CancelPendingItems(job.id).ok());
  items = MustItems(job.id);
  EXPECT_EQ(items[0].status, core::ItemStatus::kDone);
  EXPECT_EQ(items[1].status, core::ItemStatus::kRunning);
  EXPECT_EQ(items[2].status, core::ItemStatus::kCancelled);
  EXPECT_EQ(items[3].status, core::ItemStatus::kCancelled);
  for (const auto& rec : MustItems(other.id)) EXPECT_EQ(rec.status, core::ItemStatus::kQueued);
  absl::StatusOr<core::JobRecord> got = store_->GetJob(job.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->finished_items, 3);
  EXPECT_EQ(got->failed_items, 0);
  // A cancelled item cannot be started.
  EXPECT_EQ(store_->MarkItemRunning(items[2].item.id).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(StoreTest, RecoverUnfinishedRequeuesRunningItems) {
  core::JobRecord a = MustCreate(2);
  core::JobRecord b = MustCreate(2);
  core::JobRecord c = MustCreate(1);
  core::JobRecord d = MustCreate(1);
  ASSERT_TRUE(store_->SetJobState(a.id, core::JobState::kRunning, "").ok());
  std::vector<core::ItemRecord> a_items = MustItems(a.id);
  ASSERT_TRUE(Measure(a_items[0], 1.0).ok());
  ASSERT_TRUE(store_->MarkItemRunning(a_items[1].item.id).ok());
  ASSERT_TRUE(store_->SetJobState(b.id, core::JobState::kSucceeded, "").ok());
  ASSERT_TRUE(store_->SetJobState(d.id, core::JobState::kCancelled, "").ok());
  Reopen();  // as after a crash

  absl::StatusOr<std::vector<int64_t>> ids = store_->RecoverUnfinished();
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ElementsAre(a.id, c.id));
  a_items = MustItems(a.id);
  EXPECT_EQ(a_items[0].status, core::ItemStatus::kDone);
  EXPECT_EQ(a_items[1].status, core::ItemStatus::kQueued);
  EXPECT_TRUE(store_->MarkItemRunning(a_items[1].item.id).ok());
}

}  // namespace
}  // namespace gemmprof::storage::testing
