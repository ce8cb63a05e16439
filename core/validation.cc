#include "core/validation.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/derive.h"
#include "core/limits.h"
#include "core/routing.h"
#include "core/utf8.h"

namespace gemmprof::core {
namespace {

absl::Status CheckRange(absl::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is outside the allowed range ", lo, "..", hi));
  }
  return absl::OkStatus();
}

// A finite double in lo..hi.
absl::Status CheckRealRange(absl::string_view field, double value, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is outside the allowed range ", lo, "..", hi));
  }
  return absl::OkStatus();
}

absl::Status CheckDivisible(absl::string_view field, int64_t value, absl::string_view by_field,
                            int64_t by) {
  if (by > 0 && value % by != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is not divisible by ", by_field, " ", by));
  }
  return absl::OkStatus();
}

// Hugging Face's ACT2FN names plus the gated spellings; the activation itself never
// changes a GEMM shape, only whether there is a gate (IsGatedMlp).
constexpr const char* kActivations[] = {
    "",          "gelu",       "gelu_10",     "gelu_accurate",
    "gelu_fast", "gelu_new",   "gelu_python", "gelu_pytorch_tanh",
    "laplace",   "leaky_relu", "linear",      "mish",
    "prelu",     "quick_gelu", "relu",        "relu2",
    "relu6",     "sigmoid",    "silu",        "swish",
    "tanh",      "swiglu",     "geglu",       "reglu"};

bool HasDenseMlp(const ModelConfig& c) { return c.num_experts == 0 || c.first_dense_layers > 0; }

absl::Status ValidateSizes(const ModelConfig& c) {
  RETURN_IF_ERROR(CheckRange("hidden_size", c.hidden_size, 1, kMaxDim));
  RETURN_IF_ERROR(CheckRange("num_attention_heads", c.num_attention_heads, 1, kMaxDim));
  RETURN_IF_ERROR(CheckRange("num_hidden_layers", c.num_hidden_layers, kMinLayers, kMaxLayers));
  RETURN_IF_ERROR(
      CheckRange("intermediate_size", c.intermediate_size, HasDenseMlp(c) ? 1 : 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("num_key_value_heads", c.num_key_value_heads, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("head_dim", c.head_dim, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("vocab_size", c.vocab_size, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("num_experts", c.num_experts, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("experts_per_token", c.experts_per_token, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("moe_intermediate_size", c.moe_intermediate_size, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("num_shared_experts", c.num_shared_experts, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("first_dense_layers", c.first_dense_layers, 0, kMaxLayers));
  RETURN_IF_ERROR(CheckRange("q_lora_rank", c.q_lora_rank, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("kv_lora_rank", c.kv_lora_rank, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("qk_nope_head_dim", c.qk_nope_head_dim, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("qk_rope_head_dim", c.qk_rope_head_dim, 0, kMaxDim));
  RETURN_IF_ERROR(CheckRange("v_head_dim", c.v_head_dim, 0, kMaxDim));
  return CheckRange("tensor_parallel", c.tensor_parallel, 1, kMaxTensorParallel);
}

absl::Status ValidateTokens(const ModelConfig& c) {
  if (c.sweep_m.size() > static_cast<size_t>(kMaxSweepEntries)) {
    return absl::InvalidArgumentError(absl::StrCat("sweep_m: ", c.sweep_m.size(),
                                                   " entries exceed the limit ", kMaxSweepEntries));
  }
  std::set<int64_t> seen;
  for (size_t i = 0; i < c.sweep_m.size(); ++i) {
    RETURN_IF_ERROR(CheckRange(absl::StrCat("sweep_m[", i, "]"), c.sweep_m[i], 1, kMaxDim));
    if (!seen.insert(c.sweep_m[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("sweep_m[", i, "]: ", c.sweep_m[i], " is a duplicate"));
    }
  }
  const int64_t min_batch = c.sweep_m.empty() ? 1 : 0;
  RETURN_IF_ERROR(CheckRange("micro_batch_size", c.micro_batch_size, min_batch, kMaxDim));
  RETURN_IF_ERROR(CheckRange("sequence_length", c.sequence_length, min_batch, kMaxDim));
  int64_t tokens = 0;
  if (!MulFits(c.micro_batch_size, c.sequence_length, &tokens) || tokens > kMaxDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("micro_batch_size * sequence_length: ", c.micro_batch_size, " * ",
                     c.sequence_length, " exceeds the GEMM dimension limit ", kMaxDim));
  }
  return absl::OkStatus();
}

absl::Status ValidateAttention(const ModelConfig& c) {
  if (c.kv_lora_rank > 0) {
    RETURN_IF_ERROR(CheckRange("qk_nope_head_dim", c.qk_nope_head_dim, 1, kMaxDim));
    RETURN_IF_ERROR(CheckRange("qk_rope_head_dim", c.qk_rope_head_dim, 1, kMaxDim));
    return CheckRange("v_head_dim", c.v_head_dim, 1, kMaxDim);
  }
  // Without kv_lora_rank the attention is standard: MLA sizes would be silently unused.
  for (const auto& [field, value] :
       {std::pair<std::string_view, int64_t>{"q_lora_rank", c.q_lora_rank},
        {"qk_nope_head_dim", c.qk_nope_head_dim},
        {"qk_rope_head_dim", c.qk_rope_head_dim},
        {"v_head_dim", c.v_head_dim}}) {
    if (value != 0) {
      return absl::InvalidArgumentError(std::string(field) + ": " + std::to_string(value) +
                                        " needs kv_lora_rank > 0 (MLA attention); it is 0");
    }
  }
  if (c.head_dim == 0) {
    RETURN_IF_ERROR(
        CheckDivisible("hidden_size", c.hidden_size, "num_attention_heads", c.num_attention_heads));
  }
  RETURN_IF_ERROR(
      CheckRange("num_key_value_heads", c.num_key_value_heads, 0, c.num_attention_heads));
  return CheckDivisible("num_attention_heads", c.num_attention_heads, "num_key_value_heads",
                        c.num_key_value_heads);
}

absl::Status ValidateMlp(const ModelConfig& c) {
  if (std::find(std::begin(kActivations), std::end(kActivations), c.hidden_act) ==
      std::end(kActivations)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hidden_act: '", c.hidden_act, "' is not one of: ",
        absl::StrJoin(std::begin(kActivations) + 1, std::end(kActivations), ", "), " (or empty)"));
  }
  if (c.split_gate_up && !IsGatedMlp(c)) {
    return absl::InvalidArgumentError(
        "split_gate_up: true needs a gated MLP (gated_mlp or hidden_act swiglu/geglu/reglu)");
  }
  if (c.num_experts == 0) {
    for (auto [field, v] : {std::pair{"experts_per_token", c.experts_per_token},
                            std::pair{"num_shared_experts", c.num_shared_experts},
                            std::pair{"first_dense_layers", c.first_dense_layers},
                            std::pair{"moe_intermediate_size", c.moe_intermediate_size}}) {
      if (v != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": ", v, " needs num_experts > 0 (num_experts is 0)"));
      }
    }
    if (c.moe_skew != 1.0) {
      return absl::InvalidArgumentError(
          absl::StrCat("moe_skew: ", c.moe_skew, " needs num_experts > 0; leave it 1"));
    }
    for (const auto& [field, v] :
         {std::pair{"moe_routing", &c.moe_routing}, std::pair{"moe_layout", &c.moe_layout}}) {
      if (!v->empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": '", *v, "' needs num_experts > 0; leave it empty"));
      }
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckRange("experts_per_token", c.experts_per_token, 1, c.num_experts));
  RETURN_IF_ERROR(
      CheckRange("first_dense_layers", c.first_dense_layers, 0, c.num_hidden_layers - 1));
  if (c.moe_intermediate_size == 0 && c.intermediate_size == 0) {
    return absl::InvalidArgumentError(
        "moe_intermediate_size: 0 and intermediate_size 0; experts need one of them >= 1");
  }
  if (!std::isfinite(c.moe_skew) || c.moe_skew < 1.0 ||
      c.moe_skew > static_cast<double>(c.num_experts)) {
    return absl::InvalidArgumentError(absl::StrCat("moe_skew: ", c.moe_skew,
                                                   " is outside the allowed range 1..",
                                                   c.num_experts, " (num_experts)"));
  }
  if (!c.moe_routing.empty() && c.moe_skew != 1.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("moe_skew: ", c.moe_skew, " and moe_routing: '", c.moe_routing,
                     "' both given; give one (moe_skew S is moe_routing skew:S)"));
  }
  ASSIGN_OR_RETURN(MoeRouting routing, ParseMoeRouting(c.moe_routing, "moe_routing"));
  RETURN_IF_ERROR(CheckMoeRouting(routing, c.num_experts, c.experts_per_token, "moe_routing"));
  if (c.moe_seed < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("moe_seed: ", c.moe_seed, " is below 1; give 1 or more"));
  }
  RETURN_IF_ERROR(ResolveMoeLayout(c.moe_layout, 1, "moe_layout").status());
  return absl::OkStatus();
}

absl::Status ValidateTensorParallel(const ModelConfig& c) {
  const int64_t tp = c.tensor_parallel;
  RETURN_IF_ERROR(
      CheckDivisible("num_attention_heads", c.num_attention_heads, "tensor_parallel", tp));
  const int64_t kv = c.num_key_value_heads > 0 ? c.num_key_value_heads : c.num_attention_heads;
  if (c.kv_lora_rank == 0 && kv < tp) {
    RETURN_IF_ERROR(CheckDivisible("tensor_parallel", tp, "num_key_value_heads", kv));
  } else if (c.kv_lora_rank == 0) {
    RETURN_IF_ERROR(CheckDivisible("num_key_value_heads", kv, "tensor_parallel", tp));
  }
  if (HasDenseMlp(c)) {
    RETURN_IF_ERROR(
        CheckDivisible("intermediate_size", c.intermediate_size, "tensor_parallel", tp));
  }
  if (c.num_experts > 0) {
    const int64_t expert =
        c.moe_intermediate_size > 0 ? c.moe_intermediate_size : c.intermediate_size;
    RETURN_IF_ERROR(
        CheckDivisible(c.moe_intermediate_size > 0 ? "moe_intermediate_size" : "intermediate_size",
                       expert, "tensor_parallel", tp));
  }
  return CheckDivisible("vocab_size", c.vocab_size, "tensor_parallel", tp);
}

absl::Status CheckNoDuplicates(absl::string_view field, const std::vector<std::string_view>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (v[i] == v[j]) {
        return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: '", std::string(v[i]),
                                                       "' duplicates ", field, "[", j, "]"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateShapes(const std::vector<GemmShape>& shapes) {
  if (shapes.empty() || shapes.size() > static_cast<size_t>(kMaxShapes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes: ", shapes.size(), " entries; the allowed range is 1..", kMaxShapes));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const GemmShape& s = shapes[i];
    for (auto [dim, v] : {std::pair{"m", s.m}, std::pair{"k", s.k}, std::pair{"n", s.n}}) {
      RETURN_IF_ERROR(CheckRange(absl::StrCat("shapes[", i, "].", dim), v, 1, kMaxDim));
    }
    int64_t mk = 0;
    int64_t mkn = 0;
    if (!MulFits(s.m, s.k, &mk) || !MulFits(mk, s.n, &mkn)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes[", i, "]: ", s.ToString(), " has M*K*N above the int64 limit ", kMaxInt64));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateModelConfig(const ModelConfig& config) {
  RETURN_IF_ERROR(CheckUtf8("name", config.name));
  RETURN_IF_ERROR(CheckUtf8("hidden_act", config.hidden_act));
  RETURN_IF_ERROR(CheckUtf8("moe_routing", config.moe_routing));
  RETURN_IF_ERROR(CheckUtf8("moe_layout", config.moe_layout));
  RETURN_IF_ERROR(ValidateSizes(config));
  RETURN_IF_ERROR(ValidateTokens(config));
  RETURN_IF_ERROR(ValidateAttention(config));
  RETURN_IF_ERROR(ValidateMlp(config));
  RETURN_IF_ERROR(ValidateTensorParallel(config));
  // Derived sizes ((heads + 2*kv) * head_dim, 2 * intermediate, ...) can pass every
  // field check and still leave the GEMM limits; deriving is the only exact check.
  return DeriveModelPlan(config).status();
}

absl::Status ValidateTiming(const TimingOptions& t) {
  RETURN_IF_ERROR(CheckRange("warmup_iters", t.warmup_iters, 0, kMaxWarmupIters));
  if (t.timed_iters != 0) {
    if (t.timed_iters < kMinTimedIters || t.timed_iters > kMaxTimedIters) {
      return absl::InvalidArgumentError(
          absl::StrCat("timed_iters: ", t.timed_iters, " is outside the allowed range ",
                       kMinTimedIters, "..", kMaxTimedIters, " (or 0 for noise-aware rounds)"));
    }
  }
  RETURN_IF_ERROR(CheckRange("autotune_k", t.autotune_k, kMinAutotuneK, kMaxAutotuneK));
  RETURN_IF_ERROR(
      CheckRange("amax_history_len", t.amax_history_len, kMinAmaxHistoryLen, kMaxAmaxHistoryLen));
  RETURN_IF_ERROR(CheckRealRange("gpu_warmup_s", t.gpu_warmup_s, 0.0, kMaxGpuWarmupS));
  RETURN_IF_ERROR(CheckRealRange("precision_target", t.precision_target, kMinPrecisionTarget,
                                 kMaxPrecisionTarget));
  RETURN_IF_ERROR(
      CheckRealRange("item_budget_s", t.item_budget_s, kMinItemBudgetS, kMaxItemBudgetS));
  if (t.b2b_count != 0 && (t.b2b_count < kMinB2bCount || t.b2b_count > kMaxB2bCount)) {
    return absl::InvalidArgumentError(
        absl::StrCat("b2b_count: ", t.b2b_count, " is outside the allowed range ", kMinB2bCount,
                     "..", kMaxB2bCount, " (or 0 to choose per group)"));
  }
  if (std::find(std::begin(kW4Groups), std::end(kW4Groups), t.w4_group) == std::end(kW4Groups)) {
    return absl::InvalidArgumentError(
        absl::StrCat("w4_group: ", t.w4_group, " is not a w4a16 group size; give 64 or 128"));
  }
  return absl::OkStatus();
}

absl::Status ValidateJobSpec(const JobSpec& spec) {
  RETURN_IF_ERROR(CheckUtf8("label", spec.label));
  RETURN_IF_ERROR(CheckUtf8("campaign", spec.campaign));
  RETURN_IF_ERROR(CheckUtf8("where", spec.where.name));
  if (spec.model.has_value() == !spec.shapes.empty()) {
    return absl::InvalidArgumentError(
        spec.model.has_value() ? "model, shapes: both are set; a job takes exactly one of them"
                               : "model, shapes: neither is set; a job takes exactly one of them");
  }
  std::vector<std::string_view> names;
  for (Recipe r : spec.recipes) names.push_back(ToString(r));
  std::vector<std::string> variant_names;
  for (const RecipeVariant& v : spec.variants) {
    if (!v.composite()) {
      return absl::InvalidArgumentError("recipes: variant \"" + v.Name() +
                                        "\" overrides no pass; list it as a whole recipe");
    }
    variant_names.push_back(v.Name());
  }
  for (const std::string& n : variant_names) names.push_back(n);
  RETURN_IF_ERROR(CheckNoDuplicates("recipes", names));
  names.clear();
  for (Mode m : spec.modes) names.push_back(ToString(m));
  RETURN_IF_ERROR(CheckNoDuplicates("modes", names));
  RETURN_IF_ERROR(ValidateTiming(spec.timing));
  if (spec.retries < 0 || spec.retries > kMaxRetries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retries: ", spec.retries, " is out of range; give 0 (no retry) to ", kMaxRetries));
  }
  if (spec.priority < kMinPriority || spec.priority > kMaxPriority) {
    return absl::InvalidArgumentError(absl::StrCat(
        "priority: ", spec.priority, " is out of range; give ", kMinPriority, "..", kMaxPriority));
  }
  if (spec.campaign.size() > kMaxCampaignChars) {
    return absl::InvalidArgumentError(absl::StrCat("campaign: ", spec.campaign.size(),
                                                   " characters, more than the limit of ",
                                                   kMaxCampaignChars));
  }
  if (!spec.campaign.empty() && spec.where.kind == PlacementKind::kThisNode) {
    return absl::InvalidArgumentError(
        "campaign: a campaign's jobs run through the cluster queue, not where this-node");
  }
  if (spec.model.has_value()) return ValidateModelConfig(*spec.model);
  return ValidateShapes(spec.shapes);
}

}  // namespace gemmprof::core
