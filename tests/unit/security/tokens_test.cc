#include "server/security/tokens.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::security {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Line(const std::string& name, const std::string& role, const std::string& token) {
  return name + " " + role + " " + wire::TokenSha256Hex(token) + "\n";
}

TEST(TokenTableTest, ParsesLinesSkippingCommentsAndBlankLines) {
  const std::string text = "# operators\n\n" + Line("alice", "read", "tok-a") + "  \t\n" +
                           "bob submit " + wire::TokenSha256Hex("tok-b") + "  # the CI account\n" +
                           Line("root", "admin", "tok-r");
  auto table = TokenTable::Parse(text, "tokens");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->entries().size(), 3u);
  EXPECT_EQ(table->entries()[0].name, "alice");
  EXPECT_EQ(table->entries()[0].role, Role::kRead);
  EXPECT_EQ(table->entries()[0].line, 3);
  EXPECT_EQ(table->entries()[1].role, Role::kSubmit);
  EXPECT_EQ(table->entries()[2].role, Role::kAdmin);
  EXPECT_EQ(table->Summary(), "3 tokens (1 admin, 1 submit, 1 read)");
}

TEST(TokenTableTest, FindMatchesOnlyTheRightTokenWhateverTheHexCase) {
  std::string upper = wire::TokenSha256Hex("tok-b");
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto table = TokenTable::Parse(Line("alice", "read", "tok-a") + "bob submit " + upper, "t");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_NE(table->Find("tok-a"), nullptr);
  EXPECT_EQ(table->Find("tok-a")->name, "alice");
  ASSERT_NE(table->Find("tok-b"), nullptr);
  EXPECT_EQ(table->Find("tok-b")->name, "bob");
  EXPECT_EQ(table->Find("tok-c"), nullptr);
  EXPECT_EQ(table->Find(""), nullptr);
  EXPECT_EQ(table->Find(wire::TokenSha256Hex("tok-a")), nullptr) << "the digest is no token";
}

struct BadCase {
  std::string text;
  std::string expected;  // part of the message
};

TEST(TokenTableTest, BadFilesNameTheFileTheLineAndTheProblem) {
  const std::string a = wire::TokenSha256Hex("tok-a");
  const std::string b = wire::TokenSha256Hex("tok-b");
  const std::vector<BadCase> cases = {
      {"alice read\n", "tokens.txt:1: expected 'NAME ROLE SHA256HEX', found 2 fields"},
      {"# c\nalice read " + a + " extra\n",
       "tokens.txt:2: expected 'NAME ROLE SHA256HEX', found 4"},
      {"alice writer " + a, "tokens.txt:1: unknown role 'writer' (valid: read, submit, admin)"},
      {"alice Admin " + a, "unknown role 'Admin' (valid: read, submit, admin)"},
      {"alice read abc123", "tokens.txt:1: the digest must be 64 hex digits"},
      {"alice read " + a.substr(1) + "g",
       "64 hex digits (the SHA-256 of the token), found a character that is not"},
      {"alice read " + a + "0", "found 65 characters"},
      {"alice read " + a + "\nalice admin " + b,
       "tokens.txt:2: name 'alice' is already used on line 1"},
      {"alice read " + a + "\nbob admin " + a, "tokens.txt:2: the same digest as line 1"},
      {"al/ice read " + a, "tokens.txt:1: name may hold only letters, digits and . _ @ + -"},
      {std::string(65, 'n') + " read " + a, "name is 65 characters long (at most 64)"},
      {"", "tokens.txt: no tokens"},
      {"# only a comment\n\n", "tokens.txt: no tokens"},
  };
  for (const BadCase& c : cases) {
    auto table = TokenTable::Parse(c.text, "tokens.txt");
    ASSERT_FALSE(table.ok()) << c.text;
    EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(table.status().message()), HasSubstr(c.expected)) << c.text;
  }
}

TEST(TokenTableTest, ErrorsNeverQuoteWhatMayBeASecret) {
  // A token pasted into the role or digest column must not end up in a log.
  const std::string secret = "gpt_Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHE";
  for (const std::string& text : {"alice " + secret + " " + wire::TokenSha256Hex("x"),
                                  "alice read " + secret, "alice " + secret, secret}) {
    auto table = TokenTable::Parse(text, "t");
    ASSERT_FALSE(table.ok());
    EXPECT_THAT(std::string(table.status().message()), Not(HasSubstr(secret.substr(4, 12))));
  }
  auto long_role =
      TokenTable::Parse("alice averyveryverylongrole " + wire::TokenSha256Hex("x"), "t");
  EXPECT_THAT(std::string(long_role.status().message()), HasSubstr("unknown role (not shown)"));
}

TEST(TokenTableTest, LoadNamesTheFlagAndThePath) {
  testing::TempDir dir;
  auto missing = TokenTable::Load(dir.File("nope"));
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("--tokens: cannot read '" + dir.File("nope") + "': No such file"));
  auto directory = TokenTable::Load(dir.path().string());
  EXPECT_THAT(std::string(directory.status().message()), HasSubstr("is a directory"));
  testing::WriteTextFile(dir.File("t"), "x read " + wire::TokenSha256Hex("1") + "\nbad\n");
  auto bad = TokenTable::Load(dir.File("t"));
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("--tokens " + dir.File("t") + ":2: expected"));
  testing::WriteTextFile(dir.File("good"), Line("x", "read", "1"));
  EXPECT_TRUE(TokenTable::Load(dir.File("good")).ok());
}

TEST(RoleTest, NamesRoundTripAndOthersAreRefused) {
  for (Role r : {Role::kRead, Role::kSubmit, Role::kAdmin}) EXPECT_EQ(ParseRole(ToString(r)), r);
  EXPECT_FALSE(ParseRole("READ").has_value());
  EXPECT_FALSE(ParseRole("").has_value());
  EXPECT_LT(Role::kRead, Role::kSubmit);
  EXPECT_LT(Role::kSubmit, Role::kAdmin);
}

}  // namespace
}  // namespace gemmprof::security
