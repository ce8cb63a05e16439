#include "core/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <ostream>
#include <string>

namespace gemmprof::core {
namespace {

using ::testing::HasSubstr;

ModelConfig Seed() {
  ModelConfig c;
  c.hidden_size = 4096;
  c.intermediate_size = 16384;
  c.num_attention_heads = 32;
  c.num_hidden_layers = 24;
  c.micro_batch_size = 31;
  c.sequence_length = 512;
  return c;
}

ModelConfig Moe() {
  ModelConfig c = Seed();
  c.num_experts = 8;
  c.experts_per_token = 2;
  c.gated_mlp = true;
  return c;
}

ModelConfig Mla() {
  ModelConfig c = Moe();
  c.num_attention_heads = 16;
  c.kv_lora_rank = 512;
  c.q_lora_rank = 1536;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  return c;
}

struct ModelCase {
  std::string label;
  std::function<ModelConfig()> make;
  std::string expect;
};

void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.label; }

class BadModelTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(BadModelTest, IsInvalidArgumentNamingFieldValueAndLimit) {
  absl::Status s = ValidateModelConfig(GetParam().make());
  ASSERT_FALSE(s.ok()) << GetParam().label;
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(GetParam().expect));
}

template <typename F>
std::function<ModelConfig()> Seeded(F edit) {
  return [edit] {
    ModelConfig c = Seed();
    edit(c);
    return c;
  };
}
template <typename F>
std::function<ModelConfig()> Moed(F edit) {
  return [edit] {
    ModelConfig c = Moe();
    edit(c);
    return c;
  };
}
template <typename F>
std::function<ModelConfig()> Mlaed(F edit) {
  return [edit] {
    ModelConfig c = Mla();
    edit(c);
    return c;
  };
}

INSTANTIATE_TEST_SUITE_P(
    All, BadModelTest,
    ::testing::Values(
        ModelCase{"mla_without_kv_lora", Seeded([](auto& c) { c.qk_rope_head_dim = 64; }),
                  "qk_rope_head_dim: 64 needs kv_lora_rank > 0"},
        ModelCase{"q_lora_without_kv_lora", Seeded([](auto& c) { c.q_lora_rank = 1536; }),
                  "q_lora_rank: 1536 needs kv_lora_rank"},
        ModelCase{"h0", Seeded([](auto& c) { c.hidden_size = 0; }),
                  "hidden_size: 0 is outside the allowed range 1..2147483647"},
        ModelCase{"hneg", Seeded([](auto& c) { c.hidden_size = -4096; }),
                  "hidden_size: -4096 is outside"},
        ModelCase{"hbig", Seeded([](auto& c) { c.hidden_size = int64_t{1} << 31; }),
                  "hidden_size: 2147483648 is outside the allowed range 1..2147483647"},
        ModelCase{"hdiv", Seeded([](auto& c) { c.hidden_size = 4095; }),
                  "hidden_size: 4095 is not divisible by num_attention_heads 32"},
        ModelCase{"i0", Seeded([](auto& c) { c.intermediate_size = 0; }),
                  "intermediate_size: 0 is outside the allowed range 1..2147483647"},
        ModelCase{"heads0", Seeded([](auto& c) { c.num_attention_heads = 0; }),
                  "num_attention_heads: 0 is outside"},
        ModelCase{"layers0", Seeded([](auto& c) { c.num_hidden_layers = 0; }),
                  "num_hidden_layers: 0 is outside the allowed range 1..10000"},
        ModelCase{"layers big", Seeded([](auto& c) { c.num_hidden_layers = 10001; }),
                  "num_hidden_layers: 10001 is outside the allowed range 1..10000"},
        ModelCase{"mbs0", Seeded([](auto& c) { c.micro_batch_size = 0; }),
                  "micro_batch_size: 0 is outside the allowed range 1..2147483647"},
        ModelCase{"seq0", Seeded([](auto& c) { c.sequence_length = 0; }),
                  "sequence_length: 0 is outside the allowed range 1..2147483647"},
        ModelCase{"seqneg", Seeded([](auto& c) { c.sequence_length = -1; }),
                  "sequence_length: -1 is outside"},
        ModelCase{"tokens", Seeded([](auto& c) {
                    c.micro_batch_size = 65536;
                    c.sequence_length = 65536;
                  }),
                  "micro_batch_size * sequence_length: 65536 * 65536 exceeds the GEMM "
                  "dimension limit 2147483647"},
        ModelCase{"kvneg", Seeded([](auto& c) { c.num_key_value_heads = -1; }),
                  "num_key_value_heads: -1 is outside"},
        ModelCase{"kv>heads", Seeded([](auto& c) { c.num_key_value_heads = 64; }),
                  "num_key_value_heads: 64 is outside the allowed range 0..32"},
        ModelCase{"kvdiv", Seeded([](auto& c) { c.num_key_value_heads = 5; }),
                  "num_attention_heads: 32 is not divisible by num_key_value_heads 5"},
        ModelCase{"headdimneg", Seeded([](auto& c) { c.head_dim = -128; }),
                  "head_dim: -128 is outside"},
        ModelCase{"vocabneg", Seeded([](auto& c) { c.vocab_size = -1; }),
                  "vocab_size: -1 is outside"},
        ModelCase{"act", Seeded([](auto& c) { c.hidden_act = "sin"; }),
                  "hidden_act: 'sin' is not one of: gelu, gelu_10"},
        ModelCase{"act case", Seeded([](auto& c) { c.hidden_act = "SiLU"; }),
                  "hidden_act: 'SiLU' is not one of"},
        ModelCase{"split", Seeded([](auto& c) { c.split_gate_up = true; }),
                  "split_gate_up: true needs a gated MLP"},
        ModelCase{"topk no experts", Seeded([](auto& c) { c.experts_per_token = 2; }),
                  "experts_per_token: 2 needs num_experts > 0"},
        ModelCase{"shared no experts", Seeded([](auto& c) { c.num_shared_experts = 1; }),
                  "num_shared_experts: 1 needs num_experts > 0"},
        ModelCase{"dense no experts", Seeded([](auto& c) { c.first_dense_layers = 1; }),
                  "first_dense_layers: 1 needs num_experts > 0"},
        ModelCase{"moe_i no experts", Seeded([](auto& c) { c.moe_intermediate_size = 8; }),
                  "moe_intermediate_size: 8 needs num_experts > 0"},
        ModelCase{"skew no experts", Seeded([](auto& c) { c.moe_skew = 2.0; }),
                  "moe_skew: 2 needs num_experts > 0"},
        ModelCase{"experts neg", Seeded([](auto& c) { c.num_experts = -8; }),
                  "num_experts: -8 is outside"},
        ModelCase{"topk0", Moed([](auto& c) { c.experts_per_token = 0; }),
                  "experts_per_token: 0 is outside the allowed range 1..8"},
        ModelCase{"topk big", Moed([](auto& c) { c.experts_per_token = 9; }),
                  "experts_per_token: 9 is outside the allowed range 1..8"},
        ModelCase{"dense all", Moed([](auto& c) { c.first_dense_layers = 24; }),
                  "first_dense_layers: 24 is outside the allowed range 0..23"},
        ModelCase{"skew low", Moed([](auto& c) { c.moe_skew = 0.5; }),
                  "moe_skew: 0.5 is outside the allowed range 1..8"},
        ModelCase{"skew high", Moed([](auto& c) { c.moe_skew = 9.0; }),
                  "moe_skew: 9 is outside the allowed range 1..8"},
        ModelCase{"skew nan", Moed([](auto& c) { c.moe_skew = std::nan(""); }),
                  "moe_skew: nan is outside"},
        ModelCase{"moe sizes", Moed([](auto& c) { c.intermediate_size = 0; }),
                  "moe_intermediate_size: 0 and intermediate_size 0"},
        ModelCase{"shared neg", Moed([](auto& c) { c.num_shared_experts = -1; }),
                  "num_shared_experts: -1 is outside"},
        ModelCase{"mla nope", Mlaed([](auto& c) { c.qk_nope_head_dim = 0; }),
                  "qk_nope_head_dim: 0 is outside the allowed range 1..2147483647"},
        ModelCase{"mla rope", Mlaed([](auto& c) { c.qk_rope_head_dim = 0; }),
                  "qk_rope_head_dim: 0 is outside"},
        ModelCase{"mla v", Mlaed([](auto& c) { c.v_head_dim = 0; }), "v_head_dim: 0 is outside"},
        ModelCase{"mla q neg", Mlaed([](auto& c) { c.q_lora_rank = -1; }),
                  "q_lora_rank: -1 is outside"},
        ModelCase{"mla kv neg", Seeded([](auto& c) { c.kv_lora_rank = -1; }),
                  "kv_lora_rank: -1 is outside"},
        ModelCase{"tp0", Seeded([](auto& c) { c.tensor_parallel = 0; }),
                  "tensor_parallel: 0 is outside the allowed range 1..1024"},
        ModelCase{"tp big", Seeded([](auto& c) { c.tensor_parallel = 2048; }),
                  "tensor_parallel: 2048 is outside the allowed range 1..1024"},
        ModelCase{"tp heads", Seeded([](auto& c) { c.tensor_parallel = 3; }),
                  "num_attention_heads: 32 is not divisible by tensor_parallel 3"},
        ModelCase{"tp kv", Seeded([](auto& c) {
                    c.num_attention_heads = 12;
                    c.hidden_size = 1200;
                    c.num_key_value_heads = 3;
                    c.tensor_parallel = 2;
                  }),
                  "num_key_value_heads: 3 is not divisible by tensor_parallel 2"},
        ModelCase{"tp kv replicated", Seeded([](auto& c) {
                    c.num_attention_heads = 12;
                    c.hidden_size = 1200;
                    c.num_key_value_heads = 3;
                    c.tensor_parallel = 4;
                  }),
                  "tensor_parallel: 4 is not divisible by num_key_value_heads 3"},
        ModelCase{"tp mlp", Seeded([](auto& c) {
                    c.intermediate_size = 1000;
                    c.tensor_parallel = 16;
                  }),
                  "intermediate_size: 1000 is not divisible by tensor_parallel 16"},
        ModelCase{"tp experts", Moed([](auto& c) {
                    c.moe_intermediate_size = 100;
                    c.tensor_parallel = 8;
                  }),
                  "moe_intermediate_size: 100 is not divisible by tensor_parallel 8"},
        ModelCase{"tp vocab", Seeded([](auto& c) {
                    c.vocab_size = 32001;
                    c.tensor_parallel = 2;
                  }),
                  "vocab_size: 32001 is not divisible by tensor_parallel 2"},
        ModelCase{"sweep0", Seeded([](auto& c) {
                    c.sweep_m = {16, 0};
                  }),
                  "sweep_m[1]: 0 is outside the allowed range 1..2147483647"},
        ModelCase{"sweep dup", Seeded([](auto& c) {
                    c.sweep_m = {16, 32, 16};
                  }),
                  "sweep_m[2]: 16 is a duplicate"},
        ModelCase{"sweep long", Seeded([](auto& c) {
                    c.sweep_m.clear();
                    for (int i = 1; i <= 65; ++i) c.sweep_m.push_back(i);
                  }),
                  "sweep_m: 65 entries exceed the limit 64"},
        ModelCase{"derived", Seeded([](auto& c) {
                    c.num_attention_heads = 1;
                    c.hidden_size = 2;
                    c.head_dim = 1 << 30;
                  }),
                  "derived GEMM qkv has N = 3221225472, outside 1..2147483647"}),
    [](const auto& info) {
      std::string name;
      for (char ch : info.param.label)
        name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

TEST(ValidationTest, GoodConfigsPass) {
  EXPECT_TRUE(ValidateModelConfig(Seed()).ok()) << ValidateModelConfig(Seed());
  EXPECT_TRUE(ValidateModelConfig(Moe()).ok()) << ValidateModelConfig(Moe());
  EXPECT_TRUE(ValidateModelConfig(Mla()).ok()) << ValidateModelConfig(Mla());
  ModelConfig head_dim_given = Seed();
  head_dim_given.hidden_size = 4095;  // not divisible, but head_dim says what a head is
  head_dim_given.head_dim = 128;
  EXPECT_TRUE(ValidateModelConfig(head_dim_given).ok());
  ModelConfig sweep = Seed();
  sweep.micro_batch_size = 0;  // not needed with a sweep
  sweep.sequence_length = 0;
  sweep.sweep_m = {1, 2147483647};
  EXPECT_TRUE(ValidateModelConfig(sweep).ok()) << ValidateModelConfig(sweep);
}

TEST(ValidationTest, TimingLimits) {
  EXPECT_TRUE(ValidateTiming(TimingOptions{}).ok());
  struct Case {
    std::function<void(TimingOptions&)> edit;
    std::string expect;
  };
  const Case cases[] = {
      {[](auto& t) { t.warmup_iters = -1; },
       "warmup_iters: -1 is outside the allowed range 0..10000"},
      {[](auto& t) { t.warmup_iters = 10001; }, "warmup_iters: 10001 is outside"},
      {[](auto& t) { t.timed_iters = -1; },
       "timed_iters: -1 is outside the allowed range 1..100000 (or 0 for noise-aware rounds)"},
      {[](auto& t) { t.timed_iters = 100001; }, "timed_iters: 100001 is outside"},
      {[](auto& t) { t.autotune_k = 0; }, "autotune_k: 0 is outside the allowed range 1..64"},
      {[](auto& t) { t.autotune_k = 65; }, "autotune_k: 65 is outside"},
      {[](auto& t) { t.amax_history_len = 0; },
       "amax_history_len: 0 is outside the allowed range 1..65536"},
      {[](auto& t) { t.amax_history_len = 65537; }, "amax_history_len: 65537 is outside"},
      {[](auto& t) { t.gpu_warmup_s = -0.5; },
       "gpu_warmup_s: -0.5 is outside the allowed range 0..600"},
      {[](auto& t) { t.gpu_warmup_s = 601; }, "gpu_warmup_s: 601 is outside"},
      {[](auto& t) { t.gpu_warmup_s = std::numeric_limits<double>::infinity(); },
       "gpu_warmup_s: inf is outside"},
      {[](auto& t) { t.precision_target = 0; },
       "precision_target: 0 is outside the allowed range 0.001..0.5"},
      {[](auto& t) { t.precision_target = 0.0009; }, "precision_target: 0.0009 is outside"},
      {[](auto& t) { t.precision_target = 0.51; }, "precision_target: 0.51 is outside"},
      {[](auto& t) { t.precision_target = -0.01; }, "precision_target: -0.01 is outside"},
      {[](auto& t) { t.precision_target = std::nan(""); }, "precision_target: nan is outside"},
      {[](auto& t) { t.item_budget_s = 0; },
       "item_budget_s: 0 is outside the allowed range 0.05..600"},
      {[](auto& t) { t.item_budget_s = 0.04; }, "item_budget_s: 0.04 is outside"},
      {[](auto& t) { t.item_budget_s = 600.5; }, "item_budget_s: 600.5 is outside"},
      {[](auto& t) { t.item_budget_s = std::numeric_limits<double>::infinity(); },
       "item_budget_s: inf is outside"},
      {[](auto& t) { t.b2b_count = 1; },
       "b2b_count: 1 is outside the allowed range 2..1000 (or 0 to choose per group)"},
      {[](auto& t) { t.b2b_count = -2; }, "b2b_count: -2 is outside"},
      {[](auto& t) { t.b2b_count = 1001; }, "b2b_count: 1001 is outside"},
  };
  for (const Case& c : cases) {
    TimingOptions t;
    c.edit(t);
    absl::Status s = ValidateTiming(t);
    ASSERT_FALSE(s.ok()) << c.expect;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expect));
  }
  TimingOptions edges;
  edges.warmup_iters = 0;
  edges.timed_iters = 100000;
  edges.autotune_k = 64;
  edges.amax_history_len = 1;
  edges.gpu_warmup_s = 600;
  edges.seed = ~uint64_t{0};
  edges.precision_target = 0.5;
  edges.item_budget_s = 600;
  edges.b2b_count = 1000;
  EXPECT_TRUE(ValidateTiming(edges).ok()) << ValidateTiming(edges);
  TimingOptions low_edges;
  low_edges.timed_iters = 1;
  low_edges.precision_target = 0.001;
  low_edges.item_budget_s = 0.05;
  low_edges.b2b_count = 2;
  EXPECT_TRUE(ValidateTiming(low_edges).ok()) << ValidateTiming(low_edges);
}

TEST(ValidationTest, NoiseAwareAndAutomaticBackToBackAreValid) {
  TimingOptions t;
  t.timed_iters = 0;  // noise-aware rounds
  t.b2b_count = 0;    // chosen per group
  EXPECT_TRUE(ValidateTiming(t).ok()) << ValidateTiming(t);
}

// Kernel-only timing and Nsight mode are accepted together or apart; whether a node can
// take them is the runner's answer (not_supported with the reason), not validation's.
TEST(ValidationTest, KernelTimingAndProfileAreAccepted) {
  JobSpec spec;
  spec.shapes = {{16, 16, 16}};
  spec.timing.timing_backend = TimingBackend::kKernels;
  EXPECT_TRUE(ValidateJobSpec(spec).ok()) << ValidateJobSpec(spec);
  spec.profile = true;
  EXPECT_TRUE(ValidateJobSpec(spec).ok()) << ValidateJobSpec(spec);
}

TEST(ValidationTest, RetriesAreZeroToThree) {
  JobSpec spec;
  spec.shapes = {{16, 16, 16}};
  EXPECT_EQ(spec.retries, 1);
  for (int32_t ok : {0, 1, 3}) {
    spec.retries = ok;
    EXPECT_TRUE(ValidateJobSpec(spec).ok()) << ok;
  }
  for (int32_t bad : {-1, 4, 1000}) {
    spec.retries = bad;
    const absl::Status s = ValidateJobSpec(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(std::string(s.message()),
              "retries: " + std::to_string(bad) + " is out of range; give 0 (no retry) to 3");
  }
}

// Text fields travel in proto3 strings, which hold UTF-8 only: other bytes are an error
// naming the field here, not a failed call later.
TEST(ValidationTest, TextFieldsMustBeUtf8) {
  JobSpec spec;
  spec.model = Seed();
  spec.label = "seed 5B, \xc3\xa9t\xc3\xa9";
  EXPECT_TRUE(ValidateJobSpec(spec).ok()) << ValidateJobSpec(spec);
  spec.label = "bad\x90label";
  EXPECT_EQ(std::string(ValidateJobSpec(spec).message()),
            "label: byte 0x90 at offset 3 is not UTF-8; give text");
  spec.label.clear();
  spec.campaign = "\xff";
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("campaign: byte 0xFF"));
  spec.campaign.clear();
  spec.where = {PlacementKind::kModel, "NVIDIA \xc0\x80"};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("where: byte 0xC0"));
  spec.where = {};
  spec.model->name = "model\xed\xa0\x80.json";
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("name: byte 0xED at offset 5"));
  spec.model->name = "custom";
  spec.model->hidden_act = "si\x80lu";
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("hidden_act: byte 0x80"));
  EXPECT_EQ(ValidateJobSpec(spec).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidationTest, JobSpecRules) {
  JobSpec spec;
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("neither is set"));
  spec.model = Seed();
  EXPECT_TRUE(ValidateJobSpec(spec).ok()) << ValidateJobSpec(spec);
  spec.shapes = {{16, 16, 16}};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("both are set"));
  spec.model.reset();
  EXPECT_TRUE(ValidateJobSpec(spec).ok());

  spec.recipes = {Recipe::kBf16, Recipe::kNvfp4, Recipe::kBf16};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("recipes[2]: 'bf16' duplicates recipes[0]"));
  spec.recipes = {Recipe::kBf16};
  const RecipeVariant hp_wgrad = *ParseRecipeVariant("fp8-rowwise+wgrad:bf16");
  spec.variants = {hp_wgrad, hp_wgrad};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("recipes[2]: 'fp8-rowwise+wgrad:bf16' duplicates recipes[1]"));
  spec.variants = {RecipeVariant(Recipe::kFp8Block)};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("recipes: variant \"fp8-block\" overrides no pass; list it as a whole "
                        "recipe"));
  spec.variants = {hp_wgrad};
  EXPECT_TRUE(ValidateJobSpec(spec).ok()) << ValidateJobSpec(spec);
  spec.variants = {};
  spec.modes = {Mode::kPrequant, Mode::kPrequant};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("modes[1]: 'prequant' duplicates modes[0]"));
  spec.modes = {};
  spec.timing.timed_iters = -3;
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("timed_iters: -3"));
  spec.timing = {};
  spec.timing.b2b_count = 1;
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("b2b_count: 1"));
  spec.timing = {};

  spec.shapes = {{16, 16, 16}, {16, 0, 16}};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("shapes[1].k: 0 is outside the allowed range 1..2147483647"));
  spec.shapes = {{16, 16, int64_t{1} << 31}};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()), HasSubstr("shapes[0].n: 2147483648"));
  spec.shapes = {{2147483647, 2147483647, 2147483647}};
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("shapes[0]: 2147483647x2147483647x2147483647 has M*K*N above"));
  spec.shapes.assign(10001, GemmShape{8, 8, 8});
  EXPECT_THAT(std::string(ValidateJobSpec(spec).message()),
              HasSubstr("shapes: 10001 entries; the allowed range is 1..10000"));
  spec.shapes.assign(10000, GemmShape{8, 8, 8});
  EXPECT_TRUE(ValidateJobSpec(spec).ok());

  spec.shapes.clear();
  ModelConfig bad = Seed();
  bad.hidden_size = 4095;
  spec.model = bad;
  absl::Status s = ValidateJobSpec(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("hidden_size: 4095 is not divisible by num_attention_heads 32"));
}

}  // namespace
}  // namespace gemmprof::core
