#include "core/shape_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "core/limits.h"

namespace gemmprof::core {
namespace {

using ::testing::HasSubstr;

TEST(ShapeParserTest, TripletsAndSquareSizesInOrder) {
  auto shapes = ParseShapeList("4096x4096x4096, 8192x1024x512 ,1024,2048");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 4u);
  EXPECT_EQ((*shapes)[0], (GemmShape{4096, 4096, 4096}));
  EXPECT_EQ((*shapes)[1], (GemmShape{8192, 1024, 512}));
  EXPECT_EQ((*shapes)[2], (GemmShape{1024, 1024, 1024}));
  EXPECT_EQ((*shapes)[3], (GemmShape{2048, 2048, 2048}));
}

TEST(ShapeParserTest, WhitespaceUpperCaseXAndDuplicatesKept) {
  auto shapes = ParseShapeList("\t16X32x64 ,\n16x32x64");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 2u);
  EXPECT_EQ((*shapes)[0], (GemmShape{16, 32, 64}));
  EXPECT_EQ((*shapes)[1], (*shapes)[0]);
}

TEST(ShapeParserTest, LargestAllowedDimension) {
  auto shapes = ParseShapeList("2147483647x1x1");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].m, kMaxDim);
}

TEST(ShapeParserTest, RangesExpandInclusiveArithmeticAndGeometric) {
  auto a = ParseShapeList("256:1024:256x512x512");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, (std::vector<GemmShape>{
                    {256, 512, 512}, {512, 512, 512}, {768, 512, 512}, {1024, 512, 512}}));
  auto g = ParseShapeList("1024:8192:*2x4096x4096");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->size(), 4u);
  EXPECT_EQ(g->back(), (GemmShape{8192, 4096, 4096}));
  // END not reached by a step is left out; M outermost, then K, then N; squares too.
  auto p = ParseShapeList("1:5:3x2:4:2x7, 16:64:*4");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, (std::vector<GemmShape>{
                    {1, 2, 7}, {1, 4, 7}, {4, 2, 7}, {4, 4, 7}, {16, 16, 16}, {64, 64, 64}}));
  auto one = ParseShapeList("8:8:1x8x8");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  // The largest geometric range does not overflow.
  auto big = ParseShapeList("1:2147483647:*2x1x1");
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->size(), 31u);
  EXPECT_EQ(big->back().m, int64_t{1} << 30);
}

TEST(ShapeParserTest, ExpansionLimitCountsEveryItemAndIsCheckedBeforeExpanding) {
  auto at = ParseShapeList("1:4096:1x8x8");
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at->size(), static_cast<size_t>(kMaxExpandedShapes));
  auto over = ParseShapeList("1:4096:1x8x8,16");
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("item 2 '16' expands to more shapes than the limit of 4096"));
  // 2^31 x 2^31 x 2^31 values would never fit in memory: refused from the counts alone.
  auto huge = ParseShapeList("1:2147483647:1x1:2147483647:1x1:2147483647:1");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(std::string(huge.status().message()), HasSubstr("limit of 4096"));
}

TEST(ParseSizeRangeTest, SizesAndRangesWithALimit) {
  EXPECT_EQ(*ParseSizeRange("16", 64), (std::vector<int64_t>{16}));
  EXPECT_EQ(*ParseSizeRange("1:16384:*2", 64).value().rbegin(), 16384);
  EXPECT_EQ(ParseSizeRange("1:16384:*2", 64)->size(), 15u);
  auto over = ParseSizeRange("1:1000:1", 64);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("1000 values, above the limit of 64"));
  EXPECT_FALSE(ParseSizeRange("8:1:1", 64).ok());
}

struct BadCase {
  std::string text;
  std::string expect;  // substring of the message
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << "'" << c.text << "'"; }

class ShapeParserBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ShapeParserBadTest, IsInvalidArgumentNamingTheProblem) {
  auto shapes = ParseShapeList(GetParam().text);
  ASSERT_FALSE(shapes.ok()) << "accepted '" << GetParam().text << "'";
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(shapes.status().message()), HasSubstr(GetParam().expect));
}

INSTANTIATE_TEST_SUITE_P(
    All, ShapeParserBadTest,
    ::testing::Values(
        BadCase{"0x5x5", "item 1 '0x5x5' has a zero dimension"},
        BadCase{"1024,0", "item 2 '0' has a zero dimension"},
        BadCase{"-5x5x5", "signed dimension '-5'"}, BadCase{"5x-5x5", "signed dimension '-5'"},
        BadCase{"+5", "item 1 '+5' has a signed dimension"},
        BadCase{"4096x4096", "item 1 '4096x4096' has 2 dimensions"},
        BadCase{"1x2x3x4", "has 4 dimensions"}, BadCase{"axbxc", "has 'a' in dimension 'a'"},
        BadCase{"1e3", "has 'e' in dimension '1e3'"}, BadCase{"1.5", "has '.' in dimension"},
        BadCase{"", "shapes: empty"}, BadCase{"  \t", "shapes: empty"},
        BadCase{"1024,,2048", "item 2 '' is empty"}, BadCase{"1024,", "item 2 '' is empty"},
        BadCase{",1024", "item 1 '' is empty"}, BadCase{"4x4x", "has an empty dimension"},
        BadCase{"x4x4", "has an empty dimension"},
        BadCase{"2147483648", "above the limit 2147483647"},
        BadCase{"99999999999999999999999x1x1", "above the limit 2147483647"},
        BadCase{"2147483647x2147483647x2147483647", "M*K*N above the int64 limit"},
        BadCase{"1024x1024x1024abc", "has 'a' in dimension '1024abc'"},
        BadCase{"1024 x 1024 x 1024", "has ' ' in dimension"},
        BadCase{"1024;2048", "has ';' in dimension"}, BadCase{"0x10", "has 2 dimensions"},
        BadCase{"1:100000:1x8x8", "expands to more shapes than the limit of 4096"},
        BadCase{"1024:256:256x8x8", "START 1024 is above its END 256"},
        BadCase{"256:1024:0x8x8", "has a zero dimension"},
        BadCase{"256:1024:*1x8x8", "factor 1; a geometric range needs *2 or more"},
        BadCase{"256:1024x8x8", "a range is START:END:STEP or START:END:*FACTOR"},
        BadCase{"256:1024:256:1x8x8", "a range is START:END:STEP"},
        BadCase{"256::256x8x8", "has an empty dimension"},
        BadCase{"256:1024:*x8x8", "has an empty dimension"},
        BadCase{"256:1024:-2x8x8", "signed dimension '-2'"},
        BadCase{"256:1e3:2x8x8", "has 'e' in dimension '1e3'"},
        BadCase{"1:3000000000:1x8x8", "above the limit 2147483647"},
        BadCase{std::string("12\0"
                            "3",
                            4),
                "has '\\x00' in dimension"}));

}  // namespace
}  // namespace gemmprof::core
