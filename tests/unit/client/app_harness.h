// Runs the CLI through the App object against a FakeClient, with an environment and a
// sleep of the test's own: what app_test.cc and app_connection_test.cc share.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/app.h"
#include "fake_client.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::client::testing {

inline constexpr int64_t kNowMs = 1795000000000;

inline const std::vector<std::string> kSeed = {
    "--hidden_size",       "4096", "--intermediate_size", "16384", "--num_attention_heads", "32",
    "--num_hidden_layers", "24",   "--micro_batch_size",  "31",    "--sequence_length",     "512"};

// What one run of the CLI did.
struct Result {
  int code = -1;
  std::string out, err;
  int connects = 0;
};

// Passes calls to a FakeClient that outlives every App.
class Forward : public GemmProfClient {
 public:
  explicit Forward(FakeClient* f) : f_(f) {}
  absl::StatusOr<SubmitResult> SubmitJob(const core::JobSpec& s) override {
    return f_->SubmitJob(s);
  }
  absl::Status WatchJob(int64_t id,
                        const std::function<absl::Status(const core::JobEvent&)>& cb) override {
    return f_->WatchJob(id, cb);
  }
  absl::StatusOr<core::JobRecord> GetJob(int64_t id) override { return f_->GetJob(id); }
  absl::StatusOr<std::vector<core::JobRecord>> ListJobs(std::optional<core::JobState> s, int32_t n,
                                                        const std::string& node,
                                                        const std::string& campaign) override {
    return f_->ListJobs(s, n, node, campaign);
  }
  absl::StatusOr<core::JobRecord> CancelJob(int64_t id) override { return f_->CancelJob(id); }
  absl::StatusOr<core::Report> GetReport(int64_t id) override { return f_->GetReport(id); }
  absl::StatusOr<std::vector<core::ResultRow>> QueryResults(const core::ResultFilter& q,
                                                            int32_t limit) override {
    return f_->QueryResults(q, limit);
  }
  absl::StatusOr<std::vector<core::DeviceInfo>> ListDevices() override { return f_->ListDevices(); }
  absl::StatusOr<core::DaemonListing> ListDaemons() override { return f_->ListDaemons(); }

 private:
  FakeClient* f_;
};

class AppTest : public ::testing::Test {
 protected:
  AppTest() {
    fake_.reports[7] = report::testing::HopperReport();
    fake_.reports[12] = report::testing::FailedItemReport();
    fake_.reports[21] = report::testing::BothModesReport();
  }

  // Runs `args` with env_ as the whole environment (so the developer's own
  // GEMMPROF_* variables and config file stay out of the tests).
  Result Run(std::vector<std::string> args, bool tty = false) {
    Result r;
    App app(
        [&](const ConnectionSettings& s) -> absl::StatusOr<std::unique_ptr<GemmProfClient>> {
          ++r.connects;
          last_address_ = s.address;
          last_settings_ = s;
          return std::unique_ptr<GemmProfClient>(new Forward(&fake_));
        },
        [] { return kNowMs; }, tty,
        [this](const std::string& name) -> std::optional<std::string> {
          const auto it = env_.find(name);
          if (it == env_.end() || it->second.empty()) return std::nullopt;
          return it->second;
        },
        [this](int64_t ms) { slept_ms_.push_back(ms); });
    std::ostringstream out, err;
    r.code = app.Run(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  // submit with the six seed flags; a seed flag in `extra` ("--flag", "v" or
  // "--flag=v") replaces the default one instead of repeating it.
  static std::vector<std::string> Seed(std::vector<std::string> extra) {
    std::vector<std::string> args = {"submit"};
    for (size_t i = 0; i < kSeed.size(); i += 2) {
      bool replaced = false;
      for (const std::string& e : extra)
        replaced |= e == kSeed[i] || e.rfind(kSeed[i] + "=", 0) == 0;
      if (!replaced) args.insert(args.end(), {kSeed[i], kSeed[i + 1]});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  FakeClient fake_;
  std::map<std::string, std::string> env_;
  std::vector<int64_t> slept_ms_;
  std::string last_address_;
  ConnectionSettings last_settings_;
};

// One bad invocation: the args and a text the error line must contain.
struct BadCase {
  std::vector<std::string> args;
  std::string expect;
};

// Exit code 2, one `gemmprof: ` line holding c.expect, no connection, nothing on stdout.
inline void ExpectUsageError(const Result& r, const BadCase& c) {
  std::string joined;
  for (const auto& a : c.args) joined += a + " ";
  EXPECT_EQ(r.code, kExitUsage) << joined << "\n" << r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith("gemmprof: ")) << joined;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << joined << "\n" << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(c.expect)) << joined;
  EXPECT_EQ(r.connects, 0) << joined << ": must fail before connecting";
  EXPECT_TRUE(r.out.empty()) << joined;
}

}  // namespace gemmprof::client::testing
