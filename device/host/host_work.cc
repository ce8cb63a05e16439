#include "device/host/host_work.h"

#include <algorithm>
#include <chrono>
#include <span>

#include "absl/strings/str_cat.h"
#include "device/host/host_runner.h"

namespace gemmprof::device {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::span<const float> Part(const std::vector<float>& v, int64_t offset, int64_t count) {
  return std::span<const float>(v.data() + offset, count);
}

// A (or B) of group `g`, quantized with the item's recipe and the pass's operand roles.
// A routed expert's A holds its tokens' rows only; an expert without tokens has nothing
// to quantize (an empty BF16 operand stands in, and its GEMM is skipped).
QuantizedOperand QuantizeA(const core::WorkItem& item, const HostOperands& ops, int64_t g,
                           core::AmaxAlgo amax_algo) {
  const int64_t rows = ops.RowsOf(g);
  const size_t hist = ops.a_amax_history.size() / ops.groups;
  return QuantizedOperand::Quantize(
      rows == 0 ? core::Recipe::kBf16 : item.recipe, RoleOfA(item.op.pass),
      Part(ops.a, g * ops.m * ops.k, rows * ops.k), rows, ops.k,
      Part(ops.a_amax_history, g * hist, hist), amax_algo, ops.w4_group);
}

QuantizedOperand QuantizeB(const core::WorkItem& item, const HostOperands& ops, int64_t g,
                           core::AmaxAlgo amax_algo) {
  const int64_t size = ops.n * ops.k;
  const size_t hist = ops.b_amax_history.size() / ops.groups;
  return QuantizedOperand::Quantize(item.recipe, RoleOfB(item.op.pass), Part(ops.b, g * size, size),
                                    ops.n, ops.k, Part(ops.b_amax_history, g * hist, hist),
                                    amax_algo, ops.w4_group);
}

}  // namespace

TimedOperands TimedPart(const core::WorkItem& item) {
  // Weight-only: the activation stays BF16 and the weight is prepared once, before any
  // timing, in every mode (inference semantics).
  if (item.recipe == core::Recipe::kBf16 || core::IsWeightOnly(item.recipe)) return {};
  // int8-rowwise's weight, likewise: only its activation is quantized inside the timing.
  if (item.recipe == core::Recipe::kInt8Rowwise) {
    return {item.mode != core::Mode::kPrequant, false};
  }
  switch (item.mode) {
    case core::Mode::kAutocast:
      return {true, true};
    case core::Mode::kDynamic:
      return {true, RoleOfB(item.op.pass) != OperandRole::kWeight};
    case core::Mode::kPrequant:
      break;
  }
  return {};
}

absl::StatusOr<HostMember> PrepareHostMember(const core::WorkItem& item,
                                             const core::TimingOptions& timing,
                                             const HostOperands& ops, int threads) {
  HostMember member;
  member.item = item;
  ASSIGN_OR_RETURN(const HostGemmResult verified,
                   HostReferenceGemm(item.recipe, item.op.pass, ops, timing.amax_algo, threads));
  member.rel_error = verified.rel_error;
  member.timed = TimedPart(item);
  for (int64_t g = 0; g < ops.groups; ++g) {
    OperandPair q = {QuantizeA(item, ops, g, timing.amax_algo),
                     QuantizeB(item, ops, g, timing.amax_algo)};
    member.operand_bytes += q.first.Bytes() + q.second.Bytes();
    member.a_bytes += q.first.Bytes();
    member.b_bytes += q.second.Bytes();
    member.prequantized.push_back(std::move(q));
  }
  return member;
}

double HostQuantBytes(const HostMember& m) {
  const core::GemmShape& s = m.item.op.shape;
  const int64_t groups = m.item.op.groups;
  double bytes = 0;
  if (m.timed.a) bytes += groups * 2.0 * s.m * s.k + m.a_bytes;
  if (m.timed.b) bytes += groups * 2.0 * s.n * s.k + m.b_bytes;
  return bytes;
}

HostWork::HostWork(const std::vector<HostMember>& members, const HostOperands& ops,
                   core::AmaxAlgo amax_algo, int threads)
    : members_(members), ops_(ops), amax_algo_(amax_algo), threads_(threads) {
  c_.assign(ops.m * ops.n, 0.0f);
}

absl::Status HostWork::WarmUp(const measure::Visit& visit, int32_t launches) {
  // CPU timings are a labeled reference: a short warm-up of the GEMM is enough.
  if (visit.unit.kind != measure::UnitKind::kIsolated) return absl::OkStatus();
  const HostMember& m = members_[visit.unit.member];
  for (int32_t i = 0; i < std::min(launches, kMaxHostWarmupIters); ++i) Iterate(m);
  return absl::OkStatus();
}

absl::Status HostWork::PrepareBackToBack(size_t, int32_t) { return absl::OkStatus(); }

absl::StatusOr<std::vector<std::vector<double>>> HostWork::TimeVisits(
    const std::vector<measure::Visit>& visits) {
  std::vector<std::vector<double>> out;
  for (const measure::Visit& v : visits) {
    if (v.unit.member >= members_.size() || v.unit.form != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("visit of member ", v.unit.member, " form ", v.unit.form, ": the host runs ",
                       members_.size(), " members with one form each"));
    }
    const HostMember& m = members_[v.unit.member];
    std::vector<double>& samples = out.emplace_back();
    for (int32_t s = 0; s < v.samples; ++s) {
      const Clock::time_point t0 = Clock::now();
      switch (v.unit.kind) {
        case measure::UnitKind::kIsolated:
          Iterate(m);
          break;
        case measure::UnitKind::kBackToBack:
          for (int32_t i = 0; i < v.repeat; ++i) Iterate(m);
          break;
        case measure::UnitKind::kQuantization:
          for (int64_t g = 0; g < ops_.groups; ++g) QuantizeTimed(m, g);
          break;
      }
      samples.push_back(MsSince(t0) / std::max(v.repeat, 1));
    }
  }
  return out;
}

int32_t HostWork::MaxRoundsPerCall(const std::vector<measure::Visit>&) const { return 1; }

// One iteration of the timed region: quantize the operands it quantizes + the GEMM of
// every group. The host GEMM of a low-precision operand is dequantize + fp32 GEMM, both
// timed.
void HostWork::Iterate(const HostMember& m) {
  for (int64_t g = 0; g < ops_.groups; ++g) {
    if (!m.timed.any()) {
      Gemm(m.prequantized[g].first, m.prequantized[g].second);
      continue;
    }
    const auto [a, b] = QuantizeTimed(m, g);
    Gemm(a ? *a : m.prequantized[g].first, b ? *b : m.prequantized[g].second);
  }
}

// Group g's operands that the timed region quantizes (dynamic mode: not the weight,
// whose copy was made before the timing).
std::pair<std::optional<QuantizedOperand>, std::optional<QuantizedOperand>> HostWork::QuantizeTimed(
    const HostMember& m, int64_t g) const {
  std::pair<std::optional<QuantizedOperand>, std::optional<QuantizedOperand>> out;
  if (m.timed.a) out.first = QuantizeA(m.item, ops_, g, amax_algo_);
  if (m.timed.b) out.second = QuantizeB(m.item, ops_, g, amax_algo_);
  return out;
}

void HostWork::Gemm(const QuantizedOperand& a, const QuantizedOperand& b) {
  const std::vector<float> a_dq = a.Dequantize();
  const int64_t rows = static_cast<int64_t>(a_dq.size()) / ops_.k;  // an expert's tokens
  if (rows == 0) return;
  GemmFp32(a_dq, b.Dequantize(), rows, ops_.k, ops_.n, c_, threads_);
}

}  // namespace gemmprof::device
