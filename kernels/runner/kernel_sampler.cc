#include "kernels/runner/kernel_sampler.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "measure/timer.h"

namespace gemmprof::kernels {
namespace {

// The device time one launch's kernels took: their durations' sum where they run one after
// another, and the overlap counted once where a programmatic dependent launch (the w4a16
// decode kernel's second kernel) starts before the kernel it waits for has ended.
double BusyMs(const std::vector<KernelRecord>& kernels) {
  std::vector<std::pair<uint64_t, uint64_t>> intervals;
  intervals.reserve(kernels.size());
  for (const KernelRecord& k : kernels) intervals.emplace_back(k.start_ns, k.end_ns);
  return measure::BusyMs(std::move(intervals));
}

// "name xN; ..." in first-run order, the kernels not in `quant_kernels` (the GEMM) first.
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

std::unique_ptr<KernelSampler> KernelSampler::Start() {
  std::unique_ptr<KernelSampler> s(new KernelSampler());
  absl::StatusOr<CuptiTracer*> tracer = CuptiTracer::Get();
  if (!tracer.ok()) {
    s->refused_ = std::string(tracer.status().message());
  } else if (absl::Status begun = (*tracer)->Begin(); !begun.ok()) {
    s->refused_ = std::string(begun.message());
  } else {
    s->tracer_ = *tracer;
  }
  return s;
}

KernelSampler::~KernelSampler() {
  if (tracer_ != nullptr) (void)tracer_->End();  // an error path: the records are dropped
}

absl::Status KernelSampler::Mark(int32_t visit) {
  marked_ = false;
  if (tracer_ == nullptr || visit < 0 || static_cast<size_t>(visit) >= visits_.size() ||
      visits_[visit].unit == Unit::kNone) {
    return absl::OkStatus();
  }
  launches_.push_back(visits_[visit]);
  RETURN_IF_ERROR(tracer_->Mark(launches_.size()));
  marked_ = true;
  return absl::OkStatus();
}

absl::Status KernelSampler::Unmark() {
  if (!marked_) return absl::OkStatus();
  marked_ = false;
  return tracer_->Unmark();
}

absl::Status KernelSampler::Finish(const std::vector<Member*>& members) {
  if (tracer_ == nullptr) {
    // CanImplement refuses `kernels` where CUPTI cannot load; a session CUPTI will not
    // start leaves the events figures alone, and says so.
    for (Member* m : members) {
      m->kernel_note = absl::StrCat("no kernel-only figure: ", refused_);
    }
    return absl::OkStatus();
  }
  CuptiTracer* tracer = tracer_;
  tracer_ = nullptr;
  ASSIGN_OR_RETURN(auto records, tracer->End());
  std::map<Member*, int32_t> missing;
  std::map<Member*, std::vector<KernelRecord>> first_iso, first_quant;
  for (size_t t = 0; t < launches_.size(); ++t) {
    const VisitUnit& l = launches_[t];
    auto found = records.find(t + 1);
    if (found == records.end() || found->second.empty()) {
      ++missing[l.member];
      continue;
    }
    const bool quant = l.unit == Unit::kQuant;
    (quant ? l.member->kernel_quant : l.member->kernel_iso).push_back(BusyMs(found->second));
    auto& first = quant ? first_quant : first_iso;
    if (!first.count(l.member)) first[l.member] = found->second;
  }
  for (Member* m : members) {
    if (missing.count(m) || m->kernel_iso.empty()) {
      // A figure from some launches only would not be the samples the events are.
      m->kernel_note = absl::StrCat("no kernel-only figure: CUPTI returned no kernel records for ",
                                    missing.count(m) ? missing[m] : 0, " of this item's launches");
      m->kernel_iso.clear();
      m->kernel_quant.clear();
      continue;
    }
    m->kernel_names = NamesOf(first_iso[m], first_quant[m]);
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
