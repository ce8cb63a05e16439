// The daemon's record in the store: its devices by model (unavailable ones counted), the
// first write at Start, the busy count of each heartbeat, and the stopped record at Stop.
#include "server/queue/daemon_heartbeat.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "server/storage/sqlite/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::queue {
namespace {

TEST(DaemonRecordOfTest, DevicesByModelWithTheUnavailableCounted) {
  gemmprof::testing::FakeRunner a, b, c;
  a.SetIdentity("NVIDIA H200", "GPU-A");
  b.SetIdentity("NVIDIA H200", "GPU-B");
  c.SetIdentity("NVIDIA H100 80GB HBM3", "GPU-C");
  b.MakeUnavailable("its worker failed to start");
  const core::DaemonRecord d = DaemonRecordOf("node-7", {&a, &b, &c});
  EXPECT_EQ(d.node, "node-7");
  EXPECT_EQ(d.version, GEMMPROF_VERSION);
  EXPECT_EQ(d.backend, a.Info().backend);
  EXPECT_EQ(d.devices, 3);
  ASSERT_EQ(d.models.size(), 2u);
  EXPECT_EQ(d.models[0].name, "NVIDIA H200");
  EXPECT_EQ(d.models[0].count, 2);
  EXPECT_EQ(d.models[0].unavailable, 1);
  EXPECT_EQ(d.models[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.models[1].count, 1);
  EXPECT_EQ(d.models[1].unavailable, 0);
}

TEST(DaemonHeartbeatTest, StartWritesTheRecordAndStopMarksItStopped) {
  gemmprof::testing::TempDir dir;
  auto store = storage::SqliteStore::Open(dir.File("hb.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  gemmprof::testing::FakeRunner runner;
  std::atomic<int64_t> now{1'000};
  std::atomic<int32_t> busy{1};
  {
    DaemonHeartbeat hb(
        **store, DaemonRecordOf("node-a", {&runner}), [&] { return busy.load(); },
        [&] { return now.load(); });
    hb.Start();
    auto listed = (*store)->ListDaemons();
    ASSERT_TRUE(listed.ok()) << listed.status();
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ((*listed)[0].node, "node-a");
    EXPECT_EQ((*listed)[0].started_unix_ms, 1'000);
    EXPECT_EQ((*listed)[0].heartbeat_unix_ms, 1'000);
    EXPECT_EQ((*listed)[0].busy, 1);
    EXPECT_FALSE((*listed)[0].stopped);
    EXPECT_EQ(core::DaemonStateOf((*listed)[0], 1'000), core::DaemonState::kServing);
    now = 2'000;
    hb.Stop();  // and the destructor's Stop is a no-op
  }
  auto listed = (*store)->ListDaemons();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].stopped);
  EXPECT_EQ((*listed)[0].busy, 0);
  EXPECT_EQ((*listed)[0].started_unix_ms, 1'000);
  EXPECT_EQ((*listed)[0].heartbeat_unix_ms, 2'000);
  EXPECT_EQ(core::DaemonStateOf((*listed)[0], 99'000'000), core::DaemonState::kStopped);
}

TEST(DaemonStateTest, LostAfterThreeMissedPeriods) {
  core::DaemonRecord d;
  d.heartbeat_unix_ms = 100'000;
  const int64_t limit = core::kDaemonLostPeriods * core::kDaemonHeartbeatS * 1000;
  EXPECT_EQ(core::DaemonStateOf(d, 100'000 + limit), core::DaemonState::kServing);
  EXPECT_EQ(core::DaemonStateOf(d, 100'000 + limit + 1), core::DaemonState::kLost);
  EXPECT_EQ(core::ToString(core::DaemonState::kLost), "lost");
}

}  // namespace
}  // namespace gemmprof::queue
