#include "server/queue/job_executor.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "core/cache_key.h"
#include "core/error_detail.h"
#include "server/queue/job_queue.h"

namespace gemmprof::queue {
namespace {

// True when no item after `i` is still to run.
bool IsLastPending(const std::vector<core::ItemRecord>& items, size_t i) {
  for (size_t j = i + 1; j < items.size(); ++j) {
    if (!core::IsFinal(items[j].status)) return false;
  }
  return true;
}

}  // namespace

JobExecutor::JobExecutor(storage::ResultStore& store, JobEventBus& bus, device::Runner& runner,
                         std::function<Interrupt(int64_t)> interrupt)
    : store_(store), bus_(bus), runner_(runner), interrupt_(std::move(interrupt)) {}

RunEnd JobExecutor::Run(int64_t job_id) {
  auto job = store_.GetJob(job_id);
  if (!job.ok()) {
    spdlog::error("job {}: cannot load: {}", job_id, job.status().ToString());
    return RunEnd::kEnded;
  }
  if (core::IsTerminal(job->state)) return RunEnd::kEnded;
  if (!runner_.Availability().ok()) return RunEnd::kDeviceLost;
  if (auto s = store_.SetJobState(job_id, core::JobState::kRunning, ""); !s.ok()) {
    spdlog::error("job {}: cannot mark running: {}", job_id, s.ToString());
    return RunEnd::kEnded;
  }
  // On a node of several GPUs any worker may take the job: record the one that does.
  if (auto s = store_.SetJobDevice(job_id, runner_.Info()); !s.ok()) {
    spdlog::error("job {}: cannot record its device: {}", job_id, s.ToString());
  }
  spdlog::info("job {}: running {} items on {} ({})", job_id, job->total_items, runner_.Info().name,
               runner_.Info().backend);
  if (auto s = WarmUp(*job); !s.ok()) {
    if (!runner_.Availability().ok()) return RunEnd::kDeviceLost;
    if (const std::string source = core::SourceOf(s); !source.empty()) {
      spdlog::warn("job {}: device warm-up failed at {}", job_id, source);
    }
    EndJob(job_id, core::JobState::kFailed, absl::StrCat("device warm-up failed: ", s.message()));
    return RunEnd::kEnded;
  }
  auto items = store_.GetItems(job_id);
  if (!items.ok()) {
    EndJob(job_id, core::JobState::kFailed,
           absl::StrCat("cannot load items: ", items.status().message()));
    return RunEnd::kEnded;
  }
  for (size_t i = 0; i < items->size(); ++i) {
    const core::ItemRecord& item = (*items)[i];
    if (core::IsFinal(item.status)) continue;
    switch (interrupt_(job_id)) {
      case Interrupt::kStop:
        spdlog::info("job {}: stopping at item boundary; it resumes on restart", job_id);
        return RunEnd::kStopped;
      case Interrupt::kCancel:
        if (auto s = store_.CancelPendingItems(job_id); !s.ok())
          spdlog::error("job {}: cancel items: {}", job_id, s.ToString());
        EndJob(job_id, core::JobState::kCancelled, "cancelled by request");
        return RunEnd::kEnded;
      case Interrupt::kNone:
        break;
    }
    auto end = RunItem(*job, item, IsLastPending(*items, i));
    if (!end.ok()) {
      EndJob(job_id, core::JobState::kFailed,
             absl::StrCat("store failure: ", end.status().message()));
      return RunEnd::kEnded;
    }
    if (*end == ItemEnd::kDeviceLost) return RunEnd::kDeviceLost;
  }
  EndRanToTheEnd(job_id);
  return RunEnd::kEnded;
}

absl::Status JobExecutor::WarmUp(const core::JobRecord& job) {
  absl::Status s = runner_.BeginJob(job.spec.timing);
  // A worker that died or hung in the warm-up has been replaced: the new one tries once.
  if (absl::IsAborted(s) || absl::IsDeadlineExceeded(s)) {
    spdlog::warn("job {}: device warm-up failed ({}); trying once more", job.id,
                 std::string(s.message()));
    s = runner_.BeginJob(job.spec.timing);
  }
  return s;
}

void JobExecutor::EndRanToTheEnd(int64_t job_id) {
  auto job = store_.GetJob(job_id);
  if (!job.ok()) {
    EndJob(job_id, core::JobState::kFailed,
           absl::StrCat("store failure: ", job.status().message()));
  } else if (job->failed_items > 0) {
    EndJob(job_id, core::JobState::kPartial,
           absl::StrCat(job->failed_items, " of ", job->total_items, " items failed"));
  } else {
    EndJob(job_id, core::JobState::kSucceeded, "");
  }
}

absl::StatusOr<JobExecutor::ItemEnd> JobExecutor::RunItem(const core::JobRecord& job,
                                                          const core::ItemRecord& record,
                                                          bool last) {
  const core::WorkItem& item = record.item;
  const core::TimingOptions& timing = job.spec.timing;
  const core::RecipeSupport support = runner_.Supports(item.recipe);
  if (!support.supported) {
    RETURN_IF_ERROR(Finish(job, record, core::ItemStatus::kNotSupported, support.reason,
                           std::nullopt, std::nullopt, ""));
    return ItemEnd::kRecorded;
  }
  const std::string key = core::CacheKey(runner_.Info(), item, timing);
  if (!job.spec.force) {
    ASSIGN_OR_RETURN(auto hit, store_.LookupCache(key));
    if (hit.has_value()) {
      RETURN_IF_ERROR(
          Finish(job, record, core::ItemStatus::kDone, "", hit->measurement, hit->result_id, key));
      return ItemEnd::kRecorded;
    }
  }
  absl::Status fits = runner_.CanImplement(item, timing);
  // Unavailable: the device went away, or its worker is restarting (then Run waits for
  // the new one, which checks the item again).
  if (absl::IsUnavailable(fits) && !runner_.Availability().ok()) return ItemEnd::kDeviceLost;
  if (!fits.ok() && !absl::IsUnavailable(fits)) {
    RETURN_IF_ERROR(FinishFailed(job, record, fits, last, key));
    return ItemEnd::kRecorded;
  }
  RETURN_IF_ERROR(store_.MarkItemRunning(item.id));
  core::ItemRecord running = record;
  running.status = core::ItemStatus::kRunning;
  PublishItem(JobEvent::Kind::kItemStarted, job.id, running);
  auto measured = runner_.Run(item, timing);
  if (!measured.ok()) {
    RETURN_IF_ERROR(FinishFailed(job, record, measured.status(), last, key));
    return ItemEnd::kRecorded;
  }
  RETURN_IF_ERROR(Finish(job, record, core::ItemStatus::kDone, "", *measured, std::nullopt, key));
  return ItemEnd::kRecorded;
}

absl::Status JobExecutor::FinishFailed(const core::JobRecord& job, const core::ItemRecord& record,
                                       const absl::Status& why, bool last,
                                       const std::string& cache_key) {
  const std::string source = core::SourceOf(why);
  spdlog::warn("job {} item {} ({}): {}{}", job.id, record.item.seq,
               core::DescribeItem(record.item), std::string(why.message()),
               source.empty() ? "" : absl::StrCat(" [at ", source, "]"));
  // The device or the library refusing a configuration (FP8 alignment, cuBLASLt
  // NOT_SUPPORTED) is "this recipe cannot run this here", not a broken measurement.
  if (IsNotSupportedRefusal(why)) {
    return Finish(job, record, core::ItemStatus::kNotSupported, std::string(why.message()),
                  std::nullopt, std::nullopt, cache_key);
  }
  const std::string error =
      absl::StrCat(core::DescribeItem(record.item), ": ", why.message(),
                   last ? "; the item failed (it was the job's last item)"
                        : "; the item failed and the job goes on with its next item");
  return Finish(job, record, core::ItemStatus::kFailed, error, std::nullopt, std::nullopt,
                cache_key);
}

absl::Status JobExecutor::Finish(const core::JobRecord& job, const core::ItemRecord& record,
                                 core::ItemStatus status, const std::string& error,
                                 const std::optional<core::Measurement>& m,
                                 std::optional<int64_t> cached_result_id,
                                 const std::string& cache_key) {
  RETURN_IF_ERROR(store_.FinishItem(record.item.id, status, error, m, runner_.Info(),
                                    job.spec.timing, cache_key, cached_result_id));
  core::ItemRecord done = record;
  done.status = status;
  done.error = error;
  done.result = m;
  done.cached = cached_result_id.has_value();
  PublishItem(status == core::ItemStatus::kFailed ? JobEvent::Kind::kItemFailed
                                                  : JobEvent::Kind::kItemFinished,
              job.id, done);
  return absl::OkStatus();
}

void JobExecutor::PublishItem(JobEvent::Kind kind, int64_t job_id, const core::ItemRecord& item) {
  // The event carries the job's counters, a store read: skip it when nobody watches.
  if (!bus_.HasListeners(job_id)) return;
  auto job = store_.GetJob(job_id);
  if (!job.ok()) return;
  bus_.Publish(JobEvent{kind, *std::move(job), item});
}

void JobExecutor::EndJob(int64_t job_id, core::JobState state, const std::string& error) {
  if (auto s = store_.SetJobState(job_id, state, error); !s.ok()) {
    spdlog::error("job {}: cannot set state {}: {}", job_id, core::ToString(state), s.ToString());
  }
  spdlog::info("job {}: {}{}{}", job_id, core::ToString(state), error.empty() ? "" : ": ", error);
  auto job = store_.GetJob(job_id);
  if (job.ok()) bus_.Publish(JobEvent{JobEvent::Kind::kJobFinished, *std::move(job), std::nullopt});
}

}  // namespace gemmprof::queue
