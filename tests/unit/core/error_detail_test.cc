#include "core/error_detail.h"

#include <gtest/gtest.h>

namespace gemmprof::core {
namespace {

TEST(ErrorDetailTest, SourceTravelsBesideTheMessage) {
  absl::Status s = WithSource(absl::InternalError("CUDA error 700"), "kernels/a.cc:12: f(x)");
  EXPECT_EQ(s.message(), "CUDA error 700");
  EXPECT_EQ(SourceOf(s), "kernels/a.cc:12: f(x)");
  EXPECT_EQ(SourceOf(absl::InternalError("plain")), "");
  EXPECT_TRUE(WithSource(absl::OkStatus(), "x.cc:1").ok());
}

TEST(ErrorDetailTest, ContextLostIsAMarkOnTheStatus) {
  EXPECT_FALSE(IsContextLost(absl::InternalError("x")));
  EXPECT_TRUE(IsContextLost(MarkContextLost(absl::InternalError("x"))));
  EXPECT_TRUE(MarkContextLost(absl::OkStatus()).ok());
}

TEST(ErrorDetailTest, AppendingKeepsCodeAndPayloads) {
  const absl::Status base = MarkContextLost(
      WithSource(absl::ResourceExhaustedError("CUDA out of memory"), "kernels/b.cc:3: g()"));
  const absl::Status s = WhileDoing(base, "preparing the operands");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "CUDA out of memory while preparing the operands");
  EXPECT_EQ(SourceOf(s), "kernels/b.cc:3: g()");
  EXPECT_TRUE(IsContextLost(s));
  EXPECT_EQ(AppendToMessage(absl::AbortedError("a"), "; b").message(), "a; b");
  EXPECT_TRUE(WhileDoing(absl::OkStatus(), "anything").ok());
  absl::StatusOr<int> value = 3;
  EXPECT_EQ(*WhileDoing(value, "x"), 3);
  absl::StatusOr<int> failed = absl::InternalError("e");
  EXPECT_EQ(WhileDoing(failed, "x").status().message(), "e while x");
}

}  // namespace
}  // namespace gemmprof::core
