// The kernel-choice burst: candidates timed in interleaved rounds, and which is kept.
#include "measure/burst.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace gemmprof::measure {
namespace {

class FixedCandidates final : public CandidateTimer {
 public:
  explicit FixedCandidates(std::vector<double> ms) : ms_(std::move(ms)) {}
  absl::StatusOr<std::vector<double>> Time(size_t c, int32_t warmup, int32_t samples) override {
    calls.push_back({c, {warmup, samples}});
    if (fail.count(c) && calls_of(c) >= fail[c]) return absl::InternalError("launch failed");
    return std::vector<double>(samples, ms_[c] + 0.001 * calls_of(c));
  }
  int calls_of(size_t c) const {
    int n = 0;
    for (const auto& call : calls) n += call.first == c;
    return n;
  }
  std::vector<std::pair<size_t, std::pair<int32_t, int32_t>>> calls;
  std::map<size_t, int> fail;  // candidate -> its call (1-based) that fails

 private:
  std::vector<double> ms_;
};

TEST(TimeCandidatesTest, OneLaunchSizesTheRoundsThenTheyInterleave) {
  FixedCandidates timer({1.0, 0.01, 4.0});
  const std::vector<absl::StatusOr<double>> ms = TimeCandidates(timer, 3, 3);
  ASSERT_EQ(timer.calls.size(), 3u * 4);
  // Round -1: one launch each, no more than one warm-up.
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(timer.calls[c].first, c);
    EXPECT_EQ(timer.calls[c].second, (std::pair<int32_t, int32_t>{1, 1}));
  }
  // Then about 2 ms of warm-up (1..3 launches) and 5 ms of samples (3..10) each.
  EXPECT_EQ(timer.calls[3].second, (std::pair<int32_t, int32_t>{2, 5}));   // 1 ms
  EXPECT_EQ(timer.calls[4].second, (std::pair<int32_t, int32_t>{3, 10}));  // 0.01 ms
  EXPECT_EQ(timer.calls[5].second, (std::pair<int32_t, int32_t>{1, 3}));   // 4 ms
  // Interleaved: 0, 1, 2, 0, 1, 2, ...
  for (size_t i = 0; i < timer.calls.size(); ++i) EXPECT_EQ(timer.calls[i].first, i % 3);
  // The median of the rounds' medians (this timer adds 1 us a call).
  ASSERT_TRUE(ms[0].ok());
  EXPECT_NEAR(*ms[0], 1.003, 1e-9);
}

TEST(TimeCandidatesTest, AFailedCandidateSitsOutAndKeepsItsError) {
  FixedCandidates timer({1.0, 0.5});
  timer.fail[1] = 2;
  const std::vector<absl::StatusOr<double>> ms = TimeCandidates(timer, 2, 3);
  EXPECT_TRUE(ms[0].ok());
  EXPECT_EQ(ms[1].status(), absl::InternalError("launch failed"));
  EXPECT_EQ(timer.calls_of(1), 2);
  EXPECT_EQ(timer.calls_of(0), 4);
}

TEST(PickFastestTest, TheIncumbentStaysWithinTheMargin) {
  using R = absl::StatusOr<double>;
  EXPECT_EQ(PickFastest({R(1.0), R(0.995)}), 0);  // 0.5% faster: noise
  EXPECT_EQ(PickFastest({R(1.0), R(0.98)}), 1);   // 2% faster
  EXPECT_EQ(PickFastest({R(1.0), R(0.98), R(0.97), R(0.989)}), 2);
  EXPECT_EQ(PickFastest({R(1.0), R(1.2)}), 0);
  EXPECT_EQ(PickFastest({R(1.0), R(0.95)}, 0.1), 0);  // a wider margin
  const R failed = absl::InternalError("x");
  EXPECT_EQ(PickFastest({failed, R(1.1), R(1.05)}), 2);  // no incumbent: the fastest
  EXPECT_EQ(PickFastest({failed, failed}), -1);
  EXPECT_EQ(PickFastest({R(1.0), failed}), 0);
  EXPECT_EQ(PickFastest({}), -1);
}

TEST(CloseToTest, TheFormsTheRoundsDecideBetween) {
  using R = absl::StatusOr<double>;
  const R failed = absl::InternalError("x");
  const std::vector<R> ms = {R(1.0), R(0.90), R(0.93), R(0.95), failed, R(0.944)};
  // Kept 1 (0.90): within 5% are 0.93 and 0.944 (<= 0.945), not 0.95, never the
  // incumbent (cuBLASLt) or a failed one.
  EXPECT_EQ(CloseTo(ms, 1, 0.05), (std::vector<size_t>{2, 5}));
  EXPECT_TRUE(CloseTo(ms, 4, 0.05).empty());
  EXPECT_TRUE(CloseTo(ms, 9, 0.05).empty());
}

}  // namespace
}  // namespace gemmprof::measure
