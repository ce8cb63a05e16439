#include "core/error_detail.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/progress.h"

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

TEST(ErrorDetailTest, TheItemInFlightTravelsWithTheStatus) {
  const absl::Status hung = MarkInFlight(absl::DeadlineExceededError("hung"), 42);
  EXPECT_EQ(InFlightItem(hung), 42);
  EXPECT_EQ(InFlightItem(AppendToMessage(hung, "; reproduced on retry")), 42);
  EXPECT_EQ(InFlightItem(absl::DeadlineExceededError("hung")), 0);
  EXPECT_EQ(InFlightItem(MarkInFlight(absl::DeadlineExceededError("hung"), 0)), 0);
  EXPECT_TRUE(MarkInFlight(absl::OkStatus(), 3).ok());
}

TEST(ErrorDetailTest, ProgressCountsStepsKeepsTheSlowestAndCancelsAtABoundary) {
  std::vector<int64_t> entered;
  MeasureProgress p([&](int64_t id) {
    entered.push_back(id);
    return id == 13 ? absl::InternalError("injected") : absl::OkStatus();
  });
  EXPECT_TRUE(p.Enter(7).ok());
  EXPECT_EQ(p.item_id(), 7);
  p.Step();
  p.Step(12.5);
  p.Step(3);
  EXPECT_EQ(p.steps(), 3);
  EXPECT_EQ(p.slowest_step_ms(), 12.5);
  EXPECT_EQ(p.Enter(13), absl::InternalError("injected")) << "the hook's error fails the call";
  EXPECT_EQ(entered, (std::vector<int64_t>{7, 13}));
  p.RequestCancel();
  EXPECT_TRUE(absl::IsCancelled(p.Enter(8)));
  EXPECT_EQ(entered.size(), 2u) << "a cancelled call enters nothing more";
  EXPECT_TRUE(absl::IsCancelled(CheckCancel(&p)));
  // A runner called without a watchdog: every call is a no-op.
  EXPECT_TRUE(EnterItem(nullptr, 1).ok());
  StepDone(nullptr, 1);
  EXPECT_TRUE(CheckCancel(nullptr).ok());
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
