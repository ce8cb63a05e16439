// The per-member pieces of CudaRunner::MeasureGroup (measure_parts.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/error_detail.h"
#include "core/quant/scale_bytes.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/quant/operand_quantizer.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/runner/gemm_verifier.h"
#include "kernels/runner/measure_parts.h"
#include "kernels/runner/member.h"
#include "kernels/runner/recipe_rules.h"
#include "kernels/timing/iteration_timer.h"
#include "measure/burst.h"

namespace gemmprof::kernels {
namespace {

using core::Recipe;

// Tensor ids under the job's seed: the same seed always gives the same A and B^T.
constexpr uint32_t kTensorA = 1, kTensorBt = 2;

int64_t Bytes(cudaDataType_t t, int64_t n) {
  if (t == CUDA_R_16BF) return 2 * n;
  if (t == CUDA_R_4F_E2M1 || t == CUDA_R_4I) return (n + 1) / 2;
  return n;
}

}  // namespace

double GemmBytes(const core::WorkItem& item, const Operands& o) {
  const core::GemmShape& s = item.op.shape;
  const int64_t g = item.op.groups;
  // fprop, dgrad: A's and C's rows are the experts' tokens (the weights read whole).
  const int64_t rows = RoutedRows(item.op);
  return Bytes(o.a.data_type(), rows * s.k) + Bytes(o.bt.data_type(), g * s.n * s.k) +
         2.0 * rows * s.n;
}

int64_t RoutedRows(const core::GemmOp& op) {
  if (op.group_tokens.empty() || op.pass == core::Pass::kWgrad) return op.groups * op.shape.m;
  int64_t rows = 0;
  for (int64_t t : op.group_tokens) rows += t;
  return rows;
}

bool RunsPerExpertRows(const core::GemmOp& op) {
  return !op.group_tokens.empty() && op.pass != core::Pass::kWgrad;
}

double QuantBytes(const Operands& o, const TimedQuantization& t) {
  // Each timed quantization's floor bytes (core/quant/scale_bytes.h), with the transposed
  // copies where the step writes them.
  auto quant = [&](const OperandQuantizer& q) {
    const OperandConfig& c = q.config();
    const core::quant::QuantizationBytes b = core::quant::QuantizationFloorBytes(
        c.recipe, c.rows, c.cols, c.weight, t.transposes, c.w4_group);
    return static_cast<double>(c.groups) * (b.data + b.scales);
  };
  double bytes = 0;
  if (t.a) bytes += quant(o.a);
  if (t.bt) bytes += quant(o.bt);
  return bytes;
}

std::vector<absl::StatusOr<double>> TimeCandidates(
    const IterationTimer& timer, cudaStream_t stream,
    const std::vector<IterationTimer::Iteration>& candidates, const TimerOptions& item_options,
    int rounds) {
  // Each candidate captured and timed on its own, under the item's L2 policy.
  class Candidates final : public measure::CandidateTimer {
   public:
    Candidates(const IterationTimer& timer, cudaStream_t stream,
               const std::vector<IterationTimer::Iteration>& candidates,
               const TimerOptions& item_options)
        : timer_(timer), stream_(stream), candidates_(candidates) {
      options_.flush_buffer = item_options.flush_buffer;
      options_.flush_bytes = item_options.flush_bytes;
    }
    absl::StatusOr<std::vector<double>> Time(size_t c, int32_t warmup, int32_t samples) override {
      TimerOptions o = options_;
      o.warmup_iters = warmup;
      o.timed_iters = samples;
      absl::StatusOr<TimerResult> r = timer_.Time(stream_, candidates_[c], o);
      if (!r.ok()) {
        // Clear what CUDA lets clear, so the other candidates can still run.
        (void)cudaStreamSynchronize(stream_);
        (void)cudaGetLastError();
        return r.status();
      }
      return std::move(r->samples_ms);
    }

   private:
    const IterationTimer& timer_;
    cudaStream_t stream_;
    const std::vector<IterationTimer::Iteration>& candidates_;
    TimerOptions options_;
  } timed(timer, stream, candidates, item_options);
  return measure::TimeCandidates(timed, candidates.size(), rounds);
}

// Keeps the lowest of the candidates' figures; within 1% of cuBLASLt's first choice the
// difference is noise and the first choice stays (measure::PickFastest). Candidates that
// refuse to launch are skipped.
absl::Status Autotune(MatmulPlan& plan, const IterationTimer& timer, cudaStream_t stream,
                      const TimerOptions& item_options) {
  const int n = plan.candidates();
  if (n <= 1) return absl::OkStatus();
  constexpr int kRounds = 3;
  std::vector<IterationTimer::Iteration> candidates;
  for (int i = 0; i < n; ++i) {
    // Capture records the algorithm chosen at the time.
    candidates.push_back([&plan, i](cudaStream_t q) {
      RETURN_IF_ERROR(plan.Choose(i, true));
      return plan.Enqueue(q);
    });
  }
  const int best =
      measure::PickFastest(TimeCandidates(timer, stream, candidates, item_options, kRounds));
  if (best < 0) return absl::InternalError("autotune: no cuBLASLt candidate launched");
  return plan.Choose(best, true);
}

// cuBLASLt and each CUTLASS form are timed as Autotune times cuBLASLt's candidates
// (TimeCandidates). CUTLASS is kept only when more than 1% faster than cuBLASLt: within
// that the two are the same, and cuBLASLt (the library the other recipes run on) stays.
// Where a CUTLASS form is kept, the other CUTLASS forms within contender_margin_ of it
// become the member's contenders (member.h): on a power-capped GPU the burst can rank
// forms that close otherwise than the item's rounds do, so the rounds decide.
// The serving recipes have no cuBLASLt form here (m.plans is empty): their CUTLASS forms
// alone are timed, the first being the incumbent, and where none can run the member is
// refused with the first form's reason.
absl::Status CudaRunner::ChooseGemmLibrary(Member& m, const TimerOptions& item_options,
                                           bool contenders, int64_t w4_group) {
  const Recipe recipe = m.item.recipe;
  const bool serving = core::IsServingRecipe(recipe);
  const size_t first = serving ? 0 : 1;  // the first CUTLASS candidate
  std::vector<std::string> names;
  std::vector<std::optional<CutlassGemm>> cutlass;
  if (!serving) {
    names.push_back("cuBLASLt");
    cutlass.resize(1);  // [0]: cuBLASLt
  }
  std::string refused;
  for (auto& [name, g] : CutlassForms(m, w4_group, ordinal_, sm_, stream_.get())) {
    if (absl::IsFailedPrecondition(g.status())) {
      // The first form's reason: the grouped form's (device, sizes) is the most general.
      if (refused.empty()) refused = std::string(g.status().message());
      continue;
    }
    RETURN_IF_ERROR(g.status());
    names.push_back(name);
    cutlass.push_back(*std::move(g));
  }
  const bool block = recipe == Recipe::kFp8Block;
  if (cutlass.size() == first) {
    if (serving) {
      m.refused = absl::FailedPreconditionError(refused);
      return absl::OkStatus();
    }
    m.notes.push_back(absl::StrCat("cuBLASLt only: ", refused));
    return absl::OkStatus();
  }
  std::vector<IterationTimer::Iteration> candidates;
  if (!serving) {
    candidates.push_back([&m](cudaStream_t q) -> absl::Status {
      for (const MatmulPlan& p : m.plans) RETURN_IF_ERROR(p.Enqueue(q));
      return absl::OkStatus();
    });
  }
  for (size_t c = first; c < cutlass.size(); ++c) {
    const CutlassGemm& g = *cutlass[c];
    candidates.push_back([&g](cudaStream_t q) { return g.Enqueue(q); });
  }
  constexpr int kRounds = 3;
  const cudaStream_t st = stream_.get();
  const std::vector<absl::StatusOr<double>> ms =
      TimeCandidates(*timer_, st, candidates, item_options, kRounds);
  if (!serving) RETURN_IF_ERROR(ms[0].status());
  std::vector<std::string> figures;
  for (size_t c = 0; c < ms.size(); ++c) {
    if (!ms[c].ok()) {
      // A launch that left the device unusable ends the item; otherwise the form is out.
      if (IsStickyCudaError(cudaStreamSynchronize(st))) return ms[c].status();
      m.notes.push_back(
          absl::StrCat("not used: ", names[c], " failed to run (", ms[c].status().message(), ")"));
      continue;
    }
    figures.push_back(absl::StrFormat("%s %.4g ms", names[c], *ms[c]));
  }
  const int picked = measure::PickFastest(ms);
  if (picked < 0) return ms[0].status();  // serving: no form ran
  const size_t best = static_cast<size_t>(picked);
  m.notes.push_back(absl::StrFormat(
      "%s chosen by measurement: %s (%s per GEMM, medians of %d interleaved rounds "
      "timed as a short burst before the item's own rounds; a power-capped GPU runs such a "
      "burst at higher clocks, so these figures rank the candidates and do not compare with "
      "the item's)",
      serving ? "Kernel form" : "GEMM library", names[best], absl::StrJoin(figures, ", "),
      kRounds));
  if (best > 0 || serving) {
    std::vector<size_t> close =
        contenders ? measure::CloseTo(ms, best, contender_margin_) : std::vector<size_t>();
    if (contenders && serving && best != 0 && ms[0].ok() &&
        *ms[0] <= (1 + contender_margin_) * *ms[best]) {
      close.push_back(0);  // CloseTo leaves out 0, cuBLASLt's place in the other recipes
    }
    for (size_t c : close) {
      m.contenders.push_back({names[c], *std::move(cutlass[c])});
    }
    if (!m.contenders.empty()) {
      m.notes.push_back(absl::StrFormat(
          "within %.0f%% of it in that burst: %s; timed in the item's own rounds beside it, "
          "and the fastest there kept",
          100 * contender_margin_,
          absl::StrJoin(m.contenders, ", ", [](std::string* out, const Member::Contender& c) {
            out->append(c.name);
          })));
    }
    m.cutlass_name = names[best];
    m.cutlass = std::move(cutlass[best]);
    if (block) {
      m.o.a.set_block_scale_form(OperandQuantizer::BlockScaleForm::kRowMajor);
      m.o.bt.set_block_scale_form(OperandQuantizer::BlockScaleForm::kRowMajor);
    }
  }
  return absl::OkStatus();
}

std::string ThrottleNote(const core::Telemetry& t) {
  if (t.throttled_samples == 0) return "";
  return absl::StrFormat("%d of %d telemetry samples throttled (clocks-event reasons 0x%x)",
                         t.throttled_samples, t.telemetry_samples, t.throttle_reasons);
}

absl::StatusOr<Sources> PrepareSources(DevicePool& pool, const core::WorkItem& item,
                                       const core::TimingOptions& timing, cudaStream_t st,
                                       const std::string& prefix) {
  const core::GemmShape& s = item.op.shape;
  const int64_t a_n = item.op.groups * s.m * s.k, bt_n = item.op.groups * s.n * s.k;
  Sources src;
  ASSIGN_OR_RETURN(src.a, pool.GetAs<__nv_bfloat16>(prefix + "a.src", a_n));
  ASSIGN_OR_RETURN(src.bt, pool.GetAs<__nv_bfloat16>(prefix + "bt.src", bt_n));
  CUDA_RETURN_IF_ERROR(FillRandomNormalBf16(src.a, a_n, timing.seed, kTensorA, st));
  CUDA_RETURN_IF_ERROR(FillRandomNormalBf16(src.bt, bt_n, timing.seed, kTensorBt, st));
  // Experts below the capacity: their missing tokens are zeros (measure_parts.h).
  const std::vector<int64_t>& tokens = item.op.group_tokens;
  for (size_t g = 0; g < tokens.size(); ++g) {
    const int64_t cap = item.op.TokenDim(), pad = cap - tokens[g];
    if (pad <= 0) continue;
    if (item.op.pass != core::Pass::kWgrad) {
      // A's rows tokens[g]..cap of group g.
      CUDA_RETURN_IF_ERROR(cudaMemsetAsync(src.a + (g * s.m + tokens[g]) * s.k, 0,
                                           pad * s.k * sizeof(__nv_bfloat16), st));
      continue;
    }
    // wgrad: columns tokens[g]..cap (K) of every row of A and B^T.
    for (auto [base, rows] :
         {std::pair{src.a + g * s.m * s.k, s.m}, std::pair{src.bt + g * s.n * s.k, s.n}}) {
      CUDA_RETURN_IF_ERROR(cudaMemset2DAsync(base + tokens[g], s.k * sizeof(__nv_bfloat16), 0,
                                             pad * sizeof(__nv_bfloat16), rows, st));
    }
  }
  return src;
}

absl::StatusOr<Operands> PrepareOperands(DevicePool& pool, const core::WorkItem& item,
                                         const core::TimingOptions& timing,
                                         const TimedQuantization& t, const Sources& src,
                                         __nv_bfloat16* c, const std::string& prefix,
                                         cudaStream_t st, std::vector<std::string>* notes) {
  Operands o;
  o.c = c;
  OperandConfig a = OperandA(item, timing), bt = OperandBt(item, timing);
  a.slot = prefix + a.slot;
  bt.slot = prefix + bt.slot;
  ASSIGN_OR_RETURN(o.a, OperandQuantizer::Create(pool, a, src.a, t.transposes));
  ASSIGN_OR_RETURN(o.bt, OperandQuantizer::Create(pool, bt, src.bt, t.transposes));
  RETURN_IF_ERROR(o.a.SeedHistory(st));
  RETURN_IF_ERROR(o.bt.SeedHistory(st));
  RETURN_IF_ERROR(o.a.Enqueue(st, false));
  RETURN_IF_ERROR(o.bt.Enqueue(st, false));
  if (std::string note = core::QuantizationNote(item); !note.empty()) notes->push_back(note);
  if (item.recipe == Recipe::kNvfp4) {
    ASSIGN_OR_RETURN(o.alpha_beta, pool.GetAs<float>(prefix + "alpha_beta", 2));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(o.alpha_beta, 0, 2 * sizeof(float), st));
    CUDA_RETURN_IF_ERROR(Nvfp4Alpha(o.a.tensor_scale(), o.bt.tensor_scale(), o.alpha_beta, st));
    notes->push_back("nvfp4: no RHT / stochastic rounding; transposed copies not quantized");
  }
  return o;
}

MatmulSpec GemmSpec(const core::GemmOp& op, const Operands& o, std::optional<bool> fast_accum,
                    const DeviceBuffer& workspace) {
  MatmulSpec spec;
  spec.m = op.shape.m;
  spec.n = op.shape.n;
  spec.k = op.shape.k;
  spec.batch = op.groups;
  spec.a_type = o.a.data_type();
  spec.bt_type = o.bt.data_type();
  spec.a = o.a.data();
  spec.bt = o.bt.data();
  spec.c = o.c;
  spec.a_scale_mode = o.a.scale_mode();
  spec.bt_scale_mode = o.bt.scale_mode();
  spec.a_scale = o.a.gemm_scale();
  spec.bt_scale = o.bt.gemm_scale();
  spec.fast_accum = fast_accum;
  if (o.alpha_beta != nullptr) {
    spec.device_alpha = o.alpha_beta;
    spec.device_beta = o.alpha_beta + 1;
  }
  spec.workspace = workspace.get();
  spec.workspace_bytes = workspace.bytes();
  return spec;
}

// The GEMM of an item as cuBLASLt plans: one (a grouped item's groups in one
// strided-batched call), or, for block scales where cuBLASLt has no batched algorithm
// (cuBLASLt 13.1 on sm_90 has none), one plan per group over that group's operands,
// output and block scales, launched back to back inside the item's CUDA graph; then
// `per_group_reason` is cuBLASLt's refusal of the batched call.
absl::StatusOr<std::vector<MatmulPlan>> CreatePlans(cublasLtHandle_t lt, const MatmulSpec& spec,
                                                    const Operands& o, int candidates,
                                                    const std::vector<int64_t>& expert_rows,
                                                    std::string* per_group_reason) {
  std::vector<MatmulPlan> plans;
  const int64_t a_scales = o.a.gemm_scale_group_floats(),
                bt_scales = o.bt.gemm_scale_group_floats();
  // Outer-vector (row-wise) scales: a strided batch would read group 0's vectors for
  // every group (no batch stride for scale pointers), so groups always go one by one.
  const bool row_scaled = spec.a_scale_mode == CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  absl::StatusOr<MatmulPlan> whole =
      !expert_rows.empty()
          ? absl::FailedPreconditionError(
                "the experts' tokens differ and cuBLASLt's strided batch runs one size")
      : row_scaled && spec.batch > 1
          ? absl::FailedPreconditionError(
                "cuBLASLt's strided batch takes one row-scale vector per operand, not one per "
                "group")
          : MatmulPlan::Create(lt, spec, candidates);
  const bool scales_per_group = a_scales > 0 && bt_scales > 0;
  if (whole.ok() || !absl::IsFailedPrecondition(whole.status()) || spec.batch == 1 ||
      (!scales_per_group && expert_rows.empty())) {
    if (!whole.ok()) return whole.status();
    plans.push_back(*std::move(whole));
    return plans;
  }
  // Group g's operands, output and scales at its offset (the per-tensor recipes' one
  // scale shared: no scale stride).
  const int64_t m = spec.m, n = spec.n, k = spec.k;
  for (int64_t g = 0; g < spec.batch; ++g) {
    MatmulSpec one = spec;
    one.batch = 1;
    if (!expert_rows.empty()) {
      // An expert's rows rounded up to 16 (zeros past its tokens, within the capacity):
      // cuBLASLt has no algorithm for some row counts (block scales need 16-row
      // multiples), as FP8 MoE pads each expert's tokens.
      one.m = std::min(m, (expert_rows[g] + 15) / 16 * 16);
      if (one.m == 0) continue;  // nothing to compute; its C rows stay zero
    }
    one.a = static_cast<const uint8_t*>(spec.a) + Bytes(spec.a_type, g * m * k);
    one.bt = static_cast<const uint8_t*>(spec.bt) + Bytes(spec.bt_type, g * n * k);
    one.c = static_cast<__nv_bfloat16*>(spec.c) + g * m * n;
    if (spec.a_scale != nullptr && a_scales > 0)
      one.a_scale = static_cast<const float*>(spec.a_scale) + g * a_scales;
    if (spec.bt_scale != nullptr && bt_scales > 0)
      one.bt_scale = static_cast<const float*>(spec.bt_scale) + g * bt_scales;
    ASSIGN_OR_RETURN(MatmulPlan p, MatmulPlan::Create(lt, one, candidates));
    plans.push_back(std::move(p));
  }
  *per_group_reason = std::string(whole.status().message());
  return plans;
}

// What a grouped item's number means: one strided-batched call; for the per-tensor FP8
// recipes one scale per operand across all groups (not one per expert), for fp8-block
// each group's own block scales; and, where the timed region quantizes group by group
// (transposed copies, or 128x128 blocks that would span groups), one launch per group (a
// fused multi-tensor kernel would launch once, so small groups overstate the
// quantization time).
std::string GroupedNote(const core::WorkItem& item, const TimedQuantization& t, const Operands& o,
                        const std::string& per_group_reason, bool cutlass) {
  const bool tensor_scaled =
      item.recipe == Recipe::kFp8Current || item.recipe == Recipe::kFp8Delayed;
  std::string note =
      cutlass ? absl::StrFormat("grouped: %d groups in one CUTLASS launch", item.op.groups)
      : per_group_reason.empty()
          ? absl::StrFormat("grouped: %d groups in one strided-batched cuBLASLt call",
                            item.op.groups)
          : absl::StrFormat(
                "grouped: %d cuBLASLt calls, one per group, back to back in one CUDA graph, "
                "because the batched call has none: %s",
                item.op.groups, per_group_reason);
  if (item.recipe == Recipe::kFp8Block) {
    absl::StrAppend(&note, "; grouped: block scales per group, back to back");
    if ((t.a && o.a.QuantizesPerGroup(t.transposes)) ||
        (t.bt && o.bt.QuantizesPerGroup(t.transposes))) {
      absl::StrAppendFormat(&note,
                            "; grouped: block quantization timed as %d launches (one per "
                            "group) per operand quantized group by group",
                            item.op.groups);
    }
  }
  if (tensor_scaled) {
    absl::StrAppendFormat(&note, "; grouped: one per-tensor scale across the %d groups",
                          item.op.groups);
    if (t.transposes && (t.a || t.bt)) {
      absl::StrAppendFormat(&note,
                            "; grouped: transposing casts timed as %d launches (one per "
                            "group) per quantized operand",
                            item.op.groups);
    }
  }
  return note;
}

}  // namespace gemmprof::kernels
