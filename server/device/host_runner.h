// The host reference runner: every recipe emulated on the CPU (gemmprof::quant numerics,
// fp32 GEMM), so the service runs without a GPU, labeled backend "host-reference".
// Its timings are CPU timings and are never presented as a GPU's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/job.h"
#include "core/result.h"
#include "core/status.h"
#include "server/device/host_gemm.h"
#include "server/device/runner.h"

namespace gemmprof::device {

// Timed iterations per item on the host: timing.timed_iters is honoured up to this cap.
inline constexpr int32_t kMaxHostTimedIters = 5;
// Warm-up iterations per item on the host: timing.warmup_iters is honoured up to this cap.
inline constexpr int32_t kMaxHostWarmupIters = 2;

// The CPU model from the text of /proc/cpuinfo: the value of the first "model name" line,
// trimmed; "unknown" when there is none or it is empty (e.g. on ARM kernels).
std::string CpuModelFromCpuinfo(std::string_view cpuinfo);

// Runner on the CPU. Info() describes the CPU (backend "host-reference", sm 0) and
// claims every recipe (it emulates them all). Not thread-safe (one worker per runner, as
// the Runner interface says); Run uses `threads` threads internally.
class HostRunner : public Runner {
 public:
  // `threads`: threads for the GEMM loops, at least 1.
  explicit HostRunner(int threads = 2);

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  // InvalidArgument for: a dimension or groups < 1; M*K*N*groups above kMaxHostMacs; an
  // operand or output above kMaxHostElements elements; timed_iters < 1; warmup_iters < 0;
  // amax_history_len < 1 for fp8-delayed.
  absl::Status CanImplement(const core::WorkItem& item,
                            const core::TimingOptions& timing) const override;
  // Nothing to warm up on the host; always OK.
  absl::Status BeginJob(const core::TimingOptions& timing) override;
  // Measures one item: random operands from timing.seed; warm-up and timed iterations
  // (capped, see above; notes say "host reference: N of M iterations"); autocast times
  // quantize + GEMM, prequant the GEMM only; verification against ErrorThreshold().
  // Errors: those of CanImplement.
  absl::StatusOr<core::Measurement> Run(const core::WorkItem& item,
                                        const core::TimingOptions& timing) override;

 private:
  int threads_;
  core::DeviceInfo info_;
};

}  // namespace gemmprof::device
