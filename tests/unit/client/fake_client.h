// An in-memory GemmProfClient for command tests: canned reports and a call log.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/gemmprof_client.h"

namespace gemmprof::client::testing {

class FakeClient : public GemmProfClient {
 public:
  std::map<int64_t, core::Report> reports;  // by job id
  std::vector<core::JobSpec> submitted;     // every SubmitJob spec
  core::DaemonListing daemons;              // what ListDaemons answers
  int64_t next_job_id = 100;

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
  absl::StatusOr<core::DaemonListing> ListDaemons() override { return daemons; }

  core::ResultFilter last_query;
  int32_t last_limit = 0;
};

// `item` of `report` as the store lists it among stored results, with id `result_id`.
core::ResultRow StoredRow(int64_t result_id, const core::Report& report,
                          const core::ItemRecord& item);

}  // namespace gemmprof::client::testing
