// The narrow interface between the queue and whatever measures GEMMs: the CUDA
// runner in kernels/ or the host reference runner in this folder.
#pragma once

#include <memory>
#include <string>

#include "core/group.h"
#include "core/job.h"
#include "core/result.h"
#include "core/status.h"

namespace gemmprof::device {

// One Runner per device. BeginJob and Run come from the device's one queue worker;
// CanImplement may come from API threads at the same time (submission checks), and so
// must be safe against a concurrent Run; Info, Supports and Availability likewise.
class Runner {
 public:
  virtual ~Runner() = default;

  // The device and what it can run. Stable for the runner's lifetime.
  virtual const core::DeviceInfo& Info() const = 0;

  // Whether `recipe` can run here; when not, `reason` says why ("mxfp8 needs sm_100+,
  // this is sm_90"). Items of unsupported recipes become status not_supported.
  virtual core::RecipeSupport Supports(core::Recipe recipe) const = 0;

  // Cheap check, no device work, naming the field, value and limit. Used at submission
  // time and before each item. The code says what the queue does with a refusal:
  //  * InvalidArgument / ResourceExhausted: the item can never run here (malformed,
  //    buffers exceed device memory, host runner size limit): the submission is refused.
  //  * FailedPrecondition / Unimplemented: this recipe cannot run this shape here (e.g.
  //    FP8 needs N % 16 == 0; grouped block scaling): the job is accepted and the item
  //    ends not_supported with the message, like a recipe the device lacks.
  virtual absl::Status CanImplement(const core::WorkItem& item,
                                    const core::TimingOptions& timing) const = 0;

  // Called once before a job's first item (time-based GPU warm-up).
  virtual absl::Status BeginJob(const core::TimingOptions& timing) = 0;

  // Measures one item (warm-up + timed iterations, verification, telemetry).
  virtual absl::StatusOr<core::Measurement> Run(const core::WorkItem& item,
                                                const core::TimingOptions& timing) = 0;

  // Measures the items of one group, or a batch of groups, together in interleaved
  // rounds (core/group.h):
  // identical GPU work once (request.share_identical_work), every figure with its
  // interval, stopping per request.timing. Per-item refusals and failures come back in
  // the outcomes; a non-OK return (device error, lost worker) fails the whole group.
  // The default measures each item alone with Run (no rounds, no sharing).
  virtual absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) {
    core::GroupResult result;
    for (const core::WorkItem& item : request.items) {
      core::ItemOutcome& out = result.outcomes.emplace_back();
      out.item_id = item.id;
      absl::StatusOr<core::Measurement> m = Run(item, request.timing);
      if (m.ok()) {
        out.measurement = *std::move(m);
      } else if (absl::IsFailedPrecondition(m.status()) || absl::IsUnimplemented(m.status())) {
        out.status = m.status();
      } else {
        return m.status();
      }
    }
    return result;
  }

  // Whether the device can take work now: Unavailable, with the reason, once it cannot
  // (e.g. its worker process failed to start several times in a row); the queue then
  // gives its jobs to other devices. In-process runners are always available.
  virtual absl::Status Availability() const { return absl::OkStatus(); }

 protected:
  // Run as a group of one, for runners whose MeasureGroup is their one measuring path:
  // the item's refusal or failure is the returned status.
  absl::StatusOr<core::Measurement> MeasureAlone(const core::WorkItem& item,
                                                 const core::TimingOptions& timing) {
    core::GroupRequest request;
    request.group_uid = Info().uuid + "/item" + std::to_string(item.id);
    request.items = {item};
    request.timing = timing;
    ASSIGN_OR_RETURN(core::GroupResult result, MeasureGroup(request));
    if (result.outcomes.size() != 1) {
      return absl::InternalError("a group of one item came back with " +
                                 std::to_string(result.outcomes.size()) + " outcomes");
    }
    core::ItemOutcome& outcome = result.outcomes.front();
    RETURN_IF_ERROR(outcome.status);
    return *std::move(outcome.measurement);
  }
};

}  // namespace gemmprof::device
