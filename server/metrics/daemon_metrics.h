// What gemmprofd exports at /metrics: counters fed by the job event bus, gauges read at
// scrape time from the queue, the workers and the device telemetry.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/telemetry.h"
#include "server/metrics/text_format.h"
#include "server/queue/job_events.h"
#include "server/queue/job_queue.h"

namespace gemmprof::metrics {

// One device's worker counters (device/worker/remote_runner.h).
struct DeviceCounters {
  int index = 0;
  std::string uuid;
  std::string name;
  int64_t restarts = 0;
  double busy_seconds = 0;
  int64_t hangs = 0;    // calls found hung (no progress) and killed
  int64_t retries = 0;  // batches (or parts) measured again after a worker fault
};

// Where the scrape-time values come from. Unset functions export nothing.
struct MetricSources {
  std::function<queue::QueueCounts()> queue_counts;
  // The cluster queue: this daemon's batch counters and every node's batches now.
  std::function<queue::ClusterStats()> cluster;
  std::function<std::vector<DeviceCounters>()> devices;
  device::DeviceTelemetry* telemetry = nullptr;  // may be null; must outlive DaemonMetrics
  std::function<double()> now_s;                 // monotonic seconds; default steady_clock
};

// Upper bounds of gemmprof_item_duration_seconds: from a cached-size host item to a
// long GPU group.
inline const std::vector<double>& ItemDurationBuckets() {
  static const std::vector<double> kBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                               5,    10,   30,  60,   120, 300, 600};
  return kBuckets;
}

// Thread-safe. Subscribes to every job's events on construction and unsubscribes on
// destruction, so it must not outlive `bus`.
class DaemonMetrics {
 public:
  DaemonMetrics(queue::JobEventBus& bus, MetricSources sources);
  ~DaemonMetrics();
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  // The whole /metrics document (Prometheus text format 0.0.4).
  std::string Render() const;

 private:
  void OnEvent(const queue::JobEvent& event);
  void AppendJobFamilies(std::vector<MetricFamily>& out) const;
  void AppendDeviceFamilies(std::vector<MetricFamily>& out) const;
  void AppendClusterFamilies(std::vector<MetricFamily>& out) const;

  queue::JobEventBus& bus_;
  MetricSources sources_;
  int64_t token_ = 0;
  Histogram item_duration_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> jobs_finished_;   // by final state
  std::map<std::string, int64_t> items_finished_;  // by final status
  int64_t cache_hits_ = 0;
  // --energy: windows measured (one per distinct measurement) and the board joules the
  // energy counter read over them.
  int64_t energy_windows_ = 0;
  double energy_joules_ = 0;
  struct Started {
    int64_t job_id = 0;
    double at_s = 0;
  };
  std::unordered_map<int64_t, Started> started_s_;  // item id -> its job, when it started
};

}  // namespace gemmprof::metrics
