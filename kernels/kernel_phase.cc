// CudaRunner::TimeKernels: kernel-only timing (`--timing kernels`). After the event
// rounds, CUPTI collects the device's own timestamps of every kernel while each member's
// isolated iteration (and its quantization alone) is launched again in interleaved
// rounds, each launch tagged; a sample is the sum of the durations of the kernels one
// launch ran, so launch and graph gaps never count. The graphs are captured again once
// CUPTI collects, so no kernel of an earlier capture escapes it, and the event rounds
// never run under CUPTI.
#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/stats.h"
#include "kernels/cuda_runner.h"
#include "kernels/cuda_check.h"
#include "kernels/cupti_tracer.h"
#include "kernels/member.h"

namespace gemmprof::kernels {
namespace {

// Rounds of the kernel phase: enough launches for a median, about this long in all.
constexpr double kKernelPhaseMs = 200;
constexpr int32_t kMinKernelRounds = 10, kMaxKernelRounds = 100;

double SumMs(const std::vector<KernelRecord>& kernels) {
  uint64_t ns = 0;
  for (const KernelRecord& k : kernels) ns += k.end_ns - k.start_ns;
  return static_cast<double>(ns) * 1e-6;
}

// "name xN; ..." in first-run order, the kernels not in `quant_names` (the GEMM) first.
std::string NamesOf(const std::vector<KernelRecord>& kernels,
                    const std::vector<KernelRecord>& quant_kernels) {
  std::vector<std::string> order;
  std::map<std::string, int> count;
  for (const KernelRecord& k : kernels) {
    if (count[k.name]++ == 0) order.push_back(k.name);
  }
  auto is_quant = [&](const std::string& name) {
    return std::any_of(quant_kernels.begin(), quant_kernels.end(),
                       [&](const KernelRecord& q) { return q.name == name; });
  };
  std::stable_partition(order.begin(), order.end(),
                        [&](const std::string& n) { return !is_quant(n); });
  std::vector<std::string> parts;
  for (const std::string& n : order) parts.push_back(absl::StrCat(n, " x", count[n]));
  return absl::StrJoin(parts, "; ");
}

}  // namespace

absl::Status CudaRunner::TimeKernels(const core::TimingOptions& timing,
                                     const std::vector<Member*>& members,
                                     const TimerOptions& options) {
  const cudaStream_t st = stream_.get();
  absl::StatusOr<CuptiTracer*> tracer = CuptiTracer::Get();
  std::string refused;
  if (!tracer.ok()) {
    refused = std::string(tracer.status().message());
  } else if (absl::Status begun = (*tracer)->Begin(); !begun.ok()) {
    refused = std::string(begun.message());
  }
  if (!refused.empty()) {
    // CanImplement refuses `kernels` where CUPTI cannot load; a session CUPTI will not
    // start (a profiler holds it) leaves the events figures alone, and says so.
    for (Member* m : members) m->kernel_note = absl::StrCat("no kernel-only figure: ", refused);
    return absl::OkStatus();
  }
  struct Launch {
    Member* member;
    bool quant;
  };
  std::vector<Launch> launches;  // tag - 1 -> what was launched
  absl::Status phase = [&]() -> absl::Status {
    std::vector<CudaGraphExec> iso(members.size()), quant(members.size());
    double round_ms = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      Member* m = members[i];
      ASSIGN_OR_RETURN(iso[i], IterationTimer::Capture(st, [this, m](cudaStream_t q) {
                         return Iterate(*m, q, true);
                       }));
      if (m->has_quant) {
        ASSIGN_OR_RETURN(quant[i], IterationTimer::Capture(st, [this, m](cudaStream_t q) {
                           return Iterate(*m, q, false);
                         }));
      }
      std::vector<double> rounds = m->iso_rounds;
      round_ms += rounds.empty() ? 1.0 : core::SampleStats::FromSamples(rounds).median_ms;
    }
    const int32_t n = static_cast<int32_t>(std::clamp<double>(
        std::round(kKernelPhaseMs / std::max(round_ms, 1e-3)), kMinKernelRounds, kMaxKernelRounds));
    const bool hot = timing.l2 == core::L2Policy::kHot;
    auto launch = [&](const CudaGraphExec& graph, Member* m, bool is_quant) -> absl::Status {
      if (options.flush_buffer != nullptr) {
        CUDA_RETURN_IF_ERROR(
            cudaMemsetAsync(options.flush_buffer, 0, options.flush_bytes, st));
      } else if (hot) {
        // As in the event rounds: the member launched before evicted this one's operands.
        RETURN_IF_ERROR(graph.Launch(st));
      }
      launches.push_back({m, is_quant});
      RETURN_IF_ERROR((*tracer)->Mark(launches.size()));
      absl::Status launched = graph.Launch(st);
      RETURN_IF_ERROR((*tracer)->Unmark());
      return launched;
    };
    for (int32_t r = 0; r < n; ++r) {
      for (int u : core::stats::RoundOrder(static_cast<int>(members.size()), r)) {
        RETURN_IF_ERROR(launch(iso[u], members[u], false));
        if (members[u]->has_quant) RETURN_IF_ERROR(launch(quant[u], members[u], true));
      }
    }
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(st));
    return absl::OkStatus();
  }();
  absl::StatusOr<std::map<uint64_t, std::vector<KernelRecord>>> records = (*tracer)->End();
  RETURN_IF_ERROR(phase);
  RETURN_IF_ERROR(records.status());
  std::map<Member*, int32_t> missing;
  std::map<Member*, std::vector<KernelRecord>> first_iso, first_quant;
  for (size_t t = 0; t < launches.size(); ++t) {
    const Launch& l = launches[t];
    auto found = records->find(t + 1);
    if (found == records->end() || found->second.empty()) {
      ++missing[l.member];
      continue;
    }
    (l.quant ? l.member->kernel_quant : l.member->kernel_iso).push_back(SumMs(found->second));
    auto& first = l.quant ? first_quant : first_iso;
    if (!first.count(l.member)) first[l.member] = found->second;
  }
  for (Member* m : members) {
    if (missing.count(m)) {
      // A figure from some launches only would not be the same iterations as the others'.
      m->kernel_note = absl::StrCat("no kernel-only figure: CUPTI returned no kernel records for ",
                                    missing[m], " of this item's launches");
      m->kernel_iso.clear();
      m->kernel_quant.clear();
      continue;
    }
    m->kernel_names = NamesOf(first_iso[m], first_quant[m]);
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
