#include "server/worker/item_deadline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gemmprof::worker {
namespace {

core::WorkItem Item(int64_t m, int64_t k, int64_t n, int64_t groups = 1) {
  core::WorkItem item;
  item.op.shape = {m, k, n};
  item.op.groups = groups;
  return item;
}

TEST(ItemDeadlineTest, ConfiguredValuesWin) {
  core::TimingOptions t;
  EXPECT_EQ(ItemTimeoutSeconds(Item(64, 64, 64), t, false, 1.5), 1.5);
  EXPECT_EQ(ItemTimeoutSeconds(Item(1 << 16, 1 << 16, 1 << 16), t, true, 2), 2);
  EXPECT_EQ(BeginJobTimeoutSeconds(t, 5), t.gpu_warmup_s + 5);
}

TEST(ItemDeadlineTest, DerivedBoundsAreNeverBelowAMinute) {
  core::TimingOptions t;
  EXPECT_EQ(ItemTimeoutSeconds(Item(64, 64, 64), t, false, 0), kMinDerivedTimeoutS);
  EXPECT_EQ(ItemTimeoutSeconds(Item(64, 64, 64), t, true, 0), kMinDerivedTimeoutS);
  EXPECT_EQ(BeginJobTimeoutSeconds(t, 0), t.gpu_warmup_s + kMinDerivedTimeoutS);
}

TEST(ItemDeadlineTest, DerivedBoundsGrowWithWorkAndStayGenerous) {
  core::TimingOptions t;  // 10 warm-up + 100 timed iterations
  // An LM head of 28 TFLOP per call: an H100 needs ~0.05 s per iteration, ~10 s in all.
  const core::WorkItem lm_head = Item(16384, 16384, 53248);
  const double gpu = ItemTimeoutSeconds(lm_head, t, false, 0);
  EXPECT_GT(gpu, 100);
  EXPECT_LT(gpu, 3600);
  core::TimingOptions more = t;
  more.timed_iters = 1000;
  EXPECT_GT(ItemTimeoutSeconds(lm_head, more, false, 0), gpu);
  more = t;
  more.autotune_k = 8;
  EXPECT_GT(ItemTimeoutSeconds(lm_head, more, false, 0), gpu);
  EXPECT_GT(ItemTimeoutSeconds(Item(16384, 16384, 53248, 8), t, false, 0), gpu);
  // The host reference's largest item (2^28 multiply-adds) gets well over a minute.
  EXPECT_GT(ItemTimeoutSeconds(Item(1024, 512, 512), t, true, 0), kMinDerivedTimeoutS);
}

TEST(ItemDeadlineTest, TheFlagTakesSecondsInRange) {
  EXPECT_TRUE(ValidateItemTimeout(0).ok());
  EXPECT_TRUE(ValidateItemTimeout(0.5).ok());
  EXPECT_TRUE(ValidateItemTimeout(kMaxItemTimeoutS).ok());
  for (double bad : {-1.0, -0.001, kMaxItemTimeoutS + 1, std::numeric_limits<double>::infinity(),
                     std::nan("")}) {
    absl::Status s = ValidateItemTimeout(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(s.message()).find("--item-timeout"), std::string::npos);
    EXPECT_NE(std::string(s.message()).find("[0, 604800]"), std::string::npos) << s.message();
  }
}

TEST(ItemDeadlineTest, SecondsPrintShort) {
  EXPECT_EQ(FormatSeconds(60), "60");
  EXPECT_EQ(FormatSeconds(1.5), "1.5");
  EXPECT_EQ(FormatSeconds(0.25), "0.25");
}

}  // namespace
}  // namespace gemmprof::worker
