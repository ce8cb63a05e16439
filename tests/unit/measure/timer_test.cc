// measure::BusyMs: the union of kernels' [start, end) intervals, the kernel-only figure of
// one launch (kernels/runner/kernel_sampler.cc).
#include "measure/timer.h"

#include "gtest/gtest.h"

namespace gemmprof::measure {
namespace {

TEST(BusyMsTest, NoKernelsIsZero) { EXPECT_DOUBLE_EQ(BusyMs({}), 0.0); }

TEST(BusyMsTest, KernelsOneAfterAnotherAddUp) {
  // 1 us, a 1 us gap (not counted), then 0.5 us.
  EXPECT_DOUBLE_EQ(BusyMs({{0, 1000}, {2000, 2500}}), 0.0015);
  // Back to back, the second starting where the first ends.
  EXPECT_DOUBLE_EQ(BusyMs({{0, 5000}, {5000, 10000}}), 0.010);
}

TEST(BusyMsTest, AnOverlapCountsOnce) {
  // A dependent kernel that starts 1 us before its primary ends and runs 2 us past it:
  // 12 us of device time, where the durations add up to 13.
  EXPECT_DOUBLE_EQ(BusyMs({{0, 10000}, {9000, 12000}}), 0.012);
  // One kernel wholly inside another's interval adds nothing.
  EXPECT_DOUBLE_EQ(BusyMs({{0, 10000}, {2000, 3000}}), 0.010);
  // The same interval twice counts once.
  EXPECT_DOUBLE_EQ(BusyMs({{100, 600}, {100, 600}}), 0.0005);
}

TEST(BusyMsTest, OrderOfTheRecordsDoesNotMatter) {
  EXPECT_DOUBLE_EQ(BusyMs({{9000, 12000}, {20000, 21000}, {0, 10000}}), 0.013);
}

TEST(BusyMsTest, AnIntervalThatEndsBeforeItStartsIsEmpty) {
  EXPECT_DOUBLE_EQ(BusyMs({{5000, 3000}}), 0.0);
  EXPECT_DOUBLE_EQ(BusyMs({{5000, 3000}, {0, 1000}, {4000, 4000}}), 0.001);
}

TEST(BusyMsTest, LargeTimestampsKeepTheirNanoseconds) {
  // CUPTI's timestamps are ns since an epoch: about 1.8e18 today.
  const uint64_t t0 = 1800000000000000000ull;
  EXPECT_DOUBLE_EQ(BusyMs({{t0, t0 + 7}, {t0 + 5, t0 + 9}}), 9e-6);
}

}  // namespace
}  // namespace gemmprof::measure
