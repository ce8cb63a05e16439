#include "server/queue/job_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "core/derive.h"
#include "core/validation.h"
#include "server/queue/job_executor.h"

namespace gemmprof::queue {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool IsNotSupportedRefusal(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition ||
         status.code() == absl::StatusCode::kUnimplemented;
}

JobQueue::JobQueue(storage::ResultStore& store, std::vector<device::Runner*> runners,
                   QueueLimits limits)
    : store_(store), runners_(std::move(runners)), limits_(limits) {}

JobQueue::~JobQueue() { Stop(); }

absl::Status JobQueue::Start() {
  if (runners_.empty()) return absl::FailedPreconditionError("no device runner configured");
  ASSIGN_OR_RETURN(auto unfinished, store_.RecoverUnfinished());
  {
    std::lock_guard lock(mu_);
    if (started_) return absl::FailedPreconditionError("job queue already started");
    started_ = true;
    for (int64_t id : unfinished) pending_.push_back(id);
  }
  if (!unfinished.empty()) spdlog::info("resuming {} unfinished job(s)", unfinished.size());
  for (device::Runner* runner : runners_) {
    workers_.emplace_back([this, runner] { WorkerLoop(runner); });
  }
  return absl::OkStatus();
}

void JobQueue::RequestStop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

void JobQueue::Stop() {
  RequestStop();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

absl::StatusOr<PlannedJob> JobQueue::Plan(const core::JobSpec& spec) const {
  RETURN_IF_ERROR(core::ValidateJobSpec(spec));
  PlannedJob planned;
  ASSIGN_OR_RETURN(planned.plan, core::DerivePlan(spec));
  planned.recipes = core::EffectiveRecipes(spec);
  planned.modes = core::EffectiveModes(spec);
  planned.items = core::ExpandItems(planned.plan, planned.recipes, planned.modes);
  if (static_cast<int64_t>(planned.items.size()) > limits_.max_items_per_job) {
    return absl::ResourceExhaustedError(
        "job: " + std::to_string(planned.items.size()) + " items exceed the limit of " +
        std::to_string(limits_.max_items_per_job) +
        " per job (gemmprofd --max-items-per-job); submit fewer shapes, recipes or modes");
  }
  // Unsupported recipes and shapes a recipe cannot take become not_supported items;
  // everything else must fit here.
  const device::Runner& runner = *runners_.front();
  for (const auto& item : planned.items) {
    if (!runner.Supports(item.recipe).supported) continue;
    absl::Status fits = runner.CanImplement(item, spec.timing);
    if (!fits.ok() && !IsNotSupportedRefusal(fits)) return fits;
  }
  return planned;
}

absl::StatusOr<core::JobRecord> JobQueue::Submit(const core::JobSpec& spec,
                                                 const std::string& submitted_by) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return absl::UnavailableError("gemmprofd is shutting down; job not accepted");
    // Submissions between this check and their Enqueue count too, so parallel calls
    // cannot overshoot the limit.
    const int64_t queued = static_cast<int64_t>(pending_.size() + running_.size()) + submitting_;
    if (queued >= limits_.max_queued_jobs) {
      return absl::ResourceExhaustedError(
          "gemmprofd already has " + std::to_string(queued) + " queued or running jobs, the " +
          "limit (gemmprofd --max-queued-jobs " + std::to_string(limits_.max_queued_jobs) +
          "); wait for some to finish or cancel some");
    }
    ++submitting_;
  }
  struct Release {
    JobQueue* q;
    ~Release() {
      std::lock_guard lock(q->mu_);
      --q->submitting_;
    }
  } release{this};
  ASSIGN_OR_RETURN(PlannedJob planned, Plan(spec));
  core::JobRecord job;
  job.submitted_by = submitted_by;
  job.spec = spec;
  job.plan = planned.plan;
  job.state = core::JobState::kQueued;
  job.created_ms = NowMs();
  job.total_items = static_cast<int32_t>(planned.items.size());
  job.device = runners_.front()->Info();
  // Persisted before the id is returned: an acknowledged job survives a crash.
  ASSIGN_OR_RETURN(auto stored, store_.CreateJob(std::move(job), std::move(planned.items)));
  spdlog::info("job {}: queued, {} items ({}){}", stored.id, stored.total_items,
               stored.plan.model_name,
               stored.submitted_by.empty() ? "" : ", by " + stored.submitted_by);
  Enqueue(stored.id);
  return stored;
}

absl::StatusOr<core::JobRecord> JobQueue::Cancel(int64_t job_id) {
  ASSIGN_OR_RETURN(auto job, store_.GetJob(job_id));
  if (core::IsTerminal(job.state)) {
    return absl::FailedPreconditionError("job " + std::to_string(job_id) + " already " +
                                         std::string(core::ToString(job.state)) +
                                         "; nothing to cancel");
  }
  // A job no worker holds (queued, or between its commit and its enqueue) ends here and
  // now; a worker that pops it later sees a terminal job and skips it.
  bool not_running = false;
  {
    std::lock_guard lock(mu_);
    not_running = !running_.count(job_id);
    if (not_running) {
      pending_.erase(std::remove(pending_.begin(), pending_.end(), job_id), pending_.end());
    } else {
      cancel_requested_.insert(job_id);
    }
  }
  if (not_running) {
    RETURN_IF_ERROR(store_.CancelPendingItems(job_id));
    RETURN_IF_ERROR(store_.SetJobState(job_id, core::JobState::kCancelled, "cancelled by request"));
    ASSIGN_OR_RETURN(job, store_.GetJob(job_id));
    events_.Publish(JobEvent{JobEvent::Kind::kJobFinished, job, std::nullopt});
    spdlog::info("job {}: cancelled before it started", job_id);
    return job;
  }
  spdlog::info("job {}: cancel requested; stops at the next item boundary", job_id);
  return store_.GetJob(job_id);
}

std::vector<core::DeviceInfo> JobQueue::Devices() const {
  std::vector<core::DeviceInfo> out;
  for (const auto* r : runners_) out.push_back(r->Info());
  return out;
}

void JobQueue::Enqueue(int64_t job_id) {
  {
    std::lock_guard lock(mu_);
    pending_.push_back(job_id);
  }
  cv_.notify_one();
}

bool JobQueue::PopJob(int64_t* job_id) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
  if (stopping_) return false;
  *job_id = pending_.front();
  pending_.pop_front();
  running_.insert(*job_id);
  return true;
}

Interrupt JobQueue::Poll(int64_t job_id) {
  std::lock_guard lock(mu_);
  // A cancel acknowledged before a shutdown must not be lost with it.
  if (cancel_requested_.count(job_id)) return Interrupt::kCancel;
  if (stopping_) return Interrupt::kStop;
  return Interrupt::kNone;
}

void JobQueue::WorkerLoop(device::Runner* runner) {
  JobExecutor executor(store_, events_, *runner, [this](int64_t id) { return Poll(id); });
  int64_t job_id = 0;
  while (PopJob(&job_id)) {
    executor.Run(job_id);
    std::lock_guard lock(mu_);
    running_.erase(job_id);
    cancel_requested_.erase(job_id);
  }
}

}  // namespace gemmprof::queue
