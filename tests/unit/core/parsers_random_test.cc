// Throws random and mutated text at the two user-facing parsers, and random model
// configs at validation and derivation: they must never crash and must answer with
// either a value or InvalidArgument.
#include <gtest/gtest.h>

#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/derive.h"
#include "core/hf_config.h"
#include "core/presets.h"
#include "core/shape_parser.h"
#include "core/validation.h"

namespace gemmprof::core {
namespace {

constexpr uint32_t kSeed = 20261122;  // fixed so a failure reproduces
constexpr int kIterations = 4000;

std::string RandomText(std::mt19937& rng, const std::string& alphabet, size_t max_len) {
  std::uniform_int_distribution<size_t> len(0, max_len);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string s(len(rng), ' ');
  for (char& c : s) c = alphabet[pick(rng)];
  return s;
}

// Replaces, inserts or deletes a few bytes of `text`.
std::string Mutate(std::mt19937& rng, std::string text) {
  std::uniform_int_distribution<int> ops(1, 4);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = ops(rng); i > 0; --i) {
    std::uniform_int_distribution<size_t> at(0, text.size());
    const size_t pos = at(rng);
    switch (byte(rng) % 3) {
      case 0:
        if (pos < text.size()) text[pos] = static_cast<char>(byte(rng));
        break;
      case 1:
        text.insert(pos, 1, static_cast<char>(byte(rng)));
        break;
      default:
        if (pos < text.size()) text.erase(pos, 1);
    }
  }
  return text;
}

TEST(ParsersRandomTest, ShapeListNeverCrashes) {
  std::mt19937 rng(kSeed);
  const std::string alphabet = "0123456789xX, \t-+e.a\n";
  int accepted = 0;
  for (int i = 0; i < kIterations; ++i) {
    const std::string text =
        i % 2 == 0 ? RandomText(rng, alphabet, 40) : Mutate(rng, "4096x4096x4096, 1024,2048");
    auto shapes = ParseShapeList(text);
    if (shapes.ok()) {
      ++accepted;
      ASSERT_FALSE(shapes->empty()) << text;
      for (const GemmShape& s : *shapes) {
        ASSERT_GE(s.m, 1) << text;
        ASSERT_GE(s.k, 1) << text;
        ASSERT_GE(s.n, 1) << text;
      }
    } else {
      ASSERT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument) << text;
    }
  }
  // Both outcomes occur, so the test exercises both paths.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, kIterations);
}

TEST(ParsersRandomTest, HfConfigNeverCrashes) {
  std::mt19937 rng(kSeed);
  auto base = PresetConfigJson("deepseek-v3");
  ASSERT_TRUE(base.ok());
  const std::string alphabet = "{}[]\":,0123456789-.eE truefalsnl\\u";
  int accepted = 0;
  for (int i = 0; i < kIterations; ++i) {
    const std::string text =
        i % 2 == 0 ? RandomText(rng, alphabet, 60) : Mutate(rng, std::string(*base));
    auto parse = ParseHfConfigJson(text, "random");
    if (parse.ok()) {
      ++accepted;
    } else {
      ASSERT_EQ(parse.status().code(), absl::StatusCode::kInvalidArgument) << text;
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, kIterations);
}

// Presets with 0-3 fields set to random values, valid and not: validation and
// derivation either succeed or answer InvalidArgument, and whatever validates derives.
TEST(ParsersRandomTest, RandomModelConfigsNeverCrash) {
  std::mt19937 rng(kSeed);
  const int64_t values[] = {-1,
                            0,
                            1,
                            2,
                            3,
                            4,
                            7,
                            8,
                            16,
                            64,
                            128,
                            4096,
                            2147483647,
                            2147483648,
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()};
  std::uniform_int_distribution<size_t> pick(0, std::size(values) - 1);
  std::uniform_int_distribution<int> edits(0, 3);
  const std::vector<std::string> presets = PresetNames();
  std::uniform_int_distribution<size_t> pick_preset(0, presets.size() - 1);
  int valid = 0;
  for (int i = 0; i < kIterations; ++i) {
    auto base = FindPreset(presets[pick_preset(rng)]);
    ASSERT_TRUE(base.ok());
    ModelConfig c = *base;
    int64_t* fields[] = {&c.hidden_size,         &c.intermediate_size,  &c.num_attention_heads,
                         &c.num_key_value_heads, &c.head_dim,           &c.num_hidden_layers,
                         &c.micro_batch_size,    &c.sequence_length,    &c.vocab_size,
                         &c.num_experts,         &c.experts_per_token,  &c.moe_intermediate_size,
                         &c.num_shared_experts,  &c.first_dense_layers, &c.tensor_parallel,
                         &c.q_lora_rank,         &c.kv_lora_rank,       &c.qk_nope_head_dim,
                         &c.qk_rope_head_dim,    &c.v_head_dim};
    std::uniform_int_distribution<size_t> pick_field(0, std::size(fields) + 2);
    for (int e = edits(rng); e > 0; --e) {
      const size_t f = pick_field(rng);
      if (f < std::size(fields)) {
        *fields[f] = values[pick(rng)];
      } else if (f == std::size(fields)) {
        c.moe_skew = static_cast<double>(values[pick(rng)]) / 3.0;
      } else if (f == std::size(fields) + 1) {
        c.sweep_m = {values[pick(rng)], values[pick(rng)]};
      } else {
        c.split_gate_up = !c.split_gate_up;
      }
    }
    absl::Status status = ValidateModelConfig(c);
    auto derived = DeriveModelPlan(c);
    if (status.ok()) {
      ++valid;
      ASSERT_TRUE(derived.ok()) << derived.status();
      ASSERT_FALSE(derived->ops.empty());
    } else {
      ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    }
    if (!derived.ok()) ASSERT_EQ(derived.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, kIterations);
}

TEST(ParsersRandomTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto parse = ParseHfConfigJson(deep, "deep");
  ASSERT_FALSE(parse.ok());
  EXPECT_EQ(parse.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gemmprof::core
