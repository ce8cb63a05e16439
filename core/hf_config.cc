#include "core/hf_config.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gemmprof::core {
namespace {

// Ordered, so unknown_fields come out in file order.
using Json = nlohmann::ordered_json;

// DOM parser that keeps the first syntax error's position and text instead of
// throwing, so no exception ever leaves this file.
class RecordingDomParser : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  explicit RecordingDomParser(Json& root)
      : nlohmann::detail::json_sax_dom_parser<Json>(root, /*allow_exceptions_=*/false) {}

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    if (error_) return false;
    // Keep "line L, column C: why" and drop the library's "[json.exception...] parse
    // error at " prefix, which means nothing to a user.
    std::string_view what = ex.what();
    constexpr std::string_view kPrefix = "parse error at ";
    if (size_t at = what.find(kPrefix); at != std::string_view::npos) {
      what.remove_prefix(at + kPrefix.size());
    }
    error_ = absl::StrCat("byte ", position, ", ", std::string(what));
    return false;
  }

  const std::optional<std::string>& error() const { return error_; }

 private:
  std::optional<std::string> error_;
};

constexpr std::string_view kGatedFamilies[] = {
    "llama",       "mistral",     "mixtral", "qwen2",  "qwen2_moe", "qwen3",       "qwen3_moe",
    "deepseek_v2", "deepseek_v3", "gemma",   "gemma2", "gemma3",    "gemma3_text", "phi3"};

// Keys of published configs that change no GEMM shape (positional encoding, norms,
// dtypes, token ids, routing details that do not change expert load, bookkeeping).
constexpr std::string_view kIgnoredKnown[] = {"_name_or_path",
                                              "architectures",
                                              "attention_bias",
                                              "attention_dropout",
                                              "auto_map",
                                              "aux_loss_alpha",
                                              "bos_token_id",
                                              "decoder_start_token_id",
                                              "dtype",
                                              "eos_token_id",
                                              "ep_size",
                                              "hidden_dropout",
                                              "initializer_range",
                                              "layer_types",
                                              "max_position_embeddings",
                                              "max_window_layers",
                                              "mlp_bias",
                                              "n_group",
                                              "norm_topk_prob",
                                              "output_router_logits",
                                              "pad_token_id",
                                              "pretraining_tp",
                                              "quantization_config",
                                              "rms_norm_eps",
                                              "rope_scaling",
                                              "rope_theta",
                                              "routed_scaling_factor",
                                              "router_aux_loss_coef",
                                              "router_jitter_noise",
                                              "scoring_func",
                                              "seq_aux",
                                              "sliding_window",
                                              "topk_group",
                                              "topk_method",
                                              "torch_dtype",
                                              "transformers_version",
                                              "use_cache",
                                              "use_sliding_window",
                                              "rope_type",
                                              "layer_norm_eps",
                                              "use_mrope",
                                              "embd_pdrop",
                                              "resid_pdrop",
                                              "attn_pdrop"};

// Keys that add GEMMs this parser does not describe (see hf_config.h).
constexpr std::string_view kUnmodeled[] = {"num_nextn_predict_layers",
                                           "shared_expert_intermediate_size", "decoder_sparse_step",
                                           "mlp_only_layers"};

// Keys this parser reads (model_type only to decide the gate).
constexpr std::string_view kUsed[] = {"hidden_size",
                                      "intermediate_size",
                                      "num_attention_heads",
                                      "num_hidden_layers",
                                      "vocab_size",
                                      "num_key_value_heads",
                                      "head_dim",
                                      "hidden_act",
                                      "tie_word_embeddings",
                                      "model_type",
                                      "num_local_experts",
                                      "n_routed_experts",
                                      "num_experts",
                                      "num_experts_per_tok",
                                      "moe_intermediate_size",
                                      "n_shared_experts",
                                      "first_k_dense_replace",
                                      "moe_layer_freq",
                                      "q_lora_rank",
                                      "kv_lora_rank",
                                      "qk_nope_head_dim",
                                      "qk_rope_head_dim",
                                      "v_head_dim"};

template <size_t N>
bool Contains(const std::string_view (&set)[N], std::string_view key) {
  return std::find(std::begin(set), std::end(set), key) != std::end(set);
}

// Reads an optional non-negative integer; absent or null leaves `out` unchanged.
absl::Status ReadInt(const Json& root, const char* key, bool required, int64_t* out) {
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) {
    if (required) {
      return absl::InvalidArgumentError(
          absl::StrCat("config.json: required field '", key, "' is missing"));
    }
    return absl::OkStatus();
  }
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("config.json: field '", key, "': ", v, " is above the int64 limit"));
    }
    *out = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  if (it->is_number_integer()) {
    const int64_t v = it->get<int64_t>();
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("config.json: field '", key, "': ", v, " is negative; it must be >= 0"));
    }
    *out = v;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("config.json: field '", key, "' must be a non-negative integer, got ",
                   it->type_name(), " ", it->dump(-1, ' ', true, Json::error_handler_t::replace)));
}

absl::Status ReadString(const Json& root, const char* key, std::string* out) {
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: field '", key, "' must be a string, got ", it->type_name()));
  }
  *out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadBool(const Json& root, const char* key, bool* out) {
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_boolean()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config.json: field '", key, "' must be true or false, got ", it->type_name()));
  }
  *out = it->get<bool>();
  return absl::OkStatus();
}

absl::Status ReadDense(const Json& root, ModelConfig* c) {
  RETURN_IF_ERROR(ReadInt(root, "hidden_size", true, &c->hidden_size));
  RETURN_IF_ERROR(ReadInt(root, "intermediate_size", true, &c->intermediate_size));
  RETURN_IF_ERROR(ReadInt(root, "num_attention_heads", true, &c->num_attention_heads));
  RETURN_IF_ERROR(ReadInt(root, "num_hidden_layers", true, &c->num_hidden_layers));
  RETURN_IF_ERROR(ReadInt(root, "vocab_size", true, &c->vocab_size));
  RETURN_IF_ERROR(ReadInt(root, "num_key_value_heads", false, &c->num_key_value_heads));
  RETURN_IF_ERROR(ReadInt(root, "head_dim", false, &c->head_dim));
  RETURN_IF_ERROR(ReadString(root, "hidden_act", &c->hidden_act));
  RETURN_IF_ERROR(ReadBool(root, "tie_word_embeddings", &c->tie_word_embeddings));
  std::string model_type;
  RETURN_IF_ERROR(ReadString(root, "model_type", &model_type));
  // Outside the known families only the activation hints at a gate; every published
  // SiLU MLP we know is gated, GELU (GPT-2 style) ones are not.
  c->gated_mlp =
      model_type.empty() || !Contains(kGatedFamilies, model_type)
          ? (c->hidden_act == "silu" || c->hidden_act == "swiglu" || c->hidden_act == "geglu")
          : true;
  return absl::OkStatus();
}

absl::Status ReadMoeAndMla(const Json& root, ModelConfig* c) {
  for (const char* key : {"num_local_experts", "n_routed_experts", "num_experts"}) {
    RETURN_IF_ERROR(ReadInt(root, key, false, &c->num_experts));
  }
  RETURN_IF_ERROR(ReadInt(root, "num_experts_per_tok", false, &c->experts_per_token));
  RETURN_IF_ERROR(ReadInt(root, "moe_intermediate_size", false, &c->moe_intermediate_size));
  RETURN_IF_ERROR(ReadInt(root, "n_shared_experts", false, &c->num_shared_experts));
  RETURN_IF_ERROR(ReadInt(root, "first_k_dense_replace", false, &c->first_dense_layers));
  int64_t moe_layer_freq = 1;
  RETURN_IF_ERROR(ReadInt(root, "moe_layer_freq", false, &moe_layer_freq));
  if (moe_layer_freq != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: field 'moe_layer_freq': ", moe_layer_freq,
                     " is not supported; only 1 (every layer after first_k_dense_replace is MoE)"));
  }
  RETURN_IF_ERROR(ReadInt(root, "q_lora_rank", false, &c->q_lora_rank));
  RETURN_IF_ERROR(ReadInt(root, "kv_lora_rank", false, &c->kv_lora_rank));
  RETURN_IF_ERROR(ReadInt(root, "qk_nope_head_dim", false, &c->qk_nope_head_dim));
  RETURN_IF_ERROR(ReadInt(root, "qk_rope_head_dim", false, &c->qk_rope_head_dim));
  return ReadInt(root, "v_head_dim", false, &c->v_head_dim);
}

}  // namespace

absl::StatusOr<HfConfigParse> ParseHfConfigJson(std::string_view json_text, std::string_view name) {
  Json root;
  RecordingDomParser sax(root);
  const bool ok = Json::sax_parse(json_text.begin(), json_text.end(), &sax);
  if (!ok || sax.error().has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: malformed JSON at ", sax.error().value_or("unknown position")));
  }
  if (!root.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: the top level must be a JSON object, got ", root.type_name()));
  }
  HfConfigParse parse;
  parse.config.name = std::string(name);
  RETURN_IF_ERROR(ReadDense(root, &parse.config));
  RETURN_IF_ERROR(ReadMoeAndMla(root, &parse.config));
  for (const auto& [key, value] : root.items()) {
    if (Contains(kUsed, key)) continue;
    if (Contains(kUnmodeled, key)) {
      // Zero, null or empty means the extra GEMMs are absent, so nothing is missing.
      const bool absent = value.is_null() || (value.is_number() && value == 0) ||
                          (value.is_array() && value.empty());
      (absent ? parse.ignored_known_fields : parse.unmodeled_fields).push_back(key);
      continue;
    }
    (Contains(kIgnoredKnown, key) ? parse.ignored_known_fields : parse.unknown_fields)
        .push_back(key);
  }
  return parse;
}

}  // namespace gemmprof::core
