#include "server/device/host_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
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

// A and B of group `g`, quantized with the item's recipe and the pass's operand roles.
OperandPair QuantizeGroup(const core::WorkItem& item, const HostOperands& ops, int64_t g,
                          core::AmaxAlgo amax_algo) {
  const int64_t a_size = ops.m * ops.k, b_size = ops.n * ops.k;
  const size_t hist = ops.a_amax_history.size() / ops.groups;
  const auto part = [](const std::vector<float>& v, int64_t offset, int64_t count) {
    return std::span<const float>(v.data() + offset, count);
  };
  return {QuantizedOperand::Quantize(item.recipe, RoleOfA(item.op.pass),
                                     part(ops.a, g * a_size, a_size), ops.m, ops.k,
                                     part(ops.a_amax_history, g * hist, hist), amax_algo),
          QuantizedOperand::Quantize(item.recipe, RoleOfB(item.op.pass),
                                     part(ops.b, g * b_size, b_size), ops.n, ops.k,
                                     part(ops.b_amax_history, g * hist, hist), amax_algo)};
}

struct IterationTimes {
  std::vector<double> total_ms;  // per timed iteration
  std::vector<double> quant_ms;  // quantization share per timed iteration (autocast)
  double operand_bytes = 0;      // quantized A and B of every group, one iteration
};

// Warm-up and timed iterations, capped at kMaxHostWarmupIters / kMaxHostTimedIters.
// autocast: quantize + GEMM per iteration; prequant: quantized once up front, GEMM only.
// The host GEMM of a low-precision operand is dequantize + fp32 GEMM, both timed.
IterationTimes TimeIterations(const core::WorkItem& item, const HostOperands& ops,
                              const core::TimingOptions& timing, int threads) {
  const bool autocast = item.mode == core::Mode::kAutocast;
  std::vector<OperandPair> prequantized;
  if (!autocast) {
    for (int64_t g = 0; g < ops.groups; ++g) {
      prequantized.push_back(QuantizeGroup(item, ops, g, timing.amax_algo));
    }
  }
  IterationTimes times;
  std::vector<float> c(ops.m * ops.n);
  const auto iteration = [&](double* quant_ms) {
    *quant_ms = 0;
    times.operand_bytes = 0;
    for (int64_t g = 0; g < ops.groups; ++g) {
      const Clock::time_point q0 = Clock::now();
      const OperandPair q =
          autocast ? QuantizeGroup(item, ops, g, timing.amax_algo) : prequantized[g];
      if (autocast) *quant_ms += MsSince(q0);
      times.operand_bytes += q.first.Bytes() + q.second.Bytes();
      GemmFp32(q.first.Dequantize(), q.second.Dequantize(), ops.m, ops.k, ops.n, c, threads);
    }
  };
  double quant_ms = 0;
  for (int32_t i = 0; i < std::min(timing.warmup_iters, kMaxHostWarmupIters); ++i) {
    iteration(&quant_ms);
  }
  for (int32_t i = 0; i < std::min(timing.timed_iters, kMaxHostTimedIters); ++i) {
    const Clock::time_point t0 = Clock::now();
    iteration(&quant_ms);
    times.total_ms.push_back(MsSince(t0));
    times.quant_ms.push_back(quant_ms);
  }
  return times;
}

}  // namespace

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

HostRunner::HostRunner(int threads) : threads_(std::max(threads, 1)) {
  info_.backend = "host-reference";
  info_.name = absl::StrCat("host-reference (CPU: ", CpuModelName(), ")");
  info_.uuid = absl::StrCat("host-reference-", HostName());
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
  if (timing.timed_iters < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("timed_iters: ", timing.timed_iters, " must be >= 1"));
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

absl::Status HostRunner::BeginJob(const core::TimingOptions&) { return absl::OkStatus(); }

absl::StatusOr<core::Measurement> HostRunner::Run(const core::WorkItem& item,
                                                  const core::TimingOptions& timing) {
  RETURN_IF_ERROR(CanImplement(item, timing));
  const HostOperands ops =
      MakeHostOperands(item.op.shape, item.op.groups, timing.seed, HistoryLen(item, timing));
  ASSIGN_OR_RETURN(const HostGemmResult verified,
                   HostReferenceGemm(item.recipe, item.op.pass, ops, timing.amax_algo, threads_));
  IterationTimes times = TimeIterations(item, ops, timing, threads_);

  core::Measurement m;
  m.time = core::SampleStats::FromSamples(std::move(times.total_ms));
  m.quant_ms = item.mode == core::Mode::kAutocast
                   ? core::SampleStats::FromSamples(std::move(times.quant_ms)).median_ms
                   : 0.0;
  m.flops = item.op.Flops();
  m.bytes = times.operand_bytes + item.op.groups * OutputBytes(item.op.shape);
  m.algorithm = "host-reference fp32";
  m.rel_error = verified.rel_error;
  m.error_threshold = ErrorThreshold(item.recipe);
  // A NaN error fails the comparison and so reads as incorrect.
  m.verification = verified.rel_error <= m.error_threshold ? core::Verification::kPassed
                                                           : core::Verification::kIncorrect;
  m.accounting = timing.accounting;
  m.fast_accum = false;
  m.notes =
      absl::StrCat("host reference: ", m.time.count, " of ", timing.timed_iters, " iterations");
  if (item.recipe == core::Recipe::kFp8Delayed) {
    absl::StrAppend(&m.notes, "; amax history of ", HistoryLen(item, timing), " of ",
                    timing.amax_history_len, " tensors");
  }
  return m;
}

}  // namespace gemmprof::device
