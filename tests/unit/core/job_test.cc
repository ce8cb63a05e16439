// TimingOptions::CacheText: the timing part of the result-cache key.
#include "core/job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/cache_key.h"

namespace gemmprof::core {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(CacheTextTest, PinsEveryOptionAndTheMethod) {
  EXPECT_EQ(TimingOptions{}.CacheText(),
            "warmup=10;iters=0;l2=hot;autotune=1;seed=1234;acct=training-step;"
            "fastacc=default;amaxlen=1024;amaxalgo=max;prec=0.01;budget=2;b2b=0;"
            "method=rounds1");
}

TEST(CacheTextTest, EveryNewOptionChangesTheKey) {
  const std::string base = TimingOptions{}.CacheText();
  const std::vector<std::function<void(TimingOptions&)>> edits = {
      [](TimingOptions& t) { t.timed_iters = 100; },
      [](TimingOptions& t) { t.precision_target = 0.005; },
      // Values that print alike at six digits must still differ.
      [](TimingOptions& t) { t.precision_target = 0.0100000001; },
      [](TimingOptions& t) { t.item_budget_s = 0.5; },
      [](TimingOptions& t) { t.b2b_count = 10; },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    TimingOptions t;
    edits[i](t);
    EXPECT_NE(t.CacheText(), base) << i;
  }
}

// Results cached before interleaved rounds have keys without the method marker, so an
// old row never answers a request made now, even with every old option equal.
TEST(CacheTextTest, OldKeysNeverMatch) {
  const std::string old_text =
      "warmup=10;iters=100;l2=hot;autotune=1;seed=1234;acct=training-step;"
      "fastacc=default;amaxlen=1024;amaxalgo=max";
  const TimingOptions now;
  EXPECT_NE(now.CacheText(), old_text);
  EXPECT_THAT(now.CacheText(), EndsWith(";method=rounds1"));
  WorkItem item;
  item.op.shape = {64, 64, 64};
  EXPECT_THAT(CacheKey(DeviceInfo{}, item, now), HasSubstr("|" + now.CacheText()));
}

}  // namespace
}  // namespace gemmprof::core
