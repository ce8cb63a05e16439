// A transformer's shape, as far as its GEMMs care. Filled from the seed tool's six
// flags, from a Hugging Face config.json, or from a built-in preset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gemmprof::core {

struct ModelConfig {
  std::string name = "custom";  // preset or file name; shown in titles
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // 0: same as num_attention_heads (no GQA)
  int64_t head_dim = 0;             // 0: hidden_size / num_attention_heads
  int64_t num_hidden_layers = 0;
  int64_t micro_batch_size = 0;
  int64_t sequence_length = 0;
  int64_t vocab_size = 0;      // 0: no LM head GEMM
  std::string hidden_act;      // "" (plain MLP, the seed's shape), "silu", "gelu", ...
  bool gated_mlp = false;      // gate and up fused: N = 2 x intermediate
  bool split_gate_up = false;  // run gate and up as two GEMMs instead
  bool tie_word_embeddings = false;
  // Mixture of experts; num_experts == 0 means dense.
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;
  int64_t num_shared_experts = 0;
  int64_t first_dense_layers = 0;  // layers before the first MoE layer
  double moe_skew = 1.0;           // hottest expert's load / balanced load (skew:S)
  // How tokens reach the experts (core/routing.h): "" (uniform, or skew:moe_skew),
  // "uniform", "skew:S", "zipf:A" or "hot:K:F"; moe_seed seeds what is drawn (zipf).
  std::string moe_routing;
  int64_t moe_seed = 1;
  // "" (contiguous above 256 tokens per step, masked at or below), "contiguous" or
  // "masked" (core/enums.h MoeLayout).
  std::string moe_layout;
  // Parallelism.
  int64_t tensor_parallel = 1;
  bool sequence_parallel = false;
  // Inference sweep (derive.h): when non-empty, the plan is every distinct fprop GEMM
  // of the model at each of these M (tokens per forward), and micro_batch_size /
  // sequence_length are not needed.
  std::vector<int64_t> sweep_m;
  // Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank == 0 means standard
  // attention and the other four are unused.
  int64_t q_lora_rank = 0;  // 0: queries projected directly (no q_a/q_b low rank)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

}  // namespace gemmprof::core
