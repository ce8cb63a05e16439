// The number formats of the report's sentences.
#include "report/format.h"

#include <gtest/gtest.h>

namespace gemmprof::report {
namespace {

using core::Mode;
using core::Recipe;

TEST(FormatTest, Numbers) {
  EXPECT_EQ(FormatMs(123.456), "123.5");
  EXPECT_EQ(FormatMs(1.23456), "1.235");
  EXPECT_EQ(FormatMs(0.0123456), "0.0123");
  EXPECT_EQ(FormatRatio(1.5), "1.50x");
  EXPECT_EQ(FormatUtc(0), "-");
  EXPECT_EQ(FormatUtc(1795000000000), "2026-11-18 11:06:40 UTC");
  EXPECT_EQ(FormatDuration(3 * 86400000 + 3600000), "3d 1h");
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1842), "1,842");
  EXPECT_EQ(FormatCount(-1234567), "-1,234,567");
}

}  // namespace
}  // namespace gemmprof::report
