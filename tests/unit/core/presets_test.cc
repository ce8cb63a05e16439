#include "core/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/derive.h"
#include "core/hf_config.h"
#include "core/validation.h"

namespace gemmprof::core {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(PresetsTest, NamesAndEveryPresetValidates) {
  EXPECT_THAT(PresetNames(), ElementsAre("llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b",
                                         "mixtral-8x7b", "deepseek-v3", "codonfm-5b"));
  for (const std::string& name : PresetNames()) {
    auto c = FindPreset(name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->name, name);
    EXPECT_TRUE(ValidateModelConfig(*c).ok()) << name << ": " << ValidateModelConfig(*c);
  }
}

TEST(PresetsTest, EveryPublishedFieldIsUsedOrKnown) {
  for (const std::string& name : PresetNames()) {
    auto json = PresetConfigJson(name);
    if (name == "codonfm-5b") {
      EXPECT_EQ(json.status().code(), absl::StatusCode::kNotFound);
      continue;
    }
    ASSERT_TRUE(json.ok()) << name;
    auto parse = ParseHfConfigJson(*json, name);
    ASSERT_TRUE(parse.ok()) << name << ": " << parse.status();
    EXPECT_THAT(parse->unknown_fields, IsEmpty()) << name;
    EXPECT_THAT(parse->ignored_known_fields, Contains("rope_theta")) << name;
    if (name == "deepseek-v3") {
      EXPECT_THAT(parse->unmodeled_fields, ElementsAre("num_nextn_predict_layers"));
    } else {
      EXPECT_THAT(parse->unmodeled_fields, IsEmpty()) << name;
    }
  }
}

TEST(PresetsTest, UnknownPresetIsNotFoundListingNames) {
  auto c = FindPreset("llama-4");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("no preset named 'llama-4'; valid presets: llama-3.1-8b, llama-3.1-70b, "
                        "qwen2.5-7b, mixtral-8x7b, deepseek-v3, codonfm-5b"));
  EXPECT_EQ(FindPreset("").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(FindPreset("LLAMA-3.1-8B").status().code(), absl::StatusCode::kNotFound);
}

TEST(PresetsTest, PublishedValues) {
  auto l70 = FindPreset("llama-3.1-70b");
  ASSERT_TRUE(l70.ok());
  EXPECT_EQ(l70->hidden_size, 8192);
  EXPECT_EQ(l70->intermediate_size, 28672);
  EXPECT_EQ(l70->num_attention_heads, 64);
  EXPECT_EQ(l70->num_key_value_heads, 8);
  EXPECT_EQ(l70->num_hidden_layers, 80);
  EXPECT_EQ(l70->micro_batch_size, 1);
  EXPECT_EQ(l70->sequence_length, 4096);
  auto seed = FindPreset("codonfm-5b");
  ASSERT_TRUE(seed.ok());
  EXPECT_EQ(seed->micro_batch_size, 31);
  EXPECT_EQ(seed->sequence_length, 512);
  EXPECT_FALSE(seed->gated_mlp);
  EXPECT_EQ(seed->vocab_size, 0);
}

struct OpRow {
  std::string name;
  int64_t m, k, n, groups, layers;
};

std::vector<OpRow> FpropRows(const ModelConfig& c) {
  JobSpec spec;
  spec.model = c;
  auto plan = DerivePlan(spec);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<OpRow> rows;
  if (!plan.ok()) return rows;
  for (const GemmOp& op : plan->ops) {
    if (op.pass != Pass::kFprop) continue;
    rows.push_back({op.name, op.shape.m, op.shape.k, op.shape.n, op.groups, op.layers});
  }
  return rows;
}

bool operator==(const OpRow& a, const OpRow& b) {
  return a.name == b.name && a.m == b.m && a.k == b.k && a.n == b.n && a.groups == b.groups &&
         a.layers == b.layers;
}
void PrintTo(const OpRow& r, std::ostream* os) {
  *os << r.name << " " << r.m << "x" << r.k << "x" << r.n << " g" << r.groups << " l" << r.layers;
}

TEST(PresetsTest, Llama31_8bPlanThroughThePreset) {
  auto c = FindPreset("llama-3.1-8b");
  ASSERT_TRUE(c.ok());
  // M = 1 * 4096; QKV N = (32 + 2*8) * 128 = 6144; fused up N = 2 * 14336.
  EXPECT_EQ(FpropRows(*c), (std::vector<OpRow>{{"qkv", 4096, 4096, 6144, 1, 32},
                                               {"attn_out", 4096, 4096, 4096, 1, 32},
                                               {"mlp_up", 4096, 4096, 28672, 1, 32},
                                               {"mlp_down", 4096, 14336, 4096, 1, 32},
                                               {"lm_head", 4096, 4096, 128256, 1, 1}}));
}

TEST(PresetsTest, Qwen25_7bPlan) {
  auto c = FindPreset("qwen2.5-7b");
  ASSERT_TRUE(c.ok());
  // head_dim = 3584 / 28 = 128; QKV N = (28 + 2*4) * 128 = 4608; up N = 2 * 18944 = 37888.
  EXPECT_EQ(FpropRows(*c), (std::vector<OpRow>{{"qkv", 4096, 3584, 4608, 1, 28},
                                               {"attn_out", 4096, 3584, 3584, 1, 28},
                                               {"mlp_up", 4096, 3584, 37888, 1, 28},
                                               {"mlp_down", 4096, 18944, 3584, 1, 28},
                                               {"lm_head", 4096, 3584, 152064, 1, 1}}));
  c->tensor_parallel = 8;
  EXPECT_THAT(std::string(ValidateModelConfig(*c).message()),
              HasSubstr("num_attention_heads: 28 is not divisible by tensor_parallel 8"));
}

TEST(PresetsTest, Mixtral8x7bPlanThroughThePreset) {
  auto c = FindPreset("mixtral-8x7b");
  ASSERT_TRUE(c.ok());
  // Experts: M = ceil(4096 * 2 / 8) = 1024, up N = 2 * 14336 = 28672, 8 groups.
  EXPECT_EQ(FpropRows(*c), (std::vector<OpRow>{{"qkv", 4096, 4096, 6144, 1, 32},
                                               {"attn_out", 4096, 4096, 4096, 1, 32},
                                               {"router", 4096, 4096, 8, 1, 32},
                                               {"expert_up", 1024, 4096, 28672, 8, 32},
                                               {"expert_down", 1024, 14336, 4096, 8, 32},
                                               {"lm_head", 4096, 4096, 32000, 1, 1}}));
}

TEST(PresetsTest, DeepSeekV3PlanThroughThePreset) {
  auto c = FindPreset("deepseek-v3");
  ASSERT_TRUE(c.ok());
  // q_b N = 128 * (128 + 64) = 24576; kv_a N = 512 + 64 = 576; kv_b N = 128 * (128 + 128)
  // = 32768; attn_out K = 128 * 128 = 16384; dense layers 3 (up N = 2 * 18432 = 36864);
  // MoE layers 61 - 3 = 58; experts M = ceil(4096 * 8 / 256) = 128, up N = 2 * 2048.
  EXPECT_EQ(FpropRows(*c), (std::vector<OpRow>{{"q_a", 4096, 7168, 1536, 1, 61},
                                               {"q_b", 4096, 1536, 24576, 1, 61},
                                               {"kv_a", 4096, 7168, 576, 1, 61},
                                               {"kv_b", 4096, 512, 32768, 1, 61},
                                               {"attn_out", 4096, 16384, 7168, 1, 61},
                                               {"mlp_up", 4096, 7168, 36864, 1, 3},
                                               {"mlp_down", 4096, 18432, 7168, 1, 3},
                                               {"router", 4096, 7168, 256, 1, 58},
                                               {"expert_up", 128, 7168, 4096, 256, 58},
                                               {"expert_down", 128, 2048, 7168, 256, 58},
                                               {"shared_up", 4096, 7168, 4096, 1, 58},
                                               {"shared_down", 4096, 2048, 7168, 1, 58},
                                               {"lm_head", 4096, 7168, 129280, 1, 1}}));
}

TEST(PresetsTest, SeedPresetIsTheSeedTable) {
  auto c = FindPreset("codonfm-5b");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(FpropRows(*c), (std::vector<OpRow>{{"qkv", 15872, 4096, 12288, 1, 24},
                                               {"attn_out", 15872, 4096, 4096, 1, 24},
                                               {"mlp_up", 15872, 4096, 16384, 1, 24},
                                               {"mlp_down", 15872, 16384, 4096, 1, 24}}));
}

}  // namespace
}  // namespace gemmprof::core
