// One running job's measurement groups, handed out to the executors of every GPU that
// works on it: the job's own device (the lead) and idle devices of the same model that
// join (JobQueue). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/job.h"

namespace gemmprof::queue {

// The devices of a node that may work on a job: its model and the indexes the job
// allows (`submit --devices`; empty: all).
struct DeviceScope {
  std::string model;  // DeviceInfo backend + name + sm, see ModelOf
  std::vector<int32_t> allowed;

  // Whether device `index`, of `info`'s model, may work on the job.
  bool Admits(int index, const core::DeviceInfo& info) const;
};

// "cuda NVIDIA H200 sm90": the devices whose measurements are interchangeable (the cache
// key's device part without driver and library versions, which one node shares).
std::string ModelOf(const core::DeviceInfo& info);

// Orders `groups` (indexes into `items`) by their GPU work, largest first: one item's
// FLOPs times the group's item count, ties in their order. The devices of a spread job
// then finish close together, the last groups handed out being the short ones.
void OrderLargestFirst(const std::vector<core::ItemRecord>& items,
                       std::vector<std::vector<size_t>>& groups);

// Measurement groups timed in one batch's rounds: the default, and the most accepted.
inline constexpr size_t kDefaultBatchGroups = 6;
inline constexpr int kMaxBatchGroups = 64;

// Packs measurement groups (GroupKey groups, indexes into `items`) into batches of at
// most `batch_groups` groups, each timed in one set of interleaved rounds: max(`devices`,
// groups / batch_groups rounded up) batches, never more than there are groups. Each group, largest
// work first, joins the batch with the least work so far; batches come largest first, a batch's
// groups in that order. On a power-capped GPU the clock wanders on a scale of ~0.1 s: rounds
// spanning several GEMMs average it out in fewer rounds than one GEMM's short rounds do, and
// per-layer sums come from the same rounds.
std::vector<std::vector<size_t>> PackBatches(const std::vector<core::ItemRecord>& items,
                                             std::vector<std::vector<size_t>> groups, int devices,
                                             size_t batch_groups);

// The batches of a job (docs/measurement.md "Contexts"): its measurement groups split by
// measurement context (core::ContextOf: one training step; one M of a sweep or a shape
// list; "isolated", every group alone), each context packed by PackBatches, the batches
// of all contexts largest first. Groups of different contexts never share a batch, so a
// decode GEMM is not timed in the power state of a large one.
std::vector<std::vector<size_t>> PackJobBatches(const core::JobSpec& spec,
                                                const std::vector<core::ItemRecord>& items,
                                                const std::vector<std::vector<size_t>>& groups,
                                                int devices, size_t batch_groups);

class JobShare {
 public:
  JobShare(core::JobRecord job, std::vector<core::ItemRecord> items,
           std::vector<std::vector<size_t>> groups, DeviceScope scope);
  JobShare(const JobShare&) = delete;
  JobShare& operator=(const JobShare&) = delete;

  const core::JobRecord& job() const { return job_; }
  // Loaded once when the job started; items finished since are in IsFinished.
  const std::vector<core::ItemRecord>& items() const { return items_; }
  // The share hands out batches (PackBatches; "groups" below): item indexes, several
  // measurement groups each.
  const std::vector<size_t>& group(size_t g) const { return groups_[g]; }
  const DeviceScope& scope() const { return scope_; }

  // The next batch to measure (an index for group()), or nullopt when every batch is
  // handed out or the share is closed. The caller calls Done or Return for it.
  std::optional<size_t> Take();
  // A taken batch was recorded.
  void Done();
  // A taken batch was not run (its device went away): another device takes it.
  void Return(size_t g);
  // No batch is handed out any more (cancel, stop, a store failure); `why` non-empty
  // marks a failure the lead ends the job with. Idempotent; the first reason stays.
  void Close(const std::string& why = "");
  // Blocks until no taken batch is in flight.
  void WaitIdle();
  // Whether batches are left to hand out (a device may join).
  bool HasWork() const;
  std::string failure() const;

  // Items recorded by any device since the share began.
  void MarkFinished(int64_t item_id);
  bool IsFinished(int64_t item_id) const;
  // Whether nothing is still to run after items()[i] of `group` (indexes into items()):
  // no member after it in the group, no item outside the group. For the wording of
  // failures ("the job goes on with its next item").
  bool IsLastPending(const std::vector<size_t>& group, size_t i) const;

 private:
  const core::JobRecord job_;
  const std::vector<core::ItemRecord> items_;
  const std::vector<std::vector<size_t>> groups_;
  const DeviceScope scope_;

  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::vector<size_t> returned_;  // handed back, run first
  size_t next_ = 0;
  int in_flight_ = 0;
  bool closed_ = false;
  std::string failure_;
  std::set<int64_t> finished_ids_;
};

}  // namespace gemmprof::queue
