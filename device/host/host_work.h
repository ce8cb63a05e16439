// The host reference runner's work: one group's members on the CPU, prepared and run as
// measure::Timer units for the measurement engine (measure/rounds.h). Internal to
// device/host/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/group.h"
#include "core/job.h"
#include "device/host/host_gemm.h"
#include "measure/timer.h"

namespace gemmprof::device {

// Which operands the timed region quantizes. autocast: both (the host times every pass
// alike); dynamic (inference): A (the activation or gradient) and B only where it is not
// the weight (wgrad's dY^T); prequant: none. BF16 needs no quantization, so its autocast
// and dynamic steps are its prequant step.
struct TimedOperands {
  bool a = false, b = false;
  bool any() const { return a || b; }
};
TimedOperands TimedPart(const core::WorkItem& item);

using OperandPair = std::pair<QuantizedOperand, QuantizedOperand>;

// One distinct piece of host work of a group: what its first item computes.
struct HostMember {
  core::WorkItem item;                    // the measured item
  TimedOperands timed;                    // what the timed region quantizes
  std::vector<OperandPair> prequantized;  // per GEMM group, quantized before the timing
  double operand_bytes = 0;               // quantized A and B of every group, one iteration
  double a_bytes = 0, b_bytes = 0;        // the quantized A and B alone, every group
  double rel_error = 0;
};

// The reference GEMM of `item` (its error against the unquantized product) and its
// operands quantized once, as the timed region finds them. Errors of the reference
// (HostReferenceGemm) are the item's.
absl::StatusOr<HostMember> PrepareHostMember(const core::WorkItem& item,
                                             const core::TimingOptions& timing,
                                             const HostOperands& ops, int threads);

// Bytes the timed quantization must move per iteration: one read of each BF16 source,
// each quantized write, the scales.
double HostQuantBytes(const HostMember& m);

// Runs the engine's units on the CPU: an isolated unit is one iteration (the timed
// quantization, then dequantize + fp32 GEMM of every group), a back-to-back unit
// `repeat` of them (ms per iteration), a quantization unit the timed quantization alone.
// Warm-up runs isolated iterations only, at most kMaxHostWarmupIters. One round per
// TimeVisits call, so a request's deadline is looked at after every round.
class HostWork final : public measure::Timer {
 public:
  // `members` and `ops` must outlive this object.
  HostWork(const std::vector<HostMember>& members, const HostOperands& ops,
           core::AmaxAlgo amax_algo, int threads);

  absl::Status WarmUp(const measure::Visit& visit, int32_t launches) override;
  absl::Status PrepareBackToBack(size_t member, int32_t repeat) override;
  absl::StatusOr<std::vector<std::vector<double>>> TimeVisits(
      const std::vector<measure::Visit>& visits) override;
  int32_t MaxRoundsPerCall(const std::vector<measure::Visit>& round) const override;

 private:
  void Iterate(const HostMember& m);
  std::pair<std::optional<QuantizedOperand>, std::optional<QuantizedOperand>> QuantizeTimed(
      const HostMember& m, int64_t g) const;
  void Gemm(const QuantizedOperand& a, const QuantizedOperand& b);

  const std::vector<HostMember>& members_;
  const HostOperands& ops_;
  core::AmaxAlgo amax_algo_;
  int threads_;
  std::vector<float> c_;
};

}  // namespace gemmprof::device
