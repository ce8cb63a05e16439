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
        BadCase{std::string("12\0"
                            "3",
                            4),
                "has '\\x00' in dimension"}));

}  // namespace
}  // namespace gemmprof::core
