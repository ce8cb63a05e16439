// What a runner has done of one MeasureGroup call, read by a watchdog in another thread
// (the worker's heartbeat, docs/measurement.md "Faults"): the steps completed (a member
// set up, a call of rounds, an energy window, a verification), the item (WorkItem id)
// whose measurement group is in flight, and the slowest step seen. Also how a cancel reaches the
// runner.
//
// The runner's thread writes, any thread reads: every field is atomic, and a null
// progress (a runner called without a watchdog) makes every call a no-op.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "core/status.h"

namespace gemmprof::core {

class MeasureProgress {
 public:
  // Called by Enter with the id of the item whose work begins (the first item of the
  // member); an error fails the call (the worker's fault hooks use it). May be empty.
  using EnterHook = std::function<absl::Status(int64_t item_id)>;

  MeasureProgress() = default;
  explicit MeasureProgress(EnterHook on_enter) : on_enter_(std::move(on_enter)) {}
  MeasureProgress(const MeasureProgress&) = delete;
  MeasureProgress& operator=(const MeasureProgress&) = delete;

  // The work of the item with id `item_id` begins (its member's set-up, or the rounds of
  // its group alone); 0: work of several groups at once (a batch's shared rounds).
  // Cancelled when a cancel was requested; the hook's error otherwise.
  absl::Status Enter(int64_t item_id);
  // One step done, which took `ms` (0 when not timed).
  void Step(double ms = 0);
  // Asks the runner to stop at its next step boundary (any thread).
  void RequestCancel() { cancel_.store(true, std::memory_order_relaxed); }
  bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }
  // Cancelled ("cancelled at a round boundary") once a cancel was requested, else OK.
  absl::Status CheckCancel() const;

  int64_t steps() const { return steps_.load(std::memory_order_relaxed); }
  int64_t item_id() const { return item_.load(std::memory_order_relaxed); }
  double slowest_step_ms() const { return slowest_ms_.load(std::memory_order_relaxed); }

 private:
  EnterHook on_enter_;
  std::atomic<int64_t> steps_{0};
  std::atomic<int64_t> item_{0};
  std::atomic<double> slowest_ms_{0};
  std::atomic<bool> cancel_{false};
};

// Null-safe forms for runners: `progress` may be null.
absl::Status EnterItem(MeasureProgress* progress, int64_t item_id);
void StepDone(MeasureProgress* progress, double ms = 0);
absl::Status CheckCancel(const MeasureProgress* progress);

}  // namespace gemmprof::core
