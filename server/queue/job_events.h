// Progress events of jobs, fanned out to whoever watches them (WatchJob streams).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "core/job_event.h"

namespace gemmprof::queue {

// The queue publishes core's event, the one the API streams and the CLI shows.
using core::JobEvent;

// Thread-safe publish/subscribe keyed by job id. Listeners run on the publishing
// thread (a worker), so they must be quick and must not call back into the bus.
class JobEventBus {
 public:
  using Listener = std::function<void(const JobEvent&)>;

  // Returns a token for Unsubscribe.
  int64_t Subscribe(int64_t job_id, Listener listener);
  // Every job's events (the metrics observer). Returns a token for Unsubscribe. Such a
  // listener may get item events whose `job` holds only the id (no counters: reading
  // them costs a store query per event), see HasWatchers.
  int64_t SubscribeAll(Listener listener);
  void Unsubscribe(int64_t token);
  void Publish(const JobEvent& event);
  // Who hears an event: everyone, only the observers of every job (metrics: a cluster
  // batch this daemon measures), or only the listeners of its job (watch streams of a
  // cluster job, whose progress the store tells: ClusterFollower).
  enum class Audience { kAll, kObservers, kWatchers };
  void Publish(const JobEvent& event, Audience audience);
  // The jobs someone watches now (SubscribeAll listeners do not count).
  std::vector<int64_t> WatchedJobs();
  // Whether anyone listens to `job_id` now (a later Subscribe starts from a snapshot).
  bool HasListeners(int64_t job_id);
  // Whether a listener of this very job (a watch stream, which shows the job's counters)
  // exists; SubscribeAll listeners do not count.
  bool HasWatchers(int64_t job_id);

 private:
  static constexpr int64_t kAllJobs = -1;
  struct Entry {
    int64_t job_id;
    Listener listener;
  };
  std::mutex mu_;
  int64_t next_token_ = 1;
  std::map<int64_t, Entry> listeners_;
};

}  // namespace gemmprof::queue
