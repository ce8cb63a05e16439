// The host reference runner: every recipe emulated on the CPU (gemmprof::quant numerics,
// fp32 GEMM), so the service runs without a GPU, labeled backend "host-reference".
// Its timings are CPU timings and are never presented as a GPU's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/group.h"
#include "core/job.h"
#include "core/result.h"
#include "core/status.h"
#include "device/host/host_gemm.h"
#include "device/host/host_work.h"
#include "device/runner.h"
#include "measure/rounds.h"

namespace gemmprof::device {

// Rounds per group on the host: timing.timed_iters is honoured up to this cap.
inline constexpr int32_t kMaxHostTimedIters = 5;
// Rounds on the host when timing.timed_iters is 0 (noise-aware on a GPU): CPU timings
// are a labeled reference and do not earn precision stopping.
inline constexpr int32_t kHostDefaultRounds = 5;
// Back-to-back iterations per b2b sample on the host: timing.b2b_count (0 = 2) capped.
inline constexpr int32_t kMaxHostB2bCount = 4;
// Warm-up iterations per member on the host: timing.warmup_iters is honoured up to this cap.
inline constexpr int32_t kMaxHostWarmupIters = 2;

// Fixed rounds the host measures: min(timed_iters, or kHostDefaultRounds when 0,
// kMaxHostTimedIters); at least 1.
int32_t HostRounds(const core::TimingOptions& timing);
// N of the host's back-to-back figure: 2 when timing.b2b_count is 0, else b2b_count
// clamped to [2, kMaxHostB2bCount].
int32_t HostB2bCount(const core::TimingOptions& timing);
// Iterations the host times per distinct member, for deadlines: every round runs one
// isolated iteration, N back-to-back ones and at most one quantization alone (counted as
// an iteration).
int32_t HostTimedIterations(const core::TimingOptions& timing);

// What decides the host's computation for `item`: M, K, N, groups, the formats (and
// scale sources) of A and B for the recipe and pass, what the timed region quantizes and
// the input seed. Items of one group with equal keys are the same host work. Pure.
std::string HostWorkKey(const core::WorkItem& item, const core::TimingOptions& timing);

// The CPU model from the text of /proc/cpuinfo: the value of the first "model name" line,
// trimmed; "unknown" when there is none or it is empty (e.g. on ARM kernels).
std::string CpuModelFromCpuinfo(std::string_view cpuinfo);

// Runner on the CPU. Info() describes the CPU (backend "host-reference", sm 0) and
// claims every recipe (it emulates them all). Not thread-safe (one worker per runner, as
// the Runner interface says); measurements use `threads` threads internally.
class HostRunner : public Runner {
 public:
  // `threads`: threads for the GEMM loops, at least 1. `device`: this emulated device's
  // index (gemmprofd --host-devices); devices after the first get their own uuid.
  // `model`: the device name it reports instead of "host-reference (CPU: ...)"
  // (gemmprofd --host-model, a test hook: several daemons on one machine present
  // themselves as a fleet of device models).
  explicit HostRunner(int threads = 2, int device = 0, std::string model = "");

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  // Per item: InvalidArgument for a dimension or groups < 1; M*K*N*groups above
  // kMaxHostMacs; an operand or output above kMaxHostElements elements; timed_iters < 0;
  // warmup_iters < 0; amax_history_len < 1 for fp8-delayed. Always answers.
  absl::StatusOr<std::vector<absl::Status>> CanImplement(
      const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const override;
  // Measures the host's memcpy bandwidth (best of a few 64 MiB copies), written into
  // every later measurement's copy_bytes_per_s. Always OK.
  absl::Status BeginJob(const core::TimingOptions& timing) override;
  // The measurement engine's rounds (measure/rounds.h) over the group's distinct
  // members (HostWorkKey; equal keys share one measurement when
  // request.share_identical_work), fixed at HostRounds with one sample per visit: a round
  // visits every member's units, one isolated iteration, N iterations back to back
  // (HostB2bCount), and for members that quantize, the quantization alone. Random
  // operands from timing.seed, verification against ErrorThreshold(). Refusals
  // (CanImplement) and failures of one item come back in its outcome; a non-OK status is
  // an internal error. A request of several measurement groups (a batch) is timed group
  // by group, each with its own rounds and group uid ("<uid>/g<k>"): the host
  // reference's operands are one shape's.
  absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) override;

 private:
  // CanImplement's answer for one item.
  absl::Status CheckItem(const core::WorkItem& item, const core::TimingOptions& timing) const;
  // MeasureGroup of one measurement group (every item of one GroupKey).
  absl::StatusOr<core::GroupResult> MeasureOneGroup(const core::GroupRequest& request);
  // The engine's rounds over `members` (prepared from `ops`).
  absl::StatusOr<measure::RoundsResult> MeasureHostRounds(const core::GroupRequest& request,
                                                          const std::vector<HostMember>& members,
                                                          const HostOperands& ops) const;

  int threads_;
  core::DeviceInfo info_;
  double copy_bytes_per_s_ = 0;  // from BeginJob; 0 before it
};

}  // namespace gemmprof::device
