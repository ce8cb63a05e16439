// The gRPC implementation of GemmProfClient: the only client code that touches gRPC or
// protobuf. A thin wrapper over the generated stub that converts with gemmprof::wire,
// adds the bearer token and the deadline to every call, retries idempotent reads, and
// turns connection, TLS and auth failures into one line a user can act on.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/connection.h"
#include "client/gemmprof_client.h"

namespace gemmprof::client {

// The methods retried on UNAVAILABLE: reads, safe to send twice. SubmitJob and
// CancelJob are not retried (a retry could run or cancel twice); WatchJob is a stream
// and resumes on its own (resumable_watch.h).
const std::vector<std::string_view>& RetriedMethods();

// The gRPC service config the channel gets: a retry policy (UNAVAILABLE, exponential
// backoff, 5 attempts) for RetriedMethods() of gemmprof.v1.GemmProf.
std::string RetryServiceConfigJson();

class Transport final : public GemmProfClient {
 public:
  // Opens a channel to settings.address (TLS or plaintext as the settings say). Connects
  // on the first call, whose error then says why it failed. Errors: Internal when the
  // TLS credentials cannot be made.
  static absl::StatusOr<std::unique_ptr<GemmProfClient>> Connect(
      const ConnectionSettings& settings);
  ~Transport() override;

  absl::StatusOr<SubmitResult> SubmitJob(const core::JobSpec& spec) override;
  absl::Status WatchJob(
      int64_t job_id, const std::function<absl::Status(const core::JobEvent&)>& on_event) override;
  absl::StatusOr<core::JobRecord> GetJob(int64_t job_id) override;
  absl::StatusOr<std::vector<core::JobRecord>> ListJobs(std::optional<core::JobState> state,
                                                        int32_t limit, const std::string& node,
                                                        const std::string& campaign) override;
  absl::StatusOr<core::JobRecord> CancelJob(int64_t job_id) override;
  absl::StatusOr<core::Report> GetReport(int64_t job_id) override;
  absl::StatusOr<std::vector<core::ResultRow>> QueryResults(const core::ResultFilter& filter,
                                                            int32_t limit) override;
  absl::StatusOr<std::vector<core::DeviceInfo>> ListDevices() override;
  absl::StatusOr<core::DaemonListing> ListDaemons() override;

 private:
  struct Impl;
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmprof::client
