// Two nodes (two PgStores) measuring the same cache keys at the same time.
#include <libpq-fe.h>

#include <barrier>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/storage/store_fixture.h"

namespace gemmprof::storage::testing {
namespace {

class PgRaceTest : public StoreTest {
 protected:
  int64_t Count(const std::string& sql) {
    PGconn* conn = PQconnectdb(db_.c_str());
    PGresult* rows = PQexec(conn, sql.c_str());
    const int64_t n =
        PQresultStatus(rows) == PGRES_TUPLES_OK ? std::stoll(PQgetvalue(rows, 0, 0)) : -1;
    PQclear(rows);
    PQfinish(conn);
    return n;
  }

  // What one daemon does per item: the cache if it has the key, else a measurement.
  static absl::Status RunItem(ResultStore& store, const core::ItemRecord& rec,
                              const core::DeviceInfo& device) {
    RETURN_IF_ERROR(store.MarkItemRunning(rec.item.id));
    ASSIGN_OR_RETURN(std::optional<CachedResult> hit, store.LookupCache(KeyOf(rec)));
    return store.FinishItem(rec.item.id, core::ItemStatus::kDone, "",
                            hit ? std::nullopt : std::optional(SampleMeasurement(2.0)), device,
                            core::TimingOptions{}, KeyOf(rec),
                            hit ? std::optional(hit->result_id) : std::nullopt);
  }
};
INSTANTIATE_TEST_SUITE_P(Postgres, PgRaceTest, ::testing::Values(Backend::kPostgres), BackendName);

TEST_P(PgRaceTest, TwoNodesMeasuringTheSameKeysKeepOneConsistentCache) {
  constexpr int kItems = 24;
  constexpr int kRounds = 5;
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  core::DeviceInfo gpu_a = H100(), gpu_b = H100();
  gpu_a.uuid = "GPU-A";
  gpu_b.uuid = "GPU-B";
  std::set<std::string> keys;
  for (int round = 0; round < kRounds; ++round) {
    // Fresh shapes each round, so every round starts with the keys uncached.
    std::vector<core::WorkItem> items = SeedItems(kItems, 1000 + round);
    absl::StatusOr<core::JobRecord> job_a = store_->CreateJob(SeedJob("a"), items);
    absl::StatusOr<core::JobRecord> job_b = b->CreateJob(SeedJob("b"), items);
    ASSERT_TRUE(job_a.ok() && job_b.ok());
    std::vector<core::ItemRecord> items_a = MustItems(job_a->id), items_b = MustItems(job_b->id);
    for (const auto& rec : items_a) keys.insert(KeyOf(rec));
    std::barrier start(2);
    std::vector<absl::Status> errors(2);
    auto run = [&](int who, ResultStore& store, const std::vector<core::ItemRecord>& recs,
                   const core::DeviceInfo& gpu) {
      start.arrive_and_wait();
      for (const auto& rec : recs) {
        absl::Status s = RunItem(store, rec, gpu);
        if (!s.ok() && errors[who].ok()) errors[who] = s;
      }
    };
    std::thread ta(run, 0, std::ref(*store_), std::cref(items_a), std::cref(gpu_a));
    std::thread tb(run, 1, std::ref(*b), std::cref(items_b), std::cref(gpu_b));
    ta.join();
    tb.join();
    ASSERT_TRUE(errors[0].ok()) << errors[0];
    ASSERT_TRUE(errors[1].ok()) << errors[1];
  }
  // No item lost or doubled: each of the 2 * kItems * kRounds items is done with exactly
  // one result (its own or the original it points at), and no result without an item.
  EXPECT_EQ(Count("SELECT count(*) FROM items WHERE status = 'done' AND "
                  "(result_id IS NULL) = (cached_result_id IS NULL)"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM items WHERE status = 'done'"), 2 * kItems * kRounds);
  EXPECT_EQ(Count("SELECT count(*) FROM results r LEFT JOIN items i ON i.result_id = r.id "
                  "WHERE i.id IS NULL"),
            0);
  // At most one measurement per node and key; at least one per key.
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT cache_key, node FROM results GROUP BY 1, 2 "
                  "HAVING count(*) > 1) d"),
            0);
  EXPECT_EQ(Count("SELECT count(DISTINCT cache_key) FROM results"),
            static_cast<int64_t>(keys.size()));
  // Contexts written by both nodes at once are stored once: 2 GPUs, 1 timing.
  EXPECT_EQ(Count("SELECT count(*) FROM contexts WHERE kind = 'device'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM contexts WHERE kind = 'timing'"), 1);
  // Both nodes see the same cache entry for every key.
  for (const core::ItemRecord& rec : MustItems(1)) {
    absl::StatusOr<std::optional<CachedResult>> from_a = store_->LookupCache(KeyOf(rec));
    absl::StatusOr<std::optional<CachedResult>> from_b = b->LookupCache(KeyOf(rec));
    ASSERT_TRUE(from_a.ok() && from_b.ok() && from_a->has_value() && from_b->has_value());
    EXPECT_EQ((*from_a)->result_id, (*from_b)->result_id);
    EXPECT_EQ((*from_a)->node, (*from_b)->node);
  }
}

TEST_P(PgRaceTest, TwoNodesFinishingOneItemRecordItOnce) {
  std::unique_ptr<ResultStore> b = OpenAs("node-b");
  ASSERT_NE(b, nullptr);
  core::JobRecord job = MustCreate(8);
  std::vector<core::ItemRecord> items = MustItems(job.id);
  for (const auto& rec : items) ASSERT_TRUE(store_->MarkItemRunning(rec.item.id).ok());
  std::barrier start(2);
  std::vector<int> wins(2, 0);
  auto finish = [&](int who, ResultStore& store) {
    start.arrive_and_wait();
    for (const auto& rec : items) {
      absl::Status s =
          store.FinishItem(rec.item.id, core::ItemStatus::kDone, "", SampleMeasurement(1.0), H100(),
                           {}, KeyOf(rec), std::nullopt);
      if (s.ok())
        ++wins[who];
      else
        EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    }
  };
  std::thread ta(finish, 0, std::ref(*store_));
  std::thread tb(finish, 1, std::ref(*b));
  ta.join();
  tb.join();
  EXPECT_EQ(wins[0] + wins[1], 8);
  EXPECT_EQ(Count("SELECT count(*) FROM results"), 8);
}

}  // namespace
}  // namespace gemmprof::storage::testing
