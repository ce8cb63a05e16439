#include "core/hf_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/validation.h"

namespace gemmprof::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kSmallLlama[] = R"({
  "architectures": ["LlamaForCausalLM"],
  "hidden_act": "silu",
  "hidden_size": 2048,
  "intermediate_size": 8192,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "head_dim": 64,
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256,
  "my_new_field": 3
})";

TEST(HfConfigTest, ReadsDenseFieldsAndClassifiesTheRest) {
  auto parse = ParseHfConfigJson(kSmallLlama, "llama-3.2-1b");
  ASSERT_TRUE(parse.ok()) << parse.status();
  const ModelConfig& c = parse->config;
  EXPECT_EQ(c.name, "llama-3.2-1b");
  EXPECT_EQ(c.hidden_size, 2048);
  EXPECT_EQ(c.intermediate_size, 8192);
  EXPECT_EQ(c.num_attention_heads, 32);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.num_hidden_layers, 16);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.hidden_act, "silu");
  EXPECT_TRUE(c.gated_mlp);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.micro_batch_size, 0);  // not in config.json: the caller sets it
  EXPECT_EQ(c.sequence_length, 0);
  EXPECT_EQ(c.num_experts, 0);
  EXPECT_THAT(parse->unknown_fields, ElementsAre("my_new_field"));
  EXPECT_THAT(parse->ignored_known_fields,
              ElementsAre("architectures", "rope_theta", "torch_dtype"));
  // Missing batch and sequence are reported by validation, by name.
  EXPECT_THAT(std::string(ValidateModelConfig(c).message()), HasSubstr("micro_batch_size: 0"));
}

TEST(HfConfigTest, GateDependsOnFamilyThenActivation) {
  auto gpt = ParseHfConfigJson(R"({"model_type": "gpt2", "hidden_act": "gelu_new",
      "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
      "num_hidden_layers": 12, "vocab_size": 50257})",
                               "gpt2");
  ASSERT_TRUE(gpt.ok()) << gpt.status();
  EXPECT_FALSE(gpt->config.gated_mlp);
  auto unknown_silu = ParseHfConfigJson(R"({"hidden_act": "silu",
      "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
      "num_hidden_layers": 12, "vocab_size": 50257})",
                                        "x");
  ASSERT_TRUE(unknown_silu.ok());
  EXPECT_TRUE(unknown_silu->config.gated_mlp);
  // Gemma's MLP is GeGLU although its activation is plain "gelu_pytorch_tanh".
  auto gemma = ParseHfConfigJson(R"({"model_type": "gemma2", "hidden_act": "gelu_pytorch_tanh",
      "hidden_size": 2304, "intermediate_size": 9216, "num_attention_heads": 8,
      "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 26, "vocab_size": 256000})",
                                 "gemma-2-2b");
  ASSERT_TRUE(gemma.ok()) << gemma.status();
  EXPECT_TRUE(gemma->config.gated_mlp);
}

TEST(HfConfigTest, ReadsMixtralAndDeepSeekFields) {
  auto mixtral = ParseHfConfigJson(R"({"model_type": "mixtral", "hidden_act": "silu",
      "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 32000,
      "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": null})",
                                   "m");
  ASSERT_TRUE(mixtral.ok()) << mixtral.status();
  EXPECT_EQ(mixtral->config.num_experts, 8);
  EXPECT_EQ(mixtral->config.experts_per_token, 2);
  EXPECT_THAT(mixtral->unknown_fields, IsEmpty());

  auto ds = ParseHfConfigJson(R"({"model_type": "deepseek_v3", "hidden_act": "silu",
      "hidden_size": 7168, "intermediate_size": 18432, "num_attention_heads": 128,
      "num_key_value_heads": 128, "num_hidden_layers": 61, "vocab_size": 129280,
      "n_routed_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
      "n_shared_experts": 1, "first_k_dense_replace": 3, "moe_layer_freq": 1,
      "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
      "qk_rope_head_dim": 64, "v_head_dim": 128})",
                              "ds");
  ASSERT_TRUE(ds.ok()) << ds.status();
  const ModelConfig& c = ds->config;
  EXPECT_EQ(c.num_experts, 256);
  EXPECT_EQ(c.experts_per_token, 8);
  EXPECT_EQ(c.moe_intermediate_size, 2048);
  EXPECT_EQ(c.num_shared_experts, 1);
  EXPECT_EQ(c.first_dense_layers, 3);
  EXPECT_EQ(c.q_lora_rank, 1536);
  EXPECT_EQ(c.kv_lora_rank, 512);
  EXPECT_EQ(c.qk_nope_head_dim, 128);
  EXPECT_EQ(c.qk_rope_head_dim, 64);
  EXPECT_EQ(c.v_head_dim, 128);
  EXPECT_THAT(ds->unknown_fields, IsEmpty());

  EXPECT_THAT(ds->unmodeled_fields, IsEmpty());

  // DeepSeek-V2-Lite publishes q_lora_rank as null: no query low rank.
  auto lite = ParseHfConfigJson(R"({"hidden_size": 2048, "intermediate_size": 10944,
      "num_attention_heads": 16, "num_hidden_layers": 27, "vocab_size": 102400,
      "q_lora_rank": null, "kv_lora_rank": 512})",
                                "lite");
  ASSERT_TRUE(lite.ok()) << lite.status();
  EXPECT_EQ(lite->config.q_lora_rank, 0);
}

struct BadJson {
  std::string label;
  std::string text;
  std::string expect;
};

void PrintTo(const BadJson& b, std::ostream* os) { *os << b.label; }

class HfConfigBadTest : public ::testing::TestWithParam<BadJson> {};

TEST_P(HfConfigBadTest, IsInvalidArgument) {
  auto parse = ParseHfConfigJson(GetParam().text, "bad");
  ASSERT_FALSE(parse.ok()) << GetParam().label;
  EXPECT_EQ(parse.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parse.status().message()), HasSubstr(GetParam().expect));
}

#define FIELDS_BUT(x)                                                              \
  "{\"hidden_size\": 64, \"intermediate_size\": 128, \"num_attention_heads\": 4, " \
  "\"num_hidden_layers\": 2, " x "}"

INSTANTIATE_TEST_SUITE_P(
    All, HfConfigBadTest,
    ::testing::Values(
        BadJson{"empty", "", "malformed JSON at byte 1"},
        BadJson{"truncated", R"({"hidden_size": 4096, "interm)", "malformed JSON at byte 30"},
        BadJson{"truncated after value", R"({"hidden_size": 4096,)", "malformed JSON"},
        BadJson{"trailing comma", R"({"hidden_size": 4096,})", "line 1, column 22"},
        BadJson{"garbage after", R"({"hidden_size": 4096} x)", "malformed JSON at byte 23"},
        BadJson{"single quotes", "{'hidden_size': 1}", "malformed JSON at byte 2"},
        BadJson{"second line", "{\n  \"a\": trux}", "line 2, column 11: syntax error"},
        BadJson{"array top", "[1, 2]", "top level must be a JSON object, got array"},
        BadJson{"number top", "42", "got number"},
        BadJson{"missing hidden", R"({"intermediate_size": 1})",
                "required field 'hidden_size' is missing"},
        BadJson{"missing vocab", FIELDS_BUT("\"x\": 1"), "required field 'vocab_size' is missing"},
        BadJson{"null required", FIELDS_BUT("\"vocab_size\": null"),
                "required field 'vocab_size' is missing"},
        BadJson{"string int", FIELDS_BUT("\"vocab_size\": \"32000\""),
                "field 'vocab_size' must be a non-negative integer, got string \"32000\""},
        BadJson{"float int", FIELDS_BUT("\"vocab_size\": 32000.5"),
                "field 'vocab_size' must be a non-negative integer, got number 32000.5"},
        BadJson{"exp int", FIELDS_BUT("\"vocab_size\": 1e3"), "got number 1000.0"},
        BadJson{"bool int", FIELDS_BUT("\"vocab_size\": true"), "got boolean true"},
        BadJson{"negative", FIELDS_BUT("\"vocab_size\": -5"),
                "field 'vocab_size': -5 is negative; it must be >= 0"},
        BadJson{"huge", FIELDS_BUT("\"vocab_size\": 18446744073709551615"),
                "field 'vocab_size': 18446744073709551615 is above the int64 limit"},
        BadJson{"huger", FIELDS_BUT("\"vocab_size\": 184467440737095516150"),
                "field 'vocab_size' must be a non-negative integer"},
        BadJson{"act type", FIELDS_BUT("\"vocab_size\": 8, \"hidden_act\": 3"),
                "field 'hidden_act' must be a string, got number"},
        BadJson{"tie type", FIELDS_BUT("\"vocab_size\": 8, \"tie_word_embeddings\": \"no\""),
                "field 'tie_word_embeddings' must be true or false, got string"},
        BadJson{"experts neg", FIELDS_BUT("\"vocab_size\": 8, \"num_local_experts\": -8"),
                "field 'num_local_experts': -8 is negative"},
        BadJson{"topk type", FIELDS_BUT("\"vocab_size\": 8, \"num_experts_per_tok\": [2]"),
                "field 'num_experts_per_tok' must be a non-negative integer, got array"},
        BadJson{"mla type", FIELDS_BUT("\"vocab_size\": 8, \"kv_lora_rank\": {}"),
                "field 'kv_lora_rank' must be a non-negative integer, got object"},
        BadJson{"moe freq", FIELDS_BUT("\"vocab_size\": 8, \"moe_layer_freq\": 2"),
                "field 'moe_layer_freq': 2 is not supported"},
        BadJson{"model_type type", FIELDS_BUT("\"vocab_size\": 8, \"model_type\": 1"),
                "field 'model_type' must be a string"},
        BadJson{"bad utf8", "{\"a\": \"\xff\"}", "malformed JSON"}),
    [](const auto& info) {
      std::string name;
      for (char ch : info.param.label)
        name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

TEST(HfConfigTest, UnmodeledFieldsAreReportedWhenPresent) {
  auto parse = ParseHfConfigJson(R"({"hidden_size": 2048, "intermediate_size": 5632,
      "num_attention_heads": 16, "num_hidden_layers": 24, "vocab_size": 151936,
      "model_type": "qwen2_moe", "num_experts": 60, "num_experts_per_tok": 4,
      "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "num_nextn_predict_layers": 0})",
                                 "qwen1.5-moe");
  ASSERT_TRUE(parse.ok()) << parse.status();
  EXPECT_THAT(parse->unmodeled_fields,
              ElementsAre("shared_expert_intermediate_size", "decoder_sparse_step"));
  EXPECT_THAT(parse->ignored_known_fields,
              ElementsAre("mlp_only_layers", "num_nextn_predict_layers"));
  EXPECT_THAT(parse->unknown_fields, IsEmpty());
}

TEST(HfConfigTest, ErrorPositionPointsAtTheProblem) {
  auto parse = ParseHfConfigJson("{\"hidden_size\": 40x96}", "x");
  ASSERT_FALSE(parse.ok());
  EXPECT_THAT(std::string(parse.status().message()), HasSubstr("line 1, column 19"));
}

}  // namespace
}  // namespace gemmprof::core
