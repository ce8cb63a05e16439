#include "server/queue/job_events.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace gemmprof::queue {

int64_t JobEventBus::Subscribe(int64_t job_id, Listener listener) {
  std::lock_guard lock(mu_);
  const int64_t token = next_token_++;
  listeners_.emplace(token, Entry{job_id, std::move(listener)});
  return token;
}

int64_t JobEventBus::SubscribeAll(Listener listener) {
  return Subscribe(kAllJobs, std::move(listener));
}

void JobEventBus::Unsubscribe(int64_t token) {
  std::lock_guard lock(mu_);
  listeners_.erase(token);
}

void JobEventBus::Publish(const JobEvent& event) { Publish(event, Audience::kAll); }

void JobEventBus::Publish(const JobEvent& event, Audience audience) {
  // Listeners are called under the lock so that Unsubscribe guarantees no call is in
  // flight once it returns (the listener's owner may be destroyed right after).
  std::lock_guard lock(mu_);
  for (auto& [token, entry] : listeners_) {
    const bool watcher = entry.job_id == event.job.id;
    const bool observer = entry.job_id == kAllJobs;
    if ((watcher && audience != Audience::kObservers) ||
        (observer && audience != Audience::kWatchers)) {
      entry.listener(event);
    }
  }
}

std::vector<int64_t> JobEventBus::WatchedJobs() {
  std::lock_guard lock(mu_);
  std::vector<int64_t> jobs;
  for (const auto& [token, entry] : listeners_) {
    if (entry.job_id != kAllJobs &&
        std::find(jobs.begin(), jobs.end(), entry.job_id) == jobs.end()) {
      jobs.push_back(entry.job_id);
    }
  }
  return jobs;
}

bool JobEventBus::HasWatchers(int64_t job_id) {
  std::lock_guard lock(mu_);
  for (const auto& [token, entry] : listeners_) {
    if (entry.job_id == job_id) return true;
  }
  return false;
}

bool JobEventBus::HasListeners(int64_t job_id) {
  std::lock_guard lock(mu_);
  for (const auto& [token, entry] : listeners_) {
    if (entry.job_id == job_id || entry.job_id == kAllJobs) return true;
  }
  return false;
}

}  // namespace gemmprof::queue
