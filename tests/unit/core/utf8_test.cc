#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace gemmprof::core {
namespace {

constexpr size_t kOk = std::string_view::npos;

TEST(Utf8Test, WellFormedTextPasses) {
  EXPECT_EQ(FirstInvalidUtf8(""), kOk);
  EXPECT_EQ(FirstInvalidUtf8("fp8-rowwise+wgrad:bf16"), kOk);
  EXPECT_EQ(FirstInvalidUtf8("\xc3\xa9t\xc3\xa9"), kOk);        // été
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x82\xac 5"), kOk);           // €
  EXPECT_EQ(FirstInvalidUtf8("\xf0\x9f\x98\x80"), kOk);         // U+1F600
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x8f\xbf\xbf"), kOk);         // U+10FFFF, the last
  EXPECT_EQ(FirstInvalidUtf8("\xed\x9f\xbf"), kOk);             // U+D7FF, before surrogates
  EXPECT_EQ(FirstInvalidUtf8(std::string("a\0b", 3)), kOk);     // NUL is a character
}

TEST(Utf8Test, EachKindOfBadByteIsFoundWhereItStands) {
  EXPECT_EQ(FirstInvalidUtf8("bad\x90label"), 3u);            // a lone continuation byte
  EXPECT_EQ(FirstInvalidUtf8("ab\xc3"), 2u);                  // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x82"), 0u);                // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xc0\x80"), 0u);                // overlong NUL
  EXPECT_EQ(FirstInvalidUtf8("\xc1\xbf"), 0u);                // overlong
  EXPECT_EQ(FirstInvalidUtf8("\xe0\x80\x80"), 0u);            // overlong three bytes
  EXPECT_EQ(FirstInvalidUtf8("\xf0\x80\x80\x80"), 0u);        // overlong four bytes
  EXPECT_EQ(FirstInvalidUtf8("x\xed\xa0\x80"), 1u);           // U+D800, a surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u);        // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("\xf5\x80\x80\x80"), 0u);        // no such lead byte
  EXPECT_EQ(FirstInvalidUtf8("\xff"), 0u);
  EXPECT_EQ(FirstInvalidUtf8("\xc3\xa9\xe2\x28\xa1"), 2u);    // a bad second continuation
  EXPECT_EQ(FirstInvalidUtf8("\xf0\x9f\x98\x28"), 0u);        // a bad last continuation
}

TEST(Utf8Test, CheckNamesTheFieldTheByteAndItsOffset) {
  EXPECT_TRUE(CheckUtf8("label", "seed 5B, été").ok());
  const absl::Status bad = CheckUtf8("label", "bad\x90label");
  EXPECT_TRUE(absl::IsInvalidArgument(bad));
  EXPECT_EQ(bad.message(), "label: byte 0x90 at offset 3 is not UTF-8; give text");
}

}  // namespace
}  // namespace gemmprof::core
