// Kernel-only timing (`--timing kernels`) of the event rounds' own samples. CUPTI
// collects from before the group's graphs are captured (so every kernel of them is
// recorded) until the rounds end; each timed launch of an isolated or quantization unit
// is tagged, and its kernel sample is the time the device ran at least one of the kernels
// that one launch ran (the sum of their durations, except where a programmatic dependent
// launch overlaps the kernel before it: measure::BusyMs). Kernel and event samples are then
// the same launches: events = kernels + launch and graph gaps, paired sample by sample.
// Internal to kernels/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/runner/member.h"
#include "kernels/timing/cupti_tracer.h"
#include "kernels/timing/iteration_timer.h"

namespace gemmprof::kernels {

class KernelSampler : public LaunchTagger {
 public:
  // What a visit of the rounds times: a member's isolated iteration, its quantization
  // alone, or something not tagged (back to back).
  enum class Unit { kNone, kIso, kQuant };
  struct VisitUnit {
    Member* member = nullptr;
    Unit unit = Unit::kNone;
  };

  // Starts collecting. Where CUPTI cannot (a profiler holds it), the sampler tags
  // nothing and Finish says why in each member's kernel_note.
  static std::unique_ptr<KernelSampler> Start();
  ~KernelSampler() override;

  // The units of the visits of the next TimeVisits call, by visit index.
  void SetVisits(std::vector<VisitUnit> visits) { visits_ = std::move(visits); }
  absl::Status Mark(int32_t visit) override;
  absl::Status Unmark() override;

  // Stops collecting and fills each member's kernel_iso / kernel_quant (in sample order),
  // kernel_names, or kernel_note when no figure could be taken.
  absl::Status Finish(const std::vector<Member*>& members);

 private:
  KernelSampler() = default;
  CuptiTracer* tracer_ = nullptr;  // null: not collecting
  std::string refused_;            // why not
  std::vector<VisitUnit> visits_;
  std::vector<VisitUnit> launches_;  // tag - 1 -> what that launch timed
  bool marked_ = false;
};

}  // namespace gemmprof::kernels
