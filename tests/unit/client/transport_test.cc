// The gRPC transport against real in-process servers (plaintext; TLS is in
// transport_tls_test.cc): the server's status with its code, the token in the
// metadata, auth errors as one line, retries for reads only, the deadline, and a watch
// that resumes after the daemon breaks the stream.
#include "client/transport.h"

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/validate_service_config.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "client/app.h"
#include "client/render/format.h"
#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "tests/unit/report/report_fixtures.h"
#include "wire/convert.h"

namespace gemmprof::client {
namespace {

namespace v1 = ::gemmprof::v1;
using ::testing::HasSubstr;

std::unique_ptr<grpc::Server> StartServer(grpc::Service& service, int& port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  return builder.BuildAndStart();
}

// A daemon whose answers the test scripts; it records the authorization metadata.
class ScriptedService : public v1::GemmProf::Service {
 public:
  std::atomic<int> get_job_calls{0}, submit_calls{0}, watch_calls{0};
  int get_job_unavailable = 0;  // the first N GetJob calls answer UNAVAILABLE
  std::string token;            // when set, GetJob wants "Bearer <token>"
  core::Report report = report::testing::HopperReport();  // what GetReport answers
  std::vector<core::ItemRecord> done_items;               // the items as their events show them

  std::string LastAuthorization() {
    std::lock_guard lock(mu_);
    return last_authorization_;
  }

  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req,
                      v1::Job* resp) override {
    Record(*ctx);
    if (!token.empty() && LastAuthorization() != "Bearer " + token)
      return {grpc::StatusCode::UNAUTHENTICATED, "missing or unknown bearer token"};
    if (++get_job_calls <= get_job_unavailable)
      return {grpc::StatusCode::UNAVAILABLE, "restarting"};
    *resp = wire::ToProto(report.job);
    resp->set_id(req->job_id());
    return grpc::Status::OK;
  }
  grpc::Status SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest*,
                         v1::SubmitJobResponse*) override {
    Record(*ctx);
    ++submit_calls;
    return {grpc::StatusCode::UNAVAILABLE, "restarting"};
  }
  grpc::Status GetReport(grpc::ServerContext* ctx, const v1::GetReportRequest*,
                         v1::Report* resp) override {
    Record(*ctx);
    if (LastAuthorization() == "Bearer gpt_reader")
      return {grpc::StatusCode::PERMISSION_DENIED, "role read may not read reports of others"};
    *resp = wire::ToProto(report);
    return grpc::Status::OK;
  }
  // Blocks until the client gives up: the client's deadline ends the call.
  grpc::Status CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest*, v1::Job*) override {
    while (!ctx->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return grpc::Status::CANCELLED;
  }
  // The first stream shows items 0 and starts 1, then breaks as a restarting daemon
  // would; meanwhile items 1 and 2 finish; the second stream shows 3 and the end.
  grpc::Status WatchJob(grpc::ServerContext* ctx, const v1::WatchJobRequest*,
                        grpc::ServerWriter<v1::JobEvent>* writer) override {
    Record(*ctx);
    const int call = ++watch_calls;
    const auto event = [&](v1::JobEvent::Kind kind, int finished, int item) {
      v1::JobEvent e;
      e.set_kind(kind);
      core::JobRecord job = report.job;
      job.state = kind == v1::JobEvent::JOB_FINISHED ? core::JobState::kSucceeded
                                                     : core::JobState::kRunning;
      job.finished_items = finished;
      *e.mutable_job() = wire::ToProto(job);
      if (item >= 0) {
        core::ItemRecord it = done_items[static_cast<size_t>(item)];
        if (kind == v1::JobEvent::ITEM_STARTED) it.status = core::ItemStatus::kRunning;
        *e.mutable_item() = wire::ToProto(it);
      }
      writer->Write(e);
    };
    if (call == 1) {
      event(v1::JobEvent::SNAPSHOT, 0, -1);
      event(v1::JobEvent::ITEM_STARTED, 0, 0);
      event(v1::JobEvent::ITEM_FINISHED, 1, 0);
      event(v1::JobEvent::ITEM_STARTED, 1, 1);
      return {grpc::StatusCode::UNAVAILABLE, "daemon shutting down"};
    }
    event(v1::JobEvent::SNAPSHOT, 3, -1);
    event(v1::JobEvent::ITEM_STARTED, 3, 3);
    event(v1::JobEvent::ITEM_FINISHED, 4, 3);
    event(v1::JobEvent::JOB_FINISHED, 4, -1);
    return grpc::Status::OK;
  }

 private:
  void Record(const grpc::ServerContext& ctx) {
    std::lock_guard lock(mu_);
    const auto it = ctx.client_metadata().find("authorization");
    last_authorization_ =
        it == ctx.client_metadata().end() ? "" : std::string(it->second.data(), it->second.size());
  }
  std::mutex mu_;
  std::string last_authorization_;
};

class TransportTest : public ::testing::Test {
 protected:
  TransportTest() {
    // A job of four items; when the watch reconnects, three have finished.
    service_.report.items.resize(4);
    service_.done_items = service_.report.items;
    service_.report.job.total_items = 4;
    service_.report.job.finished_items = 3;
    service_.report.items[3].status = core::ItemStatus::kQueued;
    service_.report.items[3].result.reset();
    server_ = StartServer(service_, port_);
    settings_.address = "127.0.0.1:" + std::to_string(port_);
  }
  ~TransportTest() override { server_->Shutdown(); }

  std::unique_ptr<GemmProfClient> Connect() {
    auto client = Transport::Connect(settings_);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? std::move(*client) : nullptr;
  }

  ScriptedService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  ConnectionSettings settings_;
};

TEST_F(TransportTest, ServerStatusComesBackWithItsCode) {
  int port = 0;
  v1::GemmProf::Service unimplemented;
  std::unique_ptr<grpc::Server> server = StartServer(unimplemented, port);
  ASSERT_NE(server, nullptr);
  settings_.address = "127.0.0.1:" + std::to_string(port);
  const auto report = Connect()->GetReport(1);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kUnimplemented) << report.status();
  server->Shutdown();
}

TEST_F(TransportTest, NobodyListeningIsCannotReach) {
  int port = 0;
  {
    v1::GemmProf::Service service;
    std::unique_ptr<grpc::Server> server = StartServer(service, port);
    ASSERT_NE(server, nullptr);
    server->Shutdown();
  }
  settings_.address = "127.0.0.1:" + std::to_string(port);
  // Not retried: the error comes from the one attempt.
  const auto cancelled = Connect()->CancelJob(1);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(std::string(cancelled.status().message())
                .rfind("cannot reach gemmprofd at " + settings_.address + " (", 0),
            0u)
      << cancelled.status();
}

TEST_F(TransportTest, TheTokenTravelsAsBearerMetadata) {
  service_.token = "gpt_the-token";
  const auto without = Connect()->GetJob(5);
  EXPECT_EQ(without.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(without.status().message(),
            "unauthenticated: missing or unknown bearer token; give a token with --token-file "
            "or GEMMPROF_TOKEN");
  EXPECT_EQ(service_.LastAuthorization(), "");
  settings_.token = "gpt_the-token";
  settings_.token_source = "GEMMPROF_TOKEN";
  const auto with = Connect()->GetJob(5);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->id, 5);
  EXPECT_EQ(service_.LastAuthorization(), "Bearer gpt_the-token");
  settings_.token = "gpt_wrong";
  const auto wrong = Connect()->GetJob(5);
  EXPECT_EQ(wrong.status().message(),
            "unauthenticated: missing or unknown bearer token (the token from GEMMPROF_TOKEN "
            "was refused)");
}

TEST_F(TransportTest, PermissionDeniedIsOneLine) {
  settings_.token = "gpt_reader";
  const auto report = Connect()->GetReport(7);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(report.status().message(),
            "permission denied: role read may not read reports of others");
}

TEST_F(TransportTest, ReadsAreRetriedOnUnavailableSubmitIsNot) {
  service_.get_job_unavailable = 2;
  auto client = Connect();
  const auto job = client->GetJob(9);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(service_.get_job_calls, 3);
  service_.get_job_calls = 0;
  service_.get_job_unavailable = 100;  // more than the 5 attempts
  const auto down = client->GetJob(9);
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(service_.get_job_calls, 5);
  const auto submitted = client->SubmitJob(core::JobSpec{});
  EXPECT_EQ(submitted.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(service_.submit_calls, 1) << "a submission is never sent twice";
}

TEST_F(TransportTest, EveryUnaryCallHasTheDeadline) {
  settings_.timeout_s = 1;
  const auto cancelled = Connect()->CancelJob(3);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cancelled.status().message(), "no answer from gemmprofd at " + settings_.address +
                                              " within 1 s; is it reachable? (--timeout SECONDS)");
}

TEST(RetryPolicyTest, ServiceConfigNamesTheReadMethodsOnly) {
  const std::string text = RetryServiceConfigJson();
  EXPECT_EQ(grpc::experimental::ValidateServiceConfigJSON(text), "") << text;
  const auto config = nlohmann::json::parse(text);
  ASSERT_EQ(config.at("methodConfig").size(), 1u);
  const auto& method = config.at("methodConfig")[0];
  std::set<std::string> names;
  for (const auto& n : method.at("name")) {
    EXPECT_EQ(n.at("service"), "gemmprof.v1.GemmProf");
    names.insert(n.at("method").get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"GetJob", "ListJobs", "GetReport", "QueryResults",
                                          "ListDevices", "PlanJob", "ListDaemons"}));
  // Every name is a method of the service (a typo would silently retry nothing).
  const auto* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("gemmprof.v1.GemmProf");
  ASSERT_NE(service, nullptr);
  for (const std::string& name : names) EXPECT_NE(service->FindMethodByName(name), nullptr) << name;
  const auto& retry = method.at("retryPolicy");
  EXPECT_EQ(retry.at("retryableStatusCodes"), nlohmann::json::array({"UNAVAILABLE"}));
  EXPECT_EQ(retry.at("maxAttempts"), 5);
  EXPECT_EQ(retry.at("backoffMultiplier"), 2);
}

TEST_F(TransportTest, WatchResumesAfterTheDaemonBreaksTheStream) {
  std::vector<int64_t> slept;
  App app(
      &Transport::Connect, [] { return int64_t{1795000000000}; }, /*out_is_tty=*/false,
      [&](const std::string& name) -> std::optional<std::string> {
        if (name == "GEMMPROF_SERVER") return settings_.address;
        return std::nullopt;
      },
      [&](int64_t ms) { slept.push_back(ms); });
  std::ostringstream out, err;
  const int code = app.Run({"watch", "7"}, out, err);
  EXPECT_EQ(code, kExitOk) << err.str();
  EXPECT_EQ(service_.watch_calls, 2);
  EXPECT_EQ(slept, std::vector<int64_t>{1000});
  EXPECT_EQ(err.str(), "gemmprof: connection to " + settings_.address +
                           " lost; reconnecting...\ngemmprof: reconnected to " + settings_.address +
                           "\n");
  // Each item event once: 0 started and done, 1 started then (missed) done, 2 done
  // while disconnected, 3 started and done; then the end.
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 9u) << out.str();
  const auto label = [&](size_t i) { return render::ItemLabel(service_.done_items[i]); };
  EXPECT_EQ(lines[0], "job 7 running: 0/4 items");
  EXPECT_THAT(lines[1], HasSubstr("0/4 items; running " + label(0)));
  EXPECT_THAT(lines[2], HasSubstr("1/4 items; done " + label(0)));
  EXPECT_THAT(lines[3], HasSubstr("1/4 items; running " + label(1)));
  EXPECT_THAT(lines[4], HasSubstr("2/4 items; done " + label(1)));
  EXPECT_THAT(lines[5], HasSubstr("3/4 items; done " + label(2)));
  EXPECT_THAT(lines[6], HasSubstr("3/4 items; running " + label(3)));
  EXPECT_THAT(lines[7], HasSubstr("4/4 items; done " + label(3)));
  EXPECT_EQ(lines[8], "job 7 succeeded: 4/4 items");
}

}  // namespace
}  // namespace gemmprof::client
