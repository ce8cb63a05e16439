#include "server/queue/job_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/derive.h"
#include "server/queue/job_executor.h"
#include "server/queue/unix_clock.h"

namespace gemmprof::queue {
bool IsNotSupportedRefusal(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition ||
         status.code() == absl::StatusCode::kUnimplemented;
}

JobQueue::JobQueue(storage::ResultStore& store, std::vector<device::Runner*> runners,
                   QueueLimits limits)
    : store_(store),
      runners_(std::move(runners)),
      limits_(limits),
      busy_(runners_.size(), 0),
      retries_(runners_.size(), 0),
      claim_now_(runners_.size(), 0),
      lease_lost_(runners_.size(), 0) {}

JobQueue::~JobQueue() { Stop(); }

absl::Status JobQueue::Start() {
  if (runners_.empty()) return absl::FailedPreconditionError("no device runner configured");
  ASSIGN_OR_RETURN(auto unfinished, store_.RecoverUnfinished());
  std::map<int64_t, std::vector<int32_t>> pinned;
  std::vector<int64_t> resumable;
  for (int64_t id : unfinished) {
    // A job that cannot be read runs unpinned; its executor says why it fails.
    auto job = store_.GetJob(id);
    // A cluster job's batches wait in the cluster queue, whoever accepted it.
    if (job.ok() && EffectivePlacement(job->spec.where).Clustered()) continue;
    if (job.ok() && !job->spec.devices.empty()) {
      // Pinned to a GPU this node no longer has (restarted with fewer): it would wait forever.
      if (absl::Status gone = CheckDevices(job->spec.devices); !gone.ok()) {
        const std::string why = absl::StrCat("cannot resume: ", gone.message());
        spdlog::warn("job {}: {}", id, why);
        RETURN_IF_ERROR(store_.CancelPendingItems(id));
        RETURN_IF_ERROR(store_.SetJobState(id, core::JobState::kFailed, why));
        continue;
      }
      pinned[id] = job->spec.devices;
    }
    resumable.push_back(id);
  }
  unfinished = std::move(resumable);
  {
    std::lock_guard lock(mu_);
    if (started_) return absl::FailedPreconditionError("job queue already started");
    started_ = true;
    for (int64_t id : unfinished) pending_.push_back(id);
    pinned_ = std::move(pinned);
  }
  if (!unfinished.empty()) spdlog::info("resuming {} unfinished job(s)", unfinished.size());
  for (size_t i = 0; i < runners_.size(); ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
  if (store_.HasClusterQueue()) follower_ = std::thread([this] { FollowLoop(); });
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
  if (follower_.joinable()) follower_.join();
}

absl::StatusOr<PlannedJob> JobQueue::Plan(const core::JobSpec& spec) const {
  PlannedJob planned;
  // DerivePlan validates the spec first.
  ASSIGN_OR_RETURN(planned.plan, core::DerivePlan(spec));
  planned.recipes = core::ReportedRecipes(spec);
  planned.modes = core::EffectiveModes(spec);
  planned.items = core::ExpandItems(planned.plan, core::EffectiveRecipes(spec), planned.modes,
                                    spec.variants, spec.timing.fast_accum);
  if (static_cast<int64_t>(planned.items.size()) > limits_.max_items_per_job) {
    return absl::ResourceExhaustedError(
        "job: " + std::to_string(planned.items.size()) + " items exceed the limit of " +
        std::to_string(limits_.max_items_per_job) +
        " per job (gemmprofd --max-items-per-job); submit fewer shapes, recipes or modes");
  }
  RETURN_IF_ERROR(CheckDevices(spec.devices));
  const core::Placement where = EffectivePlacement(spec.where);
  if (!where.Clustered()) {
    if (!spec.campaign.empty()) {
      return absl::FailedPreconditionError(
          "campaign: a campaign's jobs run through the cluster queue, which needs a store "
          "several daemons share (gemmprofd --db postgresql://...)");
    }
    RETURN_IF_ERROR(CheckFits(spec, &planned));
    return planned;
  }
  if (!spec.devices.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "devices: names GPUs of this node, but where ", core::ToString(where),
        " hands the job to the cluster queue; leave out devices, or give where this-node"));
  }
  RETURN_IF_ERROR(ResolveTarget(where, &planned));
  // A device of the target here answers the fit check now; elsewhere the claimer does.
  for (const device::Runner* runner : runners_) {
    if (runner->Info().name == planned.target->model && runner->Availability().ok() &&
        (planned.target->node.empty() || planned.target->node == limits_.node)) {
      RETURN_IF_ERROR(CheckFits(spec, &planned));
      break;
    }
  }
  return planned;
}

absl::Status JobQueue::CheckDevices(const std::vector<int32_t>& devices) const {
  const int32_t count = static_cast<int32_t>(runners_.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string field = absl::StrCat("devices[", i, "]");
    if (devices[i] < 0 || devices[i] >= count) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", devices[i], " is not a device of this node (it has ", count,
                       count == 1 ? " device: 0)" : absl::StrCat(" devices: 0..", count - 1, ")")));
    }
    for (size_t j = 0; j < i; ++j) {
      if (devices[j] == devices[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": device ", devices[i], " is listed twice"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status JobQueue::CheckFits(const core::JobSpec& spec, PlannedJob* planned) const {
  const std::vector<core::WorkItem>& items = planned->items;
  const core::TimingOptions& timing = spec.timing;
  std::vector<std::string> unavailable;
  for (size_t d = 0; d < runners_.size(); ++d) {
    const device::Runner* runner = runners_[d];
    if (!spec.devices.empty() && std::find(spec.devices.begin(), spec.devices.end(),
                                           static_cast<int32_t>(d)) == spec.devices.end()) {
      continue;
    }
    absl::Status fits = runner->Availability();
    // One question for every item. Unsupported recipes and shapes a recipe cannot take
    // become not_supported items; everything else must fit here.
    absl::StatusOr<std::vector<absl::Status>> answers = std::vector<absl::Status>{};
    if (fits.ok()) {
      answers = runner->CanImplement(items, timing);
      fits = answers.status();
      if (fits.ok() && answers->size() != items.size()) {
        fits = absl::InternalError(absl::StrCat("device ", d, " answered ", answers->size(), " of ",
                                                items.size(), " items of a fit check"));
      }
      for (size_t i = 0; fits.ok() && i < items.size(); ++i) {
        if (!(*answers)[i].ok() && !IsNotSupportedRefusal((*answers)[i])) fits = (*answers)[i];
      }
    }
    if (fits.ok()) {
      planned->device = runner->Info();
      planned->device_index = d;
      planned->fits = *std::move(answers);
      return absl::OkStatus();
    }
    if (!absl::IsUnavailable(fits)) return fits;
    unavailable.emplace_back(fits.message());
  }
  return absl::UnavailableError(
      absl::StrCat("no device is available to run jobs: ", absl::StrJoin(unavailable, "; ")));
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
  if (planned.target.has_value()) return SubmitClustered(spec, submitted_by, std::move(planned));
  core::JobRecord job = NewJobRecord(spec, submitted_by, planned);
  // Persisted before the id is returned: an acknowledged job survives a crash.
  ASSIGN_OR_RETURN(auto stored, store_.CreateJob(std::move(job), std::move(planned.items)));
  {
    std::lock_guard lock(mu_);
    submit_fits_[stored.id] = {planned.device_index, std::move(planned.fits)};
  }
  spdlog::info("job {}: queued, {} items ({}){}", stored.id, stored.total_items,
               stored.plan.model_name,
               stored.submitted_by.empty() ? "" : ", by " + stored.submitted_by);
  Enqueue(stored.id, stored.spec.devices);
  return stored;
}

core::JobRecord JobQueue::NewJobRecord(const core::JobSpec& spec, const std::string& submitted_by,
                                       const PlannedJob& planned) {
  core::JobRecord job;
  job.submitted_by = submitted_by;
  job.spec = spec;
  job.plan = planned.plan;
  job.state = core::JobState::kQueued;
  job.created_ms = UnixNowMs();
  job.total_items = static_cast<int32_t>(planned.items.size());
  job.device = planned.device;
  return job;
}

absl::Status JobQueue::CheckOwnJob(const core::JobRecord& job, const char* what) const {
  // Any daemon of the store follows and cancels a cluster job: its state is the store's.
  if (job.node.empty() || limits_.node.empty() || job.node == limits_.node ||
      EffectivePlacement(job.spec.where).Clustered()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat("job ", job.id, " runs on node ", job.node, ", not on this one (", limits_.node,
                   "); ", what, " it through the gemmprofd of node ", job.node));
}

absl::StatusOr<core::JobRecord> JobQueue::Cancel(int64_t job_id) {
  ASSIGN_OR_RETURN(auto job, store_.GetJob(job_id));
  RETURN_IF_ERROR(CheckOwnJob(job, "cancel"));
  if (core::IsTerminal(job.state)) {
    return absl::FailedPreconditionError("job " + std::to_string(job_id) + " already " +
                                         std::string(core::ToString(job.state)) +
                                         "; nothing to cancel");
  }
  if (EffectivePlacement(job.spec.where).Clustered()) return CancelClustered(job);
  // A job no worker holds (queued, or between its commit and its enqueue) ends here and
  // now; a worker that pops it later sees a terminal job and skips it.
  bool not_running = false;
  {
    std::lock_guard lock(mu_);
    not_running = !running_.count(job_id);
    if (not_running) {
      pending_.erase(std::remove(pending_.begin(), pending_.end(), job_id), pending_.end());
      pinned_.erase(job_id);
      submit_fits_.erase(job_id);
    } else {
      cancel_requested_.insert(job_id);
    }
  }
  if (not_running) return EndUnstarted(job_id);
  spdlog::info("job {}: cancel requested; its measurement in flight stops at the next round",
               job_id);
  return store_.GetJob(job_id);
}

absl::StatusOr<core::JobRecord> JobQueue::EndUnstarted(int64_t job_id) {
  RETURN_IF_ERROR(store_.CancelPendingItems(job_id));
  RETURN_IF_ERROR(store_.SetJobState(job_id, core::JobState::kCancelled, "cancelled by request"));
  ASSIGN_OR_RETURN(auto job, store_.GetJob(job_id));
  events_.Publish(JobEvent{JobEvent::Kind::kJobFinished, job, std::nullopt});
  spdlog::info("job {}: cancelled while no device ran it", job_id);
  return job;
}

std::optional<std::vector<absl::Status>> JobQueue::TakeSubmitFits(int64_t job_id, size_t index) {
  std::lock_guard lock(mu_);
  auto it = submit_fits_.find(job_id);
  if (it == submit_fits_.end() || it->second.first != index) return std::nullopt;
  std::vector<absl::Status> fits = std::move(it->second.second);
  submit_fits_.erase(it);
  return fits;
}

QueueCounts JobQueue::Counts() const {
  std::lock_guard lock(mu_);
  return {static_cast<int64_t>(pending_.size()), static_cast<int64_t>(running_.size())};
}

std::vector<core::DeviceInfo> JobQueue::Devices() const {
  std::vector<core::DeviceInfo> out;
  for (const auto* r : runners_) {
    core::DeviceInfo info = r->Info();
    if (absl::Status a = r->Availability(); !a.ok()) {
      info.unavailable = true;
      info.unavailable_reason = std::string(a.message());
    }
    out.push_back(std::move(info));
  }
  return out;
}

void JobQueue::Enqueue(int64_t job_id, std::vector<int32_t> devices) {
  {
    std::lock_guard lock(mu_);
    pending_.push_back(job_id);
    if (!devices.empty()) pinned_[job_id] = std::move(devices);
  }
  cv_.notify_all();
}

bool JobQueue::FindWorkLocked(size_t index, const std::set<int64_t>& declined, Work* work) {
  const device::Runner& runner = *runners_[index];
  // Running jobs first, oldest first: a submitted job finishes sooner on more devices.
  for (const auto& [id, share] : shares_) {
    if (declined.contains(id)) continue;
    if (share->HasWork() && share->scope().Admits(static_cast<int>(index), runner.Info())) {
      work->help = share;
      busy_[index] = 1;
      return true;
    }
  }
  // A draining daemon finishes what it holds and takes nothing new.
  if (draining_) return false;
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    auto pin = pinned_.find(*it);
    if (pin != pinned_.end() && std::find(pin->second.begin(), pin->second.end(),
                                          static_cast<int32_t>(index)) == pin->second.end()) {
      continue;
    }
    work->lead = *it;
    pending_.erase(it);
    running_.insert(work->lead);
    busy_[index] = 1;
    return true;
  }
  return false;
}

bool JobQueue::NextWork(size_t index, std::set<int64_t>& declined, Work* work) {
  std::unique_lock lock(mu_);
  // A job that is no longer shared may be shared again later (after it moved devices).
  std::erase_if(declined, [this](int64_t id) { return !shares_.contains(id); });
  if (!store_.HasClusterQueue()) {
    cv_.wait(lock, [&] { return stopping_ || FindWorkLocked(index, declined, work); });
    return !stopping_;
  }
  // With a cluster queue: this node's work first; else a look for a cluster batch when
  // one may have been queued (claim_now_) and every claim_poll_ms.
  cv_.wait_for(lock, std::chrono::milliseconds(limits_.claim_poll_ms), [&] {
    return stopping_ || FindWorkLocked(index, declined, work) || claim_now_[index];
  });
  if (stopping_) return false;
  if (work->lead == 0 && work->help == nullptr) {
    claim_now_[index] = 0;
    work->claim = !draining_;
  }
  return true;
}

int32_t JobQueue::BusyDevices() const {
  std::lock_guard lock(mu_);
  return static_cast<int32_t>(std::count(busy_.begin(), busy_.end(), 1));
}

void JobQueue::SetBusy(size_t index, bool busy) {
  std::lock_guard lock(mu_);
  busy_[index] = busy ? 1 : 0;
}

bool JobQueue::AwaitAvailable(const device::Runner& runner) {
  // How often an unavailable device is looked at again.
  constexpr auto kRecheck = std::chrono::milliseconds(500);
  bool said = false;
  for (;;) {
    if (runner.Availability().ok()) {
      if (said) spdlog::info("{} takes jobs again", runner.Info().name);
      return true;
    }
    said = true;
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, kRecheck, [this] { return stopping_; })) return false;
  }
}

int64_t JobQueue::Retries(size_t device) const {
  std::lock_guard lock(mu_);
  return device < retries_.size() ? retries_[device] : 0;
}

Interrupt JobQueue::Poll(size_t index, int64_t job_id) {
  std::lock_guard lock(mu_);
  // A cluster batch whose lease this node lost is another node's now: stop at once.
  if (lease_lost_[index]) return Interrupt::kStop;
  // A cancel acknowledged before a shutdown must not be lost with it.
  if (cancel_requested_.count(job_id)) return Interrupt::kCancel;
  if (stopping_) return Interrupt::kStop;
  return Interrupt::kNone;
}

void JobQueue::WorkerLoop(size_t index) {
  device::Runner* runner = runners_[index];
  ShareHooks hooks;
  hooks.publish = [this](std::shared_ptr<JobShare> share) {
    {
      std::lock_guard lock(mu_);
      shares_[share->job().id] = std::move(share);
    }
    cv_.notify_all();
  };
  hooks.withdraw = [this](int64_t job_id) {
    std::lock_guard lock(mu_);
    shares_.erase(job_id);
  };
  hooks.batch_groups = limits_.batch_groups;
  hooks.submit_fits = [this, index](int64_t job_id) { return TakeSubmitFits(job_id, index); };
  hooks.retried = [this, index] {
    std::lock_guard lock(mu_);
    ++retries_[index];
  };
  // The lead and the idle devices that may help it (busy ones would only join late).
  hooks.devices = [this, index](const DeviceScope& scope) {
    std::vector<char> busy;
    {
      std::lock_guard lock(mu_);
      busy = busy_;
    }
    int count = 1;
    for (size_t d = 0; d < runners_.size(); ++d) {
      const device::Runner& r = *runners_[d];
      if (d != index && !busy[d] && scope.Admits(static_cast<int>(d), r.Info()) &&
          r.Availability().ok()) {
        ++count;
      }
    }
    return count;
  };
  JobExecutor executor(
      store_, events_, *runner, [this, index](int64_t id) { return Poll(index, id); },
      std::move(hooks));
  // Jobs this device helped with: it helps each job once (it leaves when no group is left
  // to take, or when its warm-up fails, and must not come back to spin).
  std::set<int64_t> helped;
  // A device that became unavailable takes no work (the others take its share) until its
  // runner brings it back (a later worker start that succeeds).
  while (AwaitAvailable(*runner)) {
    Work work;
    if (!NextWork(index, helped, &work)) break;
    if (work.claim) {
      // A batch measured: look for the next one at once.
      if (RunClaimed(index, executor)) {
        std::lock_guard lock(mu_);
        claim_now_[index] = 1;
      }
      continue;
    }
    if (work.lead == 0 && work.help == nullptr) continue;
    if (work.help != nullptr) {
      helped.insert(work.help->job().id);
      executor.Help(*work.help);
      SetBusy(index, false);
      continue;
    }
    const int64_t job_id = work.lead;
    const RunEnd end = executor.Run(job_id);
    SetBusy(index, false);
    if (end == RunEnd::kDeviceLost) {
      GiveBack(job_id);
      continue;
    }
    std::lock_guard lock(mu_);
    running_.erase(job_id);
    cancel_requested_.erase(job_id);
    pinned_.erase(job_id);
    submit_fits_.erase(job_id);
  }
}

void JobQueue::GiveBack(int64_t job_id) {
  bool cancelled = false;
  {
    std::lock_guard lock(mu_);
    running_.erase(job_id);
    cancelled = cancel_requested_.erase(job_id) > 0;
    if (cancelled) pinned_.erase(job_id);
    // First in line: it was running already.
    if (!cancelled && !stopping_) pending_.push_front(job_id);
  }
  if (cancelled) {
    if (auto s = EndUnstarted(job_id); !s.ok()) {
      spdlog::error("job {}: cancel: {}", job_id, s.status().ToString());
    }
    return;
  }
  spdlog::warn("job {}: its device became unavailable; it waits for another device", job_id);
  cv_.notify_all();
}

}  // namespace gemmprof::queue
