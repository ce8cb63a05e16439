#include "core/presets.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/hf_config.h"

namespace gemmprof::core {
namespace {

// config.json of meta-llama/Llama-3.1-8B.
constexpr std::string_view kLlama31_8b = R"json({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})json";

// config.json of meta-llama/Llama-3.1-70B.
constexpr std::string_view kLlama31_70b = R"json({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "hidden_act": "silu",
  "hidden_size": 8192,
  "initializer_range": 0.02,
  "intermediate_size": 28672,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 64,
  "num_hidden_layers": 80,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})json";

// config.json of Qwen/Qwen2.5-7B.
constexpr std::string_view kQwen25_7b = R"json({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 131072,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 152064
})json";

// config.json of mistralai/Mixtral-8x7B-v0.1.
constexpr std::string_view kMixtral8x7b = R"json({
  "architectures": ["MixtralForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mixtral",
  "num_attention_heads": 32,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "output_router_logits": false,
  "rms_norm_eps": 1e-05,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.02,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.36.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})json";

// config.json of deepseek-ai/DeepSeek-V3.
constexpr std::string_view kDeepSeekV3 = R"json({
  "architectures": ["DeepseekV3ForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "auto_map": {
    "AutoConfig": "configuration_deepseek.DeepseekV3Config",
    "AutoModel": "modeling_deepseek.DeepseekV3Model",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"
  },
  "aux_loss_alpha": 0.001,
  "bos_token_id": 0,
  "eos_token_id": 1,
  "ep_size": 1,
  "first_k_dense_replace": 3,
  "hidden_act": "silu",
  "hidden_size": 7168,
  "initializer_range": 0.02,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "max_position_embeddings": 163840,
  "model_type": "deepseek_v3",
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 8,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 128,
  "num_nextn_predict_layers": 1,
  "pretraining_tp": 1,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [128, 128]
  },
  "rms_norm_eps": 1e-06,
  "rope_scaling": {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn"
  },
  "rope_theta": 10000,
  "routed_scaling_factor": 2.5,
  "scoring_func": "sigmoid",
  "seq_aux": true,
  "tie_word_embeddings": false,
  "topk_group": 4,
  "topk_method": "noaux_tc",
  "torch_dtype": "bfloat16",
  "transformers_version": "4.33.1",
  "use_cache": true,
  "v_head_dim": 128,
  "vocab_size": 129280
})json";

struct HfPreset {
  std::string_view name;
  std::string_view json;
};

constexpr HfPreset kHfPresets[] = {
    {"llama-3.1-8b", kLlama31_8b},  {"llama-3.1-70b", kLlama31_70b}, {"qwen2.5-7b", kQwen25_7b},
    {"mixtral-8x7b", kMixtral8x7b}, {"deepseek-v3", kDeepSeekV3},
};

constexpr std::string_view kSeedName = "codonfm-5b";

ModelConfig SeedModel() {
  ModelConfig c;
  c.name = std::string(kSeedName);
  c.hidden_size = 4096;
  c.intermediate_size = 16384;
  c.num_attention_heads = 32;
  c.num_hidden_layers = 24;
  c.micro_batch_size = 31;
  c.sequence_length = 512;
  return c;
}

}  // namespace

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const HfPreset& p : kHfPresets) names.emplace_back(p.name);
  names.emplace_back(kSeedName);
  return names;
}

absl::StatusOr<std::string_view> PresetConfigJson(std::string_view name) {
  for (const HfPreset& p : kHfPresets) {
    if (p.name == name) return p.json;
  }
  return absl::NotFoundError(
      absl::StrCat("model: no Hugging Face preset named '", std::string(name), "'"));
}

absl::StatusOr<ModelConfig> FindPreset(std::string_view name) {
  if (name == kSeedName) return SeedModel();
  for (const HfPreset& p : kHfPresets) {
    if (p.name != name) continue;
    ASSIGN_OR_RETURN(HfConfigParse parse, ParseHfConfigJson(p.json, p.name));
    parse.config.micro_batch_size = 1;
    parse.config.sequence_length = 4096;
    return parse.config;
  }
  return absl::NotFoundError(
      absl::StrCat("model: no preset named '", std::string(name),
                   "'; valid presets: ", absl::StrJoin(PresetNames(), ", ")));
}

}  // namespace gemmprof::core
