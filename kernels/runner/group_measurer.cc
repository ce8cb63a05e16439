// CudaRunner::MeasureGroup: the items a report compares, measured together; a batch of
// several measurement groups (GroupKeys) shares one set of rounds.
//
// Items are deduplicated by WorkKey into members (measure/members.h). Every member keeps
// its own quantized operands (pool slots "m<i>.*") over its group's pair of BF16 sources
// and output ("a.src", "bt.src", "c"; "g<k>." before them for the k-th group of a batch).
// Each member is captured three ways (member_setup.cc): isolated (one iteration per
// launch), back to back (N iterations in one graph) and, for a member whose timed region
// quantizes, its quantization alone. The measurement engine (measure/rounds.h) then runs
// the rounds through GraphTimer: warm-up, pilot, back-to-back sizing, interleaved rounds,
// the stop rule, and the contest between CUTLASS forms the choice burst found close.
// With --timing kernels, CUPTI records the same launches (kernel_sampler.h); with
// --profile, each member runs once more under the profiler API (profile_phase.cc).
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error_detail.h"
#include "core/stats.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/runner/gemm_verifier.h"
#include "kernels/runner/graph_timer.h"
#include "kernels/runner/kernel_sampler.h"
#include "kernels/runner/member.h"
#include "kernels/timing/telemetry_sampler.h"
#include "measure/members.h"
#include "measure/rounds.h"

namespace gemmprof::kernels {
namespace {

constexpr int kTelemetryPeriodMs = 5;

class ScopedNvtxRange {
 public:
  explicit ScopedNvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~ScopedNvtxRange() { nvtxRangePop(); }
  ScopedNvtxRange(const ScopedNvtxRange&) = delete;
  ScopedNvtxRange& operator=(const ScopedNvtxRange&) = delete;
};

void AppendNote(core::Measurement& m, const std::string& note) {
  absl::StrAppend(&m.notes, m.notes.empty() ? "" : "; ", note);
}

}  // namespace

absl::StatusOr<core::GroupResult> CudaRunner::MeasureGroup(const core::GroupRequest& request) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
  core::GroupResult result;
  result.outcomes.resize(request.items.size());
  std::vector<size_t> live;
  std::vector<std::string> keys(request.items.size());
  ASSIGN_OR_RETURN(const std::vector<absl::Status> fits,
                   CanImplement(request.items, request.timing));
  for (size_t i = 0; i < request.items.size(); ++i) {
    const core::WorkItem& item = request.items[i];
    result.outcomes[i].item_id = item.id;
    if (!fits[i].ok()) {
      result.outcomes[i].status = fits[i];
      continue;
    }
    keys[i] = WorkKey(item, request.timing);
    live.push_back(i);
  }
  const std::vector<measure::MemberItems> members =
      measure::GroupMembers(request.items, live, keys, request.share_identical_work);
  if (members.empty()) return result;
  const absl::Status measured = MeasureInParts(request, members, &result);
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

absl::Status CudaRunner::MeasureInParts(const core::GroupRequest& request,
                                        const std::vector<measure::MemberItems>& members,
                                        core::GroupResult* result) {
  const std::vector<std::vector<size_t>> groups = measure::MembersByGroup(members);
  if (MembersFit(request, members)) {
    const absl::Status measured = MeasureMembers(request, members, request.group_uid, result);
    if (!absl::IsResourceExhausted(measured) || groups.size() == 1) return measured;
    // Estimated to fit, but the device ran out: the batch's groups one after another.
    for (const measure::MemberItems& m : members) {
      for (size_t i : m.items) result->outcomes[i] = {request.items[i].id, absl::OkStatus(), {}};
    }
  }
  // A batch whose operands do not fit on the device together is measured group by group
  // (each its own rounds and uid); a group that does not fit, member by member.
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<measure::MemberItems> group;
    for (size_t m : groups[g]) group.push_back(members[m]);
    const std::string uid =
        groups.size() == 1 ? request.group_uid : absl::StrCat(request.group_uid, "/g", g);
    if (groups.size() > 1 && MembersFit(request, group)) {
      RETURN_IF_ERROR(MeasureMembers(request, group, uid, result));
      continue;
    }
    // Not all members of one group fit on the device together: each is measured on its
    // own, so its comparisons with the others are unpaired (different group uids).
    for (size_t m = 0; m < group.size(); ++m) {
      RETURN_IF_ERROR(MeasureMembers(request, {group[m]}, absl::StrCat(uid, "/m", m), result));
      for (size_t i : group[m].items) {
        auto& out = result->outcomes[i];
        if (out.measurement.has_value()) {
          AppendNote(*out.measurement,
                     "measured apart from the rest of its group: the group's operands do not "
                     "fit in device memory together (comparisons unpaired)");
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CudaRunner::MeasureMembers(const core::GroupRequest& request,
                                        const std::vector<measure::MemberItems>& members,
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
                                            const std::vector<measure::MemberItems>& member_items,
                                            const std::string& group_uid,
                                            core::GroupResult* result) {
  const core::TimingOptions& timing = request.timing;
  ScopedNvtxRange range(
      absl::StrCat("gemmprof group ", NvtxName(request.items[member_items.front().items[0]])));
  // What this measurement asks the pool for is its use; the verification may free the rest.
  pool_.BeginUse();
  TimerOptions topt;
  topt.warmup_iters = timing.warmup_iters;
  if (core::FlushesL2(timing.l2)) {
    topt.flush_bytes = static_cast<size_t>(2 * l2_bytes_);
    topt.flush_by_reading = timing.l2 == core::L2Policy::kClean;
    ASSIGN_OR_RETURN(topt.flush_buffer, core::WhileDoing(pool_.Get("l2flush", topt.flush_bytes),
                                                         "allocating the L2 flush buffer"));
  }
  // Kernel-only timing collects from before the graphs are captured, so every kernel of
  // them is recorded.
  std::unique_ptr<KernelSampler> kernels;
  if (timing.timing_backend == core::TimingBackend::kKernels) kernels = KernelSampler::Start();
  GroupBuffers buffers;
  std::vector<std::unique_ptr<Member>> members;
  for (size_t mi = 0; mi < member_items.size(); ++mi) {
    auto m = std::make_unique<Member>();
    m->items = member_items[mi];
    m->item = request.items[m->items.items.front()];
    RETURN_IF_ERROR(core::EnterItem(request.progress, m->item.id));
    RETURN_IF_ERROR(PrepareMember(request, mi, topt, buffers, *m));
    core::StepDone(request.progress);
    members.push_back(std::move(m));
  }
  std::vector<Member*> timed;
  for (auto& m : members) {
    if (m->refused.ok()) {
      timed.push_back(m.get());
    } else {
      for (size_t i : m->items.items) result->outcomes[i].status = m->refused;
    }
  }
  if (timed.empty()) return absl::OkStatus();
  // The rounds visit every member of the batch: no one group is in flight.
  RETURN_IF_ERROR(core::EnterItem(request.progress, timed.size() == 1 ? timed[0]->item.id : 0));
  ASSIGN_OR_RETURN(Rounds rounds, core::WhileDoing(TimeMembers(request, timed, topt, kernels.get()),
                                                   "timing the group"));
  if (kernels != nullptr) {
    RETURN_IF_ERROR(core::WhileDoing(kernels->Finish(timed), "reading the kernel timings (CUPTI)"));
  }
  if (request.profile) {
    RETURN_IF_ERROR(core::WhileDoing(ProfileMembers(timed), "profiling (Nsight mode)"));
  }
  if (timing.energy) {
    RETURN_IF_ERROR(core::WhileDoing(MeasureEnergy(timed, request.progress), "measuring energy"));
  }
  return core::WhileDoing(FinishMembers(request, timed, rounds, group_uid, result),
                          "verifying the output");
}

absl::StatusOr<CudaRunner::Rounds> CudaRunner::TimeMembers(const core::GroupRequest& request,
                                                           const std::vector<Member*>& members,
                                                           const TimerOptions& options,
                                                           KernelSampler* kernels) {
  const core::TimingOptions& timing = request.timing;
  TelemetrySampler telemetry(nvml_.get(), kTelemetryPeriodMs);
  GraphTimer timer({stream_.get(), timer_.get(), options, timing.l2 == core::L2Policy::kHot,
                    static_cast<double>(l2_bytes_), kernels, &telemetry},
                   members);
  std::vector<measure::MemberSpec> specs;
  for (const Member* m : members) {
    measure::MemberSpec& spec = specs.emplace_back();
    spec.group = m->items.group;
    spec.quantization = m->has_quant;
    if (!m->contenders.empty()) {
      spec.forms.push_back(m->cutlass_name);
      for (const Member::Contender& c : m->contenders) spec.forms.push_back(c.name);
    }
  }
  measure::RoundsOptions ro;
  ro.stop = measure::StopOptionsFor(timing, members.size());
  ro.deadline_unix_ms = request.deadline_unix_ms;
  ro.warmup_launches = timing.warmup_iters;
  ro.b2b_count = std::max(timing.b2b_count, 0);
  ro.progress = request.progress;
  absl::StatusOr<measure::RoundsResult> r =
      measure::MeasureRounds(specs, ro, timer, measure::SystemClock());
  Rounds out;
  out.telemetry = telemetry.Stop();
  if (!r.ok()) return r.status();
  out.rounds = r->rounds;
  out.stop_reason = r->stop_reason;
  out.timer_notes = timer.notes();
  for (size_t i = 0; i < members.size(); ++i) {
    Member* m = members[i];
    m->rounds = std::move(r->members[i]);
    if (m->rounds.kept_form > 0) {
      // The contest kept a contender: it becomes the member's GEMM.
      Member::Contender& c = m->contenders[m->rounds.kept_form - 1];
      std::swap(*m->cutlass, c.gemm);
      std::swap(m->cutlass_name, c.name);
      std::swap(m->iso, c.iso);
      std::swap(m->b2b, c.b2b);
    }
    if (!m->rounds.contest_note.empty()) m->notes.push_back(m->rounds.contest_note);
  }
  return out;
}

absl::Status CudaRunner::FinishMembers(const core::GroupRequest& request,
                                       const std::vector<Member*>& members, const Rounds& rounds,
                                       const std::string& group_uid, core::GroupResult* result) {
  for (Member* m : members) {
    RETURN_IF_ERROR(core::EnterItem(request.progress, m->item.id));
    // The output is shared: refresh it with this member's GEMM before checking it.
    RETURN_IF_ERROR(m->iso.Launch(stream_.get()));
    ASSIGN_OR_RETURN(core::Measurement out, MemberMeasurement(request, *m, rounds));
    core::StepDone(request.progress);
    out.group_uid = group_uid;
    out.group_members =
        static_cast<int32_t>(std::count_if(members.begin(), members.end(), [m](const Member* o) {
          return o->items.group == m->items.group;
        }));
    measure::GiveMeasurement(request.items, m->items, "GPU work", std::move(out), *result);
  }
  return absl::OkStatus();
}

absl::StatusOr<core::Measurement> CudaRunner::MemberMeasurement(const core::GroupRequest& request,
                                                                const Member& m,
                                                                const Rounds& rounds) {
  const core::TimingOptions& timing = request.timing;
  const core::WorkItem& item = m.item;
  const core::GemmShape& s = item.op.shape;
  core::Measurement out;
  out.time = core::SampleStats::FromSamples(m.rounds.iso_samples);
  out.isolated = core::stats::EstimateOf(m.rounds.iso_rounds);
  out.b2b = core::stats::EstimateOf(m.rounds.b2b_rounds);
  out.b2b_count = m.rounds.b2b_count;
  out.round_ms = m.rounds.iso_rounds;
  out.b2b_round_ms = m.rounds.b2b_rounds;
  if (m.has_quant) {
    out.quant_round_ms = m.rounds.quant_rounds;
    out.quant = core::stats::EstimateOf(m.rounds.quant_rounds);
    out.quant_ms = out.quant.center_ms;
  }
  if (!m.kernel_iso.empty()) {
    out.kernel = core::SampleStats::FromSamples(m.kernel_iso);
    out.kernel_samples = static_cast<int32_t>(m.kernel_iso.size());
    out.kernel_quant_ms =
        m.kernel_quant.empty() ? 0 : core::SampleStats::FromSamples(m.kernel_quant).median_ms;
    out.kernel_names = m.kernel_names;
  }
  out.profiled = m.profiled;
  out.energy = m.energy;
  out.flops = item.op.Flops();
  out.bytes = m.gemm_bytes + m.quant_bytes;
  if (m.cutlass.has_value()) {
    out.algorithm = m.cutlass->Description();
  } else {
    out.algorithm = m.plans.front().AlgorithmDescription();
    if (m.plans.size() > 1)
      absl::StrAppend(&out.algorithm, " (each of ", m.plans.size(), " calls)");
  }
  out.accounting = timing.accounting;
  out.fast_accum = m.fast_accum;
  out.telemetry = rounds.telemetry;
  out.error_threshold = ErrorThreshold(item.recipe, out.fast_accum);
  ASSIGN_OR_RETURN(
      VerificationResult v,
      VerifyGemm(lt_.get(), pool_, m.o.a, m.o.bt, m.o.c, s.m, s.n, s.k, item.op.groups,
                 out.error_threshold, workspace_.get(), workspace_.bytes(), stream_.get()));
  out.verification = v.verdict;
  out.rel_error = v.rel_error;
  out.work_key = m.work_key;
  out.quant_bytes = m.quant_bytes;
  out.copy_bytes_per_s = copy_bytes_per_s_;
  out.stop_reason = m.rounds.stop_reason;
  out.notes = absl::StrJoin(MemberNotes(timing, m, rounds, v.note, out.telemetry), "; ");
  return out;
}

std::vector<std::string> CudaRunner::MemberNotes(const core::TimingOptions& timing, const Member& m,
                                                 const Rounds& rounds,
                                                 const std::string& verification_note,
                                                 const core::Telemetry& telemetry) const {
  std::vector<std::string> notes = m.notes;
  if (!rounds.timer_notes.empty()) notes.push_back(rounds.timer_notes);
  if (!m.kernel_note.empty()) notes.push_back(m.kernel_note);
  if (m.profiled) {
    notes.push_back(
        absl::StrCat("profiled: one more launch under cudaProfilerStart/Stop in NVTX range \"",
                     ProfileRangeName(m.item), "\""));
  }
  if (!verification_note.empty()) notes.push_back(verification_note);
  if (std::string n = ThrottleNote(telemetry); !n.empty()) notes.push_back(n);
  if (!nvml_note_.empty()) notes.push_back(nvml_note_);
  if (m.rounds.b2b_every > 1) {
    notes.push_back(absl::StrCat("back to back timed every ", m.rounds.b2b_every,
                                 " rounds (GEMMs of 1 ms or more)"));
  }
  if (core::FlushesL2(timing.l2)) {
    notes.push_back(absl::StrCat("back to back: one L2 flush per launch of ", m.rounds.b2b_count,
                                 " GEMMs, so only the first of them starts cold"));
  }
  return notes;
}

}  // namespace gemmprof::kernels
