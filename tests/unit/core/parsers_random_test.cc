// Throws random and mutated text at the two user-facing parsers: they must never
// crash and must answer with either a value or InvalidArgument.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "server/core/hf_config.h"
#include "server/core/presets.h"
#include "server/core/shape_parser.h"

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

TEST(ParsersRandomTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto parse = ParseHfConfigJson(deep, "deep");
  ASSERT_FALSE(parse.ok());
  EXPECT_EQ(parse.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gemmprof::core
