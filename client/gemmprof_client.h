// The operations the CLI needs from gemmprofd, in domain types. Transport implements it
// over gRPC; tests implement it in memory. Every call returns the server's status code;
// the message is the server's, except for connection, TLS and auth failures, which the
// transport words for the user (call_errors.h). UNAVAILABLE: the daemon cannot be reached.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/client_types.h"
#include "client/connection.h"
#include "core/daemon_record.h"
#include "core/job.h"
#include "core/job_event.h"
#include "core/query.h"
#include "core/status.h"

namespace gemmprof::client {

class GemmProfClient {
 public:
  virtual ~GemmProfClient() = default;

  virtual absl::StatusOr<SubmitResult> SubmitJob(const core::JobSpec& spec) = 0;
  // Calls `on_event` for every event until the job ends or the stream breaks; returns
  // OK after the JOB_FINISHED event. An error from `on_event` ends the stream and is
  // returned. A stream the daemon or the network broke is UNAVAILABLE.
  virtual absl::Status WatchJob(
      int64_t job_id, const std::function<absl::Status(const core::JobEvent&)>& on_event) = 0;
  virtual absl::StatusOr<core::JobRecord> GetJob(int64_t job_id) = 0;
  // Newest first, at most `limit` jobs, optionally only those in `state`, only those
  // that daemon `node` accepted (empty: every node sharing the store), and only those of
  // `campaign` (empty: any).
  virtual absl::StatusOr<std::vector<core::JobRecord>> ListJobs(std::optional<core::JobState> state,
                                                                int32_t limit,
                                                                const std::string& node,
                                                                const std::string& campaign) = 0;
  virtual absl::StatusOr<core::JobRecord> CancelJob(int64_t job_id) = 0;
  virtual absl::StatusOr<core::Report> GetReport(int64_t job_id) = 0;
  // Stored results matching `filter` (its page fields aside), newest first, at most `limit`.
  virtual absl::StatusOr<std::vector<core::ResultRow>> QueryResults(
      const core::ResultFilter& filter, int32_t limit) = 0;
  virtual absl::StatusOr<std::vector<core::DeviceInfo>> ListDevices() = 0;
  // The daemons sharing the daemon's store, and its clock (`gemmprof cluster`).
  virtual absl::StatusOr<core::DaemonListing> ListDaemons() = 0;
};

// Opens a client with resolved settings; the App calls it only for commands that need one.
using ClientFactory = std::function<absl::StatusOr<std::unique_ptr<GemmProfClient>>(
    const ConnectionSettings& settings)>;

}  // namespace gemmprof::client
