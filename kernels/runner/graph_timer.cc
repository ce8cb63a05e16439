#include "kernels/runner/graph_timer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_kernels.h"

namespace gemmprof::kernels {

absl::Status EnqueueIteration(const Member& m, cudaStream_t q, bool with_gemm,
                              const CutlassGemm* form) {
  if (m.t.a) RETURN_IF_ERROR(m.o.a.Enqueue(q, m.t.transposes));
  if (m.t.bt) RETURN_IF_ERROR(m.o.bt.Enqueue(q, m.t.transposes));
  if (m.item.recipe == core::Recipe::kNvfp4 && (m.t.a || m.t.bt)) {
    CUDA_RETURN_IF_ERROR(
        Nvfp4Alpha(m.o.a.tensor_scale(), m.o.bt.tensor_scale(), m.o.alpha_beta, q));
  }
  if (with_gemm && form != nullptr) return form->Enqueue(q);
  if (with_gemm && m.cutlass.has_value()) return m.cutlass->Enqueue(q);
  if (with_gemm) {
    for (const MatmulPlan& p : m.plans) RETURN_IF_ERROR(p.Enqueue(q));
  }
  return absl::OkStatus();
}

GraphTimer::GraphTimer(Setup setup, std::vector<Member*> members)
    : setup_(std::move(setup)), members_(std::move(members)) {}

absl::StatusOr<const CudaGraphExec*> GraphTimer::GraphOf(const measure::UnitId& unit) const {
  if (unit.member >= members_.size()) {
    return absl::InternalError(absl::StrCat("no member ", unit.member));
  }
  Member& m = *members_[unit.member];
  if (unit.form > m.contenders.size()) {
    return absl::InternalError(absl::StrCat("member ", unit.member, " has no form ", unit.form));
  }
  const Member::Contender* c = unit.form > 0 ? &m.contenders[unit.form - 1] : nullptr;
  switch (unit.kind) {
    case measure::UnitKind::kIsolated:
      return c != nullptr ? &c->iso : &m.iso;
    case measure::UnitKind::kBackToBack:
      return c != nullptr ? &c->b2b : &m.b2b;
    case measure::UnitKind::kQuantization:
      return &m.quant;
  }
  return absl::InternalError("unknown unit kind");
}

bool GraphTimer::Rewarm(const measure::Visit& visit) const {
  const Member& m = *members_[visit.unit.member];
  return visit.interleaved && setup_.hot_l2 && m.gemm_bytes + m.quant_bytes < 2.0 * setup_.l2_bytes;
}

absl::Status GraphTimer::WarmUp(const measure::Visit& visit, int32_t launches) {
  ASSIGN_OR_RETURN(const CudaGraphExec* graph, GraphOf(visit.unit));
  return IterationTimer::WarmUp(setup_.stream, *graph, launches, setup_.options);
}

absl::Status GraphTimer::PrepareBackToBack(size_t member, int32_t repeat) {
  if (member >= members_.size()) return absl::InternalError(absl::StrCat("no member ", member));
  Member* m = members_[member];
  // N GEMM iterations per launch, warmed up: the member's own form (null) or a contender's.
  auto capture = [&](const CutlassGemm* form, CudaGraphExec& graph) -> absl::Status {
    ASSIGN_OR_RETURN(
        graph,
        IterationTimer::Capture(
            setup_.stream,
            [m, form](cudaStream_t q) { return EnqueueIteration(*m, q, true, form); }, repeat));
    return IterationTimer::WarmUp(setup_.stream, graph, 1, setup_.options);
  };
  RETURN_IF_ERROR(capture(nullptr, m->b2b));
  for (Member::Contender& c : m->contenders) RETURN_IF_ERROR(capture(&c.gemm, c.b2b));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<double>>> GraphTimer::TimeVisits(
    const std::vector<measure::Visit>& visits) {
  std::vector<Visit> graphs;
  std::vector<KernelSampler::VisitUnit> tags;
  bool rounds = false;
  for (const measure::Visit& v : visits) {
    ASSIGN_OR_RETURN(const CudaGraphExec* graph, GraphOf(v.unit));
    graphs.push_back({graph, v.samples, v.repeat, Rewarm(v)});
    KernelSampler::VisitUnit& tag = tags.emplace_back();
    if (v.interleaved && v.unit.form == 0 && v.unit.kind != measure::UnitKind::kBackToBack) {
      tag = {members_[v.unit.member], v.unit.kind == measure::UnitKind::kIsolated
                                          ? KernelSampler::Unit::kIso
                                          : KernelSampler::Unit::kQuant};
    }
    rounds = rounds || v.interleaved;
  }
  // NVML telemetry covers the rounds' samples, not the warm-up or the pilot.
  if (rounds && setup_.telemetry != nullptr && !telemetry_started_) {
    setup_.telemetry->Start();
    telemetry_started_ = true;
  }
  TimerOptions options = setup_.options;
  if (rounds && setup_.kernels != nullptr) {
    setup_.kernels->SetVisits(std::move(tags));
    options.tagger = setup_.kernels;
  }
  return setup_.timer->TimeVisits(setup_.stream, graphs, options, &notes_);
}

int32_t GraphTimer::MaxRoundsPerCall(const std::vector<measure::Visit>& round) const {
  size_t entries = 0;
  for (const measure::Visit& v : round) {
    absl::StatusOr<const CudaGraphExec*> graph = GraphOf(v.unit);
    if (!graph.ok()) continue;
    entries += (v.samples + (Rewarm(v) ? 1 : 0)) * ((*graph)->nodes() + 4);
  }
  return static_cast<int32_t>(
      std::max<size_t>(1, IterationTimer::kQueueBudget / std::max<size_t>(entries, 1)));
}

}  // namespace gemmprof::kernels
