// Following a job across lost connections: when the WatchJob stream breaks (the daemon
// restarted, the network dropped), reconnect with backoff and resume, so that every item
// event is shown once and none twice.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "client/gemmprof_client.h"

namespace gemmprof::client {

// How long to wait between reconnect attempts, and when to give up (total waiting).
struct ReconnectPolicy {
  int64_t initial_backoff_ms = 1000;
  int64_t max_backoff_ms = 15000;
  int64_t give_up_after_ms = 5 * 60 * 1000;
};

// What the watch needs beyond the client.
struct WatchHooks {
  std::function<void(const core::JobEvent&)> emit;  // shows one event
  std::function<void(int64_t ms)> sleep_ms;         // waits between attempts
  // Shows one line about the connection ("gemmprof: connection to ... lost; ...").
  std::function<void(const std::string& line)> notice;
  std::string address;  // HOST:PORT, for the notices
  ReconnectPolicy policy;
};

// Streams job `job_id`'s events to hooks.emit until the job ends and returns the job as
// it ended. A stream that breaks with UNAVAILABLE after its first event is reopened:
// the new stream's snapshot is checked against the job's items (GetReport) and the item
// events missed meanwhile are emitted (in item order), then the stream goes on with
// events already shown dropped. Errors: the first stream's error as is (nothing to
// resume); any error other than UNAVAILABLE; UNAVAILABLE after policy.give_up_after_ms
// of reconnecting.
absl::StatusOr<core::JobRecord> WatchWithResume(GemmProfClient& client, int64_t job_id,
                                                const WatchHooks& hooks);

}  // namespace gemmprof::client
