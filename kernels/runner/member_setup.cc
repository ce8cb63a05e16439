// CudaRunner::PrepareMember: everything a member needs before the rounds: its quantized
// operands, cuBLASLt plans (autotuned where asked), the GEMM library chosen by a burst,
// and its isolated and quantization graphs.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "core/routing.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/runner/member.h"

namespace gemmprof::kernels {
namespace {

// A second workspace size the cuBLASLt heuristic is asked for (PyTorch's default cuBLASLt
// workspace): where its answer differs from the answer for the runner's full workspace,
// both are timed and the faster kept.
constexpr size_t kLimitedLtWorkspaceBytes = size_t{1} << 20;

// A refusal that means "this recipe cannot run this here" (the queue's not_supported).
bool IsRefusal(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) || absl::IsUnimplemented(s);
}

}  // namespace

absl::StatusOr<const GroupBuffers::Set*> GroupBuffers::For(DevicePool& pool,
                                                           const core::WorkItem& item,
                                                           const core::TimingOptions& timing,
                                                           cudaStream_t st) {
  const std::string key = core::GroupKey(item.op);
  for (const Set& s : sets_) {
    if (s.key == key) return &s;
  }
  const std::string prefix = sets_.empty() ? "" : absl::StrCat("g", sets_.size(), ".");
  Set s{key};
  ASSIGN_OR_RETURN(s.src, core::WhileDoing(PrepareSources(pool, item, timing, st, prefix),
                                           "preparing the operands"));
  const core::GemmShape& shape = item.op.shape;
  ASSIGN_OR_RETURN(s.c, core::WhileDoing(pool.GetAs<__nv_bfloat16>(
                                             prefix + "c", item.op.groups * shape.m * shape.n),
                                         "preparing the output"));
  if (!item.op.group_tokens.empty()) {
    // Rows a per-expert launch never writes read as the zeros the reference has there.
    CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(s.c, 0, item.op.groups * shape.m * shape.n * sizeof(__nv_bfloat16), st));
  }
  sets_.push_back(std::move(s));
  return &sets_.back();
}

absl::Status CudaRunner::PrepareMember(const core::GroupRequest& request, size_t index,
                                       const TimerOptions& options, GroupBuffers& buffers,
                                       Member& m) {
  const core::TimingOptions& timing = request.timing;
  const core::WorkItem& item = m.item;
  const cudaStream_t st = stream_.get();
  m.work_key = WorkKey(item, timing);
  m.t = TimedPart(item, timing.accounting);
  ASSIGN_OR_RETURN(const GroupBuffers::Set* set, buffers.For(pool_, item, timing, st));
  absl::StatusOr<Operands> prepared = PrepareOperands(pool_, item, timing, m.t, set->src, set->c,
                                                      absl::StrCat("m", index, "."), st, &m.notes);
  if (IsRefusal(prepared.status())) {
    // This recipe cannot take this operand here (e.g. a grouped layout it lacks): the
    // member's items are not supported; the rest of the group is measured.
    m.refused = prepared.status();
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(m.o, core::WhileDoing(std::move(prepared), "preparing the operands"));
  m.has_quant = m.t.a || m.t.bt;
  m.gemm_bytes = GemmBytes(item, m.o);
  m.quant_bytes = QuantBytes(m.o, m.t);
  std::string accum_note;
  const std::optional<bool> fast_accum = ResolveFastAccum(item, timing.fast_accum, &accum_note);
  if (!accum_note.empty()) m.notes.push_back(accum_note);
  m.fast_accum = fast_accum.value_or(false);
  // Kernel-only timing and Nsight mode record the member's own launches: there the
  // burst's choice stands.
  const bool contenders =
      timing.timing_backend != core::TimingBackend::kKernels && !request.profile;
  if (core::IsServingRecipe(item.recipe)) {
    // No cuBLASLt form: CUTLASS's INT8 and mixed-input GEMMs, chosen among themselves.
    RETURN_IF_ERROR(core::WhileDoing(ChooseGemmLibrary(m, options, contenders, timing.w4_group),
                                     "choosing the CUTLASS form"));
    if (!m.refused.ok()) return absl::OkStatus();
    return CaptureMember(m);
  }
  const MatmulSpec spec = GemmSpec(item.op, m.o, fast_accum, workspace_);
  std::string per_group_reason;
  // Contiguous experts at uneven tokens run each expert at its rows (measure_parts.h).
  const bool per_expert =
      RunsPerExpertRows(item.op) && item.op.layout == core::MoeLayout::kContiguous;
  absl::StatusOr<std::vector<MatmulPlan>> created =
      CreatePlans(lt_.get(), spec, m.o, std::max(1, timing.autotune_k),
                  per_expert ? item.op.group_tokens : std::vector<int64_t>(), &per_group_reason);
  if (absl::IsFailedPrecondition(created.status())) {
    // cuBLASLt refuses the configuration: the queue reports the items not_supported.
    m.refused = absl::FailedPreconditionError(
        absl::StrCat(std::string(core::ToString(item.recipe)), ": ", created.status().message()));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(m.plans, core::WhileDoing(std::move(created), "planning the cuBLASLt call"));
  RETURN_IF_ERROR(ChoosePlan(timing, options, m));
  if (item.recipe == core::Recipe::kFp8Block || item.recipe == core::Recipe::kFp8Rowwise) {
    RETURN_IF_ERROR(core::WhileDoing(ChooseGemmLibrary(m, options, contenders, timing.w4_group),
                                     "choosing between CUTLASS and cuBLASLt"));
    if (item.recipe == core::Recipe::kFp8Block && !m.cutlass.has_value()) {
      // cuBLASLt's GEMM: the quantization writes its scale layout itself (one launch).
      m.o.a.set_block_scale_form(OperandQuantizer::BlockScaleForm::kCublasLtDirect);
      m.o.bt.set_block_scale_form(OperandQuantizer::BlockScaleForm::kCublasLtDirect);
    }
  }
  if (item.op.groups > 1) {
    m.notes.push_back(GroupedNote(item, m.t, m.o, m.cutlass.has_value() ? "" : per_group_reason,
                                  m.cutlass.has_value()));
  }
  if (std::string experts = core::ExpertsNote(item.op); !experts.empty()) {
    // How the launch met the counts (fprop, dgrad; wgrad's note says its own).
    if (per_expert) {
      absl::StrAppend(&experts, m.cutlass.has_value()
                                    ? "; the launch follows each expert's tokens"
                                    : "; the launch follows each expert's tokens (one cuBLASLt "
                                      "call per expert at its rows rounded up to 16)");
    } else if (RunsPerExpertRows(item.op)) {
      absl::StrAppend(&experts,
                      m.cutlass.has_value()
                          ? "; CUTLASS's grouped form follows each expert's tokens, its batched "
                            "forms and cuBLASLt run every expert's whole capacity (the kernel "
                            "kept is the item's algorithm)"
                          : "; the launch runs every expert's whole capacity (cuBLASLt takes no "
                            "per-expert counts)");
    }
    if (m.t.a || m.t.bt) absl::StrAppend(&experts, "; quantization runs over the whole capacity");
    m.notes.push_back(std::move(experts));
  }
  return CaptureMember(m);
}

// One cuBLASLt call only: an item planned as one call per group (block or row-wise scales
// on groups) keeps each call's first answer. The extra answer for a 1 MiB workspace is
// optional: a heuristic error for it is a note, not a failed group.
absl::Status CudaRunner::ChoosePlan(const core::TimingOptions& timing, const TimerOptions& options,
                                    Member& m) {
  bool limited = false;
  if (m.plans.size() == 1) {
    absl::StatusOr<bool> added =
        m.plans.front().AddWorkspaceLimitedCandidate(kLimitedLtWorkspaceBytes);
    if (added.ok()) {
      limited = *added;
    } else {
      m.notes.push_back(absl::StrCat("cuBLASLt's heuristic for a ", kLimitedLtWorkspaceBytes >> 20,
                                     " MiB workspace failed (", added.status().message(),
                                     "): its first answer for the full workspace runs"));
    }
  }
  if (timing.autotune_k <= 1 && !limited) return absl::OkStatus();
  MatmulPlan& plan = m.plans.front();
  RETURN_IF_ERROR(core::WhileDoing(Autotune(plan, *timer_, stream_.get(), options), "autotuning"));
  // Calls of one size take the tuned choice; experts of other sizes keep cuBLASLt's
  // first answer for theirs (their candidate lists differ).
  for (size_t g = 1; g < m.plans.size(); ++g) {
    if (m.plans[g].spec().m == plan.spec().m)
      RETURN_IF_ERROR(m.plans[g].Choose(plan.chosen(), true));
  }
  if (limited) {
    m.notes.push_back(absl::StrCat(
        "cuBLASLt's heuristic answers differently for a ", kLimitedLtWorkspaceBytes >> 20,
        " MiB workspace (PyTorch's default for cuBLASLt) than for this runner's ",
        workspace_.bytes() >> 20, " MiB: that answer was timed against ",
        timing.autotune_k > 1 ? "the full workspace's top candidates"
                              : "the full workspace's answer",
        " (3 interleaved rounds) and ", plan.chose_workspace_limited() ? "kept" : "not kept"));
  }
  return absl::OkStatus();
}

// One GEMM iteration per launch (the member's own form and each contender's), and the
// quantization alone.
absl::Status CudaRunner::CaptureMember(Member& m) {
  const cudaStream_t st = stream_.get();
  const Member* mp = &m;
  auto capture_iso = [&](const CutlassGemm* form) {
    return core::WhileDoing(
        IterationTimer::Capture(
            st, [mp, form](cudaStream_t q) { return EnqueueIteration(*mp, q, true, form); }),
        "capturing the item");
  };
  ASSIGN_OR_RETURN(m.iso, capture_iso(nullptr));
  for (Member::Contender& c : m.contenders) {
    ASSIGN_OR_RETURN(c.iso, capture_iso(&c.gemm));
  }
  if (m.has_quant) {
    ASSIGN_OR_RETURN(
        m.quant,
        core::WhileDoing(IterationTimer::Capture(
                             st, [mp](cudaStream_t q) { return EnqueueIteration(*mp, q, false); }),
                         "capturing the quantization"));
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
