// device::Runner on one NVIDIA GPU through cuBLASLt and the project's quantization
// kernels. See DESIGN.md "Measurement" for what a number means; in short: random-normal
// BF16 inputs from the job's seed, quantization per recipe/mode/accounting, one
// iteration captured in a CUDA graph and timed per sample with events behind a blocking
// kernel, NVML telemetry, and a device-side fp32 reference check of every output.
#pragma once

#include <memory>
#include <string>

#include "device/runner.h"
#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/timing/iteration_timer.h"
#include "kernels/timing/nvml_library.h"
#include "measure/members.h"

namespace gemmprof::kernels {

class CutlassGemm;
class GroupBuffers;
class KernelSampler;
struct Member;

class CudaRunner : public device::Runner {
 public:
  // Binds to `device_ordinal`: reads its properties, creates the stream, cuBLASLt handle
  // and workspace, and opens NVML (optional: without it telemetry stays zero, noted).
  static absl::StatusOr<std::unique_ptr<CudaRunner>> Create(int device_ordinal);

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  // Per item: the recipe's support, the shape (FP8 alignment, grouped layouts), CUPTI
  // for kernel-only timing, and the device memory the measurement needs. Always answers.
  absl::StatusOr<std::vector<absl::Status>> CanImplement(
      const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const override;
  absl::Status BeginJob(const core::TimingOptions& timing) override;
  // The measurement engine's rounds over the group's distinct pieces of GPU work
  // (group_measurer.cc).
  absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) override;

  // Within this fraction of a kept CUTLASS form's burst figure, the other CUTLASS forms
  // contend in the item's own rounds (ChooseGemmLibrary). The default unless a test
  // widens it to make every form contend. 10%: on an H200 the burst has ranked a form 4-6%
  // behind one it beat by 18-27% in the rounds (DeepSeek-V3's row-wise wgrad experts).
  static constexpr double kDefaultContenderMargin = 0.10;
  void set_contender_margin(double margin) { contender_margin_ = margin; }

 private:
  CudaRunner() = default;
  absl::Status InitDeviceInfo();
  absl::Status WarmUp(const core::TimingOptions& timing);
  absl::Status CheckItem(const core::WorkItem& item, const core::TimingOptions& timing) const;
  absl::Status CheckMemory(const core::WorkItem& item, const core::TimingOptions& timing) const;
  absl::Status MeasureCopyBandwidth();
  // What the rounds of one measurement gave every member alike.
  struct Rounds {
    int32_t rounds = 0;
    std::string stop_reason, timer_notes;
    core::Telemetry telemetry;
  };
  // The request's members measured together where they fit on the device; otherwise
  // group by group, and a group that does not fit member by member (group_measurer.cc).
  absl::Status MeasureInParts(const core::GroupRequest& request,
                              const std::vector<measure::MemberItems>& members,
                              core::GroupResult* result);
  // Measures `members` together under `group_uid`, filling result->outcomes of their
  // items; once more from an empty pool where the device ran out of memory.
  absl::Status MeasureMembers(const core::GroupRequest& request,
                              const std::vector<measure::MemberItems>& members,
                              const std::string& group_uid, core::GroupResult* result);
  absl::Status MeasureMembersOnce(const core::GroupRequest& request,
                                  const std::vector<measure::MemberItems>& members,
                                  const std::string& group_uid, core::GroupResult* result);
  // Operands, plans, the GEMM library and the graphs of member `index` (member_setup.cc);
  // a refusal of this recipe here goes to m.refused, an error is returned.
  absl::Status PrepareMember(const core::GroupRequest& request, size_t index,
                             const TimerOptions& options, GroupBuffers& buffers, Member& m);
  // The cuBLASLt answer to keep: autotuned among the top candidates (timing.autotune_k),
  // and against the answer for PyTorch's 1 MiB workspace where that differs.
  absl::Status ChoosePlan(const core::TimingOptions& timing, const TimerOptions& options,
                          Member& m);
  // fp8-block and fp8-rowwise: times the CUTLASS GEMMs (cutlass/cutlass_gemm.h) against
  // the member's cuBLASLt plans in a burst (measure/burst.h) under the item's timer and
  // keeps the fastest for the member (cuda_runner_measure.cc). Where CUTLASS cannot run
  // the item, cuBLASLt stays and the member's notes say why. With `contenders`, the other
  // CUTLASS forms within contender_margin_ of a kept CUTLASS form go to the member's
  // contenders, to be decided in the item's own rounds. The serving recipes (no cuBLASLt
  // plans): their CUTLASS forms against each other (w4a16's group `w4_group`), the member
  // refused with the first form's reason where none can run.
  absl::Status ChooseGemmLibrary(Member& m, const TimerOptions& options, bool contenders,
                                 int64_t w4_group);
  // The isolated graphs (own form and contenders') and the quantization graph.
  absl::Status CaptureMember(Member& m);
  // The measurement engine's rounds over `members` through GraphTimer; with `kernels`
  // (nullable), the rounds' isolated and quantization launches are tagged for kernel-only
  // timing. A contender the contest keeps becomes its member's GEMM.
  absl::StatusOr<Rounds> TimeMembers(const core::GroupRequest& request,
                                     const std::vector<Member*>& members,
                                     const TimerOptions& options, KernelSampler* kernels);
  // Nsight mode (profile_phase.cc): one launch of each member's timed graph between
  // cudaProfilerStart/Stop, inside an NVTX range named after its item.
  absl::Status ProfileMembers(const std::vector<Member*>& members);
  // --energy (energy_phase.cc): each member's back-to-back graph replayed for an energy
  // window (kernels/timing/energy_window.h); a board without the counter, or a counter
  // that stops moving, says why instead of a figure.
  absl::Status MeasureEnergy(const std::vector<Member*>& members, core::MeasureProgress* progress);
  // Verifies each member's output and fills the outcomes of its items.
  absl::Status FinishMembers(const core::GroupRequest& request, const std::vector<Member*>& members,
                             const Rounds& rounds, const std::string& group_uid,
                             core::GroupResult* result);
  absl::StatusOr<core::Measurement> MemberMeasurement(const core::GroupRequest& request,
                                                      const Member& m, const Rounds& rounds);
  std::vector<std::string> MemberNotes(const core::TimingOptions& timing, const Member& m,
                                       const Rounds& rounds, const std::string& verification_note,
                                       const core::Telemetry& telemetry) const;
  // Whether the members' buffers fit on the device together.
  bool MembersFit(const core::GroupRequest& request,
                  const std::vector<measure::MemberItems>& members) const;

  int ordinal_ = 0;
  int sm_ = 0;
  int64_t l2_bytes_ = 0;
  core::DeviceInfo info_;
  CudaStream stream_;
  // Has run empty kernels, so the context is in the state applications run in (Create
  // says why); kept for the runner's life.
  CudaStream second_stream_;
  LtHandle lt_;
  DeviceBuffer workspace_;
  DevicePool pool_;
  std::unique_ptr<IterationTimer> timer_;
  std::unique_ptr<NvmlDevice> nvml_;
  std::string nvml_note_;  // why telemetry is unavailable, if it is
  double contender_margin_ = kDefaultContenderMargin;
  double copy_bytes_per_s_ = 0;  // device-to-device copy bandwidth, measured once
  double idle_power_w_ = 0;      // board power before the job's warm-up (--energy jobs)
};

}  // namespace gemmprof::kernels
