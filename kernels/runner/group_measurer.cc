// CudaRunner::MeasureGroup: the items a report compares, measured together; a batch of
// several measurement groups (GroupKeys) shares one set of rounds.
//
// Items are deduplicated by WorkKey into members (distinct pieces of GPU work). Every
// member keeps its own quantized operands (pool slots "m<i>.*") over its group's pair of
// BF16 sources and output ("a.src", "bt.src", "c"; "g<k>." before them for the k-th
// group of a batch). Each member is captured three ways: isolated (one iteration
// per launch), back to back (N iterations in one graph, N per group) and, for an
// autocast member that quantizes, its quantization alone. Rounds then visit every one of
// these units once, in the order of a balanced design that changes from round to round,
// so clock and power drift falls on all members alike; a unit's round value is the median
// of its visit's samples. An fp8-block or fp8-rowwise member whose choice burst found
// CUTLASS forms within a few percent of the kept one times them as units of their own,
// and keeps the fastest when the rounds end (member.h). Rounds stop at a fixed count, or
// when, in every group, every member's isolated figure and every pair's paired ratio are
// within the precision target, or at the time budget (core/stats.h).
// With --timing kernels, CUPTI records the same launches (kernel_sampler.h); with
// --profile, each member runs once more under the profiler API (profile_phase.cc).
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/error_detail.h"
#include "core/stats.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/runner/gemm_verifier.h"
#include "kernels/runner/kernel_sampler.h"
#include "kernels/runner/measure_parts.h"
#include "kernels/runner/member.h"
#include "kernels/timing/telemetry_sampler.h"

namespace gemmprof::kernels {
namespace {

using core::Recipe;
using Clock = std::chrono::steady_clock;

constexpr int kTelemetryPeriodMs = 5;
// A visit lasts about this long (samples of one unit back to back), so a round value is
// a median of several launches for small GEMMs and one launch for large ones.
constexpr double kVisitMs = 1.0;
constexpr int32_t kMaxSamplesPerVisit = 64;
// Back to back: enough GEMMs per graph that a launch lasts ~2 ms, 2..10 of them.
constexpr double kB2bGraphMs = 2.0;
constexpr int32_t kMinAutoB2b = 2, kMaxAutoB2b = 10;
constexpr int32_t kPilotSamples = 3;
constexpr double kThinB2bFromMs = 1.0;
// Noise-aware rounds are checked against the stop rule about this often, so a group that
// reached its precision does not run on for long.
constexpr double kStopCheckMs = 100.0;
// A second workspace size the cuBLASLt heuristic is asked for (PyTorch's default cuBLASLt
// workspace): where its answer differs from the answer for the runner's full workspace,
// both are timed and the faster kept.
constexpr size_t kLimitedLtWorkspaceBytes = size_t{1} << 20;

class ScopedNvtxRange {
 public:
  explicit ScopedNvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~ScopedNvtxRange() { nvtxRangePop(); }
  ScopedNvtxRange(const ScopedNvtxRange&) = delete;
  ScopedNvtxRange& operator=(const ScopedNvtxRange&) = delete;
};

int32_t SamplesFor(double ms_per_sample, bool fixed) {
  if (fixed || ms_per_sample <= 0) return 1;
  return static_cast<int32_t>(
      std::clamp<double>(std::round(kVisitMs / ms_per_sample), 1, kMaxSamplesPerVisit));
}

double Median(std::vector<double> v) {
  return core::SampleStats::FromSamples(std::move(v)).median_ms;
}

// A refusal that means "this recipe cannot run this here" (the queue's not_supported).
bool IsRefusal(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) || absl::IsUnimplemented(s);
}

}  // namespace

absl::StatusOr<core::GroupResult> CudaRunner::MeasureGroup(const core::GroupRequest& request) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  core::GroupResult result;
  result.outcomes.resize(request.items.size());
  std::vector<size_t> live;
  for (size_t i = 0; i < request.items.size(); ++i) {
    const core::WorkItem& item = request.items[i];
    result.outcomes[i].item_id = item.id;
    const core::RecipeSupport support = Supports(item.recipe);
    absl::Status fits = support.supported ? CanImplement(item, request.timing)
                                          : absl::FailedPreconditionError(support.reason);
    if (!fits.ok()) {
      result.outcomes[i].status = fits;
    } else {
      live.push_back(i);
    }
  }
  // Members: items of one measurement group with equal work keys, in item order. Equal
  // work in two groups of a batch (a square fprop and its dgrad) stays two members, so
  // each group's comparisons, stop rule and back-to-back N are its own.
  std::vector<std::vector<size_t>> members;
  std::vector<std::string> keys;
  for (size_t i : live) {
    std::string key = absl::StrCat(core::GroupKey(request.items[i].op), "|",
                                   WorkKey(request.items[i], request.timing));
    auto it = std::find(keys.begin(), keys.end(), key);
    if (request.share_identical_work && it != keys.end()) {
      members[it - keys.begin()].push_back(i);
    } else {
      keys.push_back(std::move(key));
      members.push_back({i});
    }
  }
  if (members.empty()) return result;
  // The members of each measurement group (GroupKey) of the request, in order.
  std::vector<std::vector<std::vector<size_t>>> groups;
  std::vector<std::string> group_keys;
  for (const auto& m : members) {
    const std::string key = core::GroupKey(request.items[m.front()].op);
    auto it = std::find(group_keys.begin(), group_keys.end(), key);
    if (it == group_keys.end()) {
      group_keys.push_back(key);
      groups.emplace_back();
      it = group_keys.end() - 1;
    }
    groups[it - group_keys.begin()].push_back(m);
  }
  absl::Status measured;
  bool measured_whole = false;
  if (MembersFit(request, members)) {
    measured = MeasureMembers(request, members, request.group_uid, &result);
    measured_whole = !(absl::IsResourceExhausted(measured) && groups.size() > 1);
    if (!measured_whole) {
      // Estimated to fit, but the device ran out: the batch's groups one after another.
      for (const auto& m : members) {
        for (size_t i : m) result.outcomes[i] = {request.items[i].id, absl::OkStatus(), {}};
      }
      measured = absl::OkStatus();
    }
  }
  // A batch whose operands do not fit on the device together is measured group by group
  // (each its own rounds and uid); a group that does not fit, member by member.
  for (size_t g = 0; !measured_whole && g < groups.size() && measured.ok(); ++g) {
    const std::string uid =
        groups.size() == 1 ? request.group_uid : absl::StrCat(request.group_uid, "/g", g);
    if (groups.size() > 1 && MembersFit(request, groups[g])) {
      measured = MeasureMembers(request, groups[g], uid, &result);
      continue;
    }
    // Not all members of one group fit on the device together: each is measured on its
    // own, so its comparisons with the others are unpaired (different group uids).
    for (size_t m = 0; m < groups[g].size() && measured.ok(); ++m) {
      measured = MeasureMembers(request, {groups[g][m]}, absl::StrCat(uid, "/m", m), &result);
      for (size_t i : groups[g][m]) {
        auto& out = result.outcomes[i];
        if (out.measurement.has_value()) {
          absl::StrAppend(&out.measurement->notes, out.measurement->notes.empty() ? "" : "; ",
                          "measured apart from the rest of its group: the group's operands do "
                          "not fit in device memory together (comparisons unpaired)");
        }
      }
    }
  }
  if (measured.ok()) {
    for (const auto& out : result.outcomes) {
      if (out.measurement.has_value()) {
        result.rounds = std::max(result.rounds, out.measurement->isolated.rounds);
        result.stop_reason = out.measurement->stop_reason;
      }
    }
    return result;
  }
  // A library call that failed after a kernel faulted may not say so itself.
  const cudaError_t after = cudaStreamSynchronize(stream_.get());
  if (IsStickyCudaError(after) && !core::IsContextLost(measured)) {
    return core::MarkContextLost(core::AppendToMessage(
        measured, absl::StrCat("; the device then reported CUDA error ", static_cast<int>(after),
                               " (", cudaGetErrorName(after), ")")));
  }
  return measured;
}

absl::Status CudaRunner::MeasureMembers(const core::GroupRequest& request,
                                        const std::vector<std::vector<size_t>>& members,
                                        const std::string& group_uid, core::GroupResult* result) {
  absl::Status s = MeasureMembersOnce(request, members, group_uid, result);
  if (absl::IsResourceExhausted(s) && pool_.HeldBytes() > 0) {
    // Earlier groups' buffers may sit in other slots; start from an empty pool.
    (void)cudaStreamSynchronize(stream_.get());
    (void)cudaGetLastError();
    pool_.Clear();
    s = MeasureMembersOnce(request, members, group_uid, result);
  }
  return s;
}

absl::Status CudaRunner::MeasureMembersOnce(const core::GroupRequest& request,
                                            const std::vector<std::vector<size_t>>& member_items,
                                            const std::string& group_uid,
                                            core::GroupResult* result) {
  const core::TimingOptions& timing = request.timing;
  const cudaStream_t st = stream_.get();
  const core::WorkItem& first = request.items[member_items.front().front()];
  ScopedNvtxRange range(absl::StrCat("gemmprof group ", NvtxName(first)));
  // What this measurement asks the pool for is its use; the verification may free the rest.
  pool_.BeginUse();

  // The BF16 sources and the output, one set per measurement group (GroupKey) of the
  // request, shared by that group's members.
  struct ShapeBuffers {
    std::string key;
    Sources src;
    __nv_bfloat16* c = nullptr;
  };
  std::vector<ShapeBuffers> buffers;
  auto buffers_for = [&](const core::WorkItem& item) -> absl::StatusOr<const ShapeBuffers*> {
    const std::string key = core::GroupKey(item.op);
    for (const ShapeBuffers& b : buffers) {
      if (b.key == key) return &b;
    }
    const std::string prefix = buffers.empty() ? "" : absl::StrCat("g", buffers.size(), ".");
    ShapeBuffers b{key};
    ASSIGN_OR_RETURN(b.src, core::WhileDoing(PrepareSources(pool_, item, timing, st, prefix),
                                             "preparing the operands"));
    const core::GemmShape& shape = item.op.shape;
    ASSIGN_OR_RETURN(b.c, core::WhileDoing(pool_.GetAs<__nv_bfloat16>(
                                               prefix + "c", item.op.groups * shape.m * shape.n),
                                           "preparing the output"));
    buffers.push_back(std::move(b));
    return &buffers.back();
  };
  // At most one set per member: reserved, so the pointers buffers_for returns stay valid.
  buffers.reserve(member_items.size());
  TimerOptions topt;
  topt.warmup_iters = timing.warmup_iters;
  if (timing.l2 == core::L2Policy::kCold) {
    topt.flush_bytes = static_cast<size_t>(2 * l2_bytes_);
    ASSIGN_OR_RETURN(topt.flush_buffer, core::WhileDoing(pool_.Get("l2flush", topt.flush_bytes),
                                                         "allocating the L2 flush buffer"));
  }

  // Kernel-only timing collects from before the graphs are captured, so every kernel of
  // them is recorded.
  std::unique_ptr<KernelSampler> kernels;
  if (timing.timing_backend == core::TimingBackend::kKernels) kernels = KernelSampler::Start();
  // Prepare every member: operands, plans, autotuning, the isolated and quantization graphs.
  std::vector<std::unique_ptr<Member>> members;
  for (size_t mi = 0; mi < member_items.size(); ++mi) {
    auto m = std::make_unique<Member>();
    m->items = member_items[mi];
    m->item = request.items[m->items.front()];
    m->work_key = WorkKey(m->item, timing);
    m->t = TimedPart(m->item, timing.accounting);
    const core::WorkItem& item = m->item;
    ASSIGN_OR_RETURN(const ShapeBuffers* shape_buffers, buffers_for(item));
    absl::StatusOr<Operands> prepared =
        PrepareOperands(pool_, item, timing, m->t, shape_buffers->src, shape_buffers->c,
                        absl::StrCat("m", mi, "."), st, &m->notes);
    if (IsRefusal(prepared.status())) {
      // This recipe cannot take this operand here (e.g. a grouped layout it lacks): the
      // member's items are not supported; the rest of the group is measured.
      m->refused = prepared.status();
      members.push_back(std::move(m));
      continue;
    }
    ASSIGN_OR_RETURN(m->o, core::WhileDoing(std::move(prepared), "preparing the operands"));
    std::string accum_note;
    const std::optional<bool> fast_accum = ResolveFastAccum(item, timing.fast_accum, &accum_note);
    if (!accum_note.empty()) m->notes.push_back(accum_note);
    m->fast_accum = fast_accum.value_or(false);
    const MatmulSpec spec = GemmSpec(item.op, m->o, fast_accum, workspace_);
    std::string per_group_reason;
    absl::StatusOr<std::vector<MatmulPlan>> created =
        CreatePlans(lt_.get(), spec, m->o, std::max(1, timing.autotune_k), &per_group_reason);
    if (absl::IsFailedPrecondition(created.status())) {
      // cuBLASLt refuses the configuration: the queue reports the items not_supported.
      m->refused = absl::FailedPreconditionError(
          absl::StrCat(std::string(core::ToString(item.recipe)), ": ", created.status().message()));
      members.push_back(std::move(m));
      continue;
    }
    ASSIGN_OR_RETURN(m->plans, core::WhileDoing(std::move(created), "planning the cuBLASLt call"));
    // One cuBLASLt call only: an item planned as one call per group (block or row-wise
    // scales on groups) keeps each call's first answer. The extra answer is optional: a
    // heuristic error for it is a note, not a failed group.
    bool limited = false;
    if (m->plans.size() == 1) {
      absl::StatusOr<bool> added =
          m->plans.front().AddWorkspaceLimitedCandidate(kLimitedLtWorkspaceBytes);
      if (added.ok()) {
        limited = *added;
      } else {
        m->notes.push_back(absl::StrCat("cuBLASLt's heuristic for a ",
                                        kLimitedLtWorkspaceBytes >> 20, " MiB workspace failed (",
                                        added.status().message(),
                                        "): its first answer for the full workspace runs"));
      }
    }
    if (timing.autotune_k > 1 || limited) {
      MatmulPlan& plan = m->plans.front();
      RETURN_IF_ERROR(core::WhileDoing(Autotune(plan, *timer_, st, topt), "autotuning"));
      for (size_t g = 1; g < m->plans.size(); ++g) {
        RETURN_IF_ERROR(m->plans[g].Choose(plan.chosen(), true));
      }
      if (limited) {
        m->notes.push_back(absl::StrCat(
            "cuBLASLt's heuristic answers differently for a ", kLimitedLtWorkspaceBytes >> 20,
            " MiB workspace (PyTorch's default for cuBLASLt) than for this runner's ",
            workspace_.bytes() >> 20, " MiB: that answer was timed against ",
            timing.autotune_k > 1 ? "the full workspace's top candidates"
                                  : "the full workspace's answer",
            " (3 interleaved rounds) and ", plan.chose_workspace_limited() ? "kept" : "not kept"));
      }
    }
    if (item.recipe == Recipe::kFp8Block || item.recipe == Recipe::kFp8Rowwise) {
      // Kernel-only timing and Nsight mode record the member's own launches: there the
      // burst's choice stands.
      const bool contenders =
          timing.timing_backend != core::TimingBackend::kKernels && !request.profile;
      RETURN_IF_ERROR(core::WhileDoing(ChooseGemmLibrary(*m, topt, contenders),
                                       "choosing between CUTLASS and cuBLASLt"));
    }
    if (item.op.groups > 1) {
      m->notes.push_back(GroupedNote(item, m->t, m->o,
                                     m->cutlass.has_value() ? "" : per_group_reason,
                                     m->cutlass.has_value()));
    }
    Member* mp = m.get();
    m->has_quant = m->t.a || m->t.bt;
    m->gemm_bytes = GemmBytes(item, m->o);
    m->quant_bytes = QuantBytes(item, m->o, m->t);
    // One GEMM iteration per launch: the member's own form (null) or a contender's.
    auto capture_iso = [&](const CutlassGemm* form) {
      return core::WhileDoing(
          IterationTimer::Capture(
              st, [this, mp, form](cudaStream_t q) { return Iterate(*mp, q, true, form); }),
          "capturing the item");
    };
    ASSIGN_OR_RETURN(m->iso, capture_iso(nullptr));
    for (Member::Contender& c : m->contenders) {
      ASSIGN_OR_RETURN(c.iso, capture_iso(&c.gemm));
    }
    if (m->has_quant) {
      ASSIGN_OR_RETURN(
          m->quant,
          core::WhileDoing(IterationTimer::Capture(
                               st, [this, mp](cudaStream_t q) { return Iterate(*mp, q, false); }),
                           "capturing the quantization"));
    }
    members.push_back(std::move(m));
  }
  std::vector<Member*> timed;
  for (auto& m : members) {
    if (m->refused.ok()) timed.push_back(m.get());
  }
  for (auto& m : members) {
    if (!m->refused.ok()) {
      for (size_t i : m->items) result->outcomes[i].status = m->refused;
    }
  }
  if (timed.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Rounds rounds, core::WhileDoing(TimeRounds(request, timed, topt, kernels.get()),
                                                   "timing the group"));
  if (kernels != nullptr) {
    RETURN_IF_ERROR(core::WhileDoing(kernels->Finish(timed), "reading the kernel timings (CUPTI)"));
  }
  if (request.profile) {
    RETURN_IF_ERROR(core::WhileDoing(ProfileMembers(timed), "profiling (Nsight mode)"));
  }
  return core::WhileDoing(FinishMembers(request, timed, rounds, group_uid, result),
                          "verifying the output");
}

absl::Status CudaRunner::Iterate(const Member& m, cudaStream_t q, bool with_gemm,
                                 const CutlassGemm* form) const {
  if (m.t.a) RETURN_IF_ERROR(m.o.a.Enqueue(q, m.t.transposes));
  if (m.t.bt) RETURN_IF_ERROR(m.o.bt.Enqueue(q, m.t.transposes));
  if (m.item.recipe == Recipe::kNvfp4 && (m.t.a || m.t.bt)) {
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

absl::StatusOr<CudaRunner::Rounds> CudaRunner::TimeRounds(const core::GroupRequest& request,
                                                          const std::vector<Member*>& members,
                                                          const TimerOptions& options,
                                                          KernelSampler* kernels) {
  const core::TimingOptions& timing = request.timing;
  const cudaStream_t st = stream_.get();
  const bool fixed = timing.timed_iters > 0;
  Rounds out;
  for (Member* m : members) {
    RETURN_IF_ERROR(IterationTimer::WarmUp(st, m->iso, timing.warmup_iters, options));
    for (Member::Contender& c : m->contenders) {
      RETURN_IF_ERROR(IterationTimer::WarmUp(st, c.iso, timing.warmup_iters, options));
    }
    if (m->has_quant) RETURN_IF_ERROR(IterationTimer::WarmUp(st, m->quant, 2, options));
  }
  // Pilot (discarded): ms per launch of every isolated and quantization unit, to size
  // the visits and the back-to-back graph.
  std::vector<Visit> pilot;
  for (Member* m : members) {
    pilot.push_back({&m->iso, kPilotSamples, 1, false});
    if (m->has_quant) pilot.push_back({&m->quant, kPilotSamples, 1, false});
  }
  ASSIGN_OR_RETURN(auto pilot_ms, timer_->TimeVisits(st, pilot, options, &out.timer_notes));
  std::vector<double> t_iso(members.size()), t_quant(members.size(), 0);
  for (size_t i = 0, v = 0; i < members.size(); ++i) {
    t_iso[i] = Median(pilot_ms[v++]);
    if (members[i]->has_quant) t_quant[i] = Median(pilot_ms[v++]);
  }
  // Back to back is sized per measurement group (GroupKey) of the request, from its
  // shortest GEMM, so the members a report compares share N and their series stay paired.
  // Where that GEMM takes a millisecond or more, back to back differs from isolated by
  // little more than the launch ramp, and its N-GEMM graph is the costliest unit of a
  // round: noise-aware rounds then time it every second round.
  std::vector<std::string> group_keys;
  std::vector<size_t> group_of(members.size());
  std::vector<double> group_t_min;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string key = core::GroupKey(members[i]->item.op);
    auto it = std::find(group_keys.begin(), group_keys.end(), key);
    group_of[i] = static_cast<size_t>(it - group_keys.begin());
    members[i]->group = group_of[i];
    if (it == group_keys.end()) {
      group_keys.push_back(key);
      group_t_min.push_back(t_iso[i]);
    } else {
      group_t_min[group_of[i]] = std::min(group_t_min[group_of[i]], t_iso[i]);
    }
  }
  for (size_t i = 0; i < members.size(); ++i) {
    Member* m = members[i];
    const double t_min = group_t_min[group_of[i]];
    m->b2b_count =
        timing.b2b_count > 0
            ? timing.b2b_count
            : static_cast<int32_t>(std::clamp<double>(
                  std::round(kB2bGraphMs / std::max(t_min, 1e-6)), kMinAutoB2b, kMaxAutoB2b));
    m->b2b_every = !fixed && t_min >= kThinB2bFromMs ? 2 : 1;
    // N GEMM iterations per launch, warmed up: the member's own form (null) or a
    // contender's.
    auto capture_b2b = [&](const CutlassGemm* form, CudaGraphExec& graph) -> absl::Status {
      ASSIGN_OR_RETURN(
          graph, IterationTimer::Capture(
                     st, [this, m, form](cudaStream_t q) { return Iterate(*m, q, true, form); },
                     m->b2b_count));
      return IterationTimer::WarmUp(st, graph, 1, options);
    };
    RETURN_IF_ERROR(capture_b2b(nullptr, m->b2b));
    for (Member::Contender& c : m->contenders) {
      RETURN_IF_ERROR(capture_b2b(&c.gemm, c.b2b));
    }
  }

  // The units a round visits. With a hot L2, a unit whose data could stay resident gets
  // one untimed launch before its samples: the unit before it evicted its operands.
  struct Unit {
    Visit visit;
    std::vector<double>* series = nullptr;
    std::vector<double>* samples = nullptr;  // every isolated sample, for `time`
    int32_t every = 1;                       // visited in rounds r with r % every == 0
    KernelSampler::VisitUnit tag;            // what kernel-only timing files its launches under
  };
  const bool hot = timing.l2 == core::L2Policy::kHot;
  std::vector<Unit> units;
  // Per measurement group: the isolated series whose figures and paired ratios gate.
  std::vector<std::vector<std::vector<double>*>> iso_series(group_keys.size());
  for (size_t i = 0; i < members.size(); ++i) {
    Member* m = members[i];
    const int32_t n = m->b2b_count;
    const bool rewarm = hot && m->gemm_bytes + m->quant_bytes < 2.0 * l2_bytes_;
    units.push_back({{&m->iso, SamplesFor(t_iso[i], fixed), 1, rewarm},
                     &m->iso_rounds,
                     &m->iso_samples,
                     1,
                     {m, KernelSampler::Unit::kIso}});
    units.push_back({{&m->b2b, SamplesFor(n * t_iso[i], fixed), n, rewarm},
                     &m->b2b_rounds,
                     nullptr,
                     m->b2b_every});
    if (m->has_quant) {
      units.push_back({{&m->quant, SamplesFor(t_quant[i], fixed), 1, rewarm},
                       &m->quant_rounds,
                       nullptr,
                       1,
                       {m, KernelSampler::Unit::kQuant}});
    }
    // A contender's units are sized from the member's pilot (the forms are within a few
    // percent of each other) and do not gate the stop rule.
    for (Member::Contender& c : m->contenders) {
      units.push_back(
          {{&c.iso, SamplesFor(t_iso[i], fixed), 1, rewarm}, &c.iso_rounds, &c.iso_samples, 1});
      units.push_back({{&c.b2b, SamplesFor(n * t_iso[i], fixed), n, rewarm},
                       &c.b2b_rounds,
                       nullptr,
                       m->b2b_every});
    }
    iso_series[group_of[i]].push_back(&m->iso_rounds);
  }
  size_t round_entries = 0;
  for (const Unit& u : units) {
    round_entries += (u.visit.samples + (u.visit.rewarm ? 1 : 0)) * (u.visit.graph->nodes() + 4);
  }
  double round_ms = 0;  // a round's GPU time, estimated from the pilot
  for (size_t i = 0; i < members.size(); ++i) {
    const int32_t n = members[i]->b2b_count;
    const double forms = 1.0 + static_cast<double>(members[i]->contenders.size());
    round_ms += forms * (SamplesFor(t_iso[i], fixed) * t_iso[i] +
                         SamplesFor(n * t_iso[i], fixed) * n * t_iso[i] / members[i]->b2b_every) +
                SamplesFor(t_quant[i], fixed) * t_quant[i];
  }
  int32_t per_call = static_cast<int32_t>(
      std::max<size_t>(1, IterationTimer::kQueueBudget / std::max<size_t>(round_entries, 1)));
  if (!fixed && round_ms > 0) {
    per_call = std::clamp(static_cast<int32_t>(std::ceil(kStopCheckMs / round_ms)), 1, per_call);
  }

  core::stats::StopOptions stop;
  stop.fixed_rounds = fixed ? timing.timed_iters : 0;
  stop.precision_target = timing.precision_target;
  stop.budget_s = timing.item_budget_s * static_cast<double>(members.size());
  auto series_of = [](const std::vector<std::vector<double>*>& v) {
    std::vector<std::vector<double>> out;
    for (const auto* s : v) out.push_back(*s);
    return out;
  };
  TelemetrySampler sampler(nvml_.get(), kTelemetryPeriodMs);
  sampler.Start();
  const Clock::time_point start = Clock::now();
  core::stats::StopDecision decision;
  double elapsed = 0;
  while (!decision.stop) {
    int32_t k = per_call;
    if (fixed) k = std::min(k, timing.timed_iters - out.rounds);
    std::vector<Visit> visits;
    std::vector<size_t> unit_of;
    for (int32_t j = 0; j < k; ++j) {
      const int32_t round = out.rounds + j;
      for (int u : core::stats::RoundOrder(static_cast<int>(units.size()), round)) {
        if (round % units[u].every != 0) continue;
        visits.push_back(units[u].visit);
        unit_of.push_back(static_cast<size_t>(u));
      }
    }
    TimerOptions round_options = options;
    if (kernels != nullptr) {
      std::vector<KernelSampler::VisitUnit> tags;
      for (size_t u : unit_of) tags.push_back(units[u].tag);
      kernels->SetVisits(std::move(tags));
      round_options.tagger = kernels;
    }
    absl::StatusOr<std::vector<std::vector<double>>> timed =
        timer_->TimeVisits(st, visits, round_options, &out.timer_notes);
    if (!timed.ok()) {
      (void)sampler.Stop();
      return timed.status();
    }
    for (size_t v = 0; v < visits.size(); ++v) {
      Unit& u = units[unit_of[v]];
      u.series->push_back(Median((*timed)[v]));
      if (u.samples != nullptr) {
        u.samples->insert(u.samples->end(), (*timed)[v].begin(), (*timed)[v].end());
      }
    }
    out.rounds += k;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // The headline figures and their paired comparisons gate; back to back is reported
    // with the interval its rounds reached.
    double precision = 0;
    for (const auto& group : iso_series) {
      if (!fixed) precision = std::max(precision, core::stats::GroupPrecision(series_of(group)));
    }
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    if (request.deadline_unix_ms > 0 && now_ms >= request.deadline_unix_ms) {
      decision = {true, absl::StrCat("deadline (", core::stats::PlusMinusPercent(precision), ")")};
    } else {
      decision = core::stats::ShouldStop(stop, out.rounds, elapsed, precision);
    }
  }
  out.telemetry = sampler.Stop();
  out.stop_reason = decision.reason;
  // The rounds ended for the whole batch; each group's items state its own precision.
  for (size_t g = 0; g < iso_series.size(); ++g) {
    core::stats::StopDecision own = decision;
    if (!fixed && iso_series.size() > 1) {
      const double precision = core::stats::GroupPrecision(series_of(iso_series[g]));
      own = core::stats::ShouldStop(stop, out.rounds, elapsed, precision);
      if (!own.stop) {
        // Ended by the deadline: its reason, with this group's precision.
        own.reason = absl::StrCat("deadline (", core::stats::PlusMinusPercent(precision), ")");
      }
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (group_of[i] == g) members[i]->stop_reason = own.reason;
    }
  }
  // A member with contenders keeps the form whose isolated rounds read fastest, by the
  // paired ratio over the same rounds (member.h); its series become the member's.
  for (Member* m : members) {
    if (m->contenders.empty()) continue;
    const std::string burst_pick = m->cutlass_name;
    size_t best = m->contenders.size();  // none: the burst's pick stays
    double best_ratio = 1.0;
    std::vector<std::string> figures;
    for (size_t c = 0; c < m->contenders.size(); ++c) {
      const core::stats::Interval r =
          core::stats::PairedRatio(m->contenders[c].iso_rounds, m->iso_rounds);
      if (!r.valid) continue;
      figures.push_back(absl::StrFormat("%s %.3f", m->contenders[c].name, r.center));
      if (r.center < best_ratio) {
        best = c;
        best_ratio = r.center;
      }
    }
    if (best < m->contenders.size()) {
      Member::Contender& c = m->contenders[best];
      std::swap(*m->cutlass, c.gemm);
      std::swap(m->cutlass_name, c.name);
      std::swap(m->iso, c.iso);
      std::swap(m->b2b, c.b2b);
      std::swap(m->iso_samples, c.iso_samples);
      std::swap(m->iso_rounds, c.iso_rounds);
      std::swap(m->b2b_rounds, c.b2b_rounds);
    }
    if (figures.empty()) {
      m->notes.push_back(absl::StrCat("kept: ", burst_pick,
                                      " (too few rounds to compare the contenders in them)"));
    } else {
      m->notes.push_back(absl::StrFormat(
          "kept after the item's own rounds: %s (isolated time over %s's, paired over %d "
          "rounds: %s)",
          m->cutlass_name, burst_pick, out.rounds, absl::StrJoin(figures, ", ")));
    }
  }
  return out;
}

absl::Status CudaRunner::FinishMembers(const core::GroupRequest& request,
                                       const std::vector<Member*>& members, const Rounds& rounds,
                                       const std::string& group_uid, core::GroupResult* result) {
  const core::TimingOptions& timing = request.timing;
  const cudaStream_t st = stream_.get();
  for (Member* m : members) {
    const core::WorkItem& item = m->item;
    const core::GemmShape& s = item.op.shape;
    // The output is shared: refresh it with this member's GEMM before checking it.
    RETURN_IF_ERROR(m->iso.Launch(st));
    core::Measurement out;
    out.time = core::SampleStats::FromSamples(m->iso_samples);
    out.isolated = core::stats::EstimateOf(m->iso_rounds);
    out.b2b = core::stats::EstimateOf(m->b2b_rounds);
    out.b2b_count = m->b2b_count;
    out.round_ms = m->iso_rounds;
    out.b2b_round_ms = m->b2b_rounds;
    if (m->has_quant) {
      out.quant_round_ms = m->quant_rounds;
      out.quant = core::stats::EstimateOf(m->quant_rounds);
      out.quant_ms = out.quant.center_ms;
    }
    if (!m->kernel_iso.empty()) {
      out.kernel = core::SampleStats::FromSamples(m->kernel_iso);
      out.kernel_samples = static_cast<int32_t>(m->kernel_iso.size());
      out.kernel_quant_ms = m->kernel_quant.empty() ? 0 : Median(m->kernel_quant);
      out.kernel_names = m->kernel_names;
    }
    out.profiled = m->profiled;
    out.flops = item.op.Flops();
    out.bytes = m->gemm_bytes + m->quant_bytes;
    if (m->cutlass.has_value()) {
      out.algorithm = m->cutlass->Description();
    } else {
      out.algorithm = m->plans.front().AlgorithmDescription();
      if (m->plans.size() > 1)
        absl::StrAppend(&out.algorithm, " (each of ", m->plans.size(), " calls)");
    }
    out.accounting = timing.accounting;
    out.fast_accum = m->fast_accum;
    out.telemetry = rounds.telemetry;
    out.error_threshold = ErrorThreshold(item.recipe, out.fast_accum);
    ASSIGN_OR_RETURN(
        VerificationResult v,
        VerifyGemm(lt_.get(), pool_, m->o.a, m->o.bt, m->o.c, s.m, s.n, s.k, item.op.groups,
                   out.error_threshold, workspace_.get(), workspace_.bytes(), st));
    out.verification = v.verdict;
    out.rel_error = v.rel_error;
    out.group_uid = group_uid;
    out.group_members = static_cast<int32_t>(std::count_if(
        members.begin(), members.end(), [m](const Member* o) { return o->group == m->group; }));
    out.work_key = m->work_key;
    out.quant_bytes = m->quant_bytes;
    out.copy_bytes_per_s = copy_bytes_per_s_;
    out.stop_reason = m->stop_reason;
    std::vector<std::string> notes = m->notes;
    if (!rounds.timer_notes.empty()) notes.push_back(rounds.timer_notes);
    if (!m->kernel_note.empty()) notes.push_back(m->kernel_note);
    if (m->profiled) {
      notes.push_back(
          absl::StrCat("profiled: one more launch under cudaProfilerStart/Stop in NVTX "
                       "range \"",
                       ProfileRangeName(item), "\""));
    }
    if (!v.note.empty()) notes.push_back(v.note);
    if (std::string n = ThrottleNote(out.telemetry); !n.empty()) notes.push_back(n);
    if (!nvml_note_.empty()) notes.push_back(nvml_note_);
    if (m->b2b_every > 1) {
      notes.push_back(absl::StrCat("back to back timed every ", m->b2b_every,
                                   " rounds (GEMMs of 1 ms or more)"));
    }
    if (timing.l2 == core::L2Policy::kCold) {
      notes.push_back(absl::StrCat("back to back: one L2 flush per launch of ", m->b2b_count,
                                   " GEMMs, so only the first of them starts cold"));
    }
    out.notes = absl::StrJoin(notes, "; ");
    const core::WorkItem& own = request.items[m->items.front()];
    for (size_t j = 1; j < m->items.size(); ++j) {
      core::Measurement shared = out;
      shared.shared_with_item = own.id;
      const std::string note = absl::StrCat(
          "same GPU work as ", std::string(core::ToString(own.recipe)), " ",
          std::string(core::ToString(own.mode)), " (item ", own.seq, "): one measurement");
      shared.notes = shared.notes.empty() ? note : absl::StrCat(note, "; ", shared.notes);
      result->outcomes[m->items[j]].measurement = std::move(shared);
    }
    result->outcomes[m->items.front()].measurement = std::move(out);
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
