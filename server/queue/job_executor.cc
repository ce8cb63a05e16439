#include "server/queue/job_executor.h"

#include <spdlog/spdlog.h>

#include "core/cache_key.h"
#include "server/queue/job_queue.h"

namespace gemmprof::queue {

JobExecutor::JobExecutor(storage::ResultStore& store, JobEventBus& bus, device::Runner& runner,
                         std::function<Interrupt(int64_t)> interrupt)
    : store_(store), bus_(bus), runner_(runner), interrupt_(std::move(interrupt)) {}

void JobExecutor::Run(int64_t job_id) {
  auto job = store_.GetJob(job_id);
  if (!job.ok()) {
    spdlog::error("job {}: cannot load: {}", job_id, job.status().ToString());
    return;
  }
  if (core::IsTerminal(job->state)) return;
  if (auto s = store_.SetJobState(job_id, core::JobState::kRunning, ""); !s.ok()) {
    spdlog::error("job {}: cannot mark running: {}", job_id, s.ToString());
    return;
  }
  // On a node of several GPUs any worker may take the job: record the one that does.
  if (auto s = store_.SetJobDevice(job_id, runner_.Info()); !s.ok()) {
    spdlog::error("job {}: cannot record its device: {}", job_id, s.ToString());
  }
  spdlog::info("job {}: running {} items on {} ({})", job_id, job->total_items, runner_.Info().name,
               runner_.Info().backend);
  if (auto s = runner_.BeginJob(job->spec.timing); !s.ok()) {
    EndJob(job_id, core::JobState::kFailed, "device warm-up failed: " + s.ToString());
    return;
  }
  auto items = store_.GetItems(job_id);
  if (!items.ok()) {
    EndJob(job_id, core::JobState::kFailed, "cannot load items: " + items.status().ToString());
    return;
  }
  for (const auto& item : *items) {
    if (core::IsFinal(item.status)) continue;
    switch (interrupt_(job_id)) {
      case Interrupt::kStop:
        spdlog::info("job {}: stopping at item boundary; it resumes on restart", job_id);
        return;
      case Interrupt::kCancel:
        if (auto s = store_.CancelPendingItems(job_id); !s.ok())
          spdlog::error("job {}: cancel items: {}", job_id, s.ToString());
        EndJob(job_id, core::JobState::kCancelled, "cancelled by request");
        return;
      case Interrupt::kNone:
        break;
    }
    if (auto s = RunItem(*job, item); !s.ok()) {
      EndJob(job_id, core::JobState::kFailed, "store failure: " + s.ToString());
      return;
    }
  }
  EndJob(job_id, core::JobState::kSucceeded, "");
}

absl::Status JobExecutor::RunItem(const core::JobRecord& job, const core::ItemRecord& record) {
  const core::WorkItem& item = record.item;
  const core::TimingOptions& timing = job.spec.timing;
  const core::RecipeSupport support = runner_.Supports(item.recipe);
  if (!support.supported) {
    return Finish(job, record, core::ItemStatus::kNotSupported, support.reason, std::nullopt,
                  std::nullopt, "");
  }
  const std::string key = core::CacheKey(runner_.Info(), item, timing);
  if (!job.spec.force) {
    ASSIGN_OR_RETURN(auto hit, store_.LookupCache(key));
    if (hit.has_value()) {
      return Finish(job, record, core::ItemStatus::kDone, "", hit->measurement, hit->result_id,
                    key);
    }
  }
  if (auto fits = runner_.CanImplement(item, timing); !fits.ok()) {
    return Finish(
        job, record,
        IsNotSupportedRefusal(fits) ? core::ItemStatus::kNotSupported : core::ItemStatus::kFailed,
        std::string(fits.message()), std::nullopt, std::nullopt, key);
  }
  RETURN_IF_ERROR(store_.MarkItemRunning(item.id));
  core::ItemRecord running = record;
  running.status = core::ItemStatus::kRunning;
  PublishItem(JobEvent::Kind::kItemStarted, job.id, running);
  auto measured = runner_.Run(item, timing);
  if (!measured.ok()) {
    spdlog::warn("job {} item {}: {}", job.id, item.seq, measured.status().ToString());
    // The library itself can refuse a configuration (cuBLASLt NOT_SUPPORTED): that is
    // "this recipe cannot run this here", not a broken measurement.
    return Finish(job, record,
                  IsNotSupportedRefusal(measured.status()) ? core::ItemStatus::kNotSupported
                                                           : core::ItemStatus::kFailed,
                  std::string(measured.status().message()), std::nullopt, std::nullopt, key);
  }
  return Finish(job, record, core::ItemStatus::kDone, "", *measured, std::nullopt, key);
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
