#include "kernels/runner/recipe_rules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gemmprof::kernels {
namespace {

using core::Pass;
using core::Recipe;
using core::quant::Fp8Format;

OperandConfig Base(const core::WorkItem& item, const core::TimingOptions& timing) {
  OperandConfig c;
  c.recipe = item.recipe;
  c.amax_history_len = timing.amax_history_len;
  c.amax_algo = timing.amax_algo;
  c.cols = item.op.shape.k;
  c.groups = item.op.groups;
  c.w4_group = timing.w4_group;
  return c;
}

// The operand's type and scale mode as the GEMM sees them. The per-tensor FP8 recipes
// differ only in how the scale is chosen, not in what the GEMM reads.
std::string GemmOperandText(const OperandConfig& c) {
  switch (c.recipe) {
    case Recipe::kBf16:
      return "bf16";
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
      return absl::StrCat("fp8-", c.format == Fp8Format::kE4M3 ? "e4m3" : "e5m2", "-tensor");
    case Recipe::kFp8Block:
      return absl::StrCat("fp8-", c.format == Fp8Format::kE4M3 ? "e4m3" : "e5m2",
                          c.weight ? "-block128x128" : "-block1x128");
    case Recipe::kFp8Rowwise:
      return "fp8-e4m3-row";
    case Recipe::kInt8Rowwise:
      return "int8-row";
    case Recipe::kW8a16:
      return "int8-channel-bf16scale";
    case Recipe::kW4a16:
      return absl::StrCat("int4-group", c.w4_group, "-bf16scale");
    default:
      return std::string(core::ToString(c.recipe));
  }
}

// Everything a timed quantization of the operand depends on.
std::string QuantText(const OperandConfig& c, bool transposes) {
  std::string text = absl::StrCat(std::string(core::ToString(c.recipe)), " ",
                                  c.format == Fp8Format::kE4M3 ? "e4m3" : "e5m2",
                                  c.weight ? " weight" : "", transposes ? " +T" : "");
  if (c.recipe == Recipe::kFp8Delayed) {
    absl::StrAppend(&text, " hist=", c.amax_history_len, " ",
                    std::string(core::ToString(c.amax_algo)));
  }
  return text;
}

}  // namespace

std::string WorkKey(const core::WorkItem& item, const core::TimingOptions& timing) {
  const OperandConfig a = OperandA(item, timing), bt = OperandBt(item, timing);
  std::string ignored;
  const std::optional<bool> fast = ResolveFastAccum(item, timing.fast_accum, &ignored);
  const TimedQuantization t = TimedPart(item, timing.accounting);
  std::string key =
      absl::StrCat("gemm ", item.op.shape.m, "x", item.op.shape.k, "x", item.op.shape.n, " g",
                   item.op.groups, " a=", GemmOperandText(a), " bt=", GemmOperandText(bt),
                   " c=bf16", " accum=", fast.has_value() ? (*fast ? "fast" : "split") : "n/a",
                   item.recipe == Recipe::kNvfp4 ? " device-alpha" : "");
  // Routed experts: other per-expert tokens or the masked layout are other work.
  if (!item.op.group_tokens.empty()) {
    absl::StrAppend(&key, " tokens=", absl::StrJoin(item.op.group_tokens, ","));
  }
  if (item.op.groups > 1 && item.op.layout == core::MoeLayout::kMasked) {
    absl::StrAppend(&key, " layout=masked");
  }
  absl::StrAppend(&key, "; timed:", t.a ? " a=" + QuantText(a, t.transposes) : "",
                  t.bt ? " bt=" + QuantText(bt, t.transposes) : "",
                  !t.a && !t.bt ? " gemm only" : "");
  absl::StrAppend(&key, "; l2=", std::string(core::ToString(timing.l2)),
                  " autotune=", timing.autotune_k, " seed=", timing.seed);
  return key;
}

OperandConfig OperandA(const core::WorkItem& item, const core::TimingOptions& timing) {
  OperandConfig c = Base(item, timing);
  c.slot = "a";
  c.rows = item.op.shape.m;
  // dgrad's A is the output gradient dY: E5M2 under HYBRID; row-wise scaling is E4M3
  // throughout (torchao's row-wise recipe; PyTorch's row-wise scaled_mm on sm_90).
  c.format = item.op.pass == Pass::kDgrad && item.recipe != Recipe::kFp8Rowwise ? Fp8Format::kE5M2
                                                                                : Fp8Format::kE4M3;
  c.weight = false;
  // Weight-only recipes: the activation stays BF16.
  if (core::IsWeightOnly(item.recipe)) c.recipe = Recipe::kBf16;
  return c;
}

OperandConfig OperandBt(const core::WorkItem& item, const core::TimingOptions& timing) {
  OperandConfig c = Base(item, timing);
  c.slot = "bt";
  c.rows = item.op.shape.n;
  // wgrad's B^T is dY^T (E5M2); fprop/dgrad read the weight (or its transpose).
  c.format = item.op.pass == Pass::kWgrad && item.recipe != Recipe::kFp8Rowwise ? Fp8Format::kE5M2
                                                                                : Fp8Format::kE4M3;
  c.weight = item.op.pass != Pass::kWgrad;
  return c;
}

std::optional<bool> ResolveFastAccum(const core::WorkItem& item, core::FastAccum option,
                                     std::string* note) {
  const core::FastAccum effective = core::EffectiveFastAccum(item, option);
  if (item.recipe == Recipe::kFp8Block && effective == core::FastAccum::kOn) {
    *note = "fast accumulation requested but not used: block scaling always splits";
  }
  return core::ResolveFastAccum(item.recipe, item.op.pass, effective);
}

absl::Status CheckGroups(const core::WorkItem& item) {
  return CheckGroupedRecipe(item.recipe, item.op.groups, "shape " + item.op.shape.ToString());
}

TimedQuantization TimedPart(const core::WorkItem& item, core::Accounting accounting) {
  TimedQuantization t;
  if (item.mode == core::Mode::kPrequant || item.recipe == Recipe::kBf16) return t;
  // Serving recipes (inference semantics, every mode): the weight is prepared once before
  // any timing; int8-rowwise quantizes its activation per call, the weight-only recipes
  // read the BF16 activation as it is.
  if (core::IsServingRecipe(item.recipe)) {
    t.a = item.recipe == Recipe::kInt8Rowwise;
    return t;
  }
  if (item.mode == core::Mode::kDynamic) {
    // Inference: the activation (or gradient) operands are quantized per call, the
    // weight once before. A is X, dY or X^T; B^T is the weight except in wgrad (dY^T).
    t.a = true;
    t.bt = item.op.pass == Pass::kWgrad;
    return t;
  }
  if (accounting == core::Accounting::kPerGemm ||
      !core::SharesQuantizationAcrossPasses(item.recipe)) {
    // Row-wise scales run along one GEMM's K only, so each GEMM of a training step
    // quantizes both its operands again from BF16 (torchao's row-wise recipe).
    t.a = t.bt = true;
    return t;
  }
  // A training step quantizes X and W in fprop (keeping the transposed copies for the
  // backward GEMMs), dY in dgrad (keeping dY^T for wgrad), and nothing new in wgrad.
  t.transposes = true;
  t.a = item.op.pass != Pass::kWgrad;
  t.bt = item.op.pass == Pass::kFprop;
  return t;
}

double ErrorThreshold(core::Recipe recipe, bool fast_accum) {
  // BF16 output rounding alone gives about 2^-9 / sqrt(3) ~ 1e-3 relative (RMS); the
  // thresholds leave ~10x margin for accumulation differences. A wrong layout or scale
  // gives errors of order 1. FP8 fast accumulation keeps fewer bits in the partial
  // sums, so it gets the wider bound.
  switch (recipe) {
    case Recipe::kBf16:
      return 1e-2;
    case Recipe::kNvfp4:
      return 5e-2;
    case Recipe::kInt8Rowwise:  // exact integer sums: the BF16 output rounding and fp32 scales
    case Recipe::kW8a16:        // BF16 products q * s (one rounding per weight), fp32 sums
    case Recipe::kW4a16:
      return 2e-2;
    default:
      return fast_accum ? 3e-2 : 2e-2;
  }
}

int64_t MeasurementBytes(const core::WorkItem& item, const core::TimingOptions& timing,
                         int64_t workspace_bytes, int64_t l2_bytes) {
  const core::GemmShape& s = item.op.shape;
  const TimedQuantization t = TimedPart(item, timing.accounting);
  int64_t bytes = 2 * (s.m * s.k + s.n * s.k + s.m * s.n) * item.op.groups + workspace_bytes;
  bytes += OperandQuantizer::ExtraBytes(OperandA(item, timing), t.transposes);
  bytes += OperandQuantizer::ExtraBytes(OperandBt(item, timing), t.transposes);
  if (core::FlushesL2(timing.l2)) bytes += 2 * l2_bytes;
  return bytes;
}

int64_t VerificationBytes(const core::GemmShape& s, int64_t groups) {
  return 4 * (s.m * s.k + s.n * s.k + s.m * s.n) * groups + 64;
}

std::string NvtxName(const core::WorkItem& item) {
  return absl::StrCat("gemmprof item ", item.id, " ", std::string(core::ToString(item.op.pass)),
                      " ", item.op.name, " ", item.op.shape.ToString(),
                      item.op.groups > 1 ? absl::StrCat(" x", item.op.groups, " groups") : "", " ",
                      std::string(core::ToString(item.recipe)), " ",
                      std::string(core::ToString(item.mode)));
}

}  // namespace gemmprof::kernels
