#include "core/routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gemmprof::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int64_t Sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), 0LL); }

MoeRouting Parsed(const std::string& text) {
  absl::StatusOr<MoeRouting> r = ParseMoeRouting(text, "--moe-routing");
  EXPECT_TRUE(r.ok()) << text << ": " << r.status();
  return r.value_or(MoeRouting{});
}

TEST(RoutingTest, ParsesEveryFormAndPrintsItBack) {
  for (const std::string text : {"uniform", "skew:1.5", "zipf:1.2", "hot:4:0.5"}) {
    EXPECT_EQ(ToString(Parsed(text)), text);
  }
  EXPECT_EQ(Parsed("").kind, MoeRouting::Kind::kUniform);
  const MoeRouting hot = Parsed("hot:3:0.25");
  EXPECT_EQ(hot.hot_experts, 3);
  EXPECT_DOUBLE_EQ(hot.hot_fraction, 0.25);
}

TEST(RoutingTest, BadTextNamesTheFieldTheValueAndTheForms) {
  for (const std::string text :
       {"random", "zipf", "zipf:x", "zipf:-1", "zipf:0", "zipf:5", "zipf:nan", "skew:", "skew:0.5",
        "skew:1:2", "hot:4", "hot:0:0.5", "hot:2.5:0.5", "hot:4:1", "hot:4:0", "hot:4:x",
        "uniform:1", "Zipf:1"}) {
    absl::StatusOr<MoeRouting> r = ParseMoeRouting(text, "--moe-routing");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string m(r.status().message());
    EXPECT_THAT(m, HasSubstr("--moe-routing: '" + text + "'"));
    EXPECT_THAT(m, HasSubstr("uniform, skew:S, zipf:A or hot:K:F"));
  }
}

TEST(RoutingTest, ModelLimitsAreChecked) {
  // 8 experts, top 2.
  EXPECT_TRUE(CheckMoeRouting(Parsed("skew:8"), 8, 2, "f").ok());
  EXPECT_THAT(CheckMoeRouting(Parsed("skew:9"), 8, 2, "f").message(),
              HasSubstr("above num_experts (8)"));
  EXPECT_THAT(CheckMoeRouting(Parsed("hot:8:0.5"), 8, 2, "f").message(), HasSubstr("give 1..7"));
  // One hot expert cannot take half of 2 picks per token (at most every token: F <= 1/2).
  EXPECT_TRUE(CheckMoeRouting(Parsed("hot:1:0.5"), 8, 2, "f").ok());
  EXPECT_THAT(CheckMoeRouting(Parsed("hot:1:0.6"), 8, 2, "f").message(),
              HasSubstr("at most F = 0.5"));
  // 7 hot of 8 with top 2: the one cold expert cannot take 2 * 0.4 = 0.8 > ... fine; 0.1
  // leaves it 1.8 picks per token.
  EXPECT_THAT(CheckMoeRouting(Parsed("hot:7:0.1"), 8, 2, "f").message(),
              HasSubstr("leaves the other 1 experts"));
}

TEST(RoutingTest, UniformSplitsTheRemainderOneEach) {
  // 10 tokens x 2 picks over 8 experts: 20 = 2 * 8 + 4.
  EXPECT_THAT(ExpertTokenCounts(Parsed("uniform"), 8, 2, 10, 1),
              ElementsAre(3, 3, 3, 3, 2, 2, 2, 2));
  // Decode: 3 tokens x 2 picks over 8 experts leaves two experts without a token.
  EXPECT_THAT(ExpertTokenCounts(Parsed("uniform"), 8, 2, 3, 1),
              ElementsAre(1, 1, 1, 1, 1, 1, 0, 0));
}

TEST(RoutingTest, SkewGivesTheFirstExpertItsShareAndTheOthersTheRest) {
  // 4096 tokens x 2 over 8: balanced 1024, hot 1536, the rest 6656 over 7 = 950.86.
  const std::vector<int64_t> c = ExpertTokenCounts(Parsed("skew:1.5"), 8, 2, 4096, 1);
  EXPECT_EQ(c[0], 1536);
  EXPECT_EQ(Sum(c), 8192);
  for (size_t e = 1; e < c.size(); ++e) EXPECT_TRUE(c[e] == 950 || c[e] == 951) << c[e];
  // Capped at every token.
  EXPECT_EQ(ExpertTokenCounts(Parsed("skew:8"), 8, 2, 4096, 1)[0], 4096);
}

TEST(RoutingTest, HotExpertsTakeTheirFraction) {
  // 100 tokens x 2 = 200; 2 hot take 0.5 = 100, 50 each; 6 cold take 100: 17,17,17,17,16,16.
  EXPECT_THAT(ExpertTokenCounts(Parsed("hot:2:0.5"), 8, 2, 100, 1),
              ElementsAre(50, 50, 17, 17, 17, 17, 16, 16));
}

// Zipf: an independent check of the draw's law. With A = 1.2 over 16 experts and top 1,
// expert shares follow the weights 1/(rank+1)^1.2 normalized; 20000 tokens put every
// share within 5 standard deviations of its expectation. The same seed draws the same
// counts; another seed other counts; every count <= tokens and the sum exact.
TEST(RoutingTest, ZipfDrawsFollowTheWeightsAndTheSeed) {
  const MoeRouting z = Parsed("zipf:1.2");
  const int64_t tokens = 20000, experts = 16;
  const std::vector<int64_t> c = ExpertTokenCounts(z, experts, 1, tokens, 7);
  EXPECT_EQ(Sum(c), tokens);
  std::vector<int64_t> sorted = c;
  std::sort(sorted.rbegin(), sorted.rend());
  double norm = 0;
  for (int64_t r = 0; r < experts; ++r) norm += std::pow(r + 1.0, -1.2);
  for (int64_t r = 0; r < experts; ++r) {
    const double p = std::pow(r + 1.0, -1.2) / norm;
    const double expect = p * tokens, sd = std::sqrt(tokens * p * (1 - p));
    // Sorting counts mixes neighbouring ranks only within noise; 5 sd is loose for that.
    EXPECT_NEAR(static_cast<double>(sorted[r]), expect, 5 * sd + 1) << "rank " << r;
  }
  EXPECT_EQ(ExpertTokenCounts(z, experts, 1, tokens, 7), c);
  EXPECT_NE(ExpertTokenCounts(z, experts, 1, tokens, 8), c);
  // top_k picks are distinct experts: with top 8 of 16 no count exceeds the tokens.
  const std::vector<int64_t> wide = ExpertTokenCounts(Parsed("zipf:4"), experts, 8, 500, 3);
  EXPECT_EQ(Sum(wide), 500 * 8);
  for (int64_t n : wide) EXPECT_LE(n, 500);
  EXPECT_EQ(*std::max_element(wide.begin(), wide.end()), 500);  // A = 4: the top one always
}

TEST(RoutingTest, LayoutDefaultsByTokensAndRejectsOtherText) {
  EXPECT_EQ(*ResolveMoeLayout("", 256, "f"), MoeLayout::kMasked);
  EXPECT_EQ(*ResolveMoeLayout("", 257, "f"), MoeLayout::kContiguous);
  EXPECT_EQ(*ResolveMoeLayout("contiguous", 16, "f"), MoeLayout::kContiguous);
  EXPECT_EQ(*ResolveMoeLayout("masked", 4096, "f"), MoeLayout::kMasked);
  absl::StatusOr<MoeLayout> bad = ResolveMoeLayout("packed", 16, "--moe-layout");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("--moe-layout: 'packed' is not a layout (contiguous or masked)"));
}

TEST(RoutingTest, SpreadIsMinLowerMedianMaxAndZeros) {
  const TokenSpread s = SpreadOf({5, 0, 9, 2});
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.median, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_EQ(s.zero, 1);
}

}  // namespace
}  // namespace gemmprof::core
