// JobQueue and the cluster queue (docs/cluster.md): a job whose `where` is not this-node
// is stored with its batches in the shared store; every daemon's idle devices claim
// batches of their model under a lease (ResultStore::ClaimClusterBatch) and measure
// them; the daemon that finishes a job's last batch ends the job. Watchers of such a
// job, on any daemon, follow its progress from the store (FollowLoop).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/group.h"
#include "server/queue/job_queue.h"
#include "server/queue/unix_clock.h"

namespace gemmprof::queue {
namespace {

// Claims of one batch that failed (warm-up, store) before its job fails.
constexpr int32_t kMaxBatchAttempts = 3;
// How often watched cluster jobs are read from the store.
constexpr auto kFollowPeriod = std::chrono::milliseconds(500);

// Devices of `model` the daemon can run work on.
int32_t UsableDevices(const core::DaemonRecord& d, const std::string& model) {
  for (const core::DaemonDeviceModel& m : d.models) {
    if (m.name == model) return std::max(0, m.count - m.unavailable);
  }
  return 0;
}

// "NVIDIA H200 (2 daemons, 3 devices), host-model-x (1 daemon, 1 device)".
std::string DescribeModels(const std::vector<core::DaemonRecord>& serving) {
  std::map<std::string, std::pair<int, int>> models;  // name -> daemons, devices
  for (const core::DaemonRecord& d : serving) {
    for (const core::DaemonDeviceModel& m : d.models) {
      models[m.name].first += 1;
      models[m.name].second += m.count;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, counts] : models) {
    parts.push_back(absl::StrCat(name, " (", counts.first,
                                 counts.first == 1 ? " daemon, " : " daemons, ", counts.second,
                                 counts.second == 1 ? " device)" : " devices)"));
  }
  return parts.empty() ? "no serving daemon" : absl::StrJoin(parts, ", ");
}

}  // namespace

core::Placement JobQueue::EffectivePlacement(const core::Placement& where) const {
  if (where.kind != core::PlacementKind::kDefault) return where;
  core::Placement resolved;
  resolved.kind =
      store_.HasClusterQueue() ? core::PlacementKind::kAny : core::PlacementKind::kThisNode;
  return resolved;
}

absl::Status JobQueue::ResolveTarget(const core::Placement& where, PlannedJob* planned) const {
  if (!store_.HasClusterQueue()) {
    return absl::FailedPreconditionError(
        absl::StrCat("where: ", core::ToString(where),
                     " needs the cluster queue of a store several daemons share (gemmprofd --db "
                     "postgresql://...); this daemon's store is its own: give where this-node"));
  }
  ASSIGN_OR_RETURN(std::vector<core::DaemonRecord> daemons, store_.ListDaemons());
  const int64_t now = UnixNowMs();
  std::vector<core::DaemonRecord> serving;
  for (core::DaemonRecord& d : daemons) {
    if (core::DaemonStateOf(d, now) == core::DaemonState::kServing) serving.push_back(std::move(d));
  }
  storage::ClusterTarget target;
  std::string backend;
  switch (where.kind) {
    case core::PlacementKind::kAny: {
      // The job's device model is this daemon's (one job, one model: its results compare).
      for (const device::Runner* runner : runners_) {
        if (runner->Availability().ok()) {
          target.model = runner->Info().name;
          backend = runner->Info().backend;
          break;
        }
      }
      if (target.model.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "where: any means this daemon's device model, and no device of this daemon is "
            "available; name one with model:NAME (the cluster has ",
            DescribeModels(serving), ")"));
      }
      break;
    }
    case core::PlacementKind::kModel: {
      for (const core::DaemonRecord& d : serving) {
        for (const core::DaemonDeviceModel& m : d.models) {
          if (target.model.empty() && absl::EqualsIgnoreCase(m.name, where.name)) {
            target.model = m.name;
            backend = d.backend;
          }
        }
      }
      if (target.model.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("where: model:", where.name,
                         ": no serving daemon of the cluster has this device model; the cluster "
                         "has ",
                         DescribeModels(serving)));
      }
      break;
    }
    case core::PlacementKind::kNode: {
      std::vector<std::string> nodes;
      for (const core::DaemonRecord& d : serving) {
        nodes.push_back(d.node);
        if (d.node == where.name && !d.models.empty()) {
          target.model = d.models.front().name;
          target.node = d.node;
          backend = d.backend;
        }
      }
      if (target.model.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "where: node:", where.name, ": no serving daemon has this node name; serving nodes: ",
            nodes.empty() ? "none" : absl::StrJoin(nodes, ", ")));
      }
      break;
    }
    default:
      return absl::InternalError("ResolveTarget: not a cluster placement");
  }
  int devices = 0;
  for (const core::DaemonRecord& d : serving) {
    if (target.node.empty() || d.node == target.node) devices += UsableDevices(d, target.model);
  }
  planned->cluster_devices = std::max(devices, 1);
  planned->device = core::DeviceInfo{};
  planned->device.name = target.model;
  planned->device.backend = backend;
  planned->target = std::move(target);
  return absl::OkStatus();
}

absl::StatusOr<core::JobRecord> JobQueue::SubmitClustered(const core::JobSpec& spec,
                                                          const std::string& submitted_by,
                                                          PlannedJob planned) {
  std::vector<core::ItemRecord> records(planned.items.size());
  for (size_t i = 0; i < planned.items.size(); ++i) {
    records[i].item = planned.items[i];
    records[i].item.seq = static_cast<int32_t>(i);
  }
  const std::vector<std::vector<size_t>> packed =
      PackJobBatches(spec, records, core::GroupItems(planned.items), planned.cluster_devices,
                     limits_.batch_groups);
  std::vector<std::vector<int32_t>> batches;
  for (const std::vector<size_t>& b : packed) batches.emplace_back(b.begin(), b.end());
  core::JobRecord job = NewJobRecord(spec, submitted_by, planned);
  ASSIGN_OR_RETURN(
      core::JobRecord stored,
      store_.CreateClusterJob(std::move(job), std::move(planned.items), batches, *planned.target));
  spdlog::info("job {}: queued in the cluster queue, {} items in {} batches for {}{}{}", stored.id,
               stored.total_items, batches.size(), planned.target->model,
               planned.target->node.empty() ? "" : " on node " + planned.target->node,
               stored.submitted_by.empty() ? "" : ", by " + stored.submitted_by);
  {
    std::lock_guard lock(mu_);
    std::fill(claim_now_.begin(), claim_now_.end(), 1);
  }
  cv_.notify_all();
  return stored;
}

absl::StatusOr<core::JobRecord> JobQueue::CancelClustered(const core::JobRecord& job) {
  RETURN_IF_ERROR(store_.CancelClusterBatches(job.id));
  RETURN_IF_ERROR(store_.CancelPendingItems(job.id));
  RETURN_IF_ERROR(store_.SetJobState(job.id, core::JobState::kCancelled, "cancelled by request"));
  ASSIGN_OR_RETURN(core::JobRecord ended, store_.GetJob(job.id));
  events_.Publish(JobEvent{JobEvent::Kind::kJobFinished, ended, std::nullopt});
  spdlog::info("job {}: cancelled; the nodes measuring its batches stop within a lease renewal",
               job.id);
  return ended;
}

bool JobQueue::RunClaimed(size_t index, JobExecutor& executor) {
  const device::Runner& runner = *runners_[index];
  absl::StatusOr<std::optional<storage::ClusterBatch>> claim =
      store_.ClaimClusterBatch(runner.Info().name, limits_.lease_ms);
  if (!claim.ok()) {
    spdlog::debug("device {}: no claim from the cluster queue: {}", index,
                  claim.status().ToString());
    return false;
  }
  if (!claim->has_value()) return false;
  const storage::ClusterBatch batch = **claim;
  {
    std::lock_guard lock(mu_);
    busy_[index] = 1;
    lease_lost_[index] = 0;
    ++cluster_.claimed;
    if (!batch.previous_owner.empty()) ++cluster_.rerun;
  }
  // The job's device as the last claimer has it (the report's context).
  if (absl::Status s = store_.SetJobDevice(batch.job_id, runner.Info()); !s.ok()) {
    spdlog::warn("job {}: cannot record its device: {}", batch.job_id, s.ToString());
  }
  spdlog::info("job {}: device {} claimed batch {} ({} items){}", batch.job_id, index, batch.id,
               batch.item_ids.size(),
               batch.previous_owner.empty()
                   ? ""
                   : absl::StrCat(", again: the lease of node ", batch.previous_owner, " lapsed"));
  // The lease is renewed three times per lease period while the batch is measured.
  std::mutex renew_mu;
  std::condition_variable renew_cv;
  bool measured = false;
  std::thread renewer([&] {
    std::unique_lock lock(renew_mu);
    const auto period = std::chrono::milliseconds(std::max<int64_t>(limits_.lease_ms / 3, 50));
    while (!renew_cv.wait_for(lock, period, [&] { return measured; })) {
      lock.unlock();
      const absl::Status s = store_.RenewClusterLease(batch.id, limits_.lease_ms);
      lock.lock();
      if (absl::IsFailedPrecondition(s) || absl::IsNotFound(s)) {
        spdlog::warn("job {}: {}; its measurement here stops", batch.job_id,
                     std::string(s.message()));
        std::lock_guard queue_lock(mu_);
        lease_lost_[index] = 1;
        return;
      }
      if (!s.ok())
        spdlog::warn("job {}: lease of batch {} not renewed: {}", batch.job_id, batch.id,
                     s.ToString());
    }
  });
  std::string why;
  const JobExecutor::BatchEnd end = executor.RunBatch(batch.job_id, batch.item_ids, &why);
  {
    std::lock_guard lock(renew_mu);
    measured = true;
  }
  renew_cv.notify_all();
  renewer.join();
  bool lost = false;
  {
    std::lock_guard lock(mu_);
    lost = lease_lost_[index] != 0;
    lease_lost_[index] = 0;
    if (lost) ++cluster_.lost;
  }
  bool finished = false;
  if (!lost && end == JobExecutor::BatchEnd::kDone) {
    const absl::StatusOr<bool> last = executor.FinishBatch(batch.job_id, batch.id);
    if (last.ok()) {
      finished = true;
      {
        std::lock_guard lock(mu_);
        ++cluster_.finished;
      }
      if (*last) executor.Conclude(batch.job_id);
    } else {
      // Its lease lapses and another node finds every item recorded.
      spdlog::warn("job {}: batch {} measured but not marked done: {}", batch.job_id, batch.id,
                   last.status().ToString());
    }
  } else if (!lost) {
    if (absl::Status s = store_.ReleaseClusterBatch(batch.id); !s.ok()) {
      spdlog::warn("job {}: batch {} not given back ({}); its lease lapses instead", batch.job_id,
                   batch.id, s.ToString());
    }
    {
      std::lock_guard lock(mu_);
      ++cluster_.released;
    }
    if (end == JobExecutor::BatchEnd::kFailed) {
      spdlog::warn("job {}: batch {} (claim {} of {}) failed here: {}", batch.job_id, batch.id,
                   batch.attempts, kMaxBatchAttempts, why);
      if (batch.attempts >= kMaxBatchAttempts) {
        const std::string error = absl::StrCat("batch ", batch.id, " failed on ", batch.attempts,
                                               " claims; the last: ", why);
        (void)store_.CancelClusterBatches(batch.job_id);
        if (absl::Status s = store_.SetJobState(batch.job_id, core::JobState::kFailed, error);
            !s.ok()) {
          spdlog::error("job {}: cannot fail it: {}", batch.job_id, s.ToString());
        }
      }
    }
  }
  SetBusy(index, false);
  return finished;
}

void JobQueue::FollowLoop() {
  struct Seen {
    std::map<int64_t, core::ItemStatus> items;
    bool ended = false;
  };
  std::map<int64_t, Seen> seen;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, kFollowPeriod, [this] { return stopping_; })) return;
    }
    const std::vector<int64_t> watched = events_.WatchedJobs();
    std::erase_if(seen, [&](const auto& entry) {
      return std::find(watched.begin(), watched.end(), entry.first) == watched.end();
    });
    for (int64_t id : watched) {
      absl::StatusOr<core::JobRecord> job = store_.GetJob(id);
      if (!job.ok() || !EffectivePlacement(job->spec.where).Clustered()) continue;
      auto [it, first] = seen.try_emplace(id);
      Seen& s = it->second;
      if (s.ended) continue;
      absl::StatusOr<std::vector<core::ItemRecord>> items = store_.GetItems(id);
      if (!items.ok()) continue;
      for (const core::ItemRecord& item : *items) {
        auto [known, added] = s.items.try_emplace(item.item.id, item.status);
        // The watch's snapshot told what was there at its start.
        if (first || (!added && known->second == item.status)) continue;
        known->second = item.status;
        JobEvent::Kind kind = JobEvent::Kind::kItemStarted;
        if (core::IsFinal(item.status)) {
          kind = item.status == core::ItemStatus::kFailed ? JobEvent::Kind::kItemFailed
                                                          : JobEvent::Kind::kItemFinished;
        } else if (item.status != core::ItemStatus::kRunning) {
          continue;
        }
        events_.Publish(JobEvent{kind, *job, item}, JobEventBus::Audience::kWatchers);
      }
      if (core::IsTerminal(job->state)) {
        s.ended = true;
        events_.Publish(JobEvent{JobEvent::Kind::kJobFinished, *job, std::nullopt},
                        JobEventBus::Audience::kWatchers);
      }
    }
  }
}

ClusterStats JobQueue::Cluster() const {
  ClusterStats stats;
  {
    std::lock_guard lock(mu_);
    stats = cluster_;
  }
  if (store_.HasClusterQueue()) {
    absl::StatusOr<storage::ClusterQueueCounts> counts = store_.CountClusterBatches();
    if (counts.ok()) stats.queue = *counts;
  }
  return stats;
}

void JobQueue::RequestDrain() {
  {
    std::lock_guard lock(mu_);
    if (draining_) return;
    draining_ = true;
  }
  spdlog::info("draining: no new work is taken; what the devices hold runs to its end");
  cv_.notify_all();
}

bool JobQueue::Drained() const {
  std::lock_guard lock(mu_);
  return draining_ && running_.empty() && std::count(busy_.begin(), busy_.end(), 1) == 0;
}

}  // namespace gemmprof::queue
