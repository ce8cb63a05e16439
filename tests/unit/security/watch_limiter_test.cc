#include "server/security/watch_limiter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace gemmprof::security {
namespace {

TEST(WatchLimiterTest, CountsPerClientAndReleasesOnDestruction) {
  WatchLimiter limiter(2);
  std::vector<WatchLimiter::Lease> held;
  for (int i = 0; i < 2; ++i) {
    auto lease = limiter.Acquire("token alice", "token 'alice'");
    ASSERT_TRUE(lease.ok());
    held.push_back(*std::move(lease));
  }
  auto third = limiter.Acquire("token alice", "token 'alice'");
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(third.status().message()),
            "token 'alice' already has 2 open WatchJob streams, the limit (gemmprofd "
            "--max-watches-per-client 2); close one first");
  EXPECT_TRUE(limiter.Acquire("token bob", "token 'bob'").ok()) << "another client";
  EXPECT_EQ(limiter.Active("token bob"), 0) << "that lease was dropped at once";
  held.pop_back();
  EXPECT_EQ(limiter.Active("token alice"), 1);
  auto again = limiter.Acquire("token alice", "token 'alice'");
  ASSERT_TRUE(again.ok());
  WatchLimiter::Lease moved = *std::move(again);
  WatchLimiter::Lease target;
  target = std::move(moved);
  EXPECT_EQ(limiter.Active("token alice"), 2) << "moving does not count twice";
  held.clear();
  target = WatchLimiter::Lease();
  EXPECT_EQ(limiter.Active("token alice"), 0);
}

TEST(WatchLimiterTest, PeersCountByHost) {
  EXPECT_EQ(WatchClientKey("", "ipv4:10.0.0.5:41234"), WatchClientKey("", "ipv4:10.0.0.5:41999"));
  EXPECT_NE(WatchClientKey("", "ipv4:10.0.0.5:1"), WatchClientKey("", "ipv4:10.0.0.6:1"));
  EXPECT_EQ(WatchClientLabel("", "ipv6:[::1]:5000"), "client ipv6:[::1]");
  EXPECT_EQ(WatchClientLabel("alice", "ipv4:10.0.0.5:1"), "token 'alice'");
  EXPECT_NE(WatchClientKey("alice", "x"), WatchClientKey("", "alice"));
  EXPECT_EQ(WatchClientKey("", "unix:/tmp/s"), "peer unix:/tmp/s");
}

}  // namespace
}  // namespace gemmprof::security
