#include "server/security/listen_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gemmprof::security {
namespace {

TEST(ListenPolicyTest, LoopbackAddresses) {
  for (std::string_view a : {"127.0.0.1:50051", "127.0.0.1:0", "127.1.2.3:1", "localhost:50051",
                             "[::1]:50051", "unix:/run/gemmprofd.sock"}) {
    EXPECT_TRUE(IsLoopbackListen(a)) << a;
  }
  for (std::string_view a :
       {"0.0.0.0:50051", "[::]:50051", "10.0.0.5:1", "gpu-node-1:50051", "128.0.0.1:1",
        "localhost.evil.com:1", "[::ffff:10.0.0.1]:1", ":50051", "", "127.0.0.1.nip.io:1"}) {
    EXPECT_FALSE(IsLoopbackListen(a)) << a;
  }
}

TEST(ListenPolicyTest, PlaintextOnTheNetworkNeedsInsecure) {
  EXPECT_TRUE(CheckPlaintextListen("127.0.0.1:1", false, false).ok());
  EXPECT_TRUE(CheckPlaintextListen("0.0.0.0:1", true, false).ok());
  EXPECT_TRUE(CheckPlaintextListen("0.0.0.0:1", false, true).ok());
  absl::Status refused = CheckPlaintextListen("0.0.0.0:50051", false, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  const std::string m(refused.message());
  EXPECT_THAT(m, ::testing::HasSubstr("--listen 0.0.0.0:50051: not a loopback address"));
  EXPECT_THAT(m, ::testing::HasSubstr("--tls-cert and --tls-key"));
  EXPECT_THAT(m, ::testing::HasSubstr("--insecure"));
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace gemmprof::security
