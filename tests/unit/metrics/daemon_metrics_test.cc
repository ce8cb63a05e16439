#include "server/metrics/daemon_metrics.h"

#include <gtest/gtest.h>

#include "tests/support/prometheus_text.h"

namespace gemmprof::metrics {
namespace {

using device::DeviceReading;
using device::DeviceTelemetry;
using device::NullTelemetry;
using queue::JobEvent;
using testing::ParsePrometheusText;
using testing::PromExposition;

class FakeTelemetry final : public DeviceTelemetry {
 public:
  std::vector<DeviceReading> Read() override { return readings; }
  std::vector<DeviceReading> readings;
};

core::ItemRecord Item(int64_t id, core::ItemStatus status, bool cached = false) {
  core::ItemRecord r;
  r.item.id = id;
  r.status = status;
  r.cached = cached;
  return r;
}

class DaemonMetricsTest : public ::testing::Test {
 protected:
  MetricSources Sources() {
    MetricSources s;
    s.queue_counts = [] { return queue::QueueCounts{3, 1}; };
    s.devices = [] {
      return std::vector<DeviceCounters>{{0, "GPU-a", "NVIDIA H200", 2, 12.5, 1, 3},
                                         {1, "GPU-b", "NVIDIA H200", 0, 0}};
    };
    s.telemetry = &telemetry_;
    s.now_s = [this] { return now_; };
    return s;
  }

  void Publish(JobEvent::Kind kind, int64_t job_id, std::optional<core::ItemRecord> item,
               core::JobState state = core::JobState::kRunning) {
    JobEvent e;
    e.kind = kind;
    e.job.id = job_id;
    e.job.state = state;
    e.item = std::move(item);
    bus_.Publish(e);
  }

  PromExposition Scrape(const DaemonMetrics& m) {
    auto parsed = ParsePrometheusText(m.Render());
    EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << m.Render();
    return parsed.ok() ? *parsed : PromExposition{};
  }

  queue::JobEventBus bus_;
  FakeTelemetry telemetry_;
  double now_ = 100;
};

TEST_F(DaemonMetricsTest, CountsEventsOfEveryJob) {
  DaemonMetrics m(bus_, Sources());
  Publish(JobEvent::Kind::kItemStarted, 7, Item(1, core::ItemStatus::kRunning));
  Publish(JobEvent::Kind::kItemStarted, 7, Item(2, core::ItemStatus::kRunning));
  now_ = 100.3;
  Publish(JobEvent::Kind::kItemFinished, 7, Item(1, core::ItemStatus::kDone));
  now_ = 107;
  Publish(JobEvent::Kind::kItemFailed, 7, Item(2, core::ItemStatus::kFailed));
  // Job 8's items come from the cache: no start, no duration.
  Publish(JobEvent::Kind::kItemFinished, 8, Item(3, core::ItemStatus::kDone, true));
  Publish(JobEvent::Kind::kItemFinished, 8, Item(4, core::ItemStatus::kNotSupported));
  Publish(JobEvent::Kind::kJobFinished, 7, std::nullopt, core::JobState::kPartial);
  Publish(JobEvent::Kind::kJobFinished, 8, std::nullopt, core::JobState::kSucceeded);

  const PromExposition p = Scrape(m);
  EXPECT_EQ(*p.Value("gemmprof_items_finished_total", {{"state", "done"}}), 2);
  EXPECT_EQ(*p.Value("gemmprof_items_finished_total", {{"state", "failed"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_items_finished_total", {{"state", "not_supported"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_cache_hits_total"), 1);
  EXPECT_EQ(*p.Value("gemmprof_items_running"), 0);
  EXPECT_EQ(*p.Value("gemmprof_item_duration_seconds_count"), 2);
  EXPECT_NEAR(*p.Value("gemmprof_item_duration_seconds_sum"), 7.3, 1e-9);
  EXPECT_EQ(*p.Value("gemmprof_item_duration_seconds_bucket", {{"le", "0.5"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_item_duration_seconds_bucket", {{"le", "5"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_item_duration_seconds_bucket", {{"le", "10"}}), 2);
  EXPECT_EQ(*p.Value("gemmprof_jobs_finished_total", {{"state", "partial"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_jobs_finished_total", {{"state", "succeeded"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_jobs_finished_total", {{"state", "failed"}}), 0);
  EXPECT_EQ(p.families.at("gemmprof_item_duration_seconds").type, "histogram");
  EXPECT_EQ(p.families.at("gemmprof_cache_hits_total").type, "counter");
}

// Energy windows count once per measurement: not for cache hits, nor for an item that
// shares another's measurement; items without a figure count nothing.
TEST_F(DaemonMetricsTest, CountsEnergyWindowsAndTheirJoules) {
  DaemonMetrics m(bus_, Sources());
  auto with_energy = [](int64_t id, bool cached, int64_t shared) {
    core::ItemRecord r = Item(id, core::ItemStatus::kDone, cached);
    r.result.emplace();
    r.result->energy.joules = 0.002;
    r.result->energy.power_w = 600;
    r.result->energy.window_s = 1.25;
    r.result->shared_with_item = shared;
    return r;
  };
  Publish(JobEvent::Kind::kItemFinished, 1, with_energy(1, false, 0));
  Publish(JobEvent::Kind::kItemFinished, 1, with_energy(2, false, 1));  // shares item 1's
  Publish(JobEvent::Kind::kItemFinished, 2, with_energy(3, true, 0));   // a cache hit
  core::ItemRecord none = Item(4, core::ItemStatus::kDone);
  none.result.emplace();
  none.result->energy.not_measured = "host reference runner: no energy counter";
  Publish(JobEvent::Kind::kItemFinished, 2, none);
  const PromExposition p = Scrape(m);
  EXPECT_EQ(*p.Value("gemmprof_energy_windows_total"), 1);
  EXPECT_DOUBLE_EQ(*p.Value("gemmprof_energy_measured_joules_total"), 750);
  EXPECT_EQ(p.families.at("gemmprof_energy_measured_joules_total").type, "counter");
}

TEST_F(DaemonMetricsTest, ItemStillRunningIsAGaugeNotADuration) {
  DaemonMetrics m(bus_, Sources());
  Publish(JobEvent::Kind::kItemStarted, 1, Item(1, core::ItemStatus::kRunning));
  const PromExposition p = Scrape(m);
  EXPECT_EQ(*p.Value("gemmprof_items_running"), 1);
  EXPECT_EQ(*p.Value("gemmprof_item_duration_seconds_count"), 0);
}

TEST_F(DaemonMetricsTest, QueueDevicesAndTelemetryAtScrapeTime) {
  telemetry_.readings = {{0, "GPU-a", "NVIDIA H200", 1.98e9, 412.5, 61},
                         {1, "GPU-b", "NVIDIA H200", std::nullopt, 90, std::nullopt}};
  DaemonMetrics m(bus_, Sources());
  const PromExposition p = Scrape(m);
  EXPECT_EQ(*p.Value("gemmprof_queue_depth"), 3);
  EXPECT_EQ(*p.Value("gemmprof_jobs", {{"state", "queued"}}), 3);
  EXPECT_EQ(*p.Value("gemmprof_jobs", {{"state", "running"}}), 1);
  const std::map<std::string, std::string> a = {
      {"device", "0"}, {"uuid", "GPU-a"}, {"name", "NVIDIA H200"}};
  EXPECT_EQ(*p.Value("gemmprof_device_busy_seconds_total", a), 12.5);
  EXPECT_EQ(*p.Value("gemmprof_worker_restarts_total", a), 2);
  EXPECT_EQ(*p.Value("gemmprof_worker_restarts_total", {{"device", "1"}}), 0);
  EXPECT_EQ(*p.Value("gemmprof_worker_hangs_total", a), 1);
  EXPECT_EQ(*p.Value("gemmprof_batch_retries_total", a), 3);
  EXPECT_EQ(*p.Value("gemmprof_batch_retries_total", {{"device", "1"}}), 0);
  EXPECT_EQ(p.families.at("gemmprof_batch_retries_total").type, "counter");
  EXPECT_EQ(*p.Value("gemmprof_device_sm_clock_hertz", a), 1.98e9);
  EXPECT_EQ(*p.Value("gemmprof_device_power_watts", a), 412.5);
  EXPECT_EQ(*p.Value("gemmprof_device_temperature_celsius", a), 61);
  EXPECT_EQ(*p.Value("gemmprof_device_power_watts", {{"device", "1"}}), 90);
  // A reading NVML did not give is absent, not zero.
  EXPECT_FALSE(p.Value("gemmprof_device_sm_clock_hertz", {{"device", "1"}}).ok());
  EXPECT_EQ(*p.Value("gemmprof_build_info", {{"version", GEMMPROF_VERSION}}), 1);
}

TEST_F(DaemonMetricsTest, HostDaemonHasNoDeviceGauges) {
  NullTelemetry none;
  MetricSources s = Sources();
  s.telemetry = &none;
  DaemonMetrics m(bus_, s);
  const PromExposition p = Scrape(m);
  EXPECT_EQ(p.families.count("gemmprof_device_sm_clock_hertz"), 0u);
  EXPECT_EQ(p.families.count("gemmprof_device_power_watts"), 0u);
  EXPECT_EQ(p.families.count("gemmprof_device_temperature_celsius"), 0u);
  EXPECT_EQ(p.families.count("gemmprof_device_busy_seconds_total"), 1u);
}

TEST_F(DaemonMetricsTest, StopsListeningWhenDestroyed) {
  { DaemonMetrics m(bus_, Sources()); }
  EXPECT_FALSE(bus_.HasListeners(1));
  // Publishing after destruction must not reach the dead object.
  Publish(JobEvent::Kind::kItemStarted, 1, Item(1, core::ItemStatus::kRunning));
}

TEST_F(DaemonMetricsTest, ClusterQueueCountersAndTheQueueNow) {
  MetricSources s = Sources();
  DaemonMetrics without(bus_, s);
  EXPECT_EQ(Scrape(without).families.count("gemmprof_cluster_batches_total"), 0u);
  s.cluster = [] {
    queue::ClusterStats stats;
    stats.claimed = 7;
    stats.rerun = 2;
    stats.finished = 5;
    stats.released = 1;
    stats.lost = 1;
    stats.queue = storage::ClusterQueueCounts{4, 2, 1};
    return stats;
  };
  DaemonMetrics m(bus_, s);
  const PromExposition p = Scrape(m);
  EXPECT_EQ(p.families.at("gemmprof_cluster_batches_total").type, "counter");
  EXPECT_EQ(*p.Value("gemmprof_cluster_batches_total", {{"event", "claimed"}}), 7);
  EXPECT_EQ(*p.Value("gemmprof_cluster_batches_total", {{"event", "rerun"}}), 2);
  EXPECT_EQ(*p.Value("gemmprof_cluster_batches_total", {{"event", "finished"}}), 5);
  EXPECT_EQ(*p.Value("gemmprof_cluster_batches_total", {{"event", "released"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_cluster_batches_total", {{"event", "lost"}}), 1);
  EXPECT_EQ(*p.Value("gemmprof_cluster_queue_batches", {{"state", "queued"}}), 4);
  EXPECT_EQ(*p.Value("gemmprof_cluster_queue_batches", {{"state", "leased"}}), 2);
  EXPECT_EQ(*p.Value("gemmprof_cluster_queue_batches", {{"state", "expired"}}), 1);
}

TEST(JobEventBusTest, AudiencesReachObserversOrWatchersOnly) {
  queue::JobEventBus bus;
  int observed = 0, watched = 0;
  const int64_t all = bus.SubscribeAll([&](const JobEvent&) { ++observed; });
  const int64_t one = bus.Subscribe(5, [&](const JobEvent&) { ++watched; });
  JobEvent e;
  e.job.id = 5;
  bus.Publish(e, queue::JobEventBus::Audience::kObservers);
  EXPECT_EQ(observed, 1);
  EXPECT_EQ(watched, 0);
  bus.Publish(e, queue::JobEventBus::Audience::kWatchers);
  EXPECT_EQ(observed, 1);
  EXPECT_EQ(watched, 1);
  bus.Publish(e);
  EXPECT_EQ(observed, 2);
  EXPECT_EQ(watched, 2);
  EXPECT_EQ(bus.WatchedJobs(), std::vector<int64_t>{5});
  bus.Unsubscribe(one);
  EXPECT_TRUE(bus.WatchedJobs().empty());
  bus.Unsubscribe(all);
}

TEST(JobEventBusTest, SubscribeAllSeesEveryJobAndCountsAsAListener) {
  queue::JobEventBus bus;
  EXPECT_FALSE(bus.HasListeners(5));
  std::vector<int64_t> seen;
  const int64_t token = bus.SubscribeAll([&seen](const JobEvent& e) { seen.push_back(e.job.id); });
  EXPECT_TRUE(bus.HasListeners(5));
  // Not a watcher: item events for it need no job counters (no store read per item).
  EXPECT_FALSE(bus.HasWatchers(5));
  const int64_t watch = bus.Subscribe(5, [](const JobEvent&) {});
  EXPECT_TRUE(bus.HasWatchers(5));
  EXPECT_FALSE(bus.HasWatchers(6));
  bus.Unsubscribe(watch);
  for (int64_t id : {5, 6}) {
    JobEvent e;
    e.job.id = id;
    bus.Publish(e);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{5, 6}));
  bus.Unsubscribe(token);
  EXPECT_FALSE(bus.HasListeners(5));
}

}  // namespace
}  // namespace gemmprof::metrics
