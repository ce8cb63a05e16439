#include "fake_client.h"

namespace gemmprof::client::testing {

absl::StatusOr<SubmitResult> FakeClient::SubmitJob(const core::JobSpec& spec) {
  submitted.push_back(spec);
  return SubmitResult{next_job_id++, 12};
}

absl::Status FakeClient::WatchJob(
    int64_t job_id, const std::function<absl::Status(const core::JobEvent&)>& on_event) {
  auto it = reports.find(job_id);
  if (it == reports.end())
    return absl::NotFoundError("job " + std::to_string(job_id) + " not found");
  // As the daemon streams a job watched from its start: a snapshot of the job with
  // nothing finished, one event per item with counters counting up, then the job.
  core::JobEvent e;
  e.job = it->second.job;
  e.job.state = core::JobState::kRunning;
  e.job.finished_items = e.job.failed_items = 0;
  RETURN_IF_ERROR(on_event(e));
  for (const auto& item : it->second.items) {
    const bool failed = item.status == core::ItemStatus::kFailed;
    e.kind = failed ? core::JobEvent::Kind::kItemFailed : core::JobEvent::Kind::kItemFinished;
    e.item = item;
    ++e.job.finished_items;
    e.job.failed_items += failed ? 1 : 0;
    RETURN_IF_ERROR(on_event(e));
  }
  e.kind = core::JobEvent::Kind::kJobFinished;
  e.job = it->second.job;
  e.item.reset();
  return on_event(e);
}

absl::StatusOr<core::JobRecord> FakeClient::GetJob(int64_t job_id) {
  ASSIGN_OR_RETURN(core::Report r, GetReport(job_id));
  return r.job;
}

absl::StatusOr<std::vector<core::JobRecord>> FakeClient::ListJobs(
    std::optional<core::JobState> state, int32_t limit, const std::string& node,
    const std::string& campaign) {
  std::vector<core::JobRecord> out;
  for (auto it = reports.rbegin(); it != reports.rend() && int32_t(out.size()) < limit; ++it) {
    const core::JobRecord& j = it->second.job;
    if ((!state || j.state == *state) && (node.empty() || j.node == node) &&
        (campaign.empty() || j.spec.campaign == campaign)) {
      out.push_back(j);
    }
  }
  return out;
}

absl::StatusOr<core::JobRecord> FakeClient::CancelJob(int64_t job_id) {
  auto it = reports.find(job_id);
  if (it == reports.end())
    return absl::NotFoundError("job " + std::to_string(job_id) + " not found");
  it->second.job.state = core::JobState::kCancelled;
  return it->second.job;
}

absl::StatusOr<core::Report> FakeClient::GetReport(int64_t job_id) {
  auto it = reports.find(job_id);
  if (it == reports.end())
    return absl::NotFoundError("job " + std::to_string(job_id) + " not found");
  return it->second;
}

absl::StatusOr<std::vector<core::ResultRow>> FakeClient::QueryResults(
    const core::ResultFilter& filter, int32_t limit) {
  last_query = filter;
  last_limit = limit;
  std::vector<core::ResultRow> rows;
  for (const auto& [id, r] : reports)
    for (const auto& item : r.items)
      if (item.result && int32_t(rows.size()) < limit) {
        rows.push_back(StoredRow(int64_t(rows.size()) + 1, r, item));
        rows.back().job_id = id;
      }
  return rows;
}

core::ResultRow StoredRow(int64_t result_id, const core::Report& report,
                          const core::ItemRecord& item) {
  core::ResultRow row;
  row.result_id = result_id;
  row.job_id = report.job.id;
  row.item_id = item.item.id;
  row.measured_ms = item.measured_ms;
  row.node = item.measured_node;
  row.device = report.job.device;
  row.item = item.item;
  row.timing = report.job.spec.timing;
  row.measurement = item.result;
  row.cached = item.cached;
  return row;
}

absl::StatusOr<std::vector<core::DeviceInfo>> FakeClient::ListDevices() {
  std::vector<core::DeviceInfo> out;
  for (const auto& [id, r] : reports) {
    out.push_back(r.job.device);
    break;
  }
  return out;
}

}  // namespace gemmprof::client::testing
