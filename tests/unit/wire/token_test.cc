#include "wire/token.h"

#include <gtest/gtest.h>

#include <set>

namespace gemmprof::wire {
namespace {

TEST(TokenTest, Sha256MatchesKnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(TokenSha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(TokenSha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenTest, NewTokensAreDistinctAndWellFormed) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    auto token = NewToken();
    ASSERT_TRUE(token.ok()) << token.status();
    EXPECT_EQ(token->rfind(kTokenPrefix, 0), 0u) << *token;
    EXPECT_EQ(token->size(), std::string(kTokenPrefix).size() + 43) << *token;
    EXPECT_EQ(token->find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
                  std::string(kTokenPrefix).size()),
              std::string::npos)
        << *token;
    EXPECT_TRUE(seen.insert(*token).second) << "token repeated: " << *token;
    EXPECT_TRUE(IsSha256Hex(TokenSha256Hex(*token)));
  }
}

TEST(TokenTest, IsSha256HexRejectsBadDigests) {
  EXPECT_TRUE(IsSha256Hex(std::string(64, 'a')));
  EXPECT_TRUE(IsSha256Hex(std::string(64, 'F')));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(65, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a') + "g"));
  EXPECT_FALSE(IsSha256Hex(""));
}

}  // namespace
}  // namespace gemmprof::wire
