// The gRPC implementation of GemmProfClient: the only client code that touches gRPC or
// protobuf. A thin wrapper over the generated stub that converts with gemmprof::api.
#pragma once

#include <memory>
#include <string>

#include "client/gemmprof_client.h"

namespace gemmprof::client {

// How long Connect waits for the channel to come up.
inline constexpr int kConnectTimeoutS = 10;
// Deadline of every unary call.
inline constexpr int kCallTimeoutS = 120;

class Transport final : public GemmProfClient {
 public:
  // Opens a channel to `address` (HOST:PORT, insecure) and waits up to
  // kConnectTimeoutS for it. Errors: Unavailable "cannot reach gemmprofd at ADDRESS (...)".
  static absl::StatusOr<std::unique_ptr<GemmProfClient>> Connect(const std::string& address);
  ~Transport() override;

  absl::StatusOr<SubmitResult> SubmitJob(const core::JobSpec& spec) override;
  absl::Status WatchJob(int64_t job_id,
                        const std::function<void(const JobEvent&)>& on_event) override;
  absl::StatusOr<core::JobRecord> GetJob(int64_t job_id) override;
  absl::StatusOr<std::vector<core::JobRecord>> ListJobs(std::optional<core::JobState> state,
                                                        int32_t limit) override;
  absl::StatusOr<core::JobRecord> CancelJob(int64_t job_id) override;
  absl::StatusOr<core::Report> GetReport(int64_t job_id) override;
  absl::StatusOr<std::vector<HistoryRow>> QueryResults(const HistoryQuery& query) override;
  absl::StatusOr<std::vector<core::DeviceInfo>> ListDevices() override;

 private:
  struct Impl;
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmprof::client
