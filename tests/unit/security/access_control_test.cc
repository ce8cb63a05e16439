#include "server/security/access_control.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::security {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

TEST(BearerTokenTest, TakesTheTokenOfOneBearerHeader) {
  EXPECT_EQ(*BearerToken({"Bearer gpt_abc"}), "gpt_abc");
  EXPECT_EQ(*BearerToken({"bearer gpt_abc"}), "gpt_abc");
  EXPECT_EQ(*BearerToken({"BEARER   gpt_abc"}), "gpt_abc");
  EXPECT_EQ(BearerToken({"Bearer " + std::string(kMaxTokenLength, 'x')})->size(), kMaxTokenLength);
}

TEST(BearerTokenTest, MissingSeveralOrMalformedHeadersAreUnauthenticated) {
  auto none = BearerToken({});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Msg(none.status()),
            "no token: this gemmprofd requires one (authorization: Bearer <token>)");
  auto several = BearerToken({"Bearer a", "Bearer b"});
  EXPECT_EQ(several.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(Msg(several.status()), HasSubstr("several authorization headers"));
  for (std::string_view bad :
       {"", "Bearer", "Bearer ", "Bearer    ", "Bearertok", "Basic dXNlcjpwYXNz", "Token abc",
        " Bearer abc", "Bearer\tabc", "Bearer abc def", "Bearer abc\x01",
        "Bearer \xc3\xa9t\xc3\xa9", "Bearer abc\xff", "gpt_abc"}) {
    auto token = BearerToken({bad});
    EXPECT_EQ(token.status().code(), absl::StatusCode::kUnauthenticated) << bad;
    EXPECT_THAT(Msg(token.status()), HasSubstr("malformed authorization header")) << bad;
  }
  auto too_long = BearerToken({"Bearer " + std::string(kMaxTokenLength + 1, 'x')});
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(BearerTokenTest, RandomBytesNeverPassAndAreNeverQuoted) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::string value(12 + rng() % 200, '\0');
    for (char& c : value) c = static_cast<char>(rng());
    if (i % 3 == 0) value = "Bearer " + value;
    auto token = BearerToken({value});
    if (token.ok()) {
      // Only a value of visible ASCII after the scheme passes, and then untouched.
      EXPECT_EQ(value.rfind("Bearer ", 0), 0u);
      continue;
    }
    EXPECT_EQ(token.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_FALSE(token.status().message().empty());
    EXPECT_THAT(Msg(token.status()), Not(HasSubstr(value.substr(value.size() - 12))));
  }
}

class AccessControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("alice read " + wire::TokenSha256Hex("tok-alice") + "\n" + "bob submit " +
          wire::TokenSha256Hex("tok-bob") + "\n" + "root admin " +
          wire::TokenSha256Hex("tok-root") + "\n");
    auto ac = AccessControl::FromFile(path_);
    ASSERT_TRUE(ac.ok()) << ac.status();
    ac_ = *std::move(ac);
  }
  void Write(const std::string& text) { testing::WriteTextFile(path_, text); }
  absl::StatusOr<Caller> Call(const std::string& token, std::string_view method) {
    const std::string header = "Bearer " + token;
    return ac_->Authorize({header}, method);
  }

  testing::TempDir dir_;
  std::string path_ = dir_.File("tokens");
  std::unique_ptr<AccessControl> ac_;
};

TEST_F(AccessControlTest, WithoutATokensFileEverythingIsAllowed) {
  AccessControl open;
  EXPECT_FALSE(open.enabled());
  auto caller = open.Authorize({}, "CancelJob");
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->name, "");
  EXPECT_EQ(caller->role, Role::kAdmin);
  EXPECT_EQ(open.Summary(), "no tokens file");
}

TEST_F(AccessControlTest, RolesGateMethods) {
  EXPECT_TRUE(Call("tok-alice", "ListJobs").ok());
  EXPECT_TRUE(Call("tok-alice", "PlanJob").ok());
  auto denied = Call("tok-alice", "SubmitJob");
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Msg(denied.status()), "token 'alice' has role read; SubmitJob needs role submit");
  auto bob = Call("tok-bob", "SubmitJob");
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->name, "bob");
  EXPECT_EQ(bob->role, Role::kSubmit);
  EXPECT_TRUE(Call("tok-bob", "CancelJob").ok());
  // Methods nobody listed need admin.
  EXPECT_EQ(Call("tok-bob", "DropDatabase").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Call("tok-root", "DropDatabase").ok());
}

TEST_F(AccessControlTest, UnknownAndMissingTokensAreUnauthenticated) {
  auto unknown = Call("tok-mallory", "ListJobs");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Msg(unknown.status()), "unknown token");
  auto none = ac_->Authorize({}, "ListJobs");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(Msg(none.status()), HasSubstr("no token"));
}

TEST_F(AccessControlTest, RequiredRolesFollowTheTable) {
  for (std::string_view m : {"ListJobs", "GetJob", "WatchJob", "GetReport", "QueryResults",
                             "StreamResults", "ListDevices", "PlanJob"}) {
    EXPECT_EQ(RequiredRole(m), Role::kRead) << m;
  }
  EXPECT_EQ(RequiredRole("SubmitJob"), Role::kSubmit);
  EXPECT_EQ(RequiredRole("CancelJob"), Role::kSubmit);
  EXPECT_EQ(RequiredRole("listjobs"), Role::kAdmin);
}

TEST_F(AccessControlTest, ReloadAppliesAGoodFileAndKeepsTheOldSetOnABadOne) {
  Write("alice submit " + wire::TokenSha256Hex("tok-alice2") + "\n");
  auto summary = ac_->Reload();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(*summary, "1 token (0 admin, 1 submit, 0 read)");
  EXPECT_EQ(Call("tok-alice", "ListJobs").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(Call("tok-alice2", "SubmitJob").ok());

  Write("carol read " + wire::TokenSha256Hex("tok-carol") + "\ncarol reader 00\n");
  auto broken = ac_->Reload();
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(Msg(broken.status()), HasSubstr(path_ + ":2: unknown role 'reader'"));
  EXPECT_TRUE(Call("tok-alice2", "SubmitJob").ok()) << "the previous set stays";
  EXPECT_EQ(Call("tok-carol", "ListJobs").status().code(), absl::StatusCode::kUnauthenticated);

  std::remove(path_.c_str());
  EXPECT_THAT(Msg(ac_->Reload().status()), HasSubstr("cannot read"));
  EXPECT_TRUE(Call("tok-alice2", "SubmitJob").ok());
}

TEST(CheckCanCancelTest, SubmitTokensCancelOnlyTheirOwnJobs) {
  EXPECT_TRUE(CheckCanCancel({"bob", Role::kSubmit}, 7, "bob").ok());
  EXPECT_TRUE(CheckCanCancel({"root", Role::kAdmin}, 7, "bob").ok());
  EXPECT_TRUE(CheckCanCancel({"root", Role::kAdmin}, 7, "").ok());
  EXPECT_TRUE(CheckCanCancel({}, 7, "bob").ok()) << "no tokens: open daemon";
  absl::Status other = CheckCanCancel({"carol", Role::kSubmit}, 7, "bob");
  EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Msg(other),
            "job 7 was submitted by 'bob'; token 'carol' has role submit and may cancel only its "
            "own jobs (admin cancels any)");
  absl::Status legacy = CheckCanCancel({"carol", Role::kSubmit}, 8, "");
  EXPECT_EQ(legacy.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(Msg(legacy), HasSubstr("no recorded submitter"));
}

}  // namespace
}  // namespace gemmprof::security
