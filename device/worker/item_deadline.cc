#include "device/worker/item_deadline.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "device/host/host_runner.h"

namespace gemmprof::worker {
namespace {

// Far below any supported GPU (an H100 runs BF16 GEMMs at ~600 TFLOP/s, its fp32
// reference for verification at ~50), so the bound holds on a throttled device.
constexpr double kGpuFlopsPerS = 2e13;
constexpr double kHostFlopsPerS = 2e8;
// Launches, graph replays and events cost time whatever the shape.
constexpr double kPerIterationS = 2e-3;
// The verification's reference GEMM and error reduction, in iterations.
constexpr double kVerificationIters = 10;
// Autotune times each candidate 3 + 10 iterations in 3 rounds.
constexpr double kAutotuneItersPerCandidate = 3 * (3 + 10);
constexpr double kSafetyFactor = 4;

}  // namespace

absl::Status ValidateItemTimeout(double seconds) {
  if (std::isfinite(seconds) && seconds >= 0 && seconds <= kMaxItemTimeoutS) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--item-timeout: %g is out of range; give seconds in [0, %.0f] (0 = derived from each "
      "item)",
      seconds, kMaxItemTimeoutS));
}

double ItemTimeoutSeconds(const core::WorkItem& item, const core::TimingOptions& timing,
                          bool host_backend, double configured_s) {
  if (configured_s > 0) return configured_s;
  double iterations = 0;
  if (host_backend) {
    iterations = std::min(timing.warmup_iters, device::kMaxHostWarmupIters) +
                 device::HostTimedIterations(timing) + 2;
  } else {
    // The quantization-only pass repeats warm-up and timed iterations.
    // timed_iters 0 (noise-aware): the rounds run for up to item_budget_s.
    iterations =
        2.0 * (std::max(timing.warmup_iters, 0) +
               (timing.timed_iters > 0
                    ? timing.timed_iters
                    : timing.item_budget_s / (item.op.Flops() / kGpuFlopsPerS + kPerIterationS))) +
        kVerificationIters +
        (timing.autotune_k > 1 ? kAutotuneItersPerCandidate * timing.autotune_k : 0);
  }
  const double rate = host_backend ? kHostFlopsPerS : kGpuFlopsPerS;
  const double estimate = iterations * (item.op.Flops() / rate + kPerIterationS);
  return std::max(kMinDerivedTimeoutS, kSafetyFactor * estimate);
}

double GroupTimeoutSeconds(const std::vector<core::WorkItem>& items,
                           const core::TimingOptions& timing, bool host_backend,
                           double configured_s) {
  double total = kGroupSlackS;
  for (const core::WorkItem& item : items) {
    total += ItemTimeoutSeconds(item, timing, host_backend, configured_s);
    // The budget is per distinct member; items are at least as many, so this bounds it.
    if (timing.timed_iters == 0) total += std::max(timing.item_budget_s, 0.0);
  }
  return total;
}

double SetupStepSeconds(const std::vector<core::WorkItem>& items, const core::TimingOptions& timing,
                        bool host_backend) {
  // A member's set-up runs its warm-up, autotune and the choice burst between GEMM
  // libraries (3 rounds of the candidates, at most a dozen launches each).
  constexpr double kChoiceBurstIters = 3 * 4 * 12;
  const double iterations =
      host_backend
          ? std::min(timing.warmup_iters, device::kMaxHostWarmupIters) + 2
          : 2.0 * std::max(timing.warmup_iters, 0) + kVerificationIters + kChoiceBurstIters +
                (timing.autotune_k > 1 ? kAutotuneItersPerCandidate * timing.autotune_k : 0);
  const double rate = host_backend ? kHostFlopsPerS : kGpuFlopsPerS;
  double heaviest = 0;
  for (const core::WorkItem& item : items) heaviest = std::max(heaviest, item.op.Flops());
  // Whole seconds: the bound is named in messages.
  return std::ceil(
      std::max(kMinNoProgressS, kSafetyFactor * iterations * (heaviest / rate + kPerIterationS)));
}

double NoProgressSeconds(double slowest_step_ms, double setup_s) {
  if (slowest_step_ms <= 0) return setup_s;
  return std::ceil(std::max(kMinNoProgressS, kSlowestStepFactor * slowest_step_ms / 1e3));
}

double BeginJobTimeoutSeconds(const core::TimingOptions& timing, double configured_s) {
  return std::max(timing.gpu_warmup_s, 0.0) +
         (configured_s > 0 ? configured_s : kMinDerivedTimeoutS);
}

std::string FormatSeconds(double seconds) { return absl::StrFormat("%g", seconds); }

}  // namespace gemmprof::worker
