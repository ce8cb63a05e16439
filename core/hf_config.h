// Reads a Hugging Face config.json (as published for Llama 3.x, Qwen2.5,
// Mistral/Mixtral and DeepSeek-V3) into a ModelConfig.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/model_config.h"
#include "core/status.h"

namespace gemmprof::core {

// A parsed config.json plus an honest account of what was not used.
struct HfConfigParse {
  ModelConfig config;
  // Top-level keys gemmprof does not know, in file order. Non-empty means the model
  // may have GEMMs this parse does not describe; callers should show them.
  std::vector<std::string> unknown_fields;
  // Top-level keys that are known not to change any GEMM shape (rope_theta,
  // rms_norm_eps, torch_dtype, token ids, ...), in file order.
  std::vector<std::string> ignored_known_fields;
  // Top-level keys that are known to add GEMMs gemmprof does not model, present with a
  // non-zero/non-null value, in file order: num_nextn_predict_layers (DeepSeek's
  // multi-token-prediction layer), shared_expert_intermediate_size, decoder_sparse_step
  // and mlp_only_layers (Qwen-MoE's shared expert and layer pattern).
  std::vector<std::string> unmodeled_fields;
};

// Parses `json_text`; `name` becomes config.name. Field mapping:
//   hidden_size, intermediate_size, num_attention_heads, num_hidden_layers, vocab_size
//     (required); num_key_value_heads, head_dim, hidden_act, tie_word_embeddings;
//   MoE: num_local_experts (Mixtral) | n_routed_experts (DeepSeek) | num_experts (Qwen-MoE)
//     -> num_experts; num_experts_per_tok -> experts_per_token; moe_intermediate_size;
//     n_shared_experts -> num_shared_experts; first_k_dense_replace -> first_dense_layers;
//     moe_layer_freq must be 1 (every layer after the dense ones is MoE);
//   MLA: q_lora_rank (null = 0), kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
//     v_head_dim.
// gated_mlp is true for the model_type families llama, mistral, mixtral, qwen2,
// qwen2_moe, qwen3, qwen3_moe, deepseek_v2, deepseek_v3 (all use gate*act(up)); for other
// or missing model_type it is true when hidden_act is silu, swiglu or geglu. An
// optional field given as null counts as absent. micro_batch_size and sequence_length
// are not in config.json and stay 0 for the caller to set.
//
// Errors (all InvalidArgument): malformed or truncated JSON (message has the parser's
// byte position, line and column); top level not an object; a required field missing
// (named); a used field of the wrong type, non-integral, negative or above int64
// (named, with the value). The result is not validated: call ValidateModelConfig.
// Pure; thread-safe.
absl::StatusOr<HfConfigParse> ParseHfConfigJson(std::string_view json_text, std::string_view name);

}  // namespace gemmprof::core
