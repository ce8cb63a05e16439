// ResultStore (every backend): results, the result cache and history queries.
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

using ::testing::HasSubstr;

TEST_P(StoreTest, CachedItemPointsAtOriginalResult) {
  core::JobRecord first = MustCreate(1);
  core::ItemRecord original = MustItems(first.id)[0];
  ASSERT_TRUE(Measure(original, 3.25).ok());
  const int64_t measured_at = now_ms_.load();

  now_ms_ += 60'000;
  absl::StatusOr<std::optional<CachedResult>> hit = store_->LookupCache(KeyOf(original));
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->measured_ms, measured_at);
  EXPECT_EQ((*hit)->measurement.time.median_ms, 3.25);

  core::JobRecord second = MustCreate(1);
  core::ItemRecord repeat = MustItems(second.id)[0];
  ASSERT_TRUE(store_
                  ->FinishItem(repeat.item.id, core::ItemStatus::kDone, "", (*hit)->measurement,
                               H100(), {}, KeyOf(repeat), (*hit)->result_id)
                  .ok());
  std::vector<core::ItemRecord> items = MustItems(second.id);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_TRUE(items[0].cached);
  EXPECT_EQ(items[0].status, core::ItemStatus::kDone);
  EXPECT_EQ(items[0].measured_ms, measured_at);
  ASSERT_TRUE(items[0].result.has_value());
  EXPECT_EQ(items[0].result->time.median_ms, 3.25);
  EXPECT_EQ(items[0].result->algorithm, "algo=21 tile=128x256");

  // No duplicate row: the history has one result, and the cache still answers with it.
  ResultFilter all;
  absl::StatusOr<Page<ResultRow>> rows = store_->QueryResults(all);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->items.size(), 1u);
  EXPECT_EQ(rows->items[0].result_id, (*hit)->result_id);
  hit = store_->LookupCache(KeyOf(original));
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->measured_ms, measured_at);
}

TEST_P(StoreTest, FinishItemsWritesARowPerItemEvenForOneSharedMeasurement) {
  core::JobRecord job = MustCreate(3);
  std::vector<core::ItemRecord> items = MustItems(job.id);
  for (const auto& rec : items) ASSERT_TRUE(store_->MarkItemRunning(rec.item.id).ok());
  const core::Measurement shared = SampleMeasurement(2.5);
  ASSERT_TRUE(store_
                  ->FinishItems({{items[0].item.id, core::ItemStatus::kDone, "", shared,
                                  KeyOf(items[0]), std::nullopt},
                                 {items[1].item.id, core::ItemStatus::kDone, "", shared,
                                  KeyOf(items[1]), std::nullopt},
                                 {items[2].item.id, core::ItemStatus::kNotSupported,
                                  "fp8 needs N % 16", std::nullopt, "", std::nullopt}},
                                H100(), {})
                  .ok());
  items = MustItems(job.id);
  EXPECT_EQ(items[0].status, core::ItemStatus::kDone);
  EXPECT_EQ(items[1].status, core::ItemStatus::kDone);
  EXPECT_FALSE(items[1].cached) << "a shared measurement is not a cache hit";
  EXPECT_EQ(items[2].status, core::ItemStatus::kNotSupported);
  EXPECT_EQ(items[2].error, "fp8 needs N % 16");
  absl::StatusOr<Page<ResultRow>> rows = store_->QueryResults({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->items.size(), 2u) << "its own row per item";
  EXPECT_NE(rows->items[0].result_id, rows->items[1].result_id);
  EXPECT_EQ(store_->GetJob(job.id)->finished_items, 3);
}

TEST_P(StoreTest, FinishItemsRecordsAllOrNothing) {
  core::JobRecord job = MustCreate(2);
  std::vector<core::ItemRecord> items = MustItems(job.id);
  ASSERT_TRUE(Measure(items[1], 1.0).ok());
  const absl::Status again =
      store_->FinishItems({{items[0].item.id, core::ItemStatus::kDone, "", SampleMeasurement(2.0),
                            KeyOf(items[0]), std::nullopt},
                           {items[1].item.id, core::ItemStatus::kDone, "", SampleMeasurement(2.0),
                            KeyOf(items[1]), std::nullopt}},
                          H100(), {});
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.message(), HasSubstr("is already done"));
  EXPECT_FALSE(core::IsFinal(MustItems(job.id)[0].status)) << "rolled back";
  EXPECT_EQ(store_->QueryResults({})->items.size(), 1u);

  const absl::Status bad = store_->FinishItems(
      {{items[0].item.id, core::ItemStatus::kDone, "", std::nullopt, "", std::nullopt}}, H100(),
      {});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("measurement: item"));
  EXPECT_TRUE(store_->FinishItems({}, H100(), {}).ok()) << "nothing to record";
}

TEST_P(StoreTest, LookupCacheReturnsNewestResultOfSuccessfulItems) {
  absl::StatusOr<std::optional<CachedResult>> miss = store_->LookupCache("nothing");
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());

  core::JobRecord job = MustCreate(3);
  std::vector<core::ItemRecord> items = MustItems(job.id);
  const core::TimingOptions timing;
  ASSERT_TRUE(store_
                  ->FinishItem(items[0].item.id, core::ItemStatus::kDone, "",
                               SampleMeasurement(1.0), H100(), timing, "same", std::nullopt)
                  .ok());
  now_ms_ += 10;
  ASSERT_TRUE(store_
                  ->FinishItem(items[1].item.id, core::ItemStatus::kDone, "",
                               SampleMeasurement(2.0), H100(), timing, "same", std::nullopt)
                  .ok());
  now_ms_ += 10;
  // A failed item's numbers are kept (e.g. a wrong result) but never served from cache.
  core::Measurement wrong = SampleMeasurement(0.1);
  wrong.verification = core::Verification::kIncorrect;
  ASSERT_TRUE(store_
                  ->FinishItem(items[2].item.id, core::ItemStatus::kFailed, "rel_error too high",
                               wrong, H100(), timing, "same", std::nullopt)
                  .ok());
  absl::StatusOr<std::optional<CachedResult>> hit = store_->LookupCache("same");
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->measurement.time.median_ms, 2.0);
  EXPECT_EQ((*hit)->measured_ms, now_ms_.load() - 10);
  items = MustItems(job.id);
  ASSERT_TRUE(items[2].result.has_value());
  EXPECT_EQ(items[2].result->verification, core::Verification::kIncorrect);
}

TEST_P(StoreTest, NonFiniteNumbersAreStoredAndReadBack) {
  core::JobRecord job = MustCreate(1);
  core::ItemRecord rec = MustItems(job.id)[0];
  core::Measurement m = SampleMeasurement(1.0);
  m.time.median_ms = std::numeric_limits<double>::quiet_NaN();
  m.rel_error = std::numeric_limits<double>::infinity();
  ASSERT_TRUE(store_
                  ->FinishItem(rec.item.id, core::ItemStatus::kFailed, "kernel produced NaN", m,
                               H100(), {}, KeyOf(rec), std::nullopt)
                  .ok());
  std::vector<core::ItemRecord> items = MustItems(job.id);
  ASSERT_TRUE(items[0].result.has_value());
  EXPECT_TRUE(std::isnan(items[0].result->time.median_ms));
  EXPECT_TRUE(std::isinf(items[0].result->rel_error));
}

TEST_P(QueryTest, EveryRowCarriesItsContext) {
  std::vector<ResultRow> rows = QueryAll({});
  ASSERT_EQ(rows.size(), 24u);
  const ResultRow& newest = rows.front();
  EXPECT_EQ(newest.job_id, 2);
  EXPECT_EQ(newest.item.seq, 11);
  EXPECT_EQ(newest.item.job_id, 2);
  EXPECT_EQ(newest.item.id, newest.item_id);
  EXPECT_EQ(newest.item.op, SeedItems(12)[11].op);
  EXPECT_EQ(newest.item.recipe, SeedItems(12)[11].recipe);
  EXPECT_EQ(newest.device.name, "NVIDIA B200");
  EXPECT_EQ(newest.device.sm, 100);
  ASSERT_TRUE(newest.measurement.has_value());
  EXPECT_EQ(newest.measurement->time.median_ms, 12.0);
  EXPECT_EQ(newest.measured_ms, now_ms_.load());
  EXPECT_EQ(newest.timing, core::TimingOptions{});
  EXPECT_FALSE(newest.cached);
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GT(rows[i - 1].result_id, rows[i].result_id) << "not newest first at " << i;
    EXPECT_GE(rows[i - 1].measured_ms, rows[i].measured_ms);
  }
}

TEST_P(QueryTest, PagingVisitsEveryRowOnce) {
  for (int32_t page_size : {1, 5, 23, 24, 25, 10000}) {
    ResultFilter filter;
    filter.page_size = page_size;
    std::vector<ResultRow> rows = QueryAll(filter);
    std::set<int64_t> ids;
    for (const auto& r : rows) ids.insert(r.result_id);
    EXPECT_EQ(rows.size(), 24u) << page_size;
    EXPECT_EQ(ids.size(), 24u) << page_size;
  }
}

TEST_P(QueryTest, FiltersMatchOnlyTheirRows) {
  const std::vector<core::WorkItem> seed = SeedItems(12);
  auto count_items = [&](auto pred) {
    int n = 0;
    for (const auto& item : seed) n += pred(item) ? 1 : 0;
    return n * 2;  // two jobs of the same items
  };
  ResultFilter f;
  f.recipe = core::Recipe::kFp8Current;
  f.pass = core::Pass::kDgrad;
  std::vector<ResultRow> rows = QueryAll(f);
  EXPECT_EQ(rows.size(), static_cast<size_t>(count_items([](const core::WorkItem& i) {
              return i.recipe == core::Recipe::kFp8Current && i.op.pass == core::Pass::kDgrad;
            })));
  for (const auto& r : rows) {
    EXPECT_EQ(r.item.recipe, core::Recipe::kFp8Current);
    EXPECT_EQ(r.item.op.pass, core::Pass::kDgrad);
  }

  f = ResultFilter{};
  f.mode = core::Mode::kPrequant;
  f.m = 15872;
  f.k = 4096;
  f.n = 7168;
  rows = QueryAll(f);
  EXPECT_EQ(rows.size(), static_cast<size_t>(count_items([](const core::WorkItem& i) {
              return i.mode == core::Mode::kPrequant && i.op.shape.n == 7168;
            })));
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_EQ(r.item.op.shape, (core::GemmShape{15872, 4096, 7168}));

  f = ResultFilter{};
  f.n = 999;
  EXPECT_TRUE(QueryAll(f).empty());

  f = ResultFilter{};
  f.device_name = "NVIDIA B200";
  rows = QueryAll(f);
  EXPECT_EQ(rows.size(), 12u);
  for (const auto& r : rows) EXPECT_EQ(r.job_id, 2);

  f = ResultFilter{};
  f.job_id = 1;
  EXPECT_EQ(QueryAll(f).size(), 12u);
  f.job_id = 3;
  EXPECT_TRUE(QueryAll(f).empty());

  // Inclusive time range covering the 3rd..5th results (100 ms apart).
  const int64_t first_ms = QueryAll({}).back().measured_ms;
  f = ResultFilter{};
  f.since_ms = first_ms + 200;
  f.until_ms = first_ms + 400;
  rows = QueryAll(f);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.front().measured_ms, first_ms + 400);
  EXPECT_EQ(rows.back().measured_ms, first_ms + 200);
}

TEST_P(QueryTest, BadFiltersAreInvalidArgumentNamingTheField) {
  struct Case {
    ResultFilter filter;
    std::string message;
  };
  std::vector<Case> cases;
  auto add = [&](auto set, std::string message) {
    ResultFilter f;
    set(f);
    cases.push_back({f, std::move(message)});
  };
  add([](ResultFilter& f) { f.page_size = 0; }, "page_size: 0 is outside 1..10000");
  add([](ResultFilter& f) { f.page_size = 10001; }, "page_size: 10001 is outside 1..10000");
  add([](ResultFilter& f) { f.m = -1; }, "m: -1 must be >= 0");
  add([](ResultFilter& f) { f.k = -2; }, "k: -2 must be >= 0");
  add([](ResultFilter& f) { f.n = -3; }, "n: -3 must be >= 0");
  add([](ResultFilter& f) { f.since_ms = -4; }, "since_ms: -4 must be >= 0");
  add([](ResultFilter& f) { f.until_ms = -5; }, "until_ms: -5 must be >= 0");
  add([](ResultFilter& f) { f.job_id = -6; }, "job_id: -6 must be >= 0");
  add([](ResultFilter& f) { f.since_ms = 20, f.until_ms = 10; },
      "since_ms: 20 is after until_ms 10");
  add([](ResultFilter& f) { f.device_name = ""; }, "device_name: '' is empty");
  add([](ResultFilter& f) { f.page_token = "not-a-token"; },
      "page_token: 'not-a-token' is not a token from a previous page");
  for (const Case& c : cases) {
    absl::Status status = store_->QueryResults(c.filter).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace gemmprof::storage::testing
