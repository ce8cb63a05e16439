#include "core/derive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/validation.h"

namespace gemmprof::core {
namespace {

using ::testing::HasSubstr;

// (name, pass, m, k, n, groups, layers, per_layer): one expected op.
using Row = std::tuple<std::string, Pass, int64_t, int64_t, int64_t, int64_t, int64_t, bool>;

std::vector<Row> Rows(const Plan& plan) {
  std::vector<Row> rows;
  for (const GemmOp& op : plan.ops) {
    rows.emplace_back(op.name, op.pass, op.shape.m, op.shape.k, op.shape.n, op.groups, op.layers,
                      op.per_layer);
  }
  return rows;
}

// Fprop rows -> the full expected plan: fprop, dgrad (M, N, K), wgrad (K, M, N).
std::vector<Row> WithBackward(const std::vector<Row>& fprop) {
  std::vector<Row> rows = fprop;
  for (auto [name, pass, m, k, n, g, l, p] : fprop) {
    rows.emplace_back(name, Pass::kDgrad, m, n, k, g, l, p);
  }
  for (auto [name, pass, m, k, n, g, l, p] : fprop) {
    rows.emplace_back(name, Pass::kWgrad, k, m, n, g, l, p);
  }
  return rows;
}

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

ModelConfig Llama31_8b() {
  ModelConfig c;
  c.name = "llama-3.1-8b";
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 8;
  c.num_hidden_layers = 32;
  c.vocab_size = 128256;
  c.hidden_act = "silu";
  c.gated_mlp = true;
  c.micro_batch_size = 1;
  c.sequence_length = 4096;
  return c;
}

absl::StatusOr<Plan> PlanOf(const ModelConfig& c) {
  JobSpec spec;
  spec.model = c;
  return DerivePlan(spec);
}

constexpr Pass F = Pass::kFprop;
constexpr Pass D = Pass::kDgrad;
constexpr Pass W = Pass::kWgrad;

TEST(DeriveTest, SeedTableExactly) {
  auto plan = PlanOf(Seed());
  ASSERT_TRUE(plan.ok()) << plan.status();
  // M = 31 * 512 = 15872; the seed tutorial's table.
  const std::vector<Row> expected = {
      {"qkv", F, 15872, 4096, 12288, 1, 24, true},
      {"attn_out", F, 15872, 4096, 4096, 1, 24, true},
      {"mlp_up", F, 15872, 4096, 16384, 1, 24, true},
      {"mlp_down", F, 15872, 16384, 4096, 1, 24, true},
      {"qkv", D, 15872, 12288, 4096, 1, 24, true},
      {"attn_out", D, 15872, 4096, 4096, 1, 24, true},
      {"mlp_up", D, 15872, 16384, 4096, 1, 24, true},
      {"mlp_down", D, 15872, 4096, 16384, 1, 24, true},
      {"qkv", W, 4096, 15872, 12288, 1, 24, true},
      {"attn_out", W, 4096, 15872, 4096, 1, 24, true},
      {"mlp_up", W, 4096, 15872, 16384, 1, 24, true},
      {"mlp_down", W, 16384, 15872, 4096, 1, 24, true},
  };
  EXPECT_EQ(Rows(*plan), expected);
  EXPECT_EQ(plan->num_layers, 24);
  EXPECT_EQ(plan->model_name, "custom");

  double per_layer = 0.0;
  double full_model = 0.0;
  for (const GemmOp& op : plan->ops) {
    per_layer += op.Flops();
    full_model += op.Flops() * op.layers;
  }
  // 3 passes * 2 * 15872 * 4096 * (12288 + 4096 + 16384 + 16384).
  EXPECT_DOUBLE_EQ(per_layer, 19172734009344.0);
  EXPECT_DOUBLE_EQ(full_model, 24 * 19172734009344.0);
}

TEST(DeriveTest, Llama31_8bPlan) {
  auto plan = PlanOf(Llama31_8b());
  ASSERT_TRUE(plan.ok()) << plan.status();
  // M = 1 * 4096; QKV N = (32 + 2*8) * 128 = 6144; fused gate+up N = 2 * 14336 = 28672.
  EXPECT_EQ(Rows(*plan), WithBackward({
                             {"qkv", F, 4096, 4096, 6144, 1, 32, true},
                             {"attn_out", F, 4096, 4096, 4096, 1, 32, true},
                             {"mlp_up", F, 4096, 4096, 28672, 1, 32, true},
                             {"mlp_down", F, 4096, 14336, 4096, 1, 32, true},
                             {"lm_head", F, 4096, 4096, 128256, 1, 1, false},
                         }));
}

TEST(DeriveTest, SplitGateUpGivesTwoGemms) {
  ModelConfig c = Llama31_8b();
  c.split_gate_up = true;
  c.vocab_size = 0;
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Rows(*plan), WithBackward({
                             {"qkv", F, 4096, 4096, 6144, 1, 32, true},
                             {"attn_out", F, 4096, 4096, 4096, 1, 32, true},
                             {"mlp_gate", F, 4096, 4096, 14336, 1, 32, true},
                             {"mlp_up", F, 4096, 4096, 14336, 1, 32, true},
                             {"mlp_down", F, 4096, 14336, 4096, 1, 32, true},
                         }));
}

TEST(DeriveTest, SwigluActivationImpliesGate) {
  ModelConfig c = Seed();
  c.hidden_act = "swiglu";
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->ops[2].name, "mlp_up");
  EXPECT_EQ(plan->ops[2].shape.n, 2 * 16384);
}

ModelConfig Mixtral8x7b() {
  ModelConfig c = Llama31_8b();
  c.name = "mixtral-8x7b";
  c.vocab_size = 32000;
  c.num_experts = 8;
  c.experts_per_token = 2;
  return c;
}

TEST(DeriveTest, Mixtral8x7bHandTable) {
  auto plan = PlanOf(Mixtral8x7b());
  ASSERT_TRUE(plan.ok()) << plan.status();
  // tokens = 4096; per expert ceil(4096 * 2 / 8) = 1024; expert up N = 2 * 14336 = 28672.
  EXPECT_EQ(Rows(*plan), WithBackward({
                             {"qkv", F, 4096, 4096, 6144, 1, 32, true},
                             {"attn_out", F, 4096, 4096, 4096, 1, 32, true},
                             {"router", F, 4096, 4096, 8, 1, 32, true},
                             {"expert_up", F, 1024, 4096, 28672, 8, 32, true},
                             {"expert_down", F, 1024, 14336, 4096, 8, 32, true},
                             {"lm_head", F, 4096, 4096, 32000, 1, 1, false},
                         }));
}

TEST(DeriveTest, MoeSkewScalesHottestExpert) {
  ModelConfig c = Mixtral8x7b();
  c.moe_skew = 1.5;  // ceil(1024 * 1.5) = 1536
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->ops[3].name, "expert_up");
  EXPECT_EQ(plan->ops[3].shape.m, 1536);
  c.moe_skew = 8.0;  // 1024 * 8 = 8192, capped at the 4096 tokens
  plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->ops[3].shape.m, 4096);
  c.moe_skew = 1.0;
  c.sequence_length = 4095;  // ceil(4095 * 2 / 8) = ceil(1023.75) = 1024
  plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->ops[3].shape.m, 1024);
}

TEST(DeriveTest, UnvalidatedSkewNeverCrashes) {
  ModelConfig c = Mixtral8x7b();
  for (double skew : {std::nan(""), std::numeric_limits<double>::infinity(), 1e300}) {
    c.moe_skew = skew;
    auto plan = DeriveModelPlan(c);  // no validation: must cap, not misbehave
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->ops[3].shape.m, 4096);
    EXPECT_FALSE(ValidateModelConfig(c).ok());
  }
}

// Routing gives each expert its tokens: the op's token dimension is the capacity (the
// hottest expert's count), group_tokens the counts (fprop, dgrad: M; wgrad: K, padded to
// 16), flops each expert at its own tokens; uniform counts leave group_tokens empty.
TEST(DeriveTest, RoutingGivesEachExpertItsTokens) {
  ModelConfig c = Mixtral8x7b();  // 4096 tokens x 2 over 8 experts
  c.moe_routing = "hot:2:0.5";    // 2048 each for two, 4096/6 = 682.67 for six
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const GemmOp* up = nullptr;
  const GemmOp* up_w = nullptr;
  for (const GemmOp& op : plan->ops) {
    if (op.name == "expert_up" && op.pass == Pass::kFprop) up = &op;
    if (op.name == "expert_up" && op.pass == Pass::kWgrad) up_w = &op;
  }
  ASSERT_TRUE(up != nullptr && up_w != nullptr);
  EXPECT_EQ(up->shape.m, 2048);
  EXPECT_EQ(up->group_tokens, (std::vector<int64_t>{2048, 2048, 683, 683, 683, 683, 682, 682}));
  EXPECT_EQ(up->layout, MoeLayout::kContiguous);  // 4096 tokens per step
  EXPECT_DOUBLE_EQ(up->Flops(), 2.0 * 8192 * 4096 * 28672);
  // wgrad: K is the tokens, each padded up to a multiple of 16.
  EXPECT_EQ(up_w->shape.k, 2048);
  EXPECT_EQ(up_w->group_tokens, (std::vector<int64_t>{2048, 2048, 688, 688, 688, 688, 688, 688}));
  // Uniform: every expert 1024, no counts kept.
  c.moe_routing = "uniform";
  plan = PlanOf(c);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->ops[3].group_tokens.empty());
  EXPECT_EQ(plan->ops[3].shape.m, 1024);
}

TEST(DeriveTest, DecodeSweepDefaultsToTheMaskedLayoutAndZipfIsSeeded) {
  ModelConfig c = Mixtral8x7b();
  c.sweep_m = {16, 512};
  c.moe_routing = "zipf:1.2";
  c.moe_seed = 3;
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<const GemmOp*> experts;
  for (const GemmOp& op : plan->ops)
    if (op.groups > 1) experts.push_back(&op);
  ASSERT_EQ(experts.size(), 4u);                          // up and down at each M
  EXPECT_EQ(experts[0]->layout, MoeLayout::kMasked);      // 16 tokens
  EXPECT_EQ(experts[2]->layout, MoeLayout::kContiguous);  // 512 tokens
  int64_t sum = 0;
  for (int64_t t : experts[0]->group_tokens) sum += t;
  EXPECT_EQ(sum, 32);  // 16 tokens x 2 experts each
  EXPECT_EQ(experts[0]->group_tokens, experts[1]->group_tokens);
  c.moe_seed = 4;
  auto other = PlanOf(c);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->ops, plan->ops);
  c.moe_layout = "contiguous";
  other = PlanOf(c);
  ASSERT_TRUE(other.ok());
  for (const GemmOp& op : other->ops)
    if (op.groups > 1) EXPECT_EQ(op.layout, MoeLayout::kContiguous);
}

// An unvalidated config whose tokens per step are out of range (DeriveModelPlan is also
// what validation calls) is an error naming the derived M; routing never sees the count
// (tokens x experts per token would overflow: `deploy/fuzz.sh --tests` runs this under
// UndefinedBehaviorSanitizer).
TEST(DeriveTest, AnOutOfRangeTokenCountOfAnUnvalidatedMoeConfigIsAnError) {
  for (int64_t tokens : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    for (const char* routing : {"uniform", "zipf:1.2", "hot:2:0.5", "skew:2"}) {
      ModelConfig c = Mixtral8x7b();
      c.sweep_m = {tokens, 16};
      c.moe_routing = routing;
      auto plan = DeriveModelPlan(c);
      ASSERT_FALSE(plan.ok()) << tokens << " " << routing;
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
      EXPECT_THAT(plan.status().message(),
                  HasSubstr(absl::StrCat("has M = ", tokens, ", outside 1..2147483647")));
    }
  }
}

TEST(DeriveTest, BadRoutingAndLayoutNameTheField) {
  ModelConfig c = Mixtral8x7b();
  c.moe_routing = "zipf:0";
  EXPECT_THAT(PlanOf(c).status().message(), HasSubstr("moe_routing: 'zipf:0'"));
  c.moe_routing = "hot:8:0.5";
  EXPECT_THAT(PlanOf(c).status().message(), HasSubstr("give 1..7"));
  c.moe_routing = "skew:2";
  c.moe_skew = 2;
  EXPECT_THAT(PlanOf(c).status().message(), HasSubstr("give one"));
  c.moe_skew = 1;
  c.moe_routing = "";
  c.moe_layout = "packed";
  EXPECT_THAT(PlanOf(c).status().message(), HasSubstr("moe_layout: 'packed' is not a layout"));
  c.moe_layout = "";
  c.moe_seed = 0;
  EXPECT_THAT(PlanOf(c).status().message(), HasSubstr("moe_seed: 0 is below 1"));
  // Zipf draws every token's experts: a step too large is refused, not slow.
  c.moe_seed = 1;
  c.moe_routing = "zipf:1";
  c.micro_batch_size = 4096;
  EXPECT_THAT(PlanOf(c).status().message(), HasSubstr("draws every token's experts"));
  // The bound is the whole plan's: a sweep whose every step would pass alone is refused
  // when its steps together draw too much (12800 experts at 49 and 4736 tokens: one plan
  // call took 5 s before).
  c.micro_batch_size = 1;
  c.num_experts = 12800;
  c.sweep_m = {49, 1000};
  EXPECT_TRUE(PlanOf(c).ok()) << PlanOf(c).status();
  c.sweep_m = {49, 4736};
  EXPECT_THAT(PlanOf(c).status().message(),
              HasSubstr("4785 tokens over the sweep's steps x 12800 experts is above 16777216"));
  ModelConfig dense = Seed();
  dense.moe_routing = "uniform";
  EXPECT_THAT(PlanOf(dense).status().message(), HasSubstr("needs num_experts > 0"));
}

ModelConfig DeepSeekV3() {
  ModelConfig c;
  c.name = "deepseek-v3";
  c.hidden_size = 7168;
  c.intermediate_size = 18432;
  c.moe_intermediate_size = 2048;
  c.num_attention_heads = 128;
  c.num_key_value_heads = 128;
  c.num_hidden_layers = 61;
  c.first_dense_layers = 3;
  c.num_experts = 256;
  c.experts_per_token = 8;
  c.num_shared_experts = 1;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.vocab_size = 129280;
  c.hidden_act = "silu";
  c.gated_mlp = true;
  c.micro_batch_size = 1;
  c.sequence_length = 4096;
  return c;
}

TEST(DeriveTest, DeepSeekV3HandTable) {
  auto plan = PlanOf(DeepSeekV3());
  ASSERT_TRUE(plan.ok()) << plan.status();
  // tokens 4096. MLA: q_b N = 128 * (128 + 64) = 24576; kv_a N = 512 + 64 = 576;
  // kv_b N = 128 * (128 + 128) = 32768; attn_out K = 128 * 128 = 16384.
  // 3 dense layers: mlp_up N = 2 * 18432 = 36864. 61 - 3 = 58 MoE layers:
  // experts M = ceil(4096 * 8 / 256) = 128, up N = 2 * 2048 = 4096;
  // one shared expert: intermediate 2048 * 1, up N = 4096.
  EXPECT_EQ(Rows(*plan), WithBackward({
                             {"q_a", F, 4096, 7168, 1536, 1, 61, true},
                             {"q_b", F, 4096, 1536, 24576, 1, 61, true},
                             {"kv_a", F, 4096, 7168, 576, 1, 61, true},
                             {"kv_b", F, 4096, 512, 32768, 1, 61, true},
                             {"attn_out", F, 4096, 16384, 7168, 1, 61, true},
                             {"mlp_up", F, 4096, 7168, 36864, 1, 3, true},
                             {"mlp_down", F, 4096, 18432, 7168, 1, 3, true},
                             {"router", F, 4096, 7168, 256, 1, 58, true},
                             {"expert_up", F, 128, 7168, 4096, 256, 58, true},
                             {"expert_down", F, 128, 2048, 7168, 256, 58, true},
                             {"shared_up", F, 4096, 7168, 4096, 1, 58, true},
                             {"shared_down", F, 4096, 2048, 7168, 1, 58, true},
                             {"lm_head", F, 4096, 7168, 129280, 1, 1, false},
                         }));
}

TEST(DeriveTest, DeepSeekV3TensorParallel8) {
  ModelConfig c = DeepSeekV3();
  c.tensor_parallel = 8;
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 16 heads per rank; q_a, kv_a and router replicated.
  EXPECT_EQ(Rows(*plan), WithBackward({
                             {"q_a", F, 4096, 7168, 1536, 1, 61, true},
                             {"q_b", F, 4096, 1536, 3072, 1, 61, true},
                             {"kv_a", F, 4096, 7168, 576, 1, 61, true},
                             {"kv_b", F, 4096, 512, 4096, 1, 61, true},
                             {"attn_out", F, 4096, 2048, 7168, 1, 61, true},
                             {"mlp_up", F, 4096, 7168, 4608, 1, 3, true},
                             {"mlp_down", F, 4096, 2304, 7168, 1, 3, true},
                             {"router", F, 4096, 7168, 256, 1, 58, true},
                             {"expert_up", F, 128, 7168, 512, 256, 58, true},
                             {"expert_down", F, 128, 256, 7168, 256, 58, true},
                             {"shared_up", F, 4096, 7168, 512, 1, 58, true},
                             {"shared_down", F, 4096, 256, 7168, 1, 58, true},
                             {"lm_head", F, 4096, 7168, 16160, 1, 1, false},
                         }));
}

TEST(DeriveTest, Llama8bTensorParallelSplits) {
  struct Case {
    int64_t tp, qkv_n, attn_k, up_n, down_k, lm_n;
  };
  // qkv N = (32/tp + 2 * max(1, 8/tp)) * 128; mlp up N = 2 * 14336 / tp.
  for (Case t : {Case{2, 3072, 2048, 14336, 7168, 64128}, Case{4, 1536, 1024, 7168, 3584, 32064},
                 Case{8, 768, 512, 3584, 1792, 16032},
                 // 8 KV heads on 16 ranks: one replicated KV head each: (2 + 2) * 128.
                 Case{16, 512, 256, 1792, 896, 8016}}) {
    ModelConfig c = Llama31_8b();
    c.tensor_parallel = t.tp;
    auto plan = PlanOf(c);
    ASSERT_TRUE(plan.ok()) << "tp=" << t.tp << " " << plan.status();
    EXPECT_EQ(Rows(*plan), WithBackward({
                               {"qkv", F, 4096, 4096, t.qkv_n, 1, 32, true},
                               {"attn_out", F, 4096, t.attn_k, 4096, 1, 32, true},
                               {"mlp_up", F, 4096, 4096, t.up_n, 1, 32, true},
                               {"mlp_down", F, 4096, t.down_k, 4096, 1, 32, true},
                               {"lm_head", F, 4096, 4096, t.lm_n, 1, 1, false},
                           }))
        << "tp=" << t.tp;
  }
}

TEST(DeriveTest, SequenceParallelKeepsTensorParallelShapes) {
  ModelConfig c = Llama31_8b();
  c.tensor_parallel = 4;
  auto tp_only = PlanOf(c);
  c.sequence_parallel = true;
  auto with_sp = PlanOf(c);
  ASSERT_TRUE(tp_only.ok() && with_sp.ok());
  EXPECT_EQ(Rows(*with_sp), Rows(*tp_only));
  EXPECT_EQ(with_sp->ops[0].shape.m, 4096);  // full sequence after the all-gather
}

TEST(DeriveTest, NonDivisibleTensorParallelNamesBothNumbers) {
  ModelConfig c = Llama31_8b();
  c.tensor_parallel = 3;
  auto plan = PlanOf(c);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("num_attention_heads: 32 is not divisible by tensor_parallel 3"));
}

TEST(DeriveTest, InferenceSweepDistinctFpropShapes) {
  ModelConfig c = Llama31_8b();
  c.micro_batch_size = 0;
  c.sequence_length = 0;
  c.sweep_m = {16, 128};
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Rows(*plan), (std::vector<Row>{
                             {"qkv@m=16", F, 16, 4096, 6144, 1, 32, true},
                             {"attn_out@m=16", F, 16, 4096, 4096, 1, 32, true},
                             {"mlp_up@m=16", F, 16, 4096, 28672, 1, 32, true},
                             {"mlp_down@m=16", F, 16, 14336, 4096, 1, 32, true},
                             {"lm_head@m=16", F, 16, 4096, 128256, 1, 1, false},
                             {"qkv@m=128", F, 128, 4096, 6144, 1, 32, true},
                             {"attn_out@m=128", F, 128, 4096, 4096, 1, 32, true},
                             {"mlp_up@m=128", F, 128, 4096, 28672, 1, 32, true},
                             {"mlp_down@m=128", F, 128, 14336, 4096, 1, 32, true},
                             {"lm_head@m=128", F, 128, 4096, 128256, 1, 1, false},
                         }));
}

TEST(DeriveTest, InferenceSweepMergesIdenticalShapes) {
  ModelConfig c = Seed();
  c.intermediate_size = 4096;  // mlp_up and mlp_down become 4096x4096 like attn_out
  c.sweep_m = {8};
  auto plan = PlanOf(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Rows(*plan), (std::vector<Row>{
                             {"qkv@m=8", F, 8, 4096, 12288, 1, 24, true},
                             {"attn_out+mlp_up+mlp_down@m=8", F, 8, 4096, 4096, 1, 72, true},
                         }));
}

TEST(DeriveTest, ShapeListPlan) {
  JobSpec spec;
  spec.shapes = {{1024, 1024, 1024}, {16, 32, 64}};
  auto plan = DerivePlan(spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->model_name, "shapes");
  EXPECT_EQ(plan->num_layers, 1);
  EXPECT_EQ(Rows(*plan), (std::vector<Row>{{"1024x1024x1024", F, 1024, 1024, 1024, 1, 1, true},
                                           {"16x32x64", F, 16, 32, 64, 1, 1, true}}));
}

TEST(DeriveTest, DerivePlanValidates) {
  JobSpec spec;
  EXPECT_EQ(DerivePlan(spec).status().code(), absl::StatusCode::kInvalidArgument);
  ModelConfig c = Seed();
  c.hidden_size = 4095;
  spec.model = c;
  auto plan = DerivePlan(spec);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("hidden_size: 4095 is not divisible by num_attention_heads 32"));
}

TEST(DeriveTest, DerivedDimensionAboveLimitIsRejected) {
  ModelConfig c = Seed();
  c.num_attention_heads = 1;
  c.hidden_size = 2;
  c.head_dim = 1 << 30;  // qkv N = 3 * 2^30 > 2^31 - 1
  auto plan = PlanOf(c);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("derived GEMM qkv has N = 3221225472, outside 1..2147483647"));
}

TEST(DeriveTest, ExpandItemsOpMajor) {
  auto plan = PlanOf(Seed());
  ASSERT_TRUE(plan.ok());
  auto items =
      ExpandItems(*plan, {Recipe::kBf16, Recipe::kFp8Block}, {Mode::kAutocast, Mode::kPrequant});
  ASSERT_EQ(items.size(), 12u * 2 * 2);
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(items[i].seq, static_cast<int32_t>(i));
    EXPECT_EQ(items[i].op, plan->ops[i / 4]);
    EXPECT_EQ(items[i].recipe, (i / 2) % 2 == 0 ? Recipe::kBf16 : Recipe::kFp8Block);
    EXPECT_EQ(items[i].mode, i % 2 == 0 ? Mode::kAutocast : Mode::kPrequant);
    EXPECT_EQ(items[i].id, 0);
    EXPECT_EQ(items[i].job_id, 0);
  }
}

// A variant adds, per GEMM, the recipe its pass runs when the GEMM has no item of it yet:
// whole recipes first, then the variants' in their order; a list of variants only runs no
// whole recipe.
TEST(DeriveTest, ExpandItemsAddsTheRecipesOfAVariantsPasses) {
  auto plan = PlanOf(Seed());
  ASSERT_TRUE(plan.ok());
  const RecipeVariant hp_wgrad = *ParseRecipeVariant("fp8-rowwise+wgrad:bf16");
  const RecipeVariant block_dgrad = *ParseRecipeVariant("fp8-current+dgrad:fp8-block");
  auto items =
      ExpandItems(*plan, {Recipe::kFp8Rowwise}, {Mode::kAutocast}, {hp_wgrad, block_dgrad});
  std::map<Pass, std::vector<Recipe>> per_pass;
  for (const WorkItem& item : items) {
    if (item.op.name != "qkv") continue;
    per_pass[item.op.pass].push_back(item.recipe);
  }
  EXPECT_EQ(per_pass[Pass::kFprop],
            (std::vector<Recipe>{Recipe::kFp8Rowwise, Recipe::kFp8Current}));
  EXPECT_EQ(per_pass[Pass::kDgrad], (std::vector<Recipe>{Recipe::kFp8Rowwise, Recipe::kFp8Block}));
  EXPECT_EQ(per_pass[Pass::kWgrad],
            (std::vector<Recipe>{Recipe::kFp8Rowwise, Recipe::kBf16, Recipe::kFp8Current}));
  ASSERT_EQ(items.size(), 4u * (2 + 2 + 3));
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].seq, static_cast<int32_t>(i));

  const auto only = ExpandItems(*plan, {}, {}, {hp_wgrad});
  ASSERT_EQ(only.size(), 12u);
  for (const WorkItem& item : only)
    EXPECT_EQ(item.recipe, item.op.pass == Pass::kWgrad ? Recipe::kBf16 : Recipe::kFp8Rowwise);
}

// A variant naming fast accumulation adds an item of its own only in the passes whose
// setting differs from what the job's option gives them, and only once per GEMM.
TEST(DeriveTest, ExpandItemsGivesAFastAccumVariantItsOwnItemsWhereTheSettingDiffers) {
  auto plan = PlanOf(Seed());
  ASSERT_TRUE(plan.ok());
  const RecipeVariant all = *ParseRecipeVariant("fp8-current+fast-accum:all");
  const RecipeVariant fprop = *ParseRecipeVariant("fp8-current+fast-accum:fprop");
  const RecipeVariant all_again =
      *ParseRecipeVariant("fp8-current+dgrad:bf16+fast-accum:fprop/wgrad");
  using Own = std::pair<Recipe, FastAccum>;
  auto per_pass_of = [&](const std::vector<WorkItem>& items) {
    std::map<Pass, std::vector<Own>> per_pass;
    for (const WorkItem& item : items)
      if (item.op.name == "qkv") per_pass[item.op.pass].push_back({item.recipe, item.fast_accum});
    return per_pass;
  };
  const Own whole{Recipe::kFp8Current, FastAccum::kDefault};
  const Own fast{Recipe::kFp8Current, FastAccum::kOn};
  const Own split{Recipe::kFp8Current, FastAccum::kOff};
  // Default option (fprop fast, dgrad and wgrad split): "all" runs its own dgrad and wgrad,
  // "fprop" is the whole recipe everywhere, the third shares "all"'s wgrad item.
  auto items = ExpandItems(*plan, {Recipe::kFp8Current}, {Mode::kPrequant}, {all, fprop, all_again},
                           FastAccum::kDefault);
  auto per_pass = per_pass_of(items);
  EXPECT_EQ(per_pass[Pass::kFprop], (std::vector<Own>{whole}));
  EXPECT_EQ(per_pass[Pass::kDgrad],
            (std::vector<Own>{whole, fast, {Recipe::kBf16, FastAccum::kDefault}}));
  EXPECT_EQ(per_pass[Pass::kWgrad], (std::vector<Own>{whole, fast}));
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].seq, static_cast<int32_t>(i));
  // --fast-accum on: "all" is the whole recipe, "fprop" splits its backward passes.
  per_pass = per_pass_of(
      ExpandItems(*plan, {Recipe::kFp8Current}, {Mode::kPrequant}, {all, fprop}, FastAccum::kOn));
  EXPECT_EQ(per_pass[Pass::kFprop], (std::vector<Own>{whole}));
  EXPECT_EQ(per_pass[Pass::kDgrad], (std::vector<Own>{whole, split}));
  EXPECT_EQ(per_pass[Pass::kWgrad], (std::vector<Own>{whole, split}));
  // Without the whole recipe, a pass the variant shares still runs the recipe's item.
  per_pass = per_pass_of(ExpandItems(*plan, {}, {Mode::kPrequant}, {all}, FastAccum::kDefault));
  EXPECT_EQ(per_pass[Pass::kFprop], (std::vector<Own>{whole}));
  EXPECT_EQ(per_pass[Pass::kDgrad], (std::vector<Own>{fast}));
}

// The passes of a plan in which a variant runs items of its own, in pass order.
TEST(DeriveTest, OwnItemPassesAreThePlansPassesWhoseSettingDiffers) {
  auto plan = PlanOf(Seed());
  ASSERT_TRUE(plan.ok());
  const RecipeVariant all = *ParseRecipeVariant("fp8-current+fast-accum:all");
  EXPECT_EQ(OwnItemPasses(all, *plan, FastAccum::kDefault),
            (std::vector<Pass>{Pass::kDgrad, Pass::kWgrad}));
  EXPECT_TRUE(OwnItemPasses(all, *plan, FastAccum::kOn).empty());
  EXPECT_EQ(
      OwnItemPasses(*ParseRecipeVariant("fp8-rowwise+fast-accum:none"), *plan, FastAccum::kDefault),
      (std::vector<Pass>{Pass::kFprop}));
  EXPECT_TRUE(
      OwnItemPasses(*ParseRecipeVariant("fp8-rowwise+wgrad:bf16"), *plan, FastAccum::kDefault)
          .empty());
  // A pass the plan lacks has no items at all.
  Plan fprop_only = *plan;
  std::erase_if(fprop_only.ops, [](const GemmOp& op) { return op.pass != Pass::kFprop; });
  EXPECT_TRUE(OwnItemPasses(all, fprop_only, FastAccum::kDefault).empty());
}

TEST(DeriveTest, ExpandItemsDefaults) {
  auto plan = PlanOf(Seed());
  ASSERT_TRUE(plan.ok());
  auto items = ExpandItems(*plan, {}, {});
  // The default: the training recipes (the serving ones run when named).
  ASSERT_EQ(items.size(), 12u * DefaultRecipes().size());
  for (size_t r = 0; r < DefaultRecipes().size(); ++r) {
    EXPECT_EQ(items[r].recipe, DefaultRecipes()[r]);
    EXPECT_EQ(items[r].mode, Mode::kAutocast);
    EXPECT_EQ(items[r].op.name, "qkv");
  }
}

}  // namespace
}  // namespace gemmprof::core
