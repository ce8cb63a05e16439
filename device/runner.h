// The narrow interface between the queue and whatever measures GEMMs: the CUDA runner in
// kernels/, the host reference runner in host/, or a worker process hosting either
// (worker/remote_runner.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/group.h"
#include "core/job.h"
#include "core/result.h"
#include "core/status.h"

namespace gemmprof::device {

// One Runner per device. BeginJob and MeasureGroup come from the device's one queue
// worker; CanImplement may come from API threads at the same time (submission checks),
// and so must be safe against a concurrent MeasureGroup; Info, Supports and
// Availability likewise.
class Runner {
 public:
  virtual ~Runner() = default;

  // The device and what it can run. Stable for the runner's lifetime.
  virtual const core::DeviceInfo& Info() const = 0;

  // Whether `recipe` can run here; when not, `reason` says why ("mxfp8 needs sm_100+,
  // this is sm_90"). Items of unsupported recipes become status not_supported.
  virtual core::RecipeSupport Supports(core::Recipe recipe) const = 0;

  // Whether each of `items` can run here under `timing`: one answer per item, in order,
  // from one cheap question (no device work; a worker process answers it in one round
  // trip). An answer names the field, value and limit; its code says what the queue
  // does with it:
  //  * OK: the item can be measured here;
  //  * FailedPrecondition / Unimplemented: this recipe cannot run this item here (the
  //    recipe needs sm_100+; FP8 needs N % 16 == 0): the item ends not_supported;
  //  * InvalidArgument / ResourceExhausted: the item can never run here (malformed,
  //    buffers exceed device memory, the host runner's size limit): a submission holding
  //    it is refused, a queued one fails the item.
  // The returned status itself is not OK only where the question could not be asked
  // (Unavailable: the device or its worker is gone, or did not answer in time).
  virtual absl::StatusOr<std::vector<absl::Status>> CanImplement(
      const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const = 0;

  // Called once before a job's first item (time-based GPU warm-up).
  virtual absl::Status BeginJob(const core::TimingOptions& timing) = 0;

  // Measures the items of one group, or a batch of groups, together in interleaved
  // rounds (core/group.h, measure/rounds.h): identical GPU work once
  // (request.share_identical_work), every figure with its interval, stopping per
  // request.timing. Per-item refusals (each item is asked CanImplement here too, locally)
  // and failures come back in the outcomes; a non-OK return (device error, lost worker)
  // fails the whole group.
  virtual absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) = 0;

  // Whether the device can take work now: Unavailable, with the reason, once it cannot
  // (e.g. its worker process failed to start several times in a row); the queue then
  // gives its jobs to other devices. In-process runners are always available.
  virtual absl::Status Availability() const { return absl::OkStatus(); }
};

// `item` measured as a group of one (for tests, benchmarks and tools; the queue measures
// groups): its refusal or failure is the returned status.
absl::StatusOr<core::Measurement> MeasureOne(Runner& runner, const core::WorkItem& item,
                                             const core::TimingOptions& timing);

// CanImplement of one item: its answer, or why the question could not be asked.
absl::Status CanImplementOne(const Runner& runner, const core::WorkItem& item,
                             const core::TimingOptions& timing);

// The answers of a runner that checks items one at a time: `supports` first (a recipe
// the device lacks is FailedPrecondition with its reason), then the recipe's passes (a
// serving recipe's dgrad or wgrad: FailedPrecondition, core::PassUnsupportedReason), then
// `check` for the rest.
template <typename Check>
std::vector<absl::Status> CheckEach(const Runner& runner, const std::vector<core::WorkItem>& items,
                                    const Check& check) {
  std::vector<absl::Status> answers;
  answers.reserve(items.size());
  for (const core::WorkItem& item : items) {
    const core::RecipeSupport support = runner.Supports(item.recipe);
    if (!support.supported) {
      answers.push_back(absl::FailedPreconditionError(support.reason));
    } else if (std::string reason = core::PassUnsupportedReason(item.recipe, item.op.pass);
               !reason.empty()) {
      answers.push_back(absl::FailedPreconditionError(reason));
    } else {
      answers.push_back(check(item));
    }
  }
  return answers;
}

}  // namespace gemmprof::device
