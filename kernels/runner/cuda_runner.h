// device::Runner on one NVIDIA GPU through cuBLASLt and the project's quantization
// kernels. See DESIGN.md "Measurement" for what a number means; in short: random-normal
// BF16 inputs from the job's seed, quantization per recipe/mode/accounting, one
// iteration captured in a CUDA graph and timed per sample with events behind a blocking
// kernel, NVML telemetry, and a device-side fp32 reference check of every output.
#pragma once

#include <memory>
#include <string>

#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/timing/iteration_timer.h"
#include "kernels/timing/nvml_library.h"
#include "device/runner.h"

namespace gemmprof::kernels {

class CutlassGemm;
class KernelSampler;

class CudaRunner : public device::Runner {
 public:
  // Binds to `device_ordinal`: reads its properties, creates the stream, cuBLASLt handle
  // and workspace, and opens NVML (optional: without it telemetry stays zero, noted).
  static absl::StatusOr<std::unique_ptr<CudaRunner>> Create(int device_ordinal);

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  absl::Status CanImplement(const core::WorkItem& item,
                            const core::TimingOptions& timing) const override;
  absl::Status BeginJob(const core::TimingOptions& timing) override;
  // A group of one (MeasureGroup); a refusal of the item is the returned status.
  absl::StatusOr<core::Measurement> Run(const core::WorkItem& item,
                                        const core::TimingOptions& timing) override;
  // Interleaved rounds over the group's distinct pieces of GPU work (group_measurer.cc).
  absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) override;

  // Within this fraction of a kept CUTLASS form's burst figure, the other CUTLASS forms
  // contend in the item's own rounds (ChooseGemmLibrary). The default unless a test
  // widens it to make every form contend.
  static constexpr double kDefaultContenderMargin = 0.05;
  void set_contender_margin(double margin) { contender_margin_ = margin; }

 private:
  friend class KernelSampler;  // fills Member's kernel figures
  CudaRunner() = default;
  absl::Status InitDeviceInfo();
  absl::Status WarmUp(const core::TimingOptions& timing);
  absl::Status CheckMemory(const core::WorkItem& item, const core::TimingOptions& timing) const;
  absl::Status MeasureCopyBandwidth();
  struct Member;
  // Measures `members` (indexes into request.items grouped by work key) together under
  // `group_uid`, filling result->outcomes of their items.
  absl::Status MeasureMembers(const core::GroupRequest& request,
                              const std::vector<std::vector<size_t>>& members,
                              const std::string& group_uid, core::GroupResult* result);
  absl::Status MeasureMembersOnce(const core::GroupRequest& request,
                                  const std::vector<std::vector<size_t>>& members,
                                  const std::string& group_uid, core::GroupResult* result);
  struct Rounds {
    int32_t rounds = 0;
    std::string stop_reason, timer_notes;
    core::Telemetry telemetry;
  };
  // fp8-block and fp8-rowwise: times the CUTLASS GEMMs (cutlass_gemm.h) against the
  // member's cuBLASLt plans in interleaved rounds under the item's timer and keeps the
  // fastest for the member (cuda_runner_measure.cc). Where CUTLASS cannot run the item,
  // cuBLASLt stays and the member's notes say why. With `contenders`, the other CUTLASS
  // forms within contender_margin_ of a kept CUTLASS form go to the member's contenders,
  // to be timed in the item's own rounds (TimeRounds).
  absl::Status ChooseGemmLibrary(Member& m, const TimerOptions& options, bool contenders);
  // One iteration of a member: its timed quantization, then (with_gemm) the GEMM: `form`
  // where given (a contender's), else the member's own.
  absl::Status Iterate(const Member& m, cudaStream_t q, bool with_gemm,
                       const CutlassGemm* form = nullptr) const;
  // Warm-up, pilot, back-to-back capture and the interleaved rounds over `members`;
  // with `kernels` (nullable), the rounds' isolated and quantization launches are tagged
  // for kernel-only timing.
  absl::StatusOr<Rounds> TimeRounds(const core::GroupRequest& request,
                                    const std::vector<Member*>& members,
                                    const TimerOptions& options, KernelSampler* kernels);
  // Nsight mode (profile_phase.cc): one launch of each member's timed graph between
  // cudaProfilerStart/Stop, inside an NVTX range named after its item.
  absl::Status ProfileMembers(const std::vector<Member*>& members);
  // Verifies each member's output and fills the outcomes of its items.
  absl::Status FinishMembers(const core::GroupRequest& request, const std::vector<Member*>& members,
                             const Rounds& rounds, const std::string& group_uid,
                             core::GroupResult* result);
  // Whether the members' buffers fit on the device together.
  bool MembersFit(const core::GroupRequest& request,
                  const std::vector<std::vector<size_t>>& members) const;

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
};

}  // namespace gemmprof::kernels
