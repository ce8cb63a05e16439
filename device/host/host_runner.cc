#include "device/host/host_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <span>
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
#include "core/stats.h"

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

using OperandPair = std::pair<QuantizedOperand, QuantizedOperand>;

std::span<const float> Part(const std::vector<float>& v, int64_t offset, int64_t count) {
  return std::span<const float>(v.data() + offset, count);
}

// A (or B) of group `g`, quantized with the item's recipe and the pass's operand roles.
QuantizedOperand QuantizeA(const core::WorkItem& item, const HostOperands& ops, int64_t g,
                           core::AmaxAlgo amax_algo) {
  const int64_t size = ops.m * ops.k;
  const size_t hist = ops.a_amax_history.size() / ops.groups;
  return QuantizedOperand::Quantize(item.recipe, RoleOfA(item.op.pass), Part(ops.a, g * size, size),
                                    ops.m, ops.k, Part(ops.a_amax_history, g * hist, hist),
                                    amax_algo);
}

QuantizedOperand QuantizeB(const core::WorkItem& item, const HostOperands& ops, int64_t g,
                           core::AmaxAlgo amax_algo) {
  const int64_t size = ops.n * ops.k;
  const size_t hist = ops.b_amax_history.size() / ops.groups;
  return QuantizedOperand::Quantize(item.recipe, RoleOfB(item.op.pass), Part(ops.b, g * size, size),
                                    ops.n, ops.k, Part(ops.b_amax_history, g * hist, hist),
                                    amax_algo);
}

OperandPair QuantizeGroup(const core::WorkItem& item, const HostOperands& ops, int64_t g,
                          core::AmaxAlgo amax_algo) {
  return {QuantizeA(item, ops, g, amax_algo), QuantizeB(item, ops, g, amax_algo)};
}

// Which operands the timed region quantizes. autocast: both (the host times every pass
// alike); dynamic (inference): A (the activation or gradient) and B only where it is not
// the weight (wgrad's dY^T); prequant: none. BF16 needs no quantization, so its autocast
// and dynamic steps are its prequant step.
struct TimedOperands {
  bool a = false, b = false;
  bool any() const { return a || b; }
};

TimedOperands TimedPart(const core::WorkItem& item) {
  if (item.recipe == core::Recipe::kBf16) return {};
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
  }
  return "unknown";
}

// One distinct piece of host work of a group and its per-round values.
struct Member {
  std::vector<size_t> items;              // indexes into the request's items; the first is measured
  TimedOperands timed;                    // what the timed region of its items quantizes
  std::vector<OperandPair> prequantized;  // per GEMM group, quantized before the timing
  double operand_bytes = 0;               // quantized A and B of every group, one iteration
  double a_bytes = 0, b_bytes = 0;        // the quantized A and B alone, every group
  double rel_error = 0;
  std::vector<double> iso_ms, b2b_ms, quant_ms;  // per round
};

// What a round visits (design "Unit"): a member's isolated iteration, its back-to-back
// iterations, or its quantization alone.
struct Unit {
  enum class Kind { kIsolated, kBackToBack, kQuant };
  size_t member;
  Kind kind;
};

// Measures one group's members in fixed rounds; the members' operands are shared (every
// item of a group has the same shape, groups and seed).
class GroupRounds {
 public:
  GroupRounds(const core::GroupRequest& request, int threads)
      : request_(request), threads_(threads) {}

  // Verification and operand preparation of `member`, whose first item decides it.
  absl::Status Prepare(Member& member, const HostOperands& ops) const {
    const core::WorkItem& item = request_.items[member.items.front()];
    ASSIGN_OR_RETURN(
        const HostGemmResult verified,
        HostReferenceGemm(item.recipe, item.op.pass, ops, request_.timing.amax_algo, threads_));
    member.rel_error = verified.rel_error;
    member.timed = TimedPart(item);
    for (int64_t g = 0; g < ops.groups; ++g) {
      OperandPair q = QuantizeGroup(item, ops, g, request_.timing.amax_algo);
      member.operand_bytes += q.first.Bytes() + q.second.Bytes();
      member.a_bytes += q.first.Bytes();
      member.b_bytes += q.second.Bytes();
      member.prequantized.push_back(std::move(q));
    }
    return absl::OkStatus();
  }

  // Warm-up, then `rounds` rounds (fewer when the request's deadline passes; at least
  // one). Returns the rounds done.
  int32_t Run(std::vector<Member>& members, const HostOperands& ops, int32_t rounds) {
    c_.assign(ops.m * ops.n, 0.0f);
    const int32_t warmup = std::min(request_.timing.warmup_iters, kMaxHostWarmupIters);
    for (const Member& m : members) {
      for (int32_t i = 0; i < warmup; ++i) Iterate(m, ops);
    }
    std::vector<Unit> units;
    for (size_t i = 0; i < members.size(); ++i) {
      units.push_back({i, Unit::Kind::kIsolated});
      units.push_back({i, Unit::Kind::kBackToBack});
      if (members[i].timed.any()) units.push_back({i, Unit::Kind::kQuant});
    }
    const int32_t b2b = HostB2bCount(request_.timing);
    int32_t done = 0;
    for (; done < rounds; ++done) {
      if (done > 0 && DeadlinePassed()) break;
      for (int u : core::stats::RoundOrder(static_cast<int>(units.size()), done)) {
        Member& m = members[units[u].member];
        const Clock::time_point t0 = Clock::now();
        switch (units[u].kind) {
          case Unit::Kind::kIsolated:
            Iterate(m, ops);
            m.iso_ms.push_back(MsSince(t0));
            break;
          case Unit::Kind::kBackToBack:
            for (int32_t i = 0; i < b2b; ++i) Iterate(m, ops);
            m.b2b_ms.push_back(MsSince(t0) / b2b);
            break;
          case Unit::Kind::kQuant:
            for (int64_t g = 0; g < ops.groups; ++g) QuantizeTimed(m, ops, g);
            m.quant_ms.push_back(MsSince(t0));
            break;
        }
      }
    }
    return done;
  }

 private:
  bool DeadlinePassed() const {
    if (request_.deadline_unix_ms <= 0) return false;
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    return now_ms >= request_.deadline_unix_ms;
  }

  // One iteration of the timed region: quantize the operands it quantizes + the GEMM of
  // every group. The host GEMM of a low-precision operand is dequantize + fp32 GEMM, both
  // timed.
  void Iterate(const Member& m, const HostOperands& ops) {
    for (int64_t g = 0; g < ops.groups; ++g) {
      if (!m.timed.any()) {
        Gemm(m.prequantized[g].first, m.prequantized[g].second, ops);
        continue;
      }
      const auto [a, b] = QuantizeTimed(m, ops, g);
      Gemm(a ? *a : m.prequantized[g].first, b ? *b : m.prequantized[g].second, ops);
    }
  }

  // Group g's operands that the timed region quantizes (dynamic mode: not the weight,
  // whose copy was made before the timing).
  std::pair<std::optional<QuantizedOperand>, std::optional<QuantizedOperand>> QuantizeTimed(
      const Member& m, const HostOperands& ops, int64_t g) const {
    const core::WorkItem& item = request_.items[m.items.front()];
    const core::AmaxAlgo algo = request_.timing.amax_algo;
    std::pair<std::optional<QuantizedOperand>, std::optional<QuantizedOperand>> out;
    if (m.timed.a) out.first = QuantizeA(item, ops, g, algo);
    if (m.timed.b) out.second = QuantizeB(item, ops, g, algo);
    return out;
  }

  void Gemm(const QuantizedOperand& a, const QuantizedOperand& b, const HostOperands& ops) {
    GemmFp32(a.Dequantize(), b.Dequantize(), ops.m, ops.k, ops.n, c_, threads_);
  }

  const core::GroupRequest& request_;
  int threads_;
  std::vector<float> c_;
};

// Bytes the timed quantization must move per iteration: one read of each BF16 source,
// each quantized write, the scales (operand_bytes holds the last two).
double QuantBytes(const core::WorkItem& item, const Member& m) {
  const core::GemmShape& s = item.op.shape;
  double bytes = 0;
  if (m.timed.a) bytes += item.op.groups * 2.0 * s.m * s.k + m.a_bytes;
  if (m.timed.b) bytes += item.op.groups * 2.0 * s.n * s.k + m.b_bytes;
  return bytes;
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

HostRunner::HostRunner(int threads, int device) : threads_(std::max(threads, 1)) {
  info_.backend = "host-reference";
  info_.name = absl::StrCat("host-reference (CPU: ", CpuModelName(), ")");
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

absl::Status HostRunner::CanImplement(const core::WorkItem& item,
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

absl::StatusOr<core::Measurement> HostRunner::Run(const core::WorkItem& item,
                                                  const core::TimingOptions& timing) {
  return MeasureAlone(item, timing);
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

// The measurement of `member` into the outcome of its first item; its other items get a
// copy that says whose it is.
void FillOutcomes(const core::GroupRequest& request, const Member& member,
                  const std::vector<std::string>& keys, int32_t distinct, double copy_bytes_per_s,
                  core::GroupResult& result) {
  const core::TimingOptions& timing = request.timing;
  const core::WorkItem& item = request.items[member.items.front()];
  core::Measurement m;
  m.round_ms = member.iso_ms;
  m.b2b_round_ms = member.b2b_ms;
  m.quant_round_ms = member.quant_ms;
  m.time = core::SampleStats::FromSamples(member.iso_ms);
  m.isolated = core::stats::EstimateOf(m.round_ms);
  m.b2b = core::stats::EstimateOf(m.b2b_round_ms);
  m.b2b_count = HostB2bCount(timing);
  m.quant = core::stats::EstimateOf(m.quant_round_ms);
  m.quant_ms = m.quant.present() ? m.quant.center_ms : 0.0;
  m.flops = item.op.Flops();
  m.bytes = member.operand_bytes + item.op.groups * OutputBytes(item.op.shape);
  m.quant_bytes = QuantBytes(item, member);
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
  m.work_key = keys[member.items.front()];
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
  if (timing.timing_backend == core::TimingBackend::kKernels) {
    absl::StrAppend(&m.notes,
                    "; kernel-only timing needs a GPU (CUPTI): events-style wall time only");
  }
  if (request.profile) {
    absl::StrAppend(&m.notes, "; Nsight mode needs a GPU: nothing was profiled");
  }
  result.outcomes[member.items.front()].measurement = m;
  for (size_t k = 1; k < member.items.size(); ++k) {
    core::Measurement shared = m;
    shared.shared_with_item = item.id;
    absl::StrAppend(&shared.notes, "; same work as ", std::string(core::ToString(item.recipe)), " ",
                    std::string(core::ToString(item.mode)), " (item ", item.seq,
                    "), one measurement");
    result.outcomes[member.items[k]].measurement = std::move(shared);
  }
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
  std::vector<Member> members;
  std::map<std::string, size_t> member_of_key;
  int32_t history_len = 0;
  for (size_t i = 0; i < request.items.size(); ++i) {
    const core::WorkItem& item = request.items[i];
    core::ItemOutcome& outcome = result.outcomes.emplace_back();
    outcome.item_id = item.id;
    outcome.status = CanImplement(item, timing);
    if (!outcome.status.ok()) continue;
    keys[i] = HostWorkKey(item, timing);
    history_len = std::max(history_len, HistoryLen(item, timing));
    const auto [it, inserted] = member_of_key.try_emplace(keys[i], members.size());
    if (inserted || !request.share_identical_work) {
      it->second = members.size();
      members.emplace_back();
    }
    members[it->second].items.push_back(i);
  }
  if (members.empty()) {
    result.stop_reason = "host reference: no item to measure";
    return result;
  }
  const core::WorkItem& first = request.items[members.front().items.front()];
  // Every item of the group reads the same A and B (the streams do not depend on the
  // history length); fp8-delayed adds its amax history.
  const HostOperands ops =
      MakeHostOperands(first.op.shape, first.op.groups, timing.seed, history_len);
  GroupRounds rounds(request, threads_);
  std::vector<Member> ready;
  for (Member& m : members) {
    if (absl::Status s = rounds.Prepare(m, ops); !s.ok()) {
      for (size_t i : m.items) result.outcomes[i].status = s;
    } else {
      ready.push_back(std::move(m));
    }
  }
  const int32_t wanted = HostRounds(timing);
  result.rounds = ready.empty() ? 0 : rounds.Run(ready, ops, wanted);
  result.stop_reason =
      result.rounds == wanted
          ? absl::StrCat("host reference: fixed ", wanted, " rounds")
          : absl::StrCat("deadline (host reference: ", result.rounds, " of ", wanted, " rounds)");
  for (const Member& m : ready) {
    FillOutcomes(request, m, keys, static_cast<int32_t>(ready.size()), copy_bytes_per_s_, result);
  }
  return result;
}

}  // namespace gemmprof::device
