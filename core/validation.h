// Checks of everything a user submits, before anything is derived, stored or run.
// Limits are the constants in limits.h. Every error is InvalidArgument and names the
// field, the bad value and the limit, e.g.
// "hidden_size: 4095 is not divisible by num_attention_heads 32".
// All functions are pure and thread-safe.
#pragma once

#include "core/job.h"
#include "core/model_config.h"
#include "core/status.h"

namespace gemmprof::core {

// A model config:
//  * hidden_size, num_attention_heads in 1..kMaxDim; num_hidden_layers in 1..kMaxLayers;
//    intermediate_size in 1..kMaxDim when any layer has a dense MLP; every other size
//    field in 0..kMaxDim.
//  * micro_batch_size and sequence_length >= 1 and M = their product <= kMaxDim,
//    unless sweep_m is set (then they may be 0); sweep_m: <= kMaxSweepEntries distinct
//    values, each 1..kMaxDim.
//  * hidden_size divisible by num_attention_heads unless head_dim (or MLA) is given;
//    num_attention_heads divisible by num_key_value_heads.
//  * hidden_act "" or one of Hugging Face's activation names (gelu, gelu_new, silu,
//    relu, ... as listed in the message) or swiglu / geglu / reglu; split_gate_up
//    needs a gated MLP.
//  * MoE (num_experts > 0): experts_per_token 1..num_experts, first_dense_layers
//    0..num_hidden_layers-1, moe_skew finite in [1, num_experts]; moe_routing one of
//    routing.h's forms within its limits (not beside moe_skew), moe_seed >= 0,
//    moe_layout "", contiguous or masked. Dense: the MoE fields stay 0 (moe_skew 1,
//    moe_routing and moe_layout empty).
//  * MLA (kv_lora_rank > 0): qk_nope_head_dim, qk_rope_head_dim, v_head_dim >= 1.
//  * tensor_parallel 1..kMaxTensorParallel dividing heads, the (expert/shared)
//    intermediate sizes and vocab_size; kv heads divisible by tp, or tp a multiple of
//    kv heads (then replicated).
//  * every derived GEMM dimension in 1..kMaxDim and M*K*N within int64 (derive.h).
//  * name, hidden_act, moe_routing and moe_layout are UTF-8 (core/utf8.h).
absl::Status ValidateModelConfig(const ModelConfig& config);

// warmup_iters 0..kMaxWarmupIters, timed_iters 0 (noise-aware) or
// kMinTimedIters..kMaxTimedIters, autotune_k 1..kMaxAutotuneK, amax_history_len
// 1..kMaxAmaxHistoryLen, gpu_warmup_s finite in 0..kMaxGpuWarmupS, precision_target
// finite in kMinPrecisionTarget..kMaxPrecisionTarget, item_budget_s finite in
// kMinItemBudgetS..kMaxItemBudgetS, b2b_count 0 (auto) or kMinB2bCount..kMaxB2bCount;
// seed any value. Precision and budget are checked in fixed mode too: they are stored.
absl::Status ValidateTiming(const TimingOptions& timing);

// Exactly one of model / shapes; shapes: 1..kMaxShapes entries, each dimension
// 1..kMaxDim and M*K*N within int64; recipes and modes without duplicates; plus
// ValidateModelConfig and ValidateTiming; label, campaign and the placement's name UTF-8.
absl::Status ValidateJobSpec(const JobSpec& spec);

}  // namespace gemmprof::core
