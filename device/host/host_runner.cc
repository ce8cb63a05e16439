#include "device/host/host_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/routing.h"
#include "core/stats.h"
#include "device/host/host_work.h"
#include "measure/members.h"
#include "measure/rounds.h"

namespace gemmprof::device {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  return CpuModelFromCpuinfo(text.str());
}

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0 ? static_cast<int64_t>(pages) * page_bytes : 0;
}

std::string HostName() {
  char buf[256] = {};
  return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : "unknown";
}

// The output is BF16, as the GPU recipes write it.
double OutputBytes(const core::GemmShape& s) { return 2.0 * s.m * s.n; }

int32_t HistoryLen(const core::WorkItem& item, const core::TimingOptions& timing) {
  if (item.recipe != core::Recipe::kFp8Delayed) return 0;
  return std::min(timing.amax_history_len, kMaxHostAmaxHistory);
}

// "quantize+gemm" when both operands are quantized inside the timing (the key results
// stored before dynamic mode carry), "quantize-a+gemm" when only A is, "gemm" for none.
std::string TimedText(const core::WorkItem& item) {
  const TimedOperands t = TimedPart(item);
  if (t.a && t.b) return "quantize+gemm";
  if (t.a) return "quantize-a+gemm";
  if (t.b) return "quantize-b+gemm";
  return "gemm";
}

// The operand's stored format and where its scale comes from, as QuantizedOperand does it.
std::string OperandFormat(const core::WorkItem& item, OperandRole role,
                          const core::TimingOptions& timing) {
  const char* fp8 = role == OperandRole::kGradient ? "e5m2" : "e4m3";
  switch (item.recipe) {
    case core::Recipe::kBf16:
      return "bf16";
    case core::Recipe::kFp8Current:
      return absl::StrCat(fp8, "/tensor/own-amax");
    case core::Recipe::kFp8Delayed:
      return absl::StrCat(fp8, "/tensor/history-", HistoryLen(item, timing), "-",
                          std::string(core::ToString(timing.amax_algo)));
    case core::Recipe::kFp8Block:
      return role == OperandRole::kWeight ? "e4m3/block128x128" : "e4m3/block1x128";
    case core::Recipe::kMxfp8:
      return "e4m3/mx1x32";
    case core::Recipe::kNvfp4:
      return "e2m1/nv1x16";
    case core::Recipe::kFp8Rowwise:
      return "e4m3/row";
    case core::Recipe::kInt8Rowwise:
      return "int8/row";
    case core::Recipe::kW8a16:
      return role == OperandRole::kWeight ? "int8/channel-bf16" : "bf16";
    case core::Recipe::kW4a16:
      return role == OperandRole::kWeight ? absl::StrCat("int4/group", timing.w4_group, "-bf16")
                                          : "bf16";
  }
  return "unknown";
}

}  // namespace

int32_t HostRounds(const core::TimingOptions& timing) {
  const int32_t asked = timing.timed_iters > 0 ? timing.timed_iters : kHostDefaultRounds;
  return std::clamp(asked, 1, kMaxHostTimedIters);
}

int32_t HostB2bCount(const core::TimingOptions& timing) {
  return timing.b2b_count > 0 ? std::clamp(timing.b2b_count, 2, kMaxHostB2bCount) : 2;
}

int32_t HostTimedIterations(const core::TimingOptions& timing) {
  return HostRounds(timing) * (1 + HostB2bCount(timing) + 1);
}

// The host's own rule, over its own code (kernels/ has the GPU's). Not in the key, on
// purpose: the recipe's name (only formats and scale sources decide the values), fast
// accumulation, L2 policy and autotune_k (the host ignores them), accounting (the host
// times every pass alike).
// fp8-current and fp8-delayed are NOT the same host work in prequant, unlike on a GPU:
// the host's delayed history holds the amaxes of other random tensors (MakeHostOperands,
// streams 2 and up), not this tensor's, so the delayed scale, the quantized values and
// the error differ; their formats name the scale source and keep them apart.
std::string HostWorkKey(const core::WorkItem& item, const core::TimingOptions& timing) {
  const core::GemmShape& s = item.op.shape;
  return absl::StrCat("host m=", s.m, " k=", s.k, " n=", s.n, " groups=", item.op.groups,
                      " a=", OperandFormat(item, RoleOfA(item.op.pass), timing),
                      " b=", OperandFormat(item, RoleOfB(item.op.pass), timing),
                      " timed=", TimedText(item), " seed=", timing.seed);
}

std::string CpuModelFromCpuinfo(std::string_view cpuinfo) {
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(cpuinfo.data(), cpuinfo.size()), '\n')) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (!value.empty()) return std::string(value);
  }
  return "unknown";
}

HostRunner::HostRunner(int threads, int device, std::string model)
    : threads_(std::max(threads, 1)) {
  info_.backend = "host-reference";
  info_.name =
      model.empty() ? absl::StrCat("host-reference (CPU: ", CpuModelName(), ")") : std::move(model);
  info_.uuid =
      absl::StrCat("host-reference-", HostName(), device > 0 ? absl::StrCat("-", device) : "");
  info_.sm = 0;
  info_.sm_count = 0;
  info_.memory_bytes = PhysicalMemoryBytes();
  info_.gemmprof_version = GEMMPROF_VERSION;
  for (core::Recipe r : core::AllRecipes()) info_.recipes.push_back(Supports(r));
}

core::RecipeSupport HostRunner::Supports(core::Recipe recipe) const {
  return core::RecipeSupport{recipe, true, ""};
}

absl::StatusOr<std::vector<absl::Status>> HostRunner::CanImplement(
    const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const {
  return CheckEach(*this, items,
                   [&](const core::WorkItem& item) { return CheckItem(item, timing); });
}

absl::Status HostRunner::CheckItem(const core::WorkItem& item,
                                   const core::TimingOptions& timing) const {
  const core::GemmShape& s = item.op.shape;
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"m", s.m},
                                    {"k", s.k},
                                    {"n", s.n},
                                    {"groups", item.op.groups}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", s.ToString(), ": ", name, " = ", value, "; must be >= 1"));
    }
  }
  const double macs = static_cast<double>(s.m) * s.k * s.n * item.op.groups;
  if (macs > static_cast<double>(kMaxHostMacs)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shape %s (groups %d): M*K*N*groups = %.0f exceeds the host reference limit "
        "kMaxHostMacs = %d",
        s.ToString(), item.op.groups, macs, kMaxHostMacs));
  }
  for (const auto& [name, rows, cols] : {std::tuple<const char*, int64_t, int64_t>{"A", s.m, s.k},
                                         {"B", s.n, s.k},
                                         {"C", s.m, s.n}}) {
    const double elements = static_cast<double>(rows) * cols * item.op.groups;
    if (elements > static_cast<double>(kMaxHostElements)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shape %s (groups %d): operand %s has %.0f elements, above the host reference "
          "limit kMaxHostElements = %d",
          s.ToString(), item.op.groups, name, elements, kMaxHostElements));
    }
  }
  if (timing.timed_iters < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timed_iters: ", timing.timed_iters, " must be >= 0 (0 = noise-aware)"));
  }
  if (timing.warmup_iters < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("warmup_iters: ", timing.warmup_iters, " must be >= 0"));
  }
  if (item.recipe == core::Recipe::kFp8Delayed && timing.amax_history_len < 1) {
    return absl::InvalidArgumentError(absl::StrCat("amax_history_len: ", timing.amax_history_len,
                                                   " must be >= 1 for fp8-delayed"));
  }
  return absl::OkStatus();
}

absl::Status HostRunner::BeginJob(const core::TimingOptions&) {
  // 64 MiB is far above the host's caches, so the copies measure memory bandwidth.
  constexpr size_t kCopyBytes = size_t{64} << 20;
  std::vector<char> from(kCopyBytes, 1), to(kCopyBytes, 0);
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const Clock::time_point t0 = Clock::now();
    std::memcpy(to.data(), from.data(), kCopyBytes);
    const double seconds = MsSince(t0) / 1e3;
    // A copy reads and writes every byte.
    if (seconds > 0) best = std::max(best, 2.0 * kCopyBytes / seconds);
  }
  copy_bytes_per_s_ = best;
  return absl::OkStatus();
}

namespace {

// The refusal of an item that does not belong to the group of the request's first item.
absl::Status CheckOneGroup(const core::GroupRequest& request) {
  if (request.items.empty()) {
    return absl::InvalidArgumentError("items: a measurement group needs at least one item");
  }
  const std::string key = core::GroupKey(request.items.front().op);
  for (const core::WorkItem& item : request.items) {
    if (core::GroupKey(item.op) != key) {
      return absl::InvalidArgumentError(absl::StrCat(
          "items: item ", item.seq, " (", core::GroupKey(item.op), ") is not of the group ", key));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The measurement of one member from its rounds.
core::Measurement HostMeasurement(const core::GroupRequest& request, const HostMember& member,
                                  measure::MemberRounds rounds, const std::string& work_key,
                                  int32_t distinct, double copy_bytes_per_s,
                                  const core::GroupResult& result) {
  const core::TimingOptions& timing = request.timing;
  const core::WorkItem& item = member.item;
  core::Measurement m;
  m.time = core::SampleStats::FromSamples(rounds.iso_samples);
  m.round_ms = std::move(rounds.iso_rounds);
  m.b2b_round_ms = std::move(rounds.b2b_rounds);
  m.quant_round_ms = std::move(rounds.quant_rounds);
  m.isolated = core::stats::EstimateOf(m.round_ms);
  m.b2b = core::stats::EstimateOf(m.b2b_round_ms);
  m.b2b_count = rounds.b2b_count;
  m.quant = core::stats::EstimateOf(m.quant_round_ms);
  m.quant_ms = m.quant.present() ? m.quant.center_ms : 0.0;
  m.flops = item.op.Flops();
  m.bytes = member.operand_bytes + item.op.groups * OutputBytes(item.op.shape);
  m.quant_bytes = HostQuantBytes(member);
  m.copy_bytes_per_s = copy_bytes_per_s;
  m.algorithm = "host-reference fp32";
  m.rel_error = member.rel_error;
  m.error_threshold = ErrorThreshold(item.recipe);
  // A NaN error fails the comparison and so reads as incorrect.
  m.verification = member.rel_error <= m.error_threshold ? core::Verification::kPassed
                                                         : core::Verification::kIncorrect;
  m.accounting = timing.accounting;
  m.fast_accum = false;
  m.group_uid = request.group_uid;
  m.group_members = distinct;
  m.work_key = work_key;
  m.stop_reason = result.stop_reason;
  m.notes = timing.timed_iters > 0 ? absl::StrCat("host reference: ", result.rounds, " of ",
                                                  timing.timed_iters, " rounds")
                                   : absl::StrCat("host reference: ", result.rounds,
                                                  " rounds (noise-aware stopping is for GPUs)");
  if (item.recipe == core::Recipe::kFp8Delayed) {
    absl::StrAppend(&m.notes, "; amax history of ", HistoryLen(item, timing), " of ",
                    timing.amax_history_len, " tensors");
  }
  if (std::string note = core::QuantizationNote(item); !note.empty()) {
    absl::StrAppend(&m.notes, "; ", note);
  }
  if (std::string experts = core::ExpertsNote(item.op); !experts.empty()) {
    // Either layout: each expert's GEMM runs its own rows (wgrad: the capacity K).
    absl::StrAppend(&m.notes, "; ", experts);
  }
  if (timing.timing_backend == core::TimingBackend::kKernels) {
    absl::StrAppend(&m.notes,
                    "; kernel-only timing needs a GPU (CUPTI): events-style wall time only");
  }
  if (request.profile) {
    absl::StrAppend(&m.notes, "; Nsight mode needs a GPU: nothing was profiled");
  }
  if (timing.energy) m.energy.not_measured = "host reference runner: no energy counter";
  return m;
}

}  // namespace

absl::StatusOr<core::GroupResult> HostRunner::MeasureGroup(const core::GroupRequest& request) {
  if (request.items.empty()) {
    return absl::InvalidArgumentError("items: a measurement group needs at least one item");
  }
  const std::vector<std::vector<size_t>> groups = core::GroupItems(request.items);
  if (groups.size() == 1) return MeasureOneGroup(request);
  core::GroupResult result;
  result.outcomes.resize(request.items.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    core::GroupRequest one = request;
    one.group_uid = absl::StrCat(request.group_uid, "/g", g);
    one.items.clear();
    for (size_t i : groups[g]) one.items.push_back(request.items[i]);
    ASSIGN_OR_RETURN(core::GroupResult part, MeasureOneGroup(one));
    for (size_t j = 0; j < groups[g].size(); ++j) {
      result.outcomes[groups[g][j]] = std::move(part.outcomes[j]);
    }
    result.rounds = std::max(result.rounds, part.rounds);
    result.stop_reason = part.stop_reason;
  }
  return result;
}

absl::StatusOr<core::GroupResult> HostRunner::MeasureOneGroup(const core::GroupRequest& request) {
  RETURN_IF_ERROR(CheckOneGroup(request));
  const core::TimingOptions& timing = request.timing;
  core::GroupResult result;
  std::vector<std::string> keys(request.items.size());
  std::vector<size_t> live;
  int32_t history_len = 0;
  ASSIGN_OR_RETURN(std::vector<absl::Status> fits, CanImplement(request.items, timing));
  for (size_t i = 0; i < request.items.size(); ++i) {
    const core::WorkItem& item = request.items[i];
    core::ItemOutcome& outcome = result.outcomes.emplace_back();
    outcome.item_id = item.id;
    outcome.status = fits[i];
    if (!outcome.status.ok()) continue;
    keys[i] = HostWorkKey(item, timing);
    history_len = std::max(history_len, HistoryLen(item, timing));
    live.push_back(i);
  }
  const std::vector<measure::MemberItems> members =
      measure::GroupMembers(request.items, live, keys, request.share_identical_work);
  if (members.empty()) {
    result.stop_reason = "host reference: no item to measure";
    return result;
  }
  const core::WorkItem& first = request.items[members.front().items.front()];
  // Every item of the group reads the same A and B (the streams do not depend on the
  // history length); fp8-delayed adds its amax history.
  HostOperands ops = MakeHostOperands(first.op.shape, first.op.groups, timing.seed, history_len);
  ops.w4_group = timing.w4_group;
  ApplyGroupTokens(first.op, ops);
  std::vector<HostMember> ready;
  std::vector<const measure::MemberItems*> ready_items;
  for (const measure::MemberItems& m : members) {
    // The group's work is in flight from its first member's set-up to its last round.
    RETURN_IF_ERROR(core::EnterItem(request.progress, request.items[m.items.front()].id));
    absl::StatusOr<HostMember> prepared =
        PrepareHostMember(request.items[m.items.front()], timing, ops, threads_);
    core::StepDone(request.progress);
    if (!prepared.ok()) {
      for (size_t i : m.items) result.outcomes[i].status = prepared.status();
      continue;
    }
    ready.push_back(*std::move(prepared));
    ready_items.push_back(&m);
  }
  if (ready.empty()) {
    result.stop_reason = "host reference: no item to measure";
    return result;
  }
  const int32_t wanted = HostRounds(timing);
  result.stop_reason = absl::StrCat("host reference: fixed ", wanted, " rounds");
  ASSIGN_OR_RETURN(measure::RoundsResult rounds, MeasureHostRounds(request, ready, ops));
  result.rounds = rounds.rounds;
  if (result.rounds < wanted) {
    result.stop_reason =
        absl::StrCat("deadline (host reference: ", result.rounds, " of ", wanted, " rounds)");
  }
  for (size_t m = 0; m < ready.size(); ++m) {
    const measure::MemberItems& items = *ready_items[m];
    core::Measurement measurement =
        HostMeasurement(request, ready[m], std::move(rounds.members[m]), keys[items.items.front()],
                        static_cast<int32_t>(ready.size()), copy_bytes_per_s_, result);
    measure::GiveMeasurement(request.items, items, "host work", std::move(measurement), result);
  }
  return result;
}

absl::StatusOr<measure::RoundsResult> HostRunner::MeasureHostRounds(
    const core::GroupRequest& request, const std::vector<HostMember>& members,
    const HostOperands& ops) const {
  // CPU timings are a labeled reference and do not earn precision stopping: fixed rounds,
  // one sample per visit, a fixed back-to-back count.
  measure::RoundsOptions options;
  options.stop.fixed_rounds = HostRounds(request.timing);
  options.deadline_unix_ms = request.deadline_unix_ms;
  options.warmup_launches = request.timing.warmup_iters;
  options.pilot = false;
  options.b2b_count = HostB2bCount(request.timing);
  options.progress = request.progress;
  std::vector<measure::MemberSpec> specs;
  for (const HostMember& m : members) specs.push_back({0, m.timed.any(), {}});
  HostWork work(members, ops, request.timing.amax_algo, threads_);
  return measure::MeasureRounds(specs, options, work, measure::SystemClock());
}

}  // namespace gemmprof::device
